"""Guard decisions against the engine the guard is built on, ``jsonschema_rs``.

Per-call latency on a warm Guard, interleaved with ``jsonschema_rs`` on the same schema and
arguments (``is_valid`` for allowed calls, ``iter_errors`` for denied ones), and the
``guard`` command against a minimal ``jsonschema_rs`` script; ratio = guard / baseline.
``--redos`` adds the hostile-regex comparison with Python ``re``.
``--instructions`` counts instructions per allowed call instead, under callgrind (both sides,
repeatable on a loaded machine, where wall time is not).
Run: ``python benchmarks/bench_guard.py [--quick] [--json] [--redos] [--instructions]``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case, Side, bench_env, run_cases, run_command

from histor_sign.guard import Guard

TOOL: dict[str, Any] = {
    "name": "update_user_email",
    "description": "Change a user's email address.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "user_id": {"type": "integer", "minimum": 1},
            "email": {"type": "string", "minLength": 5, "maxLength": 320, "format": "email"},
            "notify": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            "reason": {"enum": ["user-request", "support", "compliance"]},
            "dry_run": {"type": "boolean"},
        },
        "required": ["user_id", "email", "dry_run"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": False, "destructiveHint": True},
}
GOOD = {"user_id": 42, "email": "ada@example.com", "notify": ["ops"], "reason": "support",
        "dry_run": True}
BAD = {"user_id": "42", "email": "x", "dry_run": False, "admin": True}
POLICY = {"tools": {"update_user_email": {"max_effect": 5, "effect_from": "notify"}}}


def cases(quick: bool = False) -> list[Case]:
    """Guard decisions against ``jsonschema_rs`` (the engine the guard is built on) on the
    same schema and arguments: allowed calls against ``is_valid``, denied ones against
    ``iter_errors``; and the ``guard`` command against a minimal script that reads the same
    two files and validates with ``jsonschema_rs``."""
    import jsonschema_rs

    guard = Guard.from_catalog([TOOL], policy=POLICY)  # default engine: jsonschema-rs
    good_call = {"name": "update_user_email", "arguments": GOOD}
    bad_call = {"name": "update_user_email", "arguments": BAD}
    text_call = {"type": "function_call", "name": "update_user_email",
                 "arguments": '{"user_id":42,"email":"ada@example.com","dry_run":true}'}
    assert guard.check(good_call).allowed and not guard.check(bad_call).allowed
    rs = jsonschema_rs.validator_for(TOOL["inputSchema"], validate_formats=True)
    assert rs.is_valid(GOOD) and not rs.is_valid(BAD)
    n = 2000 if quick else 10000
    lib = [
        Case("guard allow (parsed call)", "lib", lambda: guard.check(good_call),
             lambda: rs.is_valid(GOOD), "jsonschema_rs is_valid", n, 200, "us", 5.0),
        Case("guard allow (JSON-text arguments)", "lib",
             lambda: guard.check(text_call),
             lambda: rs.is_valid(json.loads(text_call["arguments"])),
             "json.loads + jsonschema_rs is_valid", n, 200, "us"),
        Case("guard deny (4 reasons)", "lib", lambda: guard.check(bad_call),
             lambda: list(rs.iter_errors(BAD)), "jsonschema_rs iter_errors", n, 200,
             "us"),
    ]
    return lib + cli_cases(quick)


_BASELINE_SCRIPT = """\
import json, sys, jsonschema_rs
tools = {t["name"]: t for t in json.load(open(sys.argv[1]))["tools"]}
call = json.load(open(sys.argv[2]))
v = jsonschema_rs.validator_for(tools[call["name"]]["inputSchema"], validate_formats=True)
sys.exit(0 if v.is_valid(call["arguments"]) else 1)
"""


def cli_cases(quick: bool = False) -> list[Case]:
    work = Path(tempfile.mkdtemp(prefix="bench-guard-"))
    (work / "tools.json").write_text(json.dumps({"tools": [TOOL]}))
    (work / "good.json").write_text(json.dumps({"name": TOOL["name"], "arguments": GOOD}))
    (work / "bad.json").write_text(json.dumps({"name": TOOL["name"], "arguments": BAD}))
    (work / "policy.toml").write_text('[tools.update_user_email]\nmax_effect = 5\n'
                                      'effect_from = "notify"\n')
    py = sys.executable

    def ours(call: str, expect: int) -> Side:
        argv = [py, "-m", "histor_sign", "guard", str(work / call), "--catalog",
                str(work / "tools.json"), "--policy", str(work / "policy.toml")]
        return lambda: run_command(argv, expect=expect)

    def base(call: str, expect: int) -> Side:
        argv = [py, "-c", _BASELINE_SCRIPT, str(work / "tools.json"), str(work / call)]
        return lambda: run_command(argv, expect=expect)

    n = 5 if quick else 15
    return [
        Case("guard allow (command)", "cli", ours("good.json", 0), base("good.json", 0),
             "python script: json + jsonschema_rs", n),
        Case("guard deny (command)", "cli", ours("bad.json", 1), base("bad.json", 1),
             "python script: json + jsonschema_rs", n),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--redos", action="store_true", help="also the hostile-regex runs")
    parser.add_argument("--instructions", action="store_true",
                        help="instructions per allowed call under callgrind, both sides")
    parser.add_argument("--loop", nargs=2, metavar=("SIDE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop:
        _loop(args.loop[0], int(args.loop[1]))
    elif args.instructions:
        instructions()
    else:
        run_cases(cases(args.quick), args.json)
    if args.redos:
        redos()


def _loop(side: str, n: int) -> None:
    """``n`` allowed calls of one side, after the same warm-up whatever ``n`` is."""
    import jsonschema_rs

    guard = Guard.from_catalog([TOOL], policy=POLICY)
    call = {"name": "update_user_email", "arguments": GOOD}
    rs = jsonschema_rs.validator_for(TOOL["inputSchema"], validate_formats=True)
    for _ in range(100):
        guard.check(call)
        rs.is_valid(GOOD)
    run: Any = (lambda: guard.check(call)) if side == "guard" else (lambda: rs.is_valid(GOOD))
    for _ in range(n):
        run()


def instructions(n: int = 20000) -> None:
    """Instructions per call of each side: a callgrind run of ``n`` calls minus one of none
    (start-up, imports and warm-up cancel out), so the per-call loop counts on both sides."""
    def count(side: str, calls: int) -> int:
        with tempfile.TemporaryDirectory() as tmp:
            done = subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out",
                 sys.executable, __file__, "--loop", side, str(calls)],
                capture_output=True, text=True, check=True,
                env={**bench_env(), "PYTHONHASHSEED": "0"})
        found = re.search(r"Collected : (\d+)", done.stderr)
        if found is None:
            raise SystemExit(f"no callgrind total: {done.stderr[-500:]}")
        return int(found.group(1))

    per_call = {side: (count(side, n) - count(side, 0)) / n for side in ("guard", "rs")}
    print(f"guard allow (parsed call): {per_call['guard']:.0f} instructions per call, "
          f"jsonschema_rs is_valid: {per_call['rs']:.0f}; "
          f"ratio {per_call['guard'] / per_call['rs']:.2f}")


def redos() -> None:
    """A hostile schema regex: the guard's linear matcher against Python ``re`` (what the
    deny-unknown check used before) on ``^(a|a)*$`` and n ``a``s then ``!``; ``re`` doubles
    with each ``a`` (32 of them: over a minute), so the baseline stops at n = 22."""
    import re

    pattern = r"^(a|a)*$"
    tool = {"name": "t", "inputSchema": {"type": "object",
                                         "patternProperties": {pattern: {"type": "integer"}}}}
    guards = {e: Guard.from_catalog([tool], engine=e) for e in ("jsonschema-rs", "jsonschema")}
    for n in (16, 18, 20, 22, 32, 1000):
        subject = "a" * n + "!"
        t = time.perf_counter()
        for engine, guard in guards.items():
            assert not guard.check_arguments("t", {subject: 1}).allowed, engine
        ours = (time.perf_counter() - t) / len(guards)
        if n <= 22:
            t = time.perf_counter()
            re.search(pattern, subject)
            base = time.perf_counter() - t
            print(f"ReDoS n={n:<5} Python re {base * 1000:9.1f} ms   guard {ours * 1000:7.3f} ms"
                  f"   {base / ours:9.0f}x")
        else:
            print(f"ReDoS n={n:<5} Python re   (skipped)   guard {ours * 1000:7.3f} ms")


if __name__ == "__main__":
    main()
