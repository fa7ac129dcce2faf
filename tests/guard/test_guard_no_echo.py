"""The guard never echoes argument values, and model-chosen names stay clipped, escaped,
one-line text — in reasons, pointers, and both output formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from guard_fixtures import SEED_POLICY, SEED_TOOLS

from histor_sign.guard import Decision, Guard

SECRET = "sk-live-SECRET-VALUE"
LOGIN = {
    "name": "login",
    "inputSchema": {
        "type": "object",
        "properties": {
            "credentials": {
                "type": "object",
                "properties": {
                    "token": {"type": "string", "pattern": "^tok_"},
                    "scopes": {"type": "array", "items": {"enum": ["read", "write"]}},
                    "expires": {"type": "integer", "maximum": 3600},
                },
                "required": ["token"],
                "additionalProperties": False,
            },
            "options": {
                "type": "object",
                "properties": {"mode": {"const": "fast"}},
                "additionalProperties": False,
            },
            "dry_run": {"type": "boolean"},
            "user_ids": {"type": "array"},
        },
    },
}
POLICY: dict[str, Any] = {"tools": {
    **SEED_POLICY["tools"],
    "login": {"secret": ["credentials", "dry_run", "user_ids"], "require_dry_run": True,
              "max_effect": 2, "effect_from": "user_ids"},
}}
CONTROL_NAME = "\x1b]0;owned\x07\u202eevil\nname\u2028"
HUGE_NAME = "k" * 100_000


@pytest.fixture(scope="module", params=["jsonschema-rs", "jsonschema"])
def guard(request: pytest.FixtureRequest) -> Guard:
    return Guard.from_catalog([*SEED_TOOLS, LOGIN], policy=POLICY, engine=request.param)


def rendered(decision: Decision) -> str:
    """Every string the decision carries, as JSON (non-ASCII kept as it is)."""
    return json.dumps(decision.to_json(), ensure_ascii=False)


def assert_inert(decision: Decision, limit: int = 300) -> None:
    """Pointers and messages: printable, one line, bounded."""
    for reason in decision.reasons:
        for text in (reason.pointer, reason.message):
            assert text.isprintable(), repr(text)
            assert len(text) <= limit, len(text)


def test_nested_secret_values_keys_and_types_are_not_echoed(guard: Guard) -> None:
    arguments = {
        "credentials": {"token": SECRET, "scopes": [SECRET], "expires": 10**9,
                        "SECRET-KEY": SECRET},
        "dry_run": "SECRET-DRY",
        "user_ids": "SECRET-IDS",
    }
    decision = guard.check({"name": "login", "arguments": arguments})
    assert not decision.allowed
    text = rendered(decision)
    for leak in ("SECRET", "sk-live", "1000000000", "string"):
        assert leak not in text, (leak, text)
    pointers = {r.pointer for r in decision.reasons}
    assert pointers == {"/credentials", "/dry_run", "/user_ids"}, pointers
    codes = {r.code for r in decision.reasons}
    assert {"dry-run-required", "effect-unknown", "constraint"} <= codes
    # The schema's own constants may be shown: they are public.
    messages = " ".join(r.message for r in decision.reasons)
    assert '"^tok_"' in messages and "3600" in messages


def test_non_secret_values_are_not_echoed_either(guard: Guard) -> None:
    arguments = {"options": {"mode": "VALUE-MODE"}, "dry_run": True, "user_ids": [],
                 "credentials": {"token": "tok_1"}}
    decision = guard.check({"name": "login", "arguments": arguments})
    assert [(r.code, r.pointer) for r in decision.reasons] == [("constraint", "/options/mode")]
    assert "VALUE-MODE" not in rendered(decision)
    assert decision.reasons[0].message == '/options/mode must equal "fast"'


@pytest.mark.parametrize("name", [CONTROL_NAME, HUGE_NAME, CONTROL_NAME + HUGE_NAME])
def test_unknown_argument_names_are_escaped_and_clipped(guard: Guard, name: str) -> None:
    call = {"name": "search_users", "arguments": {"query": "a", name: SECRET}}
    decision = guard.check(call)
    assert [r.code for r in decision.reasons] == ["unknown-argument"]
    assert_inert(decision)
    assert SECRET not in rendered(decision)
    if name.startswith("\x1b"):
        assert "\\u001b]0;owned\\u0007\\u202eevil" in decision.reasons[0].message
        assert decision.reasons[0].pointer.startswith("/\\u001b]0;owned\\u0007\\u202eevil")


def test_nested_unknown_names_are_escaped_and_clipped(guard: Guard) -> None:
    options = {"mode": "fast", CONTROL_NAME: 1, HUGE_NAME: 2}
    decision = guard.check({"name": "login", "arguments": {
        "options": options, "dry_run": True, "user_ids": [], "credentials": {"token": "tok_1"}}})
    assert sorted(r.code for r in decision.reasons) == ["unknown-argument"] * 2
    assert all(r.pointer.startswith("/options/") for r in decision.reasons)
    assert_inert(decision)


def test_unknown_tool_name_is_escaped_and_clipped(guard: Guard) -> None:
    decision = guard.check_arguments(CONTROL_NAME + HUGE_NAME, {})
    assert [r.code for r in decision.reasons] == ["unknown-tool"]
    assert_inert(decision)


@pytest.mark.parametrize("arguments", [
    '{"token": "' + SECRET + '", "token": "x"}',     # duplicate key
    '{"' + SECRET + '": 1, "' + SECRET + '": 2}',    # duplicate key that is a secret
    '{"n": 0.10000000000000000001' + '}',             # number that changes as a double
    '{"token": "' + SECRET + '"',                    # truncated
    '["' + SECRET + '"]',                            # not an object
])
def test_malformed_arguments_never_quote_the_text(guard: Guard, arguments: str) -> None:
    decision = guard.check({"name": "search_users", "arguments": arguments})
    assert decision.reasons[0].code in ("arguments-malformed", "arguments-not-object")
    text = rendered(decision)
    assert SECRET not in text and "0.1000000" not in text, text
    assert_inert(decision)


def test_cli_outputs_stay_inert(tmp_path: Path) -> None:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": SEED_TOOLS}))
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "search_users", "arguments": {
        "query": "a", CONTROL_NAME: SECRET, HUGE_NAME: SECRET, "api_token": SECRET}}))
    for fmt in ("human", "json"):
        run = run_cli("guard", "--catalog", str(tmp_path / "tools.json"), "--format", fmt,
                      str(call))
        assert run.code == 1 and run.stderr == ""
        assert SECRET not in run.stdout and "\x1b" not in run.stdout and "\u202e" not in run.stdout
        assert len(run.stdout) < 2000
        if fmt == "human":
            lines = run.stdout.splitlines()
            assert len(lines) == 3 and lines[0] == "DENY search_users", lines
