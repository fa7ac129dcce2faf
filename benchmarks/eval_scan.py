"""Score the collision scan against labeled pairs of real servers (issue 24).

A labeled file (``histor.labeled-pairs/v1``: ``benchmarks/data/pairs-tuning.json`` or, once,
at the end, ``pairs-heldout.json``) names pairs of tools ``<server>:<tool>`` of the catalogs
in ``benchmarks/data/real-servers/<server>.json``, each labeled by the written rubric
(docs/scan-rubric.md) ``overlap``, ``contradict`` or ``distinct``, blind to the scanner.

The scan is run the way a user meets it:

* **one scan of all the half's servers together** (each server its own source), as a host
  with all of them installed would; every labeled pair is judged on it — ``within`` pairs
  (one server) and ``cross`` pairs (two servers) reported separately;
* **each server alone**, as the release gate scans it: how many servers fail the default
  gate (``--fail-on error``) and on which findings.

Figures:

* ``TC003∪TC004`` precision and recall: a pair is flagged when the scan reports TC003 or
  TC004 on it; positives are ``overlap`` and ``contradict`` labels. Precision is over the
  labeled pairs the scan flags (the labels are a sample; flagged pairs outside it are
  counted, not judged). The same with TC011 (confusable, schemas disjoint) added, since the
  rubric's confusability does not depend on the schemas.
* ``TC004`` recall over ``contradict`` pairs, and false TC004 errors per 100 servers: TC004
  errors of the per-server gate runs on pairs labeled other than ``contradict``. TC004 is
  ToolClash's: explicit hints that contradict; the rubric's ``contradict`` is judged from
  the words too, so ``TC004|HS201`` (HS201: effects that differ as the action words say) is
  reported beside it.
* the same two scores over the **certain** pairs only (the labeler's ``uncertain`` flag marks
  pairs where the neighbouring label is as reasonable; the data README asks for both ways),
  and the **reachable** recall: over the positives whose two schemas admit one call (the
  schema intersection finds a witness), the only ones TC003 can report — a positive with
  disjoint schemas is TC011 by definition, so ``reachable / positives`` is TC003|TC004's
  ceiling on the file.

    python benchmarks/eval_scan.py benchmarks/data/pairs-tuning.json [--json OUT]
    python benchmarks/eval_scan.py --legacy     # the older 672-pair set (tests/data)
    python benchmarks/eval_scan.py --lexicon-hits   # per lexicon entry, tools using it per set

Nothing here tunes anything: it reads the labels and the scan's findings, and prints.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from histor_sign._schema.witness import OVERLAP, decide  # noqa: E402
from histor_sign.collisions import ScanOptions, scan_catalogs  # noqa: E402
from histor_sign.collisions import _lexicon as lexicon  # noqa: E402
from histor_sign.collisions._lexical import split_identifier  # noqa: E402
from histor_sign.models import Catalog, Finding, Severity, parse_catalog  # noqa: E402

CATALOGS = REPO / "benchmarks" / "data" / "real-servers"
POSITIVE = frozenset({"overlap", "contradict"})
PAIR_RULES = ("TC003", "TC004")
WITH_DISJOINT = ("TC003", "TC004", "TC011")
EFFECT_RULES = ("TC004", "HS201")

Pair = frozenset[str]


def options() -> ScanOptions:
    """The default scan, without a wall-clock budget (the figures must not depend on the
    machine's load)."""
    return ScanOptions(budget_seconds=None)


def load_catalogs(servers: Iterable[str], directory: Path = CATALOGS) -> list[Catalog]:
    """The named servers' catalogs, each its own source named by the server's slug."""
    out = []
    for slug in sorted(set(servers)):
        doc = json.loads((directory / f"{slug}.json").read_text(encoding="utf-8"))
        out.append(parse_catalog({"tools": doc["tools"]}, slug))
    return out


def set_catalogs(doc: dict[str, Any], directory: Path) -> list[Catalog]:
    """The catalogs a labeled pair file is read on: its ``servers``, else every server its
    pairs name."""
    servers = doc.get("servers") or {t.split(":", 1)[0] for p in doc["pairs"]
                                     for t in (p["a"], p["b"])}
    return load_catalogs(servers, directory)


def pair_of(finding: Finding) -> Pair:
    return frozenset(f"{t.source}:{t.name}" for t in finding.tools)


def flagged(findings: Iterable[Finding], rules: tuple[str, ...]) -> dict[Pair, set[str]]:
    """Pair → the pair rules reported on it."""
    out: dict[Pair, set[str]] = {}
    for f in findings:
        if f.rule in rules and len(f.tools) == 2:
            out.setdefault(pair_of(f), set()).add(f.rule)
    return out


@dataclass
class Score:
    """Precision and recall of one rule set over labeled pairs."""

    labels: dict[Pair, str]
    hits: dict[Pair, set[str]]
    rules: tuple[str, ...]

    def _flag(self, pair: Pair) -> bool:
        return bool(self.hits.get(pair, set()) & set(self.rules))

    @property
    def flagged_labeled(self) -> int:
        return sum(1 for p in self.labels if self._flag(p))

    @property
    def tp(self) -> int:
        return sum(1 for p, lab in self.labels.items() if lab in POSITIVE and self._flag(p))

    @property
    def positives(self) -> int:
        return sum(1 for lab in self.labels.values() if lab in POSITIVE)

    @property
    def precision(self) -> float:
        n = self.flagged_labeled
        return self.tp / n if n else 1.0

    @property
    def recall(self) -> float:
        return self.tp / self.positives if self.positives else 1.0

    def row(self) -> dict[str, Any]:
        return {"pairs": len(self.labels), "positives": self.positives,
                "flagged": self.flagged_labeled, "truePositives": self.tp,
                "precision": round(self.precision, 3), "recall": round(self.recall, 3)}


@dataclass
class Evaluation:
    """Everything the script prints, as JSON-ready numbers."""

    figures: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def text(self) -> str:
        f = self.figures
        lines = [f"{f['file']}: {f['servers']} servers, {f['pairs']} labeled pairs "
                 f"({f['labels']})"]
        for scope in ("all", "within", "cross"):
            for key in ("TC003|TC004", "TC003|TC004|TC011"):
                r = f["scores"][scope][key]
                lines.append(f"  {scope:7} {key:17} precision {r['precision']:.3f} recall "
                             f"{r['recall']:.3f} ({r['truePositives']} of {r['positives']} "
                             f"positives; {r['flagged']} labeled pairs flagged)")
        for key in ("TC003|TC004", "TC003|TC004|TC011"):
            r = f["scores"]["certain"][key]
            lines.append(f"  {'certain':7} {key:17} precision {r['precision']:.3f} recall "
                         f"{r['recall']:.3f} ({r['truePositives']} of {r['positives']} "
                         f"positives; {r['flagged']} labeled pairs flagged; uncertain pairs "
                         f"left out)")
        c = f["reachable"]
        lines.append(f"  reachable: {c['reachable']} of {c['positives']} positives have a "
                     f"call both schemas accept (TC003|TC004 ceiling {c['ceiling']:.3f}); "
                     f"TC003|TC004 finds {c['found']} of them (recall {c['recall']:.3f}); "
                     f"certain and reachable: {c['certainFound']} of {c['certain']}")
        t = f["tc004"]
        lines.append(f"  TC004 recall {t['recall']:.3f} ({t['found']} of {t['contradict']} "
                     f"contradict pairs); TC004 on labeled non-contradict pairs: "
                     f"{t['falseOnLabeled']}")
        e = f["effects"]
        lines.append(f"  TC004|HS201 recall {e['recall']:.3f} ({e['found']} of "
                     f"{e['contradict']} contradict pairs); on labeled non-contradict pairs: "
                     f"{e['falseOnLabeled']}")
        g = f["gate"]
        lines.append(f"  gate, each server alone: {g['failed']} of {g['servers']} fail; false "
                     f"TC004 errors {g['falseTc004Errors']} ({g['falseTc004Per100']:.2f} per 100 "
                     f"servers); unlabeled TC004 errors {g['unlabeledTc004Errors']}")
        lines.extend(f"    {e}" for e in self.errors)
        return "\n".join(lines)


def evaluate(path: Path, directory: Path = CATALOGS) -> Evaluation:
    doc = json.loads(path.read_text(encoding="utf-8"))
    pairs = doc["pairs"]
    labels = {frozenset((p["a"], p["b"])): p["label"] for p in pairs}
    uncertain = {frozenset((p["a"], p["b"])) for p in pairs if p.get("uncertain")}
    scope = {frozenset((p["a"], p["b"])): p.get("scope") or (
        "within" if p["a"].split(":", 1)[0] == p["b"].split(":", 1)[0] else "cross")
        for p in pairs}
    catalogs = set_catalogs(doc, directory)
    opts = options()
    together = scan_catalogs(catalogs, opts).findings
    hits = flagged(together, (*WITH_DISJOINT, "HS201"))
    ev = Evaluation()
    scores: dict[str, dict[str, Any]] = {}
    for name in ("all", "within", "cross"):
        subset = {p: lab for p, lab in labels.items() if name == "all" or scope[p] == name}
        scores[name] = {"TC003|TC004": Score(subset, hits, PAIR_RULES).row(),
                        "TC003|TC004|TC011": Score(subset, hits, WITH_DISJOINT).row()}
    certain = {p: lab for p, lab in labels.items() if p not in uncertain}
    scores["certain"] = {"TC003|TC004": Score(certain, hits, PAIR_RULES).row(),
                         "TC003|TC004|TC011": Score(certain, hits, WITH_DISJOINT).row()}
    reachable = reachable_positives(labels, catalogs)
    found_reachable = [p for p in reachable if hits.get(p, set()) & set(PAIR_RULES)]
    positives = sum(1 for lab in labels.values() if lab in POSITIVE)
    contradict = [p for p, lab in labels.items() if lab == "contradict"]
    found = [p for p in contradict if "TC004" in hits.get(p, set())]
    false_labeled = [p for p, lab in labels.items()
                     if lab != "contradict" and "TC004" in hits.get(p, set())]
    effect_found = [p for p in contradict if hits.get(p, set()) & set(EFFECT_RULES)]
    effect_false = [p for p, lab in labels.items()
                    if lab != "contradict" and hits.get(p, set()) & set(EFFECT_RULES)]
    failed, false_errors, unlabeled_errors = 0, 0, 0
    for catalog in catalogs:
        alone = scan_catalogs([catalog], opts).findings
        errors = [f for f in alone if f.severity is Severity.error]
        failed += bool(errors)
        for f in errors:
            pair = pair_of(f)
            if f.rule == "TC004" and pair in labels and labels[pair] != "contradict":
                false_errors += 1
                ev.errors.append(f"false TC004 error: {sorted(pair)} labeled {labels[pair]}")
            elif f.rule == "TC004" and pair not in labels:
                unlabeled_errors += 1
            if f.rule != "TC004":
                ev.errors.append(f"gate error {f.rule}: {f.message[:160]}")
    ev.figures = {
        "file": str(path.name), "servers": len(catalogs), "pairs": len(labels),
        "labels": {k: sum(1 for v in labels.values() if v == k)
                   for k in ("overlap", "contradict", "distinct")},
        "scores": scores,
        "reachable": {
            "positives": positives, "reachable": len(reachable),
            "ceiling": round(len(reachable) / positives, 3) if positives else 1.0,
            "found": len(found_reachable),
            "recall": round(len(found_reachable) / len(reachable), 3) if reachable else 1.0,
            "certain": sum(1 for p in reachable if p not in uncertain),
            "certainFound": sum(1 for p in found_reachable if p not in uncertain)},
        "tc004": {"contradict": len(contradict), "found": len(found),
                  "recall": round(len(found) / len(contradict), 3) if contradict else 1.0,
                  "falseOnLabeled": len(false_labeled)},
        "effects": {"contradict": len(contradict), "found": len(effect_found),
                    "recall": (round(len(effect_found) / len(contradict), 3) if contradict
                               else 1.0),
                    "falseOnLabeled": len(effect_false)},
        "gate": {"servers": len(catalogs), "failed": failed, "falseTc004Errors": false_errors,
                 "falseTc004Per100": 100.0 * false_errors / max(1, len(catalogs)),
                 "unlabeledTc004Errors": unlabeled_errors},
    }
    return ev


def reachable_positives(labels: dict[Pair, str], catalogs: Iterable[Catalog]) -> list[Pair]:
    """The positive pairs whose two input schemas admit one call (a witness both accept):
    the positives TC003 can report at all. Decided with the scan's own schema intersection,
    without the lexical rules."""
    schemas = {f"{c.source}:{t.name}": t.input_schema for c in catalogs for t in c.tools}
    out = []
    for pair, label in labels.items():
        if label not in POSITIVE:
            continue
        a, b = sorted(pair)
        if decide(schemas[a], schemas[b]).outcome == OVERLAP:
            out.append(pair)
    return out


def legacy() -> dict[str, Any]:
    """The older labeled set (tests/data/confusable-pairs.json: 672+ pairs of the project's
    own corpora, confusable yes/no), scored as its test scores it."""
    sys.path.insert(0, str(REPO / "testkit"))  # the older set's scoring, shared with its test
    from labeled_pairs import flagged_pairs, load_labels

    labels = load_labels()
    out: dict[str, Any] = {"pairs": len(labels)}
    for key, rules in (("TC003|TC004", PAIR_RULES), ("TC003|TC004|TC011", WITH_DISJOINT)):
        try:
            hits = flagged_pairs(rules)
        except KeyError:  # a checkout before TC011 existed
            hits = flagged_pairs(PAIR_RULES)
        judged = [p for p in hits if p in labels]
        tp = sum(1 for p in judged if labels[p])
        out[key] = {"flagged": len(hits), "unlabeledFlagged": len(hits) - len(judged),
                    "precision": round(tp / len(judged), 3) if judged else 1.0,
                    "recall": round(tp / sum(labels.values()), 3)}
    return out


#: The sets that may be tuned on and their catalogs (benchmarks/data/README.md): what the
#: offline analyses (explain_misses.py, candidate_features.py, feature_ceiling.py) read.
TUNING_SETS = {"tuning": "real-servers", "tuning2": "livemcpbench-servers",
               "tuning3": "tuning3-servers", "tuning4": "tuning4-servers",
               "tuning5": "tuning5-servers", "tuning6": "tuning6-servers",
               "tuning7": "tuning7-servers"}
#: Every labeled set and its catalogs, for ``--lexicon-hits``: the tuning sets, the held-out
#: half and the blind sets.
SETS = {**TUNING_SETS, "heldout": "real-servers", "tuning8": "tuning8-servers",
        "tuning9": "tuning9-servers", "tuning10": "tuning10-servers"}
_TEXT_WORD = re.compile(r"[^\W_]+")


def tool_words(name: str, description: str) -> set[str]:
    """The lower-case words of a tool's name (split as the scan splits it) and description."""
    words = {w.lower() for w in split_identifier(name) if w}
    return words | {w.lower() for w in _TEXT_WORD.findall(description)}


def lexicon_hits(data: Path = REPO / "benchmarks" / "data") -> list[dict[str, Any]]:
    """Per lexicon entry (histor_sign/collisions/lexicon.json), how many tools of each
    labeled set's servers use its word(s) in their name or description: an entry no tool of
    any set uses was never measured here. Counts words, not the entry's effect on findings."""
    per_set: dict[str, list[set[str]]] = {}
    for name, directory in SETS.items():
        doc = json.loads((data / f"pairs-{name}.json").read_text(encoding="utf-8"))
        per_set[name] = [tool_words(t.name, t.description)
                         for c in set_catalogs(doc, data / directory) for t in c.tools]
    rows = []
    for cls, entries in lexicon.classes().items():
        for e in entries:
            needed = {w.lower() for w in e.get("words") or [e["word"]]}
            hits = {name: sum(1 for words in tools if needed <= words)
                    for name, tools in per_set.items()}
            rows.append({"class": cls, "entry": " ".join(e.get("words") or [e["word"]]),
                         "hits": hits, "total": sum(hits.values()), "from": e["from"]})
    return rows


def lexicon_text(rows: list[dict[str, Any]]) -> str:
    names = list(SETS)
    lines = ["class\tentry\t" + "\t".join(names) + "\ttotal"]
    lines += [f"{r['class']}\t{r['entry']}\t" + "\t".join(str(r["hits"][n]) for n in names)
              + f"\t{r['total']}" for r in rows]
    unused = [r for r in rows if r["total"] == 0]
    lines.append(f"{len(rows)} entries; {len(unused)} used by no tool of any labeled set: "
                 + ", ".join(f"{r['entry']} ({r['class']})" for r in unused))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labels", nargs="?", type=Path, help="a labeled pairs file")
    parser.add_argument("--catalogs", type=Path, default=CATALOGS)
    parser.add_argument("--legacy", action="store_true", help="score the older 672-pair set")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--lexicon-hits", action="store_true",
                        help="per lexicon entry, the tools of each labeled set that use it")
    args = parser.parse_args(argv)
    if args.lexicon_hits:
        rows = lexicon_hits()
        print(lexicon_text(rows))
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
        return 0
    if args.legacy:
        figures: dict[str, Any] = legacy()
        print(json.dumps(figures, indent=1))
    else:
        if args.labels is None:
            parser.error("give a labeled pairs file or --legacy")
        ev = evaluate(args.labels, args.catalogs)
        figures = ev.figures
        print(ev.text())
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
