"""Where each labelled positive of the tuning sets is lost in the scan (issue 38; offline).

For every positive (``overlap`` / ``contradict``) of a tuning set it follows the pair
through the scan's stages, the way ``eval_scan.py`` scans the set (all its servers together,
default options) and says the first stage that drops it:

* ``found``: the scan reports TC003, TC004 or TC011 on it;
* ``undecided``: a candidate whose schemas were not decided (TC005: a bound, the budget);
* ``partner bound``: confusable by the lexical reading, but cut by ``--max-partners``;
* otherwise never a candidate, with the check of the lexical reading (``similarity``) that
  rejects it — no action word; different action classes (or contrasting ones on objects that
  are not one); argument kinds that differ; one item vs all, search vs one, current vs
  identified; different domains (``areas``: the subject areas of the lexicon are disjoint;
  ``context``: each names a domain word of its own source); a namespace (product word)
  stripped on one side only; objects with one head noun whose descriptions stay under the
  floor; a name without object words whose description stays under the floor; different
  object words (``objects``).

Positives the statistical candidates or the template siblings would add but whose schemas
are undecided are counted as undecided. The labelled negatives are followed the same way
(``found`` among them: the false positives), so the table also says what each check keeps
out: a check that drops many positives and few negatives is a candidate for a fix. Nothing
here tunes anything.

    python benchmarks/explain_misses.py [--set tuning7 ...] [--list]

Reads ``pairs-tuning*.json`` of the seven tuning sets only (never a blind or held-out one).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import eval_scan as E  # noqa: E402

from histor_sign.collisions import _lexical as lx  # noqa: E402
from histor_sign.collisions._lexical import Profile  # noqa: E402
from histor_sign.collisions._prefix_join import jaccard  # noqa: E402

DATA = REPO / "benchmarks" / "data"
SETS = E.TUNING_SETS
STAGES = ("found", "undecided", "partner bound", "no action", "actions differ",
          "contrast, not one object", "kinds differ", "one vs all / search vs one",
          "current vs identified", "domains: areas", "domains: context",
          "namespace one side", "narrowing under floor", "empty object under floor",
          "objects differ", "other")


def rejected_by(a: Profile, b: Profile, threshold: float) -> str:
    """The check of :func:`lx.similarity` that rejects a pair (mirrors its order)."""
    if not a.action or not b.action:
        return "no action"
    if a.action != b.action:
        pair = frozenset((a.action, b.action))
        if pair in lx.CONTRASTING or pair in lx.EQUIVALENT or pair in lx.STATEMENT_PAIRS:
            return "contrast, not one object"
        return "actions differ"
    if a.kinds and b.kinds and a.kinds.isdisjoint(b.kinds):
        return "kinds differ"
    if {a.cardinality, b.cardinality} == {"all", "one"} or lx._search_vs_one(a, b):
        return "one vs all / search vs one"
    if ("now" in a.kinds and b.cardinality == "one") or (
            "now" in b.kinds and a.cardinality == "one"):
        return "current vs identified"
    if lx.other_domains(a, b, threshold):
        return ("domains: areas" if a.areas and b.areas and a.areas.isdisjoint(b.areas)
                else "domains: context")
    same_area = a.source != b.source and bool(a.areas & b.areas)
    if lx._same_name(a, b, same_area):
        return "namespace one side" if lx._name_score(a, b, same_area) is None else "other"
    if not a.objects or not b.objects:
        return "empty object under floor"
    if a.head == b.head and (a.objects <= b.objects or b.objects <= a.objects):
        return "narrowing under floor"
    return "objects differ"


def explain_set(name: str, directory: str) -> tuple[Counter[str], list[str]]:
    """Stage counts of one set's positives (``uncertain:STAGE``: those labelled uncertain;
    ``negative:STAGE``: the labelled negatives each stage drops or passes), and one line per
    lost positive."""
    doc = json.loads((DATA / f"pairs-{name}.json").read_text(encoding="utf-8"))
    catalogs = E.set_catalogs(doc, DATA / directory)
    tools = [t for c in catalogs for t in c.tools]
    key = {f"{t.source}:{t.name}": i for i, t in enumerate(tools)}
    opts = E.options()
    findings = E.scan_catalogs(catalogs, opts).findings
    hits = E.flagged(findings, (*E.WITH_DISJOINT, "TC005"))
    profiles = lx.profiles_of([(t.source, t.name, t.description) for t in tools])
    bounded = lx.bounded_candidate_pairs(profiles, opts.threshold, opts.max_partners).pairs
    counts: Counter[str] = Counter()
    lines: list[str] = []
    for p in doc["pairs"]:
        pair = frozenset((p["a"], p["b"]))
        i, j = sorted((key[p["a"]], key[p["b"]]))
        rules = hits.get(pair, set())
        if rules & set(E.WITH_DISJOINT):
            stage = "found"
        elif "TC005" in rules:
            stage = "undecided"
        elif lx.similarity(profiles[i], profiles[j], opts.threshold) is not None:
            stage = "partner bound" if (i, j) not in bounded else "other"
        else:
            stage = rejected_by(profiles[i], profiles[j], opts.threshold)
        if p["label"] not in E.POSITIVE:
            counts[f"negative:{stage}"] += 1
            continue
        counts[stage] += 1
        counts[f"uncertain:{stage}"] += bool(p.get("uncertain"))
        if stage != "found":
            pa, pb = profiles[i], profiles[j]
            lines.append(f"  {stage:26} {'U' if p.get('uncertain') else ' '} "
                         f"{tools[i].source}:{tools[i].name} [{pa.action} {sorted(pa.objects)}"
                         f" {sorted(pa.areas)}] | {tools[j].source}:{tools[j].name} "
                         f"[{pb.action} {sorted(pb.objects)} {sorted(pb.areas)}] desc "
                         f"{jaccard(pa.description, pb.description):.2f}")
    return counts, lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", choices=sorted(SETS), help="only these sets")
    ap.add_argument("--list", action="store_true", help="print every lost positive")
    args = ap.parse_args(argv)
    total: Counter[str] = Counter()
    rows = []
    for name, directory in SETS.items():
        if args.set and name not in args.set:
            continue
        counts, lines = explain_set(name, directory)
        total.update(counts)
        rows.append((name, counts))
        if args.list:
            print(f"{name}:")
            print("\n".join(lines))
    stages = [s for s in STAGES if total[s] or total[f"negative:{s}"]]
    print("| set | " + " | ".join(stages) + " | positives |")
    print("|---" * (len(stages) + 2) + "|")
    for name, counts in [*rows, ("all", total)]:
        print(f"| {name} | " + " | ".join(str(counts[s]) for s in stages)
              + f" | {sum(counts[s] for s in STAGES)} |")
    for kind, what in (("uncertain", "of them labelled uncertain"),
                       ("negative", "labelled negatives at this stage")):
        print(f"| all: {what} | " + " | ".join(str(total[f"{kind}:{s}"]) for s in stages)
              + f" | {sum(total[f'{kind}:{s}'] for s in STAGES)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
