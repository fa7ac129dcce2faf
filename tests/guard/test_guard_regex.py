"""Schema regexes in the guard: bounded on every pattern, ECMA-262 answers or a deny.

A contract's schemas come from an untrusted server. Every place the guard evaluates a
pattern (``pattern``, ``patternProperties``, ``propertyNames``, the deny-unknown check and
the explanation of ``additionalProperties: false``) must finish in linear time, give the
ECMA-262 answer, and deny (``schema-pattern-unsupported`` / ``pattern-undecidable``) where
it cannot — never fall back to Python's backtracking ``re``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_harness import bytecode_env, run_cli

from histor_sign._schema.regex_subset import ecma_safe
from histor_sign._schema.validation import _collect_patterns
from histor_sign.guard import Decision, Guard

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "data" / "json-schema-test-suite" / "draft2020-12"
ENGINES = ["jsonschema-rs", "jsonschema"]
OPEN = {"defaults": {"deny_unknown_arguments": False}}
FAIL_CLOSED = {"schema-pattern-unsupported", "pattern-undecidable"}

#: In the ECMA-safe subset, exponential for a backtracking engine on EVIL.
REDOS = [r"^(a|a)*$", r"^(a+)+$", r"^(a|aa)+$", r"^(\w+\s?)*$", r"(x+x+)+y"]
#: Outside the subset: lookaround, backreferences, repetitions past the automaton's bounds.
UNSUPPORTED = [r"^(?=a)(a|a)*$", r"^(a|a)*\1$", r"^(?:(?:a{9999}){9999}){9999}$",
               r"^(?:a{1000}){1000}$", r"^\p{Letter}+$"]
EVIL = "a" * 32 + "!"


def codes(decision: Decision) -> list[str]:
    return [r.code for r in decision.reasons]


def _tools(pattern: str) -> list[dict[str, Any]]:
    """One tool per place a pattern is evaluated."""
    return [
        {"name": "pattern", "inputSchema": {"type": "object", "properties": {
            "x": {"type": "string", "pattern": pattern}}}},
        {"name": "closed", "inputSchema": {"type": "object", "patternProperties": {
            pattern: {"type": "integer"}}, "additionalProperties": False}},
        {"name": "open", "inputSchema": {"type": "object", "patternProperties": {
            pattern: {"type": "integer"}}}},
        {"name": "names", "inputSchema": {"type": "object", "propertyNames": {
            "pattern": pattern}}},
        {"name": "unevaluated", "inputSchema": {"type": "object", "patternProperties": {
            pattern: {"type": "integer"}}, "unevaluatedProperties": False}},
    ]


_CHILD = r"""
import json, sys, time
from histor_sign.guard import Guard
cases = json.loads(sys.stdin.read())
out = []
for engine, tools, calls in cases:
    guard = Guard.from_catalog(tools, engine=engine)  # deny unknown arguments: the default
    for name, args in calls:
        t = time.monotonic()
        d = guard.check_arguments(name, args)
        out.append({"codes": [r.code for r in d.reasons], "allowed": d.allowed,
                    "seconds": time.monotonic() - t})
