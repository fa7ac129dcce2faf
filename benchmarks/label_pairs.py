"""Show drawn pairs to the labeler, and build the labeled pair files from the labeler's sheets.

    python benchmarks/label_pairs.py show tuning START COUNT   # what the labeler reads
    python benchmarks/label_pairs.py show tuning2 START COUNT  # the second tuning set
    python benchmarks/label_pairs.py show tuning3 START COUNT  # the third tuning set
    python benchmarks/label_pairs.py show tuning4 START COUNT  # the fourth set (validation)
    python benchmarks/label_pairs.py show tuning5 START COUNT  # the fifth set (validation)
    python benchmarks/label_pairs.py show tuning6 START COUNT  # the sixth set (validation)
    python benchmarks/label_pairs.py show tuning7 START COUNT  # the seventh set (blind)
    python benchmarks/label_pairs.py show tuning8 START COUNT  # the eighth set (blind)
    python benchmarks/label_pairs.py show tuning9 START COUNT  # the ninth set (blind)
    python benchmarks/label_pairs.py show tuning10 START COUNT # the tenth set (blind)
    python benchmarks/label_pairs.py build                      # sheets -> pairs-<half>.json
    python benchmarks/label_pairs.py stats                      # counts, as Markdown

The labeler reads each pair as ``show`` prints it (names, titles, descriptions up to
``SHOWN`` characters, top-level arguments with ``*`` for required, annotation hints) and the
rubric (docs/scan-rubric.md), and writes a sheet ``benchmarks/data/sheets/<half>.txt``:

    range 0 49                      # pairs 0..49 were read; those not listed are distinct
    3 overlap two web search engines, both take a query
    17 contradict? end saves the test, clear discards it

A ``?`` after the label marks it uncertain; the rest of the line is the note. A line
``N distinct? note`` records an uncertain or annotated distinct. Only pairs inside a
``range`` line are labeled; ``build`` writes those (and only those) to
``benchmarks/data/pairs-<half>.json``. Nothing here reads the scanner.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
SHOWN = 400
LABELS = ("overlap", "contradict", "distinct")
LABELER = "labels24 helper session (an AI model), reading the tools only, blind to the scanner"
#: Every half, in build order, with the directory of its catalogs and its labeler. The
#: second tuning set (``tuning2``, drawn by benchmarks/tuning2_pairs.py from the
#: LiveMCPBench servers) was labeled later, by another session, with the same rubric.
HALVES: dict[str, tuple[str, str]] = {
    "tuning": ("real-servers", LABELER),
    "heldout": ("real-servers", LABELER),
    "tuning2": ("livemcpbench-servers", "tuning2 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The third tuning set (benchmarks/tuning3_pairs.py): new servers installed from npm.
    "tuning3": ("tuning3-servers", "tuning3 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The fourth set (benchmarks/tuning3_pairs.py --set tuning4): a validation set.
    "tuning4": ("tuning4-servers", "tuning4 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The fifth set (benchmarks/tuning3_pairs.py --set tuning5): a validation set.
    "tuning5": ("tuning5-servers", "tuning5 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The sixth set (benchmarks/tuning3_pairs.py --set tuning6): a validation set.
    "tuning6": ("tuning6-servers", "tuning6 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The seventh set (benchmarks/tuning3_pairs.py --set tuning7): issue 38's blind set.
    "tuning7": ("tuning7-servers", "set7 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The eighth set (benchmarks/tuning3_pairs.py --set tuning8): issue 38's second blind set.
    "tuning8": ("tuning8-servers", "set8 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The ninth set (benchmarks/tuning3_pairs.py --set tuning9): issue 38's third blind set.
    "tuning9": ("tuning9-servers", "set9 helper session (an AI model), reading the "
                "tools only, blind to the scanner"),
    # The tenth set (benchmarks/tuning3_pairs.py --set tuning10): issue 38's fourth blind set.
    "tuning10": ("tuning10-servers", "set10 helper session (an AI model), reading the "
                 "tools only, blind to the scanner"),
}
#: The script that drew each half's pairs.
DRAWN_BY = {"tuning2": "benchmarks/tuning2_pairs.py", "tuning3": "benchmarks/tuning3_pairs.py",
            "tuning4": "benchmarks/tuning3_pairs.py --set tuning4",
            "tuning5": "benchmarks/tuning3_pairs.py --set tuning5",
            "tuning6": "benchmarks/tuning3_pairs.py --set tuning6",
            "tuning7": "benchmarks/tuning3_pairs.py --set tuning7",
            "tuning8": "benchmarks/tuning3_pairs.py --set tuning8",
            "tuning9": "benchmarks/tuning3_pairs.py --set tuning9",
            "tuning10": "benchmarks/tuning3_pairs.py --set tuning10"}


def catalogs(half: str = "tuning") -> dict[str, dict[str, dict[str, Any]]]:
    """``{slug: {tool name: tool}}`` of the catalogs the pairs of ``half`` were drawn from."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted((DATA / HALVES[half][0]).glob("*.json")):
        if path.name == "index.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        out[data["server"]] = {t["name"]: t for t in data["tools"]}
    return out


def _type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "?"
    if "enum" in schema:
        values = [str(v) for v in schema["enum"]][:6]
        return "enum[" + "|".join(values) + ("|…" if len(schema["enum"]) > 6 else "") + "]"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = "/".join(str(k) for k in kind)
    if kind is None:
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                kind = "|".join(_type(s) for s in schema[key])
    if kind == "array" and isinstance(schema.get("items"), dict):
        kind = f"{_type(schema['items'])}[]"
    return str(kind or "any")


