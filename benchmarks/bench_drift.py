"""Benchmark: what drift triage costs. ``compare`` with the signed definitions (every changed
tool triaged: description rules, annotation flips, the schema algebra both ways) against the
baseline ``compare`` on digests only, on the same catalogs in the same run.

The catalog is every tool of tests/data/livemcpbench-tools.json; the served copy changes each
tool's description and loosens one argument of every third tool (schema widened/narrowed).

Run: python benchmarks/bench_drift.py [--runs N]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from histor_sign.drift import compare  # noqa: E402
from histor_sign.revision import build_statement  # noqa: E402

IDENTITY = "https://github.com/acme/tools/.github/workflows/sign.yml@refs/heads/main"


def catalog() -> list[dict[str, Any]]:
    data = json.loads((REPO / "tests" / "data" / "livemcpbench-tools.json").read_text("utf-8"))
    seen: dict[str, dict[str, Any]] = {}
    for server in data:
        for entry in server["tools"].values():
            for tool in entry["tools"]:
                seen.setdefault(tool["name"], tool)
    return list(seen.values())


def served(signed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(signed)
    for i, tool in enumerate(out):
        tool["description"] = (tool.get("description") or "") + " Now faster."
        props = tool.get("inputSchema", {}).get("properties") or {}
        if i % 3 == 0 and props:
            first = next(iter(props))
            props[first] = {}
    return out


def timed(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    signed = catalog()
    current = served(signed)
    statement = build_statement(tools=signed, server="io.github.acme/tools",
                                server_version="1", identity=IDENTITY)
    base = timed(lambda: compare(statement, current), args.runs)
    full = timed(lambda: compare(statement, current, signed), args.runs)
    result = compare(statement, current, signed)
    print(f"tools: {len(signed)} (all changed; {len(signed[::3])} with a loosened argument)")
    print(f"digests only (baseline): {base * 1000:.1f} ms")
    print(f"triaged:                 {full * 1000:.1f} ms  ({full / base:.1f}x baseline)")
    print(f"risk: {result.risk}; changes: {sum(len(t.changes) for t in result.tools)}")


if __name__ == "__main__":
    main()
