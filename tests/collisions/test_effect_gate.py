"""The release gate judges effects as seed 000 and MCP define them (issue 38).

TC004 is ToolClash's: a proven confusable overlap whose *explicit* hints contradict, read with
MCP's semantics (``readOnlyHint`` defaults to false; ``destructiveHint`` speaks when the tool
is not read-only). Effects read from action words and contrasting actions are HS201, a
warning: the default gate (``--fail-on error``) does not stop a server whose API both
archives and deletes. Each false gate the issue names is a case here; each failed the
default gate on 3c95fdb (a TC004 error), and the SDK-style ``{"destructiveHint": true}`` was
read from its verb instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_harness import run_cli

from histor_sign._call_import import calls_from_document
from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.collisions._replay import replay_calls
from histor_sign.models import Finding, parse_catalog
from histor_sign.report._findings import RULES, FailOn, reaches_threshold
from histor_sign.report._render import render

ID = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}
SARIF_SCHEMA = json.loads((Path(__file__).parent.parent / "data" /
                           "sarif-schema-2.1.0.json").read_text())


def tool(name: str, description: str, annotations: dict[str, Any] | None = None,
         schema: dict[str, Any] = ID) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
    if annotations is not None:
        out["annotations"] = annotations
    return out


def scan(*tools: dict[str, Any]) -> list[Finding]:
    cat = parse_catalog({"tools": list(tools)}, "server.json")
    return scan_catalogs([cat], ScanOptions(budget_seconds=None)).findings


def effect_rules(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.rule, f.severity.value) for f in findings if f.rule in ("TC004", "HS201")]


def assert_gate_passes(findings: list[Finding]) -> None:
    errors = [f"{f.rule}: {f.message}" for f in findings if f.severity.value == "error"]
    assert errors == []
    assert not reaches_threshold(findings, FailOn.error, strict=False)


def test_archive_vs_delete_stating_the_same_destructive_hints_is_no_tc004() -> None:
    """mcp-linear: ``linear_archiveProjectUpdate`` and ``linear_deleteProjectUpdate`` both
    state the same destructive hints — nothing contradicts; the contrasting actions are
    HS201, and the message says which hints each stated."""
    found = scan(
        tool("linear_archiveProjectUpdate", "Archives a project update", DESTRUCTIVE),
        tool("linear_deleteProjectUpdate", "Deletes a project update", DESTRUCTIVE),
        tool("linear_getProjectUpdates", "Gets project updates", {"readOnlyHint": True}))
    assert_gate_passes(found)
    hs = [f for f in found if f.rule == "HS201"]
    assert [(f.severity.value, {t.name for t in f.tools}) for f in hs] == [
        ("warning", {"linear_archiveProjectUpdate", "linear_deleteProjectUpdate"})]
    assert hs[0].message.count("states readOnlyHint: false, destructiveHint: true") == 2
    assert hs[0].properties["similarity"]["contrastingActions"] is True
    assert hs[0].properties["contradictions"] == []


def test_close_vs_delete_inferred_is_no_error() -> None:
    """todoist-mcp: ``close_tasks`` vs ``delete_tasks``, neither stating a hint."""
    found = scan(tool("close_tasks", "Close one or more tasks"),
                 tool("delete_tasks", "Delete one or more tasks"),
                 tool("get_tasks", "Get tasks"))
    assert_gate_passes(found)
    assert effect_rules(found) == [("HS201", "warning")]
    hs = next(f for f in found if f.rule == "HS201")
    assert "inferred from 'close'; states no effect hints" in hs.message


def test_stop_playback_vs_delete_clip_is_no_error() -> None:
    """ableton-mcp: stopping a clip's playback and deleting the clip."""
    found = scan(tool("stop_clip", "Stop playing a clip"),
                 tool("delete_clip", "Delete a clip"),
                 tool("fire_clip", "Start playing a clip"))
    assert_gate_passes(found)
    assert all(rule != "TC004" for rule, _ in effect_rules(found))


@pytest.mark.parametrize("hints", [DESTRUCTIVE, {"readOnlyHint": False,
                                                 "destructiveHint": False},
                                   {"destructiveHint": True}, None])
def test_many_archive_and_delete_pairs_with_identical_hints_fail_no_gate(
        hints: dict[str, Any] | None) -> None:
    """A large server whose delete and archive tools state identical hints (29 errors on
    3c95fdb for one such server): warnings, not one error."""
    objects = ["issue", "project", "comment", "document", "label", "team", "cycle", "view",
               "template", "webhook", "milestone", "initiative"]
    tools = [tool(f"{verb}_{obj}", f"{verb.capitalize()} a {obj}", hints)
             for obj in objects for verb in ("archive", "delete")]
    found = scan(*tools)
    assert_gate_passes(found)
    assert effect_rules(found) == [("HS201", "warning")] * len(objects)


