"""HS106: a schema regex the guard will not run, reported at release time.

The guard denies every call to a tool whose input schema holds a regex outside the ECMA-safe
subset (``schema-pattern-unsupported``). The lint must name exactly those tools, point at
each regex with an escaped JSON pointer, and never disagree with the guard about which
schemas it refuses.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli

from histor_sign._schema.regex_subset import ecma_safe
from histor_sign.canonical import pointer_parts
from histor_sign.catalog import tools_from_dicts
from histor_sign.guard import Guard, lint_catalog
from histor_sign.models import Finding, Severity
from histor_sign.report._findings import RULES

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "data" / "json-schema-test-suite" / "draft2020-12"
OPEN = {"defaults": {"deny_unknown_arguments": False}}


def _string(pattern: str) -> dict[str, Any]:
    return {"type": "string", "maxLength": 10, "pattern": pattern}


#: (case, input schema, the pointers HS106 must give). Each regex is outside the subset.
CASES: list[tuple[str, dict[str, Any], list[str]]] = [
    ("lookahead", {"type": "object", "properties": {"code": _string("^(?=[A-Z])[A-Z0-9]+$")}},
     ["/properties/code/pattern"]),
    ("backreference", {"type": "object", "properties": {"pair": _string(r"^(ab)\1$")}},
     ["/properties/pair/pattern"]),
    ("repetition-9999", {"type": "object", "properties": {"pad": _string("^a{9999}$")}},
     ["/properties/pad/pattern"]),
    # "/" and "~" in the key are escaped as RFC 6901 says (~1, ~0).
    ("patternProperties", {"type": "object", "patternProperties": {
        "^x/~(?!y)": {"type": "string"}}}, ["/patternProperties/^x~1~0(?!y)"]),
    ("nested-items", {"type": "object", "properties": {"rows": {
        "type": "array", "items": {"type": "object", "properties": {
            "tag": _string(r"^\p{L}+$")}}}}},
     ["/properties/rows/items/properties/tag/pattern"]),
    ("nested-defs", {"type": "object", "properties": {"row": {"$ref": "#/$defs/row"}},
                     "$defs": {"row": {"type": "object", "properties": {
                         "name": _string("(?i)^ada$")}}}},
     ["/$defs/row/properties/name/pattern"]),
    ("propertyNames", {"type": "object", "propertyNames": {"pattern": "^(?<k>[a-z]+)$"}},
     ["/propertyNames/pattern"]),
]


def _at(document: Any, ptr: str) -> Any:
    for part in pointer_parts(ptr):
        document = document[int(part)] if isinstance(document, list) else document[part]
    return document


def _regex_at(schema: dict[str, Any], ptr: str) -> str:
    """The regex a pointer names: a ``pattern`` value, or a ``patternProperties`` key."""
    parts = pointer_parts(ptr)
    if len(parts) >= 2 and parts[-2] == "patternProperties":
        assert parts[-1] in _at(schema, ptr.rsplit("/", 1)[0])
        return parts[-1]
    value = _at(schema, ptr)
    assert isinstance(value, str)
    return value


def hs106(tools: list[dict[str, Any]]) -> list[Finding]:
    return [f for f in lint_catalog(tools_from_dicts(tools)) if f.rule == "HS106"]


def guard_codes(tool: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    decision = Guard.from_catalog([tool], policy=OPEN).check_arguments(tool["name"], arguments)
    return [r.code for r in decision.reasons]


@pytest.mark.parametrize(("schema", "pointers"), [pytest.param(s, p, id=c) for c, s, p in CASES])
def test_each_unsupported_regex_is_one_finding_at_its_pointer(
    schema: dict[str, Any], pointers: list[str]
) -> None:
    tool = {"name": "lookup", "inputSchema": schema}
    [finding] = hs106([tool])
    assert finding.severity is Severity.warning is RULES["HS106"].severity
    assert [t.name for t in finding.tools] == ["lookup"]
    assert finding.properties["pointers"] == pointers
    for ptr in pointers:
        assert not ecma_safe(_regex_at(schema, ptr))  # the pointer names the refused regex
        assert ptr in finding.message
    assert "'lookup'" in finding.message and "deny every call" in finding.message
    assert "unknown" in finding.message  # and what the scan makes of it
    # ... which is what the guard does with it, whatever the arguments.
    assert guard_codes(tool, {}) == ["schema-pattern-unsupported"]


def test_safe_regexes_give_no_finding_and_the_guard_runs_them() -> None:
    tool = {"name": "lookup", "inputSchema": {
        "type": "object", "additionalProperties": False,
        "properties": {"code": _string("^[A-Z][A-Z0-9]{0,9}$"),
                       "tags": {"type": "object", "patternProperties": {
                           r"^t_\w+$": _string(r"^\d{1,4}(?:-\d+)?$")}}}}}
    assert hs106([tool]) == []
    assert guard_codes(tool, {"code": "AB12"}) == []
    assert guard_codes(tool, {"code": "ab"}) == ["constraint"]


def test_many_regexes_in_one_tool_are_one_finding_naming_the_first_five() -> None:
    props = {f"p{i}": _string(f"^(?=x{i})") for i in range(7)}
    props["ok"] = _string("^fine$")
    [finding] = hs106([{"name": "t", "inputSchema": {"type": "object", "properties": props}}])
    want = sorted(f"/properties/p{i}/pattern" for i in range(7))
    assert finding.properties["pointers"] == want
    assert all(p in finding.message for p in want[:5])
    assert want[5] not in finding.message and "and 2 more" in finding.message
    assert "/properties/ok/pattern" not in finding.message


def test_names_and_regexes_are_inert_in_the_message_and_exact_in_pointers() -> None:
    name = "evil\x1b]0;owned\x07"
    key = "^\x1b[2J\u202e(?=a)\nHS106 error forged"
    [finding] = hs106([{"name": name, "inputSchema": {
        "type": "object", "patternProperties": {key: {"type": "string"}}}}])
    assert finding.message.isprintable()
    assert "\\u001b[2J\\u202e(?=a)\\nHS106" in finding.message
    assert "\\x1b]0;owned\\x07" in finding.message  # the name as repr shows it
    # The property keeps the real location, for tools that resolve it.
    assert finding.properties["pointers"] == ["/patternProperties/" + key]
    assert finding.tools[0].name == name


def _suite_schemas() -> list[Any]:
    files = ["pattern.json", "patternProperties.json", "propertyNames.json",
             "additionalProperties.json", "unevaluatedProperties.json",
             "optional/ecmascript-regex.json", "optional/non-bmp-regex.json"]
    schemas: list[Any] = []
    for name in files:
        for group in json.loads((SUITE / name).read_text(encoding="utf-8")):
            if "$ref" not in json.dumps(group["schema"]):
                schemas.append({k: v for k, v in group["schema"].items() if k != "$schema"})
    # Places a regex hides outside the usual keywords: the guard refuses them too.
    schemas += [{"const": {"pattern": "(?=a)"}}, {"default": [{"pattern": r"(a)\1"}]},
                {"anyOf": [{"pattern": "^a$"}, {"not": {"pattern": "(?<=a)b"}}]},
                {"items": {"patternProperties": {"a{1001}": True}}}]
    return schemas


def test_lint_and_guard_agree_on_which_schemas_are_refused() -> None:
    """Over the JSON-Schema-Test-Suite regex schemas (safe and unsafe): HS106 exactly when
    the guard denies with schema-pattern-unsupported, every pointer at a refused regex."""
    refused = 0
    for i, schema in enumerate(_suite_schemas()):
        tool = {"name": f"t{i}", "inputSchema": {
            "type": "object", "properties": {"v": schema}}}
        findings = hs106([tool])
        denied = guard_codes(tool, {}) == ["schema-pattern-unsupported"]
        assert bool(findings) == denied, schema
        if findings:
            refused += 1
            for ptr in findings[0].properties["pointers"]:
                assert not ecma_safe(_regex_at(tool["inputSchema"], ptr)), (schema, ptr)
    assert refused >= 8  # the corpus holds refused regexes; the test is not vacuous


def test_release_gate_reports_hs106_and_trips_only_at_warning(tmp_path: Path) -> None:
    """Through the real CLI: the gate fails before anything is signed, and the finding is
    in the terminal output, scan.sarif and summary.md, escaped."""
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps({"tools": [{
        "name": "lookup", "description": "Look up a code.",
        "annotations": {"readOnlyHint": True},
        "inputSchema": {"type": "object", "additionalProperties": False,
                        "properties": {"code": _string("^(?=[A-Z])\x1b[31m[A-Z0-9]+$")}}}]}))
    out = tmp_path / "out"
    run = run_cli("release", "--server", "io.github.example/lookup", "--server-version", "1",
                  "--out-dir", str(out), "--tools", str(catalog), "--fail-on", "warning",
                  "--identity-token", "not-needed-gate-fails-first")
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stderr and "release gate failed" in run.stderr
    assert run.stdout.startswith("HS106 warning 'lookup': ")
    assert "/properties/code/pattern" in run.stdout
    assert sorted(p.name for p in out.iterdir()) == ["scan.sarif", "summary.md"]
    sarif = json.loads((out / "scan.sarif").read_text())
    [result] = sarif["runs"][0]["results"]
    assert result["ruleId"] == "HS106" and result["level"] == "warning"
    assert result["properties"]["pointers"] == ["/properties/code/pattern"]
    summary = (out / "summary.md").read_text()
    assert "| HS106 | warning | `lookup` |" in summary
    for text in (run.stdout, run.stderr, summary, (out / "scan.sarif").read_text()):
        assert "\x1b" not in text


@pytest.mark.parametrize(("fail_on", "strict", "passed"), [
    ("warning", False, False), ("error", False, True), ("error", True, True),
    ("never", True, True)])
def test_gate_treats_hs106_like_the_other_warning_rules(
    fail_on: str, strict: bool, passed: bool
) -> None:
    from histor_sign.models import parse_catalog
    from histor_sign.pipeline import ReleaseRequest, gate
    from histor_sign.report._findings import FailOn

    catalog = parse_catalog({"tools": [{"name": "lookup", "inputSchema": CASES[0][1]}]},
                            "tools.json")
    request = ReleaseRequest(server="io.github.example/lookup", server_version="1",
                             out_dir=Path("out"), fail_on=FailOn(fail_on), strict=strict)
    findings, _stats, ok = gate(catalog, request)
    assert "HS106" in {f.rule for f in findings}
    # strict promotes incomplete analysis only; HS106 is a finished, definite result
    assert not any(f.incomplete for f in findings if f.rule == "HS106")
    assert ok is passed
