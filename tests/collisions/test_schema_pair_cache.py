"""Each distinct pair of input schemas is decided once (forks repeat them), and the report is
the same byte for byte as deciding every tool pair on its own."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.models import Catalog, parse_catalog
from histor_sign.report._render import render

DATA = Path(__file__).resolve().parent.parent / "data"


def forked_corpus() -> list[Catalog]:
    """The LiveMCPBench servers, each with a fork (same schemas; a copied object, so the
    cache cannot lean on object identity) and a release whose first tool changed its schema."""
    corpus = json.loads((DATA / "livemcpbench-tools.json").read_text())
    out = []
    for server in corpus:
        for key, entry in server["tools"].items():
            out.append(parse_catalog({"tools": entry["tools"]}, key))
            out.append(parse_catalog({"tools": copy.deepcopy(entry["tools"])}, f"fork-{key}"))
            changed = copy.deepcopy(entry["tools"])
            if changed and isinstance(changed[0].get("inputSchema"), dict):
                changed[0]["inputSchema"]["additionalProperties"] = False
            out.append(parse_catalog({"tools": changed}, f"next-{key}"))
    return out


def test_the_cache_gives_the_same_report_and_decides_fewer_pairs() -> None:
    catalogs = forked_corpus()
    on = ScanOptions(workers=1, budget_seconds=None)
    off = ScanOptions(workers=1, budget_seconds=None, schema_pair_cache=False)
    cached, every = scan_catalogs(catalogs, on), scan_catalogs(catalogs, off)
    assert render(cached.findings, "json") == render(every.findings, "json")
    decided = cached.stats.pop("schemaPairsDecided")
    assert every.stats.pop("schemaPairsDecided") == every.stats["analysedPairs"]
    assert cached.stats == every.stats
    # forks triple the pairs, not the schema work
    assert every.stats["analysedPairs"] > 2 * decided
    assert cached.stats["overlap"] > 100 and cached.stats["disjoint"] > 10