@pytest.mark.parametrize("twin", [{"readOnlyHint": True, "destructiveHint": False},
                                  {"readOnlyHint": True},
                                  {"destructiveHint": False}])
def test_sdk_style_destructive_hint_states_a_destructive_tool(twin: dict[str, Any]) -> None:
    """The Python SDK writes ``ToolAnnotations(destructiveHint=True)`` as
    ``{"destructiveHint": true}``: readOnlyHint is false by MCP default, so the tool states
    that it is destructive, and against a twin stating read-only (or ``destructiveHint:
    false``) that is TC004 — an error, whatever the verbs say (here both modify)."""
    found = scan(tool("update_record", "Update a record", {"destructiveHint": True}),
                 tool("modify_record", "Modify a record", twin))
    tc4 = [f for f in found if f.rule == "TC004"]
    assert [f.severity.value for f in tc4] == ["error"]
    assert "states destructiveHint: true (readOnlyHint absent: false by MCP default)" in \
        tc4[0].message
    assert tc4[0].properties["effects"][0] == {"effect": "destructive", "source": "hints"}


def test_hints_that_state_no_contradiction_make_no_tc004() -> None:
    """``idempotentHint`` / ``openWorldHint`` alone never decide; ``destructiveHint`` on a
    read-only tool means nothing; an unwritten destructiveHint is not MCP's default true."""
    def tc004(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
        found = scan(tool("update_record", "Update a record", a),
                     tool("modify_record", "Modify a record", b))
        return [f.severity.value for f in found if f.rule == "TC004"]

    assert tc004({"idempotentHint": True}, {"idempotentHint": False}) == []
    assert tc004({"openWorldHint": True}, {"openWorldHint": False}) == []
    assert tc004({"readOnlyHint": True, "destructiveHint": True},
                 {"readOnlyHint": True, "destructiveHint": False}) == []
    assert tc004({"readOnlyHint": False}, DESTRUCTIVE) == []


def test_hs201_is_in_the_rule_table_json_and_valid_sarif() -> None:
    """HS201 is a scan rule of its own (a warning), reported in JSON and in SARIF that
    validates against the official schema, with its rule metadata."""
    assert RULES["HS201"].command == "scan" and RULES["HS201"].severity.value == "warning"
    found = scan(tool("archive_task", "Archive a task"), tool("delete_task", "Delete a task"))
    doc = json.loads(render(found, "json"))
    assert [f["rule"] for f in doc["findings"]] == ["HS201", "TC003"]
    sarif = json.loads(render(found, "sarif"))
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    assert "HS201" in [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert {r["ruleId"]: r["level"] for r in run["results"]}["HS201"] == "warning"


def test_the_cli_gate_passes_archive_and_delete_and_fails_on_warning(tmp_path: Path) -> None:
    """Through ``histor-sign scan``: the default gate exits 0 on contrasting actions, and
    ``--fail-on warning`` still stops them."""
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [
        tool("archive_task", "Archive a task", DESTRUCTIVE),
        tool("delete_task", "Delete a task", DESTRUCTIVE)]}))
    assert run_cli("scan", str(path)).code == 0
    run = run_cli("scan", "--fail-on", "warning", str(path))
    assert run.code == 1 and "HS201" in run.stdout


def test_replay_tc007_reads_hints_as_the_scan_does() -> None:
    """TC007 (replay) is TC004's contradiction on an observed call: the SDK-style
    ``{"destructiveHint": true}`` against a read-only tool is one; tools that differ only in
    ``openWorldHint`` or ``idempotentHint`` are not."""
    def tc007(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
        catalog = parse_catalog({"tools": [tool("lookup", "Look up a record", a),
                                           tool("erase", "Erase a record", b)]}, "c.json").tools
        calls = calls_from_document({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                     "params": {"name": "lookup", "arguments": {"id": "x"}}},
                                    "trace.jsonl")
        found = replay_calls(catalog, calls).findings
        return [f.properties["contradictions"][0]["hints"] for f in found if f.rule == "TC007"]

    assert tc007({"readOnlyHint": True}, {"destructiveHint": True}) == [
        ["readOnlyHint", "destructiveHint"]]
    assert tc007({"openWorldHint": False}, {"openWorldHint": True}) == []
    assert tc007({"readOnlyHint": False, "idempotentHint": True},
                 {"readOnlyHint": False, "idempotentHint": False}) == []