print(json.dumps(out))
"""


def _run_isolated(cases: list[Any]) -> list[dict[str, Any]]:
    """Decide in a fresh interpreter: a regression hangs there (and is killed), not here."""
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(cases), cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **bytecode_env()})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


#: A backtracking engine needs minutes on these; linear matching needs milliseconds. The
#: bound only tells a hang from a loaded machine, it does not measure speed.
HANG = 10.0


def test_redos_patterns_in_the_subset_are_decided_exactly() -> None:
    calls = [("pattern", {"x": EVIL}), ("pattern", {"x": "a" * 32}), ("closed", {EVIL: 1}),
             ("open", {EVIL: 1}), ("names", {EVIL: 1}), ("unevaluated", {EVIL: 1})]
    cases = [(engine, _tools(p), calls) for p in REDOS for engine in ENGINES]
    results = _run_isolated(cases)
    assert max(r["seconds"] for r in results) < HANG
    for (engine, tools, _), chunk in zip(cases, _chunks(results, len(calls)), strict=True):
        pattern = next(iter(tools[1]["inputSchema"]["patternProperties"]))
        expected = _expected(pattern)  # not from Python re: it would take minutes on EVIL
        got = [r["allowed"] for r in chunk]
        assert got == expected, (engine, pattern, [r["codes"] for r in chunk])


def _expected(pattern: str) -> list[bool]:
    """The ECMA answers for the calls above, from facts about EVIL that need no matching:
    every REDOS pattern but the last matches "a"*32 and none matches EVIL (it ends in "!"
    and each is anchored or needs a "y")."""
    evil_matches = False
    plain_matches = pattern != r"(x+x+)+y"
    return [
        evil_matches,        # pattern on EVIL
        plain_matches,       # pattern on "a"*32
        evil_matches,        # additionalProperties false: EVIL is not declared
        evil_matches,        # deny-unknown: EVIL is not declared
        evil_matches,        # propertyNames
        evil_matches,        # unevaluatedProperties false
    ]


def _chunks(items: list[Any], size: int) -> list[list[Any]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def test_patterns_outside_the_subset_deny_every_call_without_running() -> None:
    calls = [("pattern", {"x": "a"}), ("closed", {}), ("names", {}), ("unevaluated", {})]
    cases = [(engine, _tools(p), calls) for p in UNSUPPORTED for engine in ENGINES]
    results = _run_isolated(cases)
    assert max(r["seconds"] for r in results) < HANG
    for r in results:
        assert r["codes"] == ["schema-pattern-unsupported"], r


@pytest.mark.parametrize("engine", ENGINES)
def test_unsupported_pattern_reason_is_one_clear_message(engine: str) -> None:
    guard = Guard.from_catalog(_tools(r"^(a|a)*\1$")[:1], engine=engine)
    (reason,) = guard.check_arguments("pattern", {"x": "a"}).reasons
    assert reason.code == "schema-pattern-unsupported" and reason.pointer == ""
    assert '"^(a|a)*\\\\1$"' in reason.message and "ECMA-262" in reason.message


@pytest.mark.parametrize("engine", ENGINES)
def test_backslash_d_is_ascii_digits_as_in_ecma(engine: str) -> None:
    tool = {"name": "n", "inputSchema": {"type": "object", "properties": {
        "n": {"type": "string", "pattern": r"^\d+$"}}}}
    guard = Guard.from_catalog([tool], engine=engine)
    assert re.search(r"^\d+$", "٣")  # Python's answer, which the guard must not give
    arabic = guard.check_arguments("n", {"n": "٣"})
    assert not arabic.allowed
    # the fast engine gives ECMA's "no match"; the reference engine cannot and says so
    want = "constraint" if engine == "jsonschema-rs" else "pattern-undecidable"
    assert codes(arabic) == [want]
    assert guard.check_arguments("n", {"n": "0123456789"}).allowed


def test_non_ascii_names_under_deny_unknown_are_undecidable_not_guessed() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "patternProperties": {
        r"^x_\w+$": {"type": "integer"}}}}
    guard = Guard.from_catalog([tool])
    assert guard.check_arguments("t", {"x_ab": 1}).allowed
    assert codes(guard.check_arguments("t", {"y": 1})) == ["unknown-argument"]
    # "x_é": \w is ASCII in ECMA-262 (no match) but Unicode in Python (match)
    assert codes(guard.check_arguments("t", {"x_é": 1})) == ["pattern-undecidable"]


def _suite_cases() -> list[Any]:
    files = ["pattern.json", "patternProperties.json", "propertyNames.json",
             "additionalProperties.json", "unevaluatedProperties.json",
             "optional/ecmascript-regex.json", "optional/non-bmp-regex.json"]
    cases = []
    for name in files:
        for group in json.loads((SUITE / name).read_text(encoding="utf-8")):
            text = json.dumps(group["schema"])
            if "$ref" in text or "$id" in text or not _collect_patterns(group["schema"]):
                continue  # wrapped below, so root-relative references would break
            schema = {k: v for k, v in group["schema"].items() if k != "$schema"}
            for test in group["tests"]:
                cases.append(pytest.param(schema, test["data"], test["valid"],
                                          id=f"{name}:{group['description']}:{test['description']}"))
    return cases


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("schema", "data", "valid"), _suite_cases())
def test_json_schema_test_suite_regexes(engine: str, schema: Any, data: Any, valid: bool) -> None:
    """Never allow what ECMA-262 rejects; inside the subset the fast engine agrees exactly."""
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"v": schema},
                                         "required": ["v"]}}
    decision = Guard.from_catalog([tool], policy=OPEN, engine=engine).check_arguments(
        "t", {"v": data})
    safe = all(ecma_safe(p) for p in _collect_patterns(schema))
    if not safe:
        assert codes(decision) == ["schema-pattern-unsupported"]
    elif engine == "jsonschema-rs":
        assert decision.allowed == valid, codes(decision)
    else:
        assert decision.allowed == valid or set(codes(decision)) <= FAIL_CLOSED, codes(decision)


def test_nested_dialect_keeps_the_reference_engine_off_python_re() -> None:
    # jsonschema's evolve() switches to its own class on a subschema's $schema, which
    # matched \D with Python re: NKO DIGIT ZERO is a digit there, a non-digit in ECMA-262
    inner = {"$schema": "https://json-schema.org/draft/2020-12/schema", "pattern": r"^\D$"}
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"v": inner}}}
    fast, reference = (Guard.from_catalog([tool], engine=e) for e in ENGINES)
    assert fast.check_arguments("t", {"v": "\u07c0"}).allowed  # ECMA: \D matches it
    assert codes(reference.check_arguments("t", {"v": "\u07c0"})) == ["schema-dialect-nested"]


def test_cli_guard_says_why_in_one_line(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": _tools(r"^(?=a)(a|a)*$")[:1]}))
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "pattern", "arguments": {"x": EVIL}}))
    run = run_cli("guard", "--catalog", str(tools), str(call))
    assert run.code == 1 and run.stderr == ""
    lines = run.stdout.splitlines()
    assert lines[0].startswith("DENY pattern"), run.stdout
    reasons = [line for line in lines[1:] if line.strip()]
    assert len(reasons) == 1 and "schema-pattern-unsupported" in reasons[0], run.stdout
    assert "outside the regex subset" in reasons[0]
