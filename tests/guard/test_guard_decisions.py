"""Guard decisions through the Python API: the seed's dangerous calls, budgets, secrets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from guard_fixtures import SEED_POLICY, SEED_TOOLS

from histor_sign.errors import InputError
from histor_sign.guard import Decision, Guard, Policy


@pytest.fixture(scope="module", params=["jsonschema-rs", "jsonschema"])
def guard(request: pytest.FixtureRequest) -> Guard:
    """Every decision test runs on both engines: their verdicts and reasons must agree."""
    return Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY, engine=request.param)


def codes(decision: Decision) -> list[tuple[str, str]]:
    return [(r.code, r.pointer) for r in decision.reasons]


def good_update(**over: Any) -> dict[str, Any]:
    args = {"user_id": 42, "email": "ada@example.com", "dry_run": True, **over}
    return {"name": "update_user_email", "arguments": args}


def test_valid_call_allowed(guard: Guard) -> None:
    decision = guard.check(good_update())
    assert decision.allowed and decision.reasons == [] and decision.tool == "update_user_email"


def test_string_id_is_not_an_integer(guard: Guard) -> None:
    decision = guard.check(good_update(user_id="42"))
    assert not decision.allowed
    assert codes(decision) == [("type-mismatch", "/user_id")]
    assert "must be integer, got string" in decision.reasons[0].message


def test_dry_run_false_on_destructive_tool(guard: Guard) -> None:
    decision = guard.check(good_update(dry_run=False))
    assert codes(decision) == [("dry-run-required", "/dry_run")]
    assert "destructive" in decision.reasons[0].message


def test_extra_admin_argument_denied_without_additional_properties_false(guard: Guard) -> None:
    assert "additionalProperties" not in SEED_TOOLS[0]["inputSchema"]
    decision = guard.check(good_update(admin=True))
    assert codes(decision) == [("unknown-argument", "/admin")]


def test_extra_argument_with_additional_properties_false_reported_once(guard: Guard) -> None:
    call = {"name": "delete_user",
            "arguments": {"user_id": 1, "reason": "gdpr", "dry_run": True, "admin": True}}
    assert codes(guard.check(call)) == [("unknown-argument", "/admin")]


def test_all_three_seed_failures_reported_together(guard: Guard) -> None:
    decision = guard.check(good_update(user_id="42", dry_run=False, admin=True))
    assert sorted(c for c, _ in codes(decision)) == [
        "dry-run-required", "type-mismatch", "unknown-argument",
    ]


def test_unknown_arguments_allowed_when_policy_says_so() -> None:
    g = Guard.from_catalog(SEED_TOOLS, policy={"defaults": {"deny_unknown_arguments": False}})
    assert g.check(good_update(admin=True)).allowed


def test_exact_json_types(guard: Guard) -> None:
    base = {"query": "ada"}
    assert codes(guard.check({"name": "search_users", "arguments": {**base, "ratio": True}})) \
        == [("type-mismatch", "/ratio")]
    assert guard.check({"name": "search_users", "arguments": {**base, "limit": 1.0}}).allowed
    # Through JSON text too: 1.0 is an integer, "3" and true are not.
    def text(limit: str) -> dict[str, str]:
        return {"name": "search_users", "arguments": '{"query":"a","limit":' + limit + "}"}

    assert guard.check(text("3.0")).allowed
    assert codes(guard.check(text('"3"'))) == [("type-mismatch", "/limit")]
    assert codes(guard.check(text("true"))) == [("type-mismatch", "/limit")]


def test_bounds_enums_lengths_formats_and_required(guard: Guard) -> None:
    d = guard.check({"name": "search_users", "arguments": {"limit": 0, "sort": "age"}})
    assert codes(d) == [("missing-required", "/query"), ("constraint", "/limit"),
                        ("constraint", "/sort")] or sorted(codes(d)) == sorted(
        [("missing-required", "/query"), ("constraint", "/limit"), ("constraint", "/sort")])
    messages = " | ".join(r.message for r in d.reasons)
    assert "must be >= 1" in messages and 'must be one of: "name", "created"' in messages
    d = guard.check(good_update(email="no-at-sign"))
    assert codes(d) == [("constraint", "/email")] and "valid email" in d.reasons[0].message
    d = guard.check(good_update(email="a@b"))
    assert "at least 5 characters" in d.reasons[0].message


def test_over_budget_bulk_call(guard: Guard) -> None:
    args = {"user_ids": [1, 2, 3, 4, 5, 6], "new_email": "x@example.com", "dry_run": True}
    d = guard.check({"name": "bulk_update_emails", "arguments": args})
    assert codes(d) == [("effect-over-budget", "/user_ids")]
    assert "6 exceeds the budget max_effect = 5" in d.reasons[0].message
    args["user_ids"] = [1, 2, 3, 4, 5]
    assert guard.check({"name": "bulk_update_emails", "arguments": args}).allowed


def test_effect_budget_from_integer_argument() -> None:
    policy = {"tools": {"search_users": {"max_effect": 10, "effect_from": "limit"}}}
    g = Guard.from_catalog(SEED_TOOLS, policy=policy)
    assert g.check({"name": "search_users", "arguments": {"query": "a", "limit": 10}}).allowed
    d = g.check({"name": "search_users", "arguments": {"query": "a", "limit": 11}})
    assert codes(d) == [("effect-over-budget", "/limit")]
    d = g.check({"name": "search_users", "arguments": {"query": "a"}})
    assert codes(d) == [("effect-unknown", "/limit")]


@pytest.mark.parametrize("arguments", ['{"user_id": 42,', "[1, 2]", '"text"', "42",
                                       '{"a": 1, "a": 2}', '{"n": NaN}'])
def test_malformed_or_non_object_arguments_denied(guard: Guard, arguments: str) -> None:
    d = guard.check({"name": "update_user_email", "arguments": arguments})
    assert not d.allowed
    assert d.reasons[0].code in ("arguments-malformed", "arguments-not-object")


@pytest.mark.parametrize("call", [None, [], "x", {"arguments": {}}, {"name": 5},
                                  {"tool_calls": []}])
def test_undecidable_call_documents_denied(guard: Guard, call: Any) -> None:
    d = guard.check(call)
    assert not d.allowed and d.reasons[0].code == "call-malformed"


def test_unknown_tool_denied(guard: Guard) -> None:
    d = guard.check({"name": "drop_database", "arguments": {}})
    assert codes(d) == [("unknown-tool", "")] and d.tool == "drop_database"


def test_secret_values_never_echoed(guard: Guard) -> None:
    secret = "sk-live-THIS-IS-A-SECRET"
    calls = [
        {"name": "search_users", "arguments": {"query": "a", "api_token": secret[:6]}},
        {"name": "search_users", "arguments": {"query": "a", "api_token": 12345}},
        {"name": "search_users", "arguments": {"query": "a", "api_token": [secret]}},
        {"name": "update_user_email",
         "arguments": {"user_id": secret, "email": secret, "dry_run": secret}},
        {"name": "update_user_email", "arguments": '{"user_id": "' + secret + '", '},
    ]
    for call in calls:
        d = guard.check(call)
        assert not d.allowed
        text = json.dumps(d.to_json())
        assert "sk-live" not in text and "12345" not in text, text
    d = guard.check(calls[1])
    assert codes(d) == [("type-mismatch", "/api_token")] and "got" not in d.reasons[0].message


def test_provider_call_shapes() -> None:
    g = Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY)
    args = {"user_id": 42, "email": "ada@example.com", "dry_run": True}
    text = json.dumps(args)
    shapes = [
        {"type": "function_call", "call_id": "c1", "name": "update_user_email", "arguments": text},
        {"output": [{"type": "message"}, {"type": "function_call", "name": "update_user_email",
                                          "arguments": text}]},
        {"id": "t1", "type": "function", "function": {"name": "update_user_email",
                                                      "arguments": text}},
        {"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "t1", "type": "function",
             "function": {"name": "update_user_email", "arguments": text}}]}}]},
        {"type": "tool_use", "id": "tu1", "name": "update_user_email", "input": args},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"},
                                          {"type": "mcp_tool_use", "name": "update_user_email",
                                           "server_name": "s", "input": args}]},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "update_user_email", "arguments": args}},
    ]
    for shape in shapes:
        assert g.check(shape).allowed, shape
        bad = json.loads(json.dumps(shape).replace('\\"dry_run\\": true', '\\"dry_run\\": false')
                         .replace('"dry_run": true', '"dry_run": false'))
        assert codes(g.check(bad)) == [("dry-run-required", "/dry_run")], shape


def test_two_calls_in_one_document_denied() -> None:
    g = Guard.from_catalog(SEED_TOOLS)
    call = {"type": "function", "function": {"name": "search_users", "arguments": "{}"}}
    d = g.check({"tool_calls": [call, call]})
    assert d.reasons[0].code == "call-malformed" and "found 2" in d.reasons[0].message


def test_policy_overrides_for_dry_run() -> None:
    policy = {"tools": {
        "delete_user": {"require_dry_run": False},
        "search_users": {"require_dry_run": True, "dry_run_parameter": "preview"}}}
    g = Guard.from_catalog(SEED_TOOLS, policy=policy)
    assert g.check({"name": "delete_user",
                    "arguments": {"user_id": 1, "reason": "gdpr", "dry_run": False}}).allowed
    d = g.check({"name": "search_users", "arguments": {"query": "a"}})
    assert codes(d) == [("dry-run-required", "/preview")]


def test_sdk_style_destructive_hint_needs_a_dry_run() -> None:
    """The Python SDK writes ``ToolAnnotations(destructiveHint=True)`` as ``{"destructiveHint":
    true}``: readOnlyHint is false by MCP default, so the tool states that it is destructive
    and a real run needs its dry run (as the scan reads it: issue 38). The proxy decides
    every call with this guard."""
    tool = {**SEED_TOOLS[1], "annotations": {"destructiveHint": True}}  # readOnlyHint omitted
    g = Guard.from_catalog([tool])
    d = g.check({"name": "delete_user",
                 "arguments": {"user_id": 1, "reason": "gdpr", "dry_run": False}})
    assert codes(d) == [("dry-run-required", "/dry_run")] and d.needs_approval
    assert g.check({"name": "delete_user",
                    "arguments": {"user_id": 1, "reason": "gdpr", "dry_run": True}}).allowed


@pytest.mark.parametrize("annotations", [
    {}, {"readOnlyHint": False}, {"readOnlyHint": True, "destructiveHint": True},
    {"destructiveHint": False}, {"idempotentHint": False, "openWorldHint": True}])
def test_hints_that_state_no_destructive_tool_need_no_dry_run(
        annotations: dict[str, Any]) -> None:
    """An unwritten destructiveHint is not MCP's default true (that would call every
    unannotated tool destructive), and on a read-only tool it means nothing."""
    tool = {**SEED_TOOLS[1], "annotations": annotations}
    g = Guard.from_catalog([tool])
    assert g.check({"name": "delete_user",
                    "arguments": {"user_id": 1, "reason": "gdpr", "dry_run": False}}).allowed


@pytest.mark.parametrize("engine", ["jsonschema-rs", "jsonschema"])
def test_invalid_and_unresolvable_schemas_deny(engine: str) -> None:
    tools = [{"name": "bad", "inputSchema": {"type": "objekt"}},
             {"name": "remote", "inputSchema": {"$ref": "https://example.invalid/s.json"}}]
    g = Guard.from_catalog(tools, policy={"defaults": {"deny_unknown_arguments": False}},
                           engine=engine)
    assert codes(g.check({"name": "bad", "arguments": {}})) == [("schema-invalid", "")]
    assert codes(g.check({"name": "remote", "arguments": {}})) == [("schema-unresolvable", "")]


def test_default_engine_is_stricter_on_regex_and_formats() -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {
        "id": {"type": "string", "pattern": "^\\d+$"},
        "at": {"type": "string", "format": "date-time"}}}}
    rs = Guard.from_catalog([tool])
    assert rs.engine == "jsonschema-rs"
    arabic_digits = "\u0661\u0662\u0663"
    d = rs.check({"name": "t", "arguments": {"id": arabic_digits, "at": "yesterday"}})
    assert codes(d) == [("constraint", "/at"), ("constraint", "/id")]
    assert "must match the pattern" in d.reasons[1].message
    assert rs.check({"name": "t", "arguments": {"id": "123", "at": "2024-01-02T03:04:05Z"}}).allowed


def test_unknown_engine_rejected() -> None:
    with pytest.raises(InputError, match="unknown validation engine"):
        Guard.from_catalog(SEED_TOOLS, engine="fast")


@pytest.mark.parametrize("engine", ["jsonschema-rs", "jsonschema"])
def test_ref_and_combinator_reasons(engine: str) -> None:
    tool = {"name": "t", "inputSchema": {
        "type": "object", "$defs": {"id": {"type": "integer", "maximum": 3}},
        "properties": {"a": {"$ref": "#/$defs/id"},
                       "o": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}}
    g = Guard.from_catalog([tool], engine=engine)
    d = g.check({"name": "t", "arguments": {"a": 5, "o": 1.5}})
    assert codes(d) == [("constraint", "/a"), ("constraint", "/o")]
    assert d.reasons[0].message == "/a must be <= 3"
    assert "exactly one of the 2 oneOf alternatives" in d.reasons[1].message


@pytest.mark.parametrize("engine", ["jsonschema-rs", "jsonschema"])
def test_nested_and_draft07_schemas(engine: str) -> None:
    tool = {"name": "t", "inputSchema": {
        "$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "integer"}}, "required": ["id"]}}}}}
    g = Guard.from_catalog([tool], engine=engine)
    d = g.check({"name": "t", "arguments": {"items": [{"id": 1}, {"id": "2"}, {}]}})
    assert codes(d) == [("type-mismatch", "/items/1/id"), ("missing-required", "/items/2/id")]


def test_contract_errors_are_input_errors() -> None:
    with pytest.raises(InputError, match="duplicate tool name"):
        Guard.from_catalog([SEED_TOOLS[0], SEED_TOOLS[0]])
    with pytest.raises(InputError, match="policy names tool 'nope'"):
        Guard.from_catalog(SEED_TOOLS, policy={"tools": {"nope": {"secret": ["x"]}}})
    with pytest.raises(InputError, match=r"bulk_update_emails\.max_effect needs effect_from"):
        Policy.from_dict({"tools": {"bulk_update_emails": {"max_effect": 3}}}, "p.toml")
    with pytest.raises(InputError, match=r"p.toml: unknown key defaults.dry_runs"):
        Policy.from_dict({"defaults": {"dry_runs": True}}, "p.toml")


@pytest.mark.parametrize("engine", ["jsonschema-rs", "jsonschema"])
def test_engines_share_exact_numbers_and_dialects(engine: str) -> None:
    # One validation stack: multipleOf is exact on both engines (0.3 is a multiple of 0.1,
    # which float division denies), and both refuse a $schema no engine supports.
    tools = [{"name": "m", "inputSchema": {"type": "object", "properties": {
                 "x": {"type": "number", "multipleOf": 0.1}}}},
             {"name": "d", "inputSchema": {"$schema": "https://example.invalid/s",
                                           "type": "object"}},
             {"name": "d4", "inputSchema": {"$schema": "http://json-schema.org/draft-04/schema#",
                                            "type": "object",
                                            "properties": {"n": {"maximum": 1,
                                                                 "exclusiveMaximum": True}}}}]
    g = Guard.from_catalog(tools, engine=engine)
    assert g.check({"name": "m", "arguments": {"x": 0.3}}).allowed
    assert codes(g.check({"name": "m", "arguments": {"x": 0.35}})) == [("constraint", "/x")]
    assert codes(g.check({"name": "d", "arguments": {}})) == [("schema-invalid", "")]
    assert g.check({"name": "d4", "arguments": {"n": 0}}).allowed
    assert codes(g.check({"name": "d4", "arguments": {"n": 1}})) == [("constraint", "/n")]


def test_scan_replay_and_guard_read_dialects_from_one_table() -> None:
    from histor_sign._schema.validation import (
        ANALYSED_DIALECTS,
        DIALECTS,
        Untrusted,
        dialect_of,
    )

    assert ANALYSED_DIALECTS < set(DIALECTS.values())
    draft4 = {"$schema": "http://json-schema.org/draft-04/schema#"}
    with pytest.raises(Untrusted):
        dialect_of(draft4)  # the schema algebra does not model draft-04
    assert dialect_of(draft4, frozenset(DIALECTS.values())) == "draft-04"
