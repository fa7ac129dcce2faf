"""Envelope-bound contracts (drifted or unsigned tools are denied) and the contract lint."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from guard_fixtures import SEED_TOOLS

from histor_sign.catalog import tools_from_dicts
from histor_sign.errors import InputError
from histor_sign.guard import Guard, Policy, lint_catalog
from histor_sign.report._findings import RULES
from histor_sign.revision import build_statement

RELEASE = {
    "server": "io.github.example/users",
    "identity": "https://github.com/example/users/.github/workflows/sign.yml@refs/heads/main",
    "server_version": "1.0.0",
}


def envelope_for(tools: list[dict[str, Any]]) -> dict[str, Any]:
    statement = build_statement(tools=tools, **RELEASE)
    return {**statement.to_json(), "signer": {"issuer": "x", "identity": "y", "signature": {}},
            "transparencyLog": {"logId": "00", "logIndex": 1, "integratedTime": None}}


CALL = {"name": "update_user_email",
        "arguments": {"user_id": 42, "email": "ada@example.com", "dry_run": True}}


def test_matching_catalog_allows() -> None:
    g = Guard.from_envelope(envelope_for(SEED_TOOLS), SEED_TOOLS)
    assert g.check(CALL).allowed


def test_drifted_tool_is_not_the_signed_definition() -> None:
    served = copy.deepcopy(SEED_TOOLS)
    served[0]["description"] = "Change a user's email address and notify the admins."
    g = Guard.from_envelope(envelope_for(SEED_TOOLS), served)
    d = g.check(CALL)
    assert not d.allowed and d.reasons[0].code == "not-signed"
    assert "not the signed definition" in d.reasons[0].message
    # Tools that did not drift are still decided normally.
    assert g.check({"name": "search_users", "arguments": {"query": "a"}}).allowed


def test_unsigned_tool_is_denied() -> None:
    g = Guard.from_envelope(envelope_for(SEED_TOOLS[1:]), SEED_TOOLS)
    d = g.check(CALL)
    assert d.reasons[0].code == "not-signed" and "has no such tool" in d.reasons[0].message


def test_signed_but_not_served_is_unknown() -> None:
    g = Guard.from_envelope(envelope_for(SEED_TOOLS), SEED_TOOLS[1:])
    assert g.check(CALL).reasons[0].code == "unknown-tool"


def test_bad_envelope_is_input_error() -> None:
    with pytest.raises(InputError, match="not a revision statement"):
        Guard.from_envelope({"type": "histor.revision/v1"}, SEED_TOOLS)


def rules_by_tool(findings: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in findings:
        out.setdefault(f.tools[0].name, []).append(f.rule)
    return out


def test_lint_findings() -> None:
    tools = [
        {"name": "wipe", "annotations": {"readOnlyHint": False, "destructiveHint": True},
         "inputSchema": {"type": "object", "properties": {"scope": {"type": "string"}},
                         "additionalProperties": False}},
        {"name": "tidy", "inputSchema": {
            "type": "object", "additionalProperties": False,
            "properties": {
                "user_id": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object", "properties": {"ownerId": {"type": "integer"}}},
            }}},
        {"name": "ok", "annotations": {"readOnlyHint": False, "destructiveHint": True},
         "inputSchema": {"type": "object", "additionalProperties": False, "properties": {
             "ids": {"type": "array", "maxItems": 5, "items": {"type": "integer", "minimum": 1}},
             "dry_run": {"type": "boolean"}}}},
    ]
    findings = lint_catalog(tools_from_dicts(tools))
    assert rules_by_tool(findings) == {"tidy": ["HS102", "HS103", "HS104"], "wipe": ["HS101"]}
    by_rule = {f.rule: f for f in findings}
    assert by_rule["HS102"].properties["pointers"] == ["/properties/filter"]
    assert by_rule["HS103"].properties["pointers"] == ["/properties/tags"]
    assert by_rule["HS104"].properties["pointers"] == [
        "/properties/filter/properties/ownerId", "/properties/user_id"]
    assert by_rule["HS101"].severity.value == "warning"
    assert all(rule in RULES for rule in ("HS101", "HS102", "HS103", "HS104", "HS105", "HS106"))


def test_lint_uses_policy() -> None:
    policy = Policy.from_dict({"tools": {
        "search_users": {"require_dry_run": True, "secret": ["password"]},
        "bulk_update_emails": {"max_effect": 3, "effect_from": "ids"}}})
    rules = rules_by_tool(lint_catalog(tools_from_dicts(SEED_TOOLS), policy))
    assert "HS101" in rules["search_users"] and "HS105" in rules["search_users"]
    assert "HS105" in rules["bulk_update_emails"]
    assert "HS101" not in rules.get("update_user_email", [])
