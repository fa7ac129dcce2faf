"""The labeled real tool pairs (tests/data/confusable-pairs.json) and the scans they are judged on.

Three scan sets, each tool named ``<set>:<source>/<tool>``: the official reference servers
(tests/data/reference-servers, one scan, one source per server), the LiveMCPBench corpus (one
scan, one source per server) and BFCL's multi-turn function docs (one scan per suite).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.models import Catalog, parse_catalog

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
#: The pair rules that say "confusable": TC003 (overlap), TC004 (and effects differ), TC011
#: (disjoint schemas) — the labels judge confusability, whatever the schemas.
PAIR_RULES = ("TC003", "TC004", "TC011")


def scan_sets() -> Iterator[tuple[str, list[Catalog]]]:
    """(set name, catalogs scanned together) for every scan the labels are judged on."""
    ref = sorted((DATA / "reference-servers").glob("*.json"))
    yield "ref", [parse_catalog(json.loads(p.read_text()), p.stem) for p in ref]
    corpus = json.loads((DATA / "livemcpbench-tools.json").read_text())
    yield "corpus", [parse_catalog({"tools": entry["tools"]}, key)
                     for server in corpus for key, entry in server["tools"].items()]
    suites = json.loads((DATA / "bfcl-multi-turn-tools.json").read_text())
    for suite, tools in suites.items():
        yield f"bfcl-{suite}", [parse_catalog({"tools": tools}, suite)]


def tool_id(set_name: str, source: str, name: str) -> str:
    return f"{set_name.split('-')[0]}:{source}/{name}"


@dataclass(frozen=True)
class Scored:
    """Which labeled pairs a scan flagged, and precision/recall over the labels."""

    flagged: frozenset[frozenset[str]]
    labels: dict[frozenset[str], bool]

    @property
    def tp(self) -> int:
        return sum(1 for p, yes in self.labels.items() if yes and p in self.flagged)

    @property
    def precision(self) -> float:
        hits = [p for p in self.labels if p in self.flagged]
        return self.tp / len(hits) if hits else 1.0

    @property
    def recall(self) -> float:
        positives = sum(1 for yes in self.labels.values() if yes)
        return self.tp / positives if positives else 1.0


def load_labels() -> dict[frozenset[str], bool]:
    doc = json.loads((DATA / "confusable-pairs.json").read_text())
    return {frozenset((p["a"], p["b"])): p["confusable"] for p in doc["pairs"]}


def flagged_pairs(rules: tuple[str, ...] = PAIR_RULES,
                  options: ScanOptions | None = None) -> frozenset[frozenset[str]]:
    out: set[frozenset[str]] = set()
    for set_name, catalogs in scan_sets():
        result = scan_catalogs(catalogs, options)
        for f in result.findings:
            if f.rule in rules and len(f.tools) == 2:
                out.add(frozenset(tool_id(set_name, t.source, t.name) for t in f.tools))
    return frozenset(out)


def score(rules: tuple[str, ...] = PAIR_RULES) -> Scored:
    return Scored(flagged_pairs(rules), load_labels())
