"""Guard throughput and latency on a warm Guard, and jsonschema vs jsonschema-rs.

Run: python benchmarks/bench_guard.py. The baseline is the raw ``jsonschema`` validator on
the same schema and arguments (``is_valid``), measured in the same run; ``jsonschema-rs``
(if installed) is measured on the same inputs to show what switching engines would buy.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def rate(fn: Callable[[], object], seconds: float = 0.5) -> float:
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            fn()
        n += 100
    return n / (time.perf_counter() - start)


def latencies(fn: Callable[[], object], n: int = 5000) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t)
    q = statistics.quantiles(samples, n=100)
    return q[49] / 1000, q[98] / 1000


def main() -> None:
    import jsonschema

    guard = Guard.from_catalog([TOOL], policy=POLICY)  # default engine: jsonschema-rs
    py_guard = Guard.from_catalog([TOOL], policy=POLICY, engine="jsonschema")
    good_call = {"name": "update_user_email", "arguments": GOOD}
    bad_call = {"name": "update_user_email", "arguments": BAD}
    text_call = {"type": "function_call", "name": "update_user_email",
                 "arguments": '{"user_id":42,"email":"ada@example.com","dry_run":true}'}
    assert guard.check(good_call).allowed and not guard.check(bad_call).allowed
    cls = jsonschema.Draft202012Validator
    py = cls(TOOL["inputSchema"], format_checker=cls.FORMAT_CHECKER)
    base = rate(lambda: py.is_valid(GOOD))
    print(f"baseline jsonschema is_valid (allowed args)   {base:>10,.0f}/s   1.00x")
    rows = [
        ("guard.check allow (dict arguments)", lambda: guard.check(good_call)),
        ("guard.check allow (JSON-text arguments)", lambda: guard.check(text_call)),
        ("guard.check deny (4 reasons)", lambda: guard.check(bad_call)),
        ("guard.check allow, engine=jsonschema", lambda: py_guard.check(good_call)),
        ("guard.check deny, engine=jsonschema", lambda: py_guard.check(bad_call)),
        ("jsonschema iter_errors (denied args)", lambda: list(py.iter_errors(BAD))),
    ]
    try:
        import jsonschema_rs

        rs = jsonschema_rs.validator_for(TOOL["inputSchema"], validate_formats=True)
        rows += [
            ("jsonschema-rs is_valid (allowed args)", lambda: rs.is_valid(GOOD)),
            ("jsonschema-rs iter_errors (denied args)", lambda: list(rs.iter_errors(BAD))),
        ]
    except ImportError:
        print("jsonschema-rs not installed; skipping it")
    for label, fn in rows:
        r = rate(fn)
        print(f"{label:<46}{r:>10,.0f}/s {r / base:6.2f}x")
    for label, call in (("allow", good_call), ("deny", bad_call)):
        p50, p99 = latencies(lambda c=call: guard.check(c))
        print(f"guard.check {label} latency: p50 {p50:.1f} µs, p99 {p99:.1f} µs")
    t = time.perf_counter()
    cold = Guard.from_catalog([TOOL], policy=POLICY)
    cold.check(good_call)
    print(f"cold Guard (build + first decision): {(time.perf_counter() - t) * 1000:.2f} ms")
    redos()


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
