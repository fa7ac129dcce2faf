"""Every pair decision is bounded: ReDoS patterns, blow-up repetitions, uniqueItems, enums.

Each class runs in a fresh interpreter (its own ``VmHWM`` is the peak of that class alone)
and must finish well inside a small multiple of the per-pair time bound, without raising,
with a bounded peak RSS; the outcome is checked for soundness, never against a fixed string
where more than one answer is honest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_harness import bytecode_env

from histor_sign._schema.algebra import Bounds

ROOT = Path(__file__).resolve().parents[2]
#: Wall-clock slack over the per-pair bound (CI machines are shared); a regression shows
#: as minutes or a MemoryError, far beyond it.
SLACK = 3.0
MAX_RSS_MB = 300

_CHILD = r"""
import json, sys, time
from histor_sign._schema.witness import decide
from histor_sign._schema.validation import prepare_root
cases = json.loads(sys.stdin.read())
out = []
for a, b in cases:
    t = time.monotonic()
    d = decide(a, b)
    elapsed = time.monotonic() - t
    ok = None
    if d.outcome == "overlap":
        ok = all(prepare_root(s, "t").accepts(d.witness) for s in (a, b))
    out.append({"outcome": d.outcome, "seconds": elapsed, "witness_ok": ok})
# VmHWM is this program's own peak: ru_maxrss would also count the forked test runner's
# memory, which Linux carries across exec.
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"results": out, "rss_mb": hwm / 1024}))
"""


def _run(cases: list[tuple[Any, Any]]) -> tuple[list[dict[str, Any]], float]:
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(cases), cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **bytecode_env()})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""  # no engine logs, no tracebacks
    report = json.loads(done.stdout)
    return report["results"], report["rss_mb"]


def _x(schema: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": schema}, "required": ["x"]}


def _check(cases: list[tuple[Any, Any]]) -> list[dict[str, Any]]:
    results, rss = _run(cases)
    budget = Bounds().seconds * SLACK
    for (a, b), r in zip(cases, results, strict=True):
        assert r["seconds"] < budget, (a, b, r)
        if r["outcome"] == "overlap":
            assert r["witness_ok"], (a, b, r)
    assert rss < MAX_RSS_MB, rss
    return results


REDOS = [r"^(a|a)*$", r"^(a+)+$", r"^(a|aa)+$", r"^(\w+\s?)*$", r"^(.*a){20}$",
         r"(x+x+)+y", r"^([a-z0-9]+([-.][a-z0-9]+)*)+@$"]
EVIL = "a" * 40 + "!"


def test_redos_patterns_are_decided_in_linear_time() -> None:
    cases = []
    for pattern in REDOS:
        cases += [
            # pattern against a fixed evil subject: decided by matching it
            (_x({"type": "string", "pattern": pattern}), _x({"const": EVIL})),
            # patternProperties against an evil property name
            ({"type": "object", "patternProperties": {pattern: {"type": "integer"}},
              "required": [EVIL]},
             {"type": "object", "properties": {EVIL: {"type": "string"}}, "required": [EVIL]}),
            # propertyNames
            ({"type": "object", "propertyNames": {"pattern": pattern}, "required": [EVIL]},
             {"type": "object", "required": [EVIL]}),
        ]
    results = _check(cases)
    # The evil subject matches none of these patterns, so the patternProperties pair has a
    # common instance ({EVIL: "s"}: the pattern does not apply).
    assert all(r["outcome"] != "disjoint" for r in results[1::3])


BLOW_UP = [r"^(?:(?:a{9999}){9999}){9999}$", r"^(?:a{1000}){1000}$",
           r"^(?:(?:a{999}|b){999})c$", "^" + "a{1000}" * 200 + "$",
           r"(?:a{1000}|b)(?:a{1000}|b)(?:a{1000}|b)" * 20]


def test_blow_up_repetitions_are_never_expanded() -> None:
    cases = []
    for pattern in BLOW_UP:
        cases += [(_x({"type": "string", "pattern": pattern}), _x({"type": "string"})),
                  ({"type": "object", "patternProperties": {pattern: {"type": "null"}}},
                   {"type": "object", "required": ["aaa"]})]
    results = _check(cases)
    # every pattern matches some string ("a"*n, or "b"s), and "aaa" may be a string
    assert all(r["outcome"] != "disjoint" for r in results)


UNIQUE_ITEMS = [{}, {"type": "integer"}, {"type": "string"},
                {"type": "number", "multipleOf": 0.5},
                {"type": "array", "minItems": 3, "uniqueItems": True},
                {"type": "object", "required": ["k"]}, {"enum": list(range(600))}]


@pytest.mark.slow  # a fresh interpreter per class of cases
def test_unique_items_with_many_elements_is_bounded() -> None:
    cases = []
    for items in UNIQUE_ITEMS:
        a = _x({"type": "array", "minItems": 256, "uniqueItems": True, "items": items})
        b = _x({"type": "array", "items": {"not": {"type": "boolean"}}})
        cases += [(a, b), (a, a)]
    results = _check(cases)
    assert results[2]["outcome"] == "overlap"  # 256 distinct integers exist and are found


@pytest.mark.slow  # a fresh interpreter per class of cases
def test_nested_unique_arrays_and_large_unique_enums_are_bounded() -> None:
    nested = _x({"type": "array", "minItems": 200, "uniqueItems": True,
                 "items": {"type": "array", "minItems": 100, "uniqueItems": True,
                           "items": {"type": "array", "minItems": 50, "uniqueItems": True}}})
    enum_a = _x({"type": "array", "minItems": 255, "uniqueItems": True,
                 "items": {"enum": [[i] for i in range(512)]}})
    enum_b = _x({"type": "array", "items": {"enum": [[i] for i in range(256, 768)]}})
    results = _check([(nested, nested), (enum_a, enum_b),
                      (_x({"enum": [{"k": i} for i in range(512)]}),
                       _x({"enum": [{"k": i} for i in range(511, -1, -1)]}))])
    assert results[2]["outcome"] == "overlap"
