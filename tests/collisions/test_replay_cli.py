"""``histor-sign replay``: TC006–TC009 and no raw values or call ids in any output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_harness import REPO, assert_clean_error, run_cli

from histor_sign._call_import import calls_from_document
from histor_sign.collisions._replay import ReplayOptions, replay_calls
from histor_sign.models import parse_catalog

CATALOG = str(REPO / "examples/scan/replay-catalog-mcp.json")
TRACE = str(REPO / "examples/scan/replay-openai-responses.json")
SECRET_VALUE = "cus_9f8e7d6c"
SECRET_ID = "call_secret_42"


def tools(*defs: dict[str, Any]) -> list[Any]:
    return parse_catalog({"tools": list(defs)}, "cat.json").tools


def call(name: str, args: dict[str, Any]) -> list[Any]:
    return calls_from_document({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": name, "arguments": args}}, "trace.jsonl")


def schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


def rules(result: Any) -> list[str]:
    return [f.rule for f in result.findings]


def test_seed_example_reports_tc006_and_tc007_without_raw_values() -> None:
    for fmt in ("human", "json", "sarif"):
        run = run_cli("replay", "--format", fmt, "--catalog", CATALOG, TRACE)
        assert run.code == 1, run.stderr
        assert SECRET_VALUE not in run.stdout and SECRET_ID not in run.stdout
        assert "fc_001" not in run.stdout and "resp_abc123" not in run.stdout
        assert "TC006" in run.stdout and "TC007" in run.stdout
    doc = json.loads(run_cli("replay", "--format", "json", "--catalog", CATALOG, TRACE).stdout)
    tc6 = next(f for f in doc["findings"] if f["rule"] == "TC006")
    assert [t["name"] for t in tc6["tools"]] == ["lookup_customer", "erase_account_record"]
    assert tc6["call"]["index"] == 0 and tc6["call"]["tool"] == "lookup_customer"
    assert tc6["call"]["argumentsDigest"].startswith("sha256:")
    assert tc6["properties"]["accepted"] == 2 and tc6["properties"]["unknown"] == 0
    assert run_cli("replay", "--fail-on", "never", "--catalog", CATALOG, TRACE).code == 0


def test_tc008_missing_tool_and_every_matching_schema_rejecting() -> None:
    catalog = tools(
        {"name": "pay", "inputSchema": schema(amount={"type": "integer"})},
        {"name": "pay", "inputSchema": schema(amount={"type": "integer", "minimum": 0})},
        {"name": "note", "inputSchema": schema(amount={"type": "string"})},
    )
    missing = replay_calls(catalog, call("refund", {"amount": True}))
    assert rules(missing) == ["TC008"] and missing.findings[0].properties["reason"] == "missing"
    # both 'pay' entries accept, so the missing name is also a multiple-accept
    assert rules(replay_calls(catalog, call("refund", {"amount": 1}))) == ["TC006", "TC008"]
    rejected = replay_calls(catalog, call("pay", {"amount": "ten"}))
    assert rules(rejected) == ["TC008"]
    assert [t.index for t in rejected.findings[0].tools] == [0, 1]
    fine = replay_calls(catalog, call("pay", {"amount": -3}))
    assert rules(fine) == []


def test_no_lexical_filter_unrelated_names_still_accept() -> None:
    catalog = tools(
        {"name": "a", "inputSchema": schema(x={"type": "integer"})},
        {"name": "zzz_totally_different", "inputSchema": {"type": "object"}},
    )
    assert rules(replay_calls(catalog, call("a", {"x": 1}))) == ["TC006"]


def test_tc009_for_unsupported_invalid_or_bounded_schemas() -> None:
    catalog = tools(
        {"name": "a", "inputSchema": schema(x={"type": "string"})},
        {"name": "b", "inputSchema": schema(x={"type": "string", "pattern": "(?i)^A"})},
        {"name": "c", "inputSchema": {"type": 12}},
        {"name": "d", "inputSchema": schema(x={"$ref": "https://example.com/s.json"})},
    )
    result = replay_calls(catalog, call("a", {"x": "abc"}))
    assert rules(result) == ["TC009"]
    f = result.findings[0]
    assert [t.name for t in f.tools] == ["b", "c", "d"] and f.incomplete
    assert f.properties["unknown"] == 3
    bounded = replay_calls(catalog[:1] * 3, call("a", {"x": "s"}), ReplayOptions(
        max_validations=1))
    assert "TC009" in rules(bounded)
    assert any("validation bound (1) reached" in r for r in bounded.findings[-1].properties["reasons"])


def test_safe_patterns_on_ascii_are_decided() -> None:
    catalog = tools(
        {"name": "a", "inputSchema": schema(x={"type": "string", "pattern": "^[a-z]+$"})},
        {"name": "b", "inputSchema": schema(x={"type": "string", "pattern": "^[0-9]+$"})},
    )
    assert rules(replay_calls(catalog, call("a", {"x": "abc"}))) == []
    assert rules(replay_calls(catalog, call("a", {"x": "Ü"}))) == ["TC009"]


def test_jsonl_trace_strict_and_bounds(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    lines = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "lookup_customer", "arguments": {"customer_id": "x"}}}
             for i in range(3)]
    trace.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    run = run_cli("replay", "--format", "json", "--fail-on", "never", "--catalog", CATALOG,
                  str(trace))
    assert run.code == 0
    assert json.loads(run.stdout)["summary"]["calls"] == 3
    assert_clean_error(run_cli("replay", "--max-calls", "2", "--catalog", CATALOG, str(trace)))
    assert_clean_error(run_cli("replay", "--max-trace-bytes", "10", "--catalog", CATALOG,
                               str(trace)))
    leak = tmp_path / "leak.jsonl"
    leak.write_text('{"type": "function_call", "name": "f", "arguments": "{\\"k\\": 1e999}"}\n'
                    '{"type": "function_call", "name": "f", "arguments": "{}"}\n')
    bad = run_cli("replay", "--catalog", CATALOG, str(leak))
    assert_clean_error(bad)
    assert "1e999" not in bad.stderr
    assert_clean_error(run_cli("replay", TRACE))  # --catalog is required
    assert_clean_error(run_cli("replay", "--catalog", "-", "-", stdin=b"{}"))
