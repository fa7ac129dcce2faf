"""Benchmark ``replay``: throughput over a 10,000-call trace against the 527-tool corpus.

Arguments for each call are the witness our engine builds for a randomly chosen corpus tool
(so most calls are valid for their selected tool). Baseline in the same run: validating every
call against every tool with plain ``jsonschema`` and no pre-checks.

    python benchmarks/bench_replay.py [--calls 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histor_sign._call_import import calls_from_bytes
from histor_sign._schema.validation import prepare_root
from histor_sign._schema.witness import decide_roots
from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions._replay import ReplayOptions, replay_calls

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "livemcpbench-tools.json"


def corpus_tools() -> list[dict[str, Any]]:
    data = json.loads(CORPUS.read_text())
    return [t for server in data for entry in server["tools"].values() for t in entry["tools"]]


def trace(items: list[dict[str, Any]], n: int) -> bytes:
    rng = random.Random(3)
    any_object = prepare_root({"type": "object"})
    samples = []
    for tool in items:
        d = decide_roots(prepare_root(tool["inputSchema"]), any_object)
        if d.outcome == "overlap":
            samples.append((tool["name"], d.witness))
    lines = []
    for i in range(n):
        name, args = rng.choice(samples)
        lines.append(json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                                 "params": {"name": name, "arguments": args}}))
    return ("\n".join(lines) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=10_000)
    args = parser.parse_args()
    items = corpus_tools()
    tools = tools_from_dicts(items, "livemcpbench")
    data = trace(items, args.calls)

    started = time.perf_counter()
    calls = calls_from_bytes(data, "trace.jsonl")
    imported = time.perf_counter() - started
    started = time.perf_counter()
    result = replay_calls(tools, calls, ReplayOptions(max_calls=args.calls,
                                                      max_validations=10**9))
    elapsed = time.perf_counter() - started
    rules: dict[str, int] = {}
    for f in result.findings:
        rules[f.rule] = rules.get(f.rule, 0) + 1
    print(f"replay: {len(calls)} calls x {len(tools)} tools; import {imported:.2f} s, replay "
          f"{elapsed:.2f} s = {len(calls) / elapsed:.0f} calls/s; full validations "
          f"{result.stats['validations']}; findings {dict(sorted(rules.items()))}")

    import jsonschema

    sample = calls[:200]
    validators = [jsonschema.validators.validator_for(t.input_schema)(t.input_schema)
                  for t in tools]
    started = time.perf_counter()
    for call in sample:
        for v in validators:
            v.is_valid(call.arguments)
    base = (time.perf_counter() - started) / len(sample)
    print(f"baseline: plain jsonschema against every tool = {1 / base:.0f} calls/s; "
          f"ratio replay/baseline throughput = {(len(calls) / elapsed) * base:.1f}x")


if __name__ == "__main__":
    main()
