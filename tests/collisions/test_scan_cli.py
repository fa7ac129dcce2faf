"""``histor-sign scan`` end to end: rules, providers, formats, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import REPO, assert_clean_error, run_cli

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.models import parse_catalog

EXAMPLE = str(REPO / "examples" / "scan" / "collision-mcp.json")


def write(tmp: Path, name: str, doc: Any) -> str:
    path = tmp / name
    path.write_text(json.dumps(doc, indent=2))
    return str(path)


def mcp_tool(name: str, schema: Any, desc: str = "", **ann: Any) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": desc, "inputSchema": schema}
    if ann:
        tool["annotations"] = ann
    return tool


PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def rules_of(doc: dict[str, Any]) -> list[str]:
    return [f["rule"] for f in doc["findings"]]


def test_each_scan_rule_on_a_small_catalog() -> None:
    doc = {"tools": [
        mcp_tool("get_user", PATH_SCHEMA, readOnlyHint=True),
        mcp_tool("get_user", {"type": "object"}),  # TC001
        mcp_tool("GetUser", {"type": "object", "properties": {"id": {"type": "integer"}},
                             "required": ["id"]}),  # TC002 with get_user
        mcp_tool("fetch_user", PATH_SCHEMA, readOnlyHint=False, destructiveHint=True),
        mcp_tool("retrieve_user", {"type": "object", "properties": {
            "path": {"type": "string", "pattern": "^(?i)x"}}, "required": ["path"]}),
        mcp_tool("lookup_account", {"type": "object", "properties": {"n": {"type": "integer"}},
                                    "required": ["n"], "additionalProperties": False}),
        mcp_tool("lookup_accounts", {"type": "object", "properties": {"n": {"type": "string"}},
                                     "required": ["n"]}),
    ]}
    result = scan_catalogs([parse_catalog(doc, "cat.json")], ScanOptions())
    by_rule: dict[str, list[Any]] = {}
    for f in result.findings:
        by_rule.setdefault(f.rule, []).append(f)
    assert [[t.index for t in f.tools]
            for f in by_rule["TC001"]] == [[0, 1]]
    assert [[t.index for t in f.tools] for f in by_rule["TC002"]] == [[0, 2]]
    tc4 = {tuple(t.index for t in f.tools): f for f in by_rule["TC004"]}
    assert tc4[(0, 3)].witness == {"path": "a"} and tc4[(0, 3)].severity.value == "error"
    assert "(read-only: states readOnlyHint: true)" in tc4[(0, 3)].message
    assert "states readOnlyHint: false, destructiveHint: true" in tc4[(0, 3)].message
    # tool 1 states no hints: its effect is inferred from the action word, and said so —
    # HS201, not TC004 (ToolClash's TC004 needs both sides' explicit hints)
    assert (1, 3) not in tc4
    hs = {tuple(t.index for t in f.tools): f for f in by_rule["HS201"]}
    assert hs[(1, 3)].severity.value == "warning"
    assert ("(read-only: inferred from 'get'; states no effect hints)"
            in hs[(1, 3)].message)
    assert all(f.has_witness for f in by_rule["TC004"] + by_rule["HS201"])
    assert any([t.index for t in f.tools] == [0, 3] for f in by_rule["TC003"])
    assert any(4 in [t.index for t in f.tools] for f in by_rule["TC005"])
    # lookup_account vs lookup_accounts: confusable but provably disjoint -> a TC011 note;
    # TC003 keeps ToolClash's meaning: every TC003 has a witness
    disjoint = [f for f in result.findings if {5, 6} == {t.index for t in f.tools}]
    assert [(f.rule, f.severity.value, f.outcome) for f in disjoint] == [
        ("TC011", "note", "disjoint")]
    assert all(f.has_witness and f.outcome == "overlap" for f in by_rule["TC003"])
    assert "'lookup'" in disjoint[0].message and "'account'" in disjoint[0].message
    assert result.stats["disjoint"] >= 1
    assert result.stats["candidatePairs"] < result.stats["allPairs"]


def test_providers_scanned_as_one_set_name_both_files(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    a = write(tmp_path, "mcp.json", {"tools": [mcp_tool("search_docs", schema)]})
    b = write(tmp_path, "openai.json", {"tools": [
        {"type": "function", "name": "find_docs", "description": "", "parameters": schema}]})
    c = write(tmp_path, "chat.json", {"tools": [{"type": "function", "function": {
        "name": "query-docs", "parameters": {"type": "object", "properties": {
            "q": {"type": "integer"}}, "required": ["q"]}}}]})
    d = write(tmp_path, "anthropic.json", {"tools": [
        {"name": "searchDocs", "input_schema": schema}]})
    run = run_cli("scan", "--format", "json", "--fail-on", "never", a, b, c, d)
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    pairs = {(f["rule"], tuple((t["source"], t["index"]) for t in f["tools"]))
             for f in doc["findings"]}
    assert ("TC003", ((a, 0), (b, 0))) in pairs
    assert ("TC002", ((a, 0), (d, 0))) in pairs
    # query-docs takes an integer q: disjoint from the others, so only TC011 notes with it
    with_c = [f for f in doc["findings"] if any(t["source"] == c for t in f["tools"])]
    assert with_c and all((f["rule"], f["severity"], f["outcome"]) == ("TC011", "note", "disjoint")
                          for f in with_c)
    assert doc["summary"]["tools"] == 4
    for f in doc["findings"]:
        assert set(f) >= {"rule", "severity", "outcome", "tools", "message"}


def test_exit_codes_and_fail_on_thresholds() -> None:
    run = run_cli("scan", EXAMPLE)
    assert run.code == 1 and "TC004 error" in run.stdout
    assert run_cli("scan", "--fail-on", "never", EXAMPLE).code == 0
    quiet = run_cli("scan", str(REPO / "examples" / "docs-tools.json"))
    assert quiet.code == 0 and "no findings" in quiet.stdout


def test_warning_threshold_and_strict_incomplete(tmp_path: Path) -> None:
    doc = {"tools": [
        mcp_tool("read_file", {"type": "object", "properties": {
            "p": {"type": "string", "pattern": "^a"}}, "required": ["p"]}),
        mcp_tool("read_files", {"type": "object", "properties": {
            "p": {"type": "string", "pattern": "^b"}}, "required": ["p"]}),
    ]}
    path = write(tmp_path, "c.json", doc)
    assert run_cli("scan", path).code == 0
    assert run_cli("scan", "--fail-on", "warning", path).code == 0
    strict = run_cli("scan", "--strict", "--format", "json", path)
    assert strict.code == 1
    findings = json.loads(strict.stdout)["findings"]
    assert [(f["rule"], f["severity"], f["outcome"]) for f in findings] == [
        ("TC005", "warning", "unknown")]


def test_json_output_is_deterministic_and_stdin_works() -> None:
    data = Path(EXAMPLE).read_bytes()
    one = run_cli("scan", "--format", "json", "-", stdin=data)
    two = run_cli("scan", "--format", "json", "-", stdin=data)
    assert one.code == two.code == 1
    assert one.stdout == two.stdout
    doc = json.loads(one.stdout)
    assert list(doc) == ["findings", "schemaVersion", "summary"]
    assert all(t["source"] == "-" for f in doc["findings"] for t in f["tools"])


def test_output_file_and_max_candidates(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    run = run_cli("scan", "--format", "json", "--max-candidates", "1", "--output", str(out),
                  EXAMPLE)
    assert run.stdout == ""
    doc = json.loads(out.read_text())
    reasons = [f["properties"].get("reason", "") for f in doc["findings"]
               if f["rule"] == "TC005"]
    assert any("candidate pair bound (1) reached" in r for r in reasons)


def test_bad_input_is_one_clean_line(tmp_path: Path) -> None:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"tools": [')
    assert_clean_error(run_cli("scan", str(bad_json)))
    assert_clean_error(run_cli("scan", str(tmp_path / "missing.json")))
    assert_clean_error(run_cli("scan", "-", "-", stdin=b"{}"))
    assert_clean_error(run_cli("scan", "--threshold", "0", EXAMPLE))
    assert_clean_error(run_cli("scan", "--threshold", "1.5", EXAMPLE))
    assert_clean_error(run_cli("scan", "--threshold", "high", EXAMPLE))
    assert_clean_error(run_cli("scan", "--max-tools", "2", EXAMPLE))
    assert_clean_error(run_cli("scan", "--format", "xml", EXAMPLE))
    out = tmp_path / "never.json"
    assert_clean_error(run_cli("scan", "--output", str(out), str(bad_json)))
    assert not out.exists()


def test_hostile_schemas_end_as_tc005_never_a_hang(tmp_path: Path) -> None:
    tools = [
        mcp_tool("run_task", "not a schema"),
        mcp_tool("run_tasks", {"type": "object", "properties": {"a": {"type": 7}}}),
        mcp_tool("runTask", {"$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}},
                             "$ref": "#/$defs/x"}),
        mcp_tool("run-task", {"anyOf": [{"type": "object", "minProperties": i}
                                        for i in range(10_000)]}),
        mcp_tool("execute_task", {"type": "object", "properties": {"a": {"type": "string"}},
                                  "required": ["a"]}),
    ]
    path = write(tmp_path, "hostile.json", {"tools": tools})
    run = run_cli("scan", "--format", "json", "--fail-on", "never", path, timeout=60)
    assert run.code == 0, run.stderr
    findings = json.loads(run.stdout)["findings"]
    unknown_tools = {t["index"] for f in findings if f["rule"] == "TC005" for t in f["tools"]}
    assert {0, 1, 2, 3} <= unknown_tools
    assert all(f["outcome"] in (None, "unknown", "overlap") for f in findings)


@pytest.mark.slow
def test_a_large_report_streams_the_same_value_to_stdout_and_to_a_file(tmp_path: Path) -> None:
    """Hundreds of kilobytes of report: stdout (inert, written in runs of whole lines) and
    ``-o`` (exact bytes) hold the same JSON value, SARIF too, and stdout has no raw U+2028."""
    hostile = "get_user\u2028::error::x"
    tools = [mcp_tool(f"svc{i}_get_user" if i % 3 else f"{hostile}{i}", PATH_SCHEMA,
                      "Get a user.") for i in range(300)]
    catalog = write(tmp_path, "tools.json", {"tools": tools})
    for fmt in ("json", "sarif"):
        out = tmp_path / f"report.{fmt}"
        shown = run_cli("scan", catalog, "--format", fmt, "--fail-on", "never")
        written = run_cli("scan", catalog, "--format", fmt, "--fail-on", "never", "-o", str(out))
        assert shown.code == written.code == 0, shown.stderr + written.stderr
        assert len(shown.stdout) > 200_000 and written.stdout == ""
        assert "\u2028" not in shown.stdout
        assert not any(ln.lstrip().startswith("::") for ln in shown.stdout.split("\n"))
        assert json.loads(shown.stdout) == json.loads(out.read_text(encoding="utf-8"))


def test_live_scan_locations_name_the_server_never_the_command_line(tmp_path: Path) -> None:
    # `scan --stdio` scans what the server serves; its findings point at the server by its
    # own name, never at the command line (runner paths, a secret passed as an argument).
    import shlex
    import sys

    command = shlex.join([sys.executable, "-m", "histor_sign.demo.example_server",
                          "--collision", "--page-size", "2"])
    for fmt in ("sarif", "json", "human"):
        run = run_cli("scan", "--stdio", command, "--server-is-trusted-code", "-f", fmt,
                      "--fail-on", "never")
        assert run.code == 0, run.stderr
        assert sys.executable not in run.stdout, fmt
        assert "example_server" not in run.stdout and "--page-size" not in run.stdout, fmt
        if fmt == "sarif":
            results = json.loads(run.stdout)["runs"][0]["results"]
            assert results
            uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
                    for r in results for loc in r["locations"]}
            assert uris == {"mcp-server:example-notes"}, uris
def test_disjoint_confusables_are_tc011_notes_in_json_and_sarif(tmp_path: Path) -> None:
    """TC003 keeps ToolClash's meaning (a proven overlap with a witness), so a TC003 filter
    never sees a disjoint pair; the disjoint confusable pair has its own rule id, a note."""
    ints = {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]}
    strs = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    cat = write(tmp_path, "c.json", {"tools": [
        mcp_tool("search_docs", strs, "Search the documentation"),
        mcp_tool("search_docs_by_tag", ints, "Search the documentation"),
        mcp_tool("find_docs", strs, "Search the documentation")]})
    run = run_cli("scan", "--format", "json", "--fail-on", "warning", cat)
    doc = json.loads(run.stdout)
    by_pair = {tuple(t["index"] for t in f["tools"]): f for f in doc["findings"]}
    assert by_pair[(0, 1)]["rule"] == "TC011" and by_pair[(0, 1)]["severity"] == "note"
    assert by_pair[(0, 1)]["outcome"] == "disjoint" and "witness" not in by_pair[(0, 1)]
    assert by_pair[(0, 2)]["rule"] == "TC003" and isinstance(by_pair[(0, 2)]["witness"]["q"], str)
    assert run.code == 1  # the TC003 warning; a TC011 note alone never fails --fail-on warning
    sarif = json.loads(run_cli("scan", "--format", "sarif", "--fail-on", "never", cat).stdout)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    tc011 = next(r for r in rules if r["id"] == "TC011")
    assert tc011["name"] == "confusable-disjoint"
    assert tc011["defaultConfiguration"]["level"] == "note"
    levels = {(r["ruleId"], r["level"]) for r in sarif["runs"][0]["results"]}
    assert ("TC011", "note") in levels and ("TC003", "warning") in levels
    alone = write(tmp_path, "d.json", {"tools": [
        mcp_tool("search_docs", strs, "Search the documentation"),
        mcp_tool("search_docs_by_tag", ints, "Search the documentation")]})
    assert run_cli("scan", "--fail-on", "warning", alone).code == 0


def test_tc004_is_read_versus_change_or_stated_destructive_hints() -> None:
    """Contradicting explicit hints: one tool states read-only and the other states a write
    (warning) or a destructive tool (error), or both state different destructiveHint values
    (error). An effect read from an action word is HS201 (a warning), never TC004; two tools
    that both change data by their action words alone ("delete" vs "remove") are neither."""
    def effects(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str]]:
        cat = parse_catalog({"tools": [a, b]}, "c.json")
        return [(f.rule, f.severity.value) for f in scan_catalogs([cat]).findings
                if f.rule in ("TC004", "HS201")]

    read = mcp_tool("remove_file", PATH_SCHEMA, "Remove a file", readOnlyHint=True)
    gone = mcp_tool("delete_file", PATH_SCHEMA, "Delete a file")
    assert effects(read, gone) == [("HS201", "warning")]
    wrote = mcp_tool("delete_file", PATH_SCHEMA, "Delete a file", readOnlyHint=False)
    assert effects(read, wrote) == [("TC004", "warning")]
    sdk = mcp_tool("delete_file", PATH_SCHEMA, "Delete a file", destructiveHint=True)
    assert effects(read, sdk) == [("TC004", "error")]
    assert effects(mcp_tool("remove_file", PATH_SCHEMA, "Remove a file"), gone) == []
    soft = mcp_tool("remove_file", PATH_SCHEMA, "Remove a file", readOnlyHint=False,
                    destructiveHint=False)
    hard = mcp_tool("delete_file", PATH_SCHEMA, "Delete a file", readOnlyHint=False,
                    destructiveHint=True)
    assert effects(soft, hard) == [("TC004", "error")]


def test_max_bytes_bounds_each_catalog_file(tmp_path: Path) -> None:
    """``--max-bytes`` (as ``fetch`` has): the per-file bound is a flag, so a registry-scale
    catalog need not be split to fit 64 MiB; a file over it is one clean error."""
    cat = write(tmp_path, "c.json", {"tools": [mcp_tool("read_file", PATH_SCHEMA, "Read")]})
    size = Path(cat).stat().st_size
    run = run_cli("scan", "--max-bytes", str(size - 1), cat)
    assert_clean_error(run)
    assert f"larger than the limit of {size - 1} bytes" in run.stderr
    assert run_cli("scan", "--max-bytes", str(size), cat).code == 0
    run = run_cli("scan", "--max-bytes", "0", cat)
    assert_clean_error(run)
    assert "--max-bytes must be a positive integer" in run.stderr