def render_tool(tid: str, tool: dict[str, Any]) -> str:
    ann = tool.get("annotations") or {}
    hints = [k.replace("Hint", "") for k in ("readOnlyHint", "destructiveHint")
             if ann.get(k) is True]
    head = f"  {tid}" + (f"  [{','.join(hints)}]" if hints else "")
    if tool.get("title") and tool["title"] != tool["name"]:
        head += f"  title={tool['title']!r}"
    desc = re.sub(r"\s+", " ", tool.get("description") or "").strip()
    if len(desc) > SHOWN:
        desc = desc[:SHOWN] + f" …(+{len(desc) - SHOWN})"
    schema = tool.get("inputSchema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args = ", ".join(f"{k}{'*' if k in required else ''}:{_type(v)}" for k, v in props.items())
    return f"{head}\n    D: {desc}\n    A: {args or '-'}"


def show(half: str, start: int, count: int) -> None:
    doc = json.loads((DATA / "unlabeled" / f"pairs-{half}.json").read_text())
    cats = catalogs(half)
    for i, pair in enumerate(doc["pairs"][start:start + count], start):
        print(f"#{i} {pair['stratum']}")
        for tid in (pair["a"], pair["b"]):
            slug, name = tid.split(":", 1)
            print(render_tool(tid, cats[slug][name]))


def read_sheet(path: Path) -> dict[int, dict[str, Any]]:
    """``{pair index: {label, uncertain, note}}`` for every pair inside a ``range``."""
    covered: set[int] = set()
    marked: dict[int, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip() if line.lstrip().startswith("#") else line.strip()
        if not line:
            continue
        parts = line.split(None, 2)
        if parts[0] == "range":
            covered.update(range(int(parts[1]), int(parts[2]) + 1))
            continue
        label = parts[1].rstrip("?")
        if label not in LABELS:
            raise SystemExit(f"{path}:{number}: unknown label {parts[1]!r}")
        index = int(parts[0])
        if index in marked:
            raise SystemExit(f"{path}:{number}: pair {index} labeled twice")
        marked[index] = {"label": label, "uncertain": parts[1].endswith("?"),
                         "note": parts[2].strip() if len(parts) > 2 else ""}
    stray = set(marked) - covered
    if stray:
        raise SystemExit(f"{path}: pairs outside any range: {sorted(stray)}")
    return {i: marked.get(i, {"label": "distinct", "uncertain": False, "note": ""})
            for i in sorted(covered)}


def build(out_dir: Path = DATA) -> None:
    """Write ``pairs-<half>.json`` to ``out_dir`` from the sheets and the drawn pairs."""
    for half, (_, labeler) in HALVES.items():
        sheet = DATA / "sheets" / f"{half}.txt"
        if not sheet.exists():
            continue
        doc = json.loads((DATA / "unlabeled" / f"pairs-{half}.json").read_text())
        labels = read_sheet(sheet)
        pairs = []
        for index, mark in labels.items():
            pair = doc["pairs"][index]
            row = {"index": index, "a": pair["a"], "b": pair["b"], "label": mark["label"],
                   "uncertain": mark["uncertain"], "stratum": pair["stratum"],
                   "scope": pair["scope"]}
            if mark["note"]:
                row["note"] = mark["note"]
            pairs.append(row)
        doc_out = {
            "format": "histor.labeled-pairs/v1", "half": half, "seed": doc["seed"],
            "rubric": "docs/scan-rubric.md", "labeler": labeler,
            "procedure": DRAWN_BY.get(half, "benchmarks/sample_pairs.py") + " (drawing), benchmarks/"
                         "label_pairs.py (sheets); see benchmarks/data/README.md",
            "servers": doc["servers"], "drawn": len(doc["pairs"]), "labeled": len(pairs),
            "pairs": pairs,
        }
        if half == "heldout":
            doc_out["warning"] = ("held-out half: report figures on it, never tune "
                                  "thresholds, rules or lexicons on it")
        if "catalogs" in doc:
            doc_out["catalogs"] = doc["catalogs"]
        (out_dir / f"pairs-{half}.json").write_text(json.dumps(doc_out, indent=1) + "\n")
        print(f"{half}: {len(pairs)} labeled of {len(doc['pairs'])}",
              dict(Counter(p["label"] for p in pairs)), file=sys.stderr)


def stats() -> str:
    """Counts per half, stratum and label (Markdown), for benchmarks/data/README.md."""
    lines = ["| half | stratum | pairs | overlap | contradict | distinct | uncertain |",
             "|---|---|---|---|---|---|---|"]
    for half in HALVES:
        path = DATA / f"pairs-{half}.json"
        if not path.exists():
            continue
        pairs = json.loads(path.read_text())["pairs"]
        groups: dict[str, list[dict[str, Any]]] = {}
        for pair in pairs:
            groups.setdefault(pair["stratum"], []).append(pair)
        for scope in ("within", "cross"):
            groups[f"all {scope}-server"] = [p for p in pairs if p["scope"] == scope]
        groups["all"] = pairs
        for name, rows in groups.items():
            count = Counter(p["label"] for p in rows)
            lines.append(f"| {half} | {name} | {len(rows)} | {count['overlap']} | "
                         f"{count['contradict']} | {count['distinct']} | "
                         f"{sum(p['uncertain'] for p in rows)} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("step", choices=["show", "build", "stats"])
    ap.add_argument("half", nargs="?", choices=list(HALVES))
    ap.add_argument("start", nargs="?", type=int, default=0)
    ap.add_argument("count", nargs="?", type=int, default=50)
    args = ap.parse_args(argv)
    if args.step == "show":
        if args.half is None:
            ap.error("show needs a half")
        show(args.half, args.start, args.count)
    elif args.step == "stats":
        print(stats())
    else:
        build()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
