"""The allow plan (an allowed call decided by the engine's ``is_valid`` and a few lookups)
gives exactly the decisions of the full rules, which explain every deny."""

from __future__ import annotations

import json
from typing import Any

import pytest
from guard_fixtures import SEED_POLICY, SEED_TOOLS
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign.guard import Guard
from histor_sign.guard import _core as core

NAMES = [t["name"] for t in SEED_TOOLS]
KEYS = sorted({k for t in SEED_TOOLS for k in t["inputSchema"].get("properties", {})}
              | {"dry_run", "extra", "x"})
values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-3, max_value=2**54)
    | st.floats(allow_nan=True) | st.text(max_size=8)
    | st.sampled_from(["ada@example.com", "support", "name", "a@b.co"]),
    lambda inner: st.lists(inner, max_size=7) | st.dictionaries(st.text(max_size=3), inner,
                                                                 max_size=3),
    max_leaves=12,
)
VALID = {
    "update_user_email": {"user_id": 42, "email": "ada@example.com", "dry_run": True},
    "delete_user": {"user_id": 7, "reason": "support", "dry_run": True},
    "bulk_update_emails": {"user_ids": [1, 2], "new_email": "ada@example.com", "dry_run": True},
    "search_users": {"query": "ada", "limit": 5},
}


@st.composite
def near_valid_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A valid call of a seed tool with up to two changes: often allowed, often not."""
    name = draw(st.sampled_from(NAMES))
    args = dict(VALID[name])
    for _ in range(draw(st.integers(min_value=0, max_value=2))):
        change = draw(st.sampled_from(["drop", "set", "add"]))
        if change == "drop" and args:
            args.pop(draw(st.sampled_from(sorted(args))))
        elif change == "set" and args:
            args[draw(st.sampled_from(sorted(args)))] = draw(values)
        else:
            args[draw(st.sampled_from(KEYS))] = draw(values)
    return name, args


arguments = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)


def _full_rules_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core._Contract, "plan", lambda self, policy: None)


@pytest.fixture(scope="module", params=["jsonschema-rs", "jsonschema"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# 600 generated calls per engine (~3-4 s each, mostly Hypothesis generating arguments): a
# deep check, slow-marked so the quick set stays quick; the example-based tests below stay.
@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(call=st.tuples(st.sampled_from(NAMES), arguments) | near_valid_calls(),
       through=st.sampled_from(["check", "args"]))
def test_plan_and_full_rules_decide_alike(engine: str, call: tuple[str, dict[str, Any]],
                                          through: str) -> None:
    name, args = call
    fast = Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY, engine=engine)
    with pytest.MonkeyPatch.context() as mp:
        _full_rules_only(mp)
        full = Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY, engine=engine)
        expected = (full.check({"name": name, "arguments": args}) if through == "check"
                    else full.check_arguments(name, args)).to_json()
    got = (fast.check({"name": name, "arguments": args}) if through == "check"
           else fast.check_arguments(name, args)).to_json()
    assert got == expected


def test_the_plan_allows_an_ordinary_call() -> None:
    guard = Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY)
    call = {"name": "update_user_email",
            "arguments": {"user_id": 42, "email": "ada@example.com", "dry_run": True}}
    assert guard._contracts["update_user_email"].plan(guard.policy) is not None
    assert guard.check(call).allowed


def test_an_unsigned_tool_has_no_plan_and_is_denied() -> None:
    from histor_sign.revision import build_statement

    stmt = build_statement(tools=SEED_TOOLS[1:], server="io.github.o/s", server_version="1",
                           identity="https://github.com/o/s/.github/workflows/w.yml@refs/heads/main")
    guard = Guard.from_envelope(stmt.to_json(), SEED_TOOLS, SEED_POLICY)
    call = {"name": "update_user_email",
            "arguments": {"user_id": 42, "email": "ada@example.com", "dry_run": True}}
    assert guard._contracts["update_user_email"].plan(guard.policy) is None
    assert [r.code for r in guard.check(call).reasons] == ["not-signed"]


def _both(tools: list[dict[str, Any]], call: dict[str, Any],
          policy: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The decision with the allow plan and with the full rules only."""
    fast = Guard.from_catalog(tools, policy=policy).check(call).to_json()
    with pytest.MonkeyPatch.context() as mp:
        _full_rules_only(mp)
        full = Guard.from_catalog(tools, policy=policy).check(call).to_json()
    return fast, full


CLOSED = {"type": "object", "additionalProperties": False,
          "properties": {"a": {"type": "integer"}, "s": {}}}
OPEN_BY_PATTERN = {**CLOSED, "patternProperties": {"^x": {}}}
# Draft 7 ignores the siblings of $ref: additionalProperties does not apply here.
OPEN_BY_REF = {**CLOSED, "$schema": "http://json-schema.org/draft-07/schema#",
               "$ref": "#/definitions/any", "definitions": {"any": {}}}


@pytest.mark.parametrize("schema", [CLOSED, OPEN_BY_PATTERN, OPEN_BY_REF],
                         ids=["closed", "patternProperties", "ref"])
@pytest.mark.parametrize("args", [{"a": 1}, {"a": 1, "x1": 2}, {"a": 1, "zz": 2}, {},
                                  {"a": "1"}])
def test_a_schema_that_refuses_unknown_arguments_decides_alike(
        schema: dict[str, Any], args: dict[str, Any]) -> None:
    fast, full = _both([{"name": "t", "inputSchema": schema}], {"name": "t", "arguments": args})
    assert fast == full


def test_only_a_closed_root_skips_the_unknown_argument_check() -> None:
    tools = [{"name": n, "inputSchema": s}
             for n, s in [("closed", CLOSED), ("pattern", OPEN_BY_PATTERN), ("ref", OPEN_BY_REF)]]
    guard = Guard.from_catalog(tools)
    plans = {n: guard._contracts[n].plan(guard.policy) for n in ("closed", "pattern", "ref")}
    assert {n: p is not None and p.declared is None for n, p in plans.items()} == {
        "closed": True, "pattern": False, "ref": False}


BIG = 2**53
EDGE_ARGS: list[Any] = [
    {"s": "caf\u00e9"},  # not ASCII: the full path measures it
    {"caf\u00e9": 1},
    {"s": "\ud800"},  # a lone surrogate: not a JSON value
    {"a": BIG - 1}, {"a": BIG}, {"a": -BIG}, {"a": 10**400},
    {"s": float("nan")}, {"s": float("inf")}, {"s": [1.5, float("-inf")]},
    {"s": [[{"k": [None, True, 0.25]}], {}]},
    {"s": (1, 2)}, {"s": b"x"}, {"s": {1: 2}},
    {"s": type("S", (str,), {})("x")},
]


@pytest.mark.parametrize("args", EDGE_ARGS)
@pytest.mark.parametrize("schema", [CLOSED, {"type": "object"}], ids=["closed", "open"])
def test_edge_arguments_decide_alike(schema: dict[str, Any], args: dict[str, Any]) -> None:
    fast, full = _both([{"name": "t", "inputSchema": schema}], {"name": "t", "arguments": args})
    assert fast == full


@pytest.mark.parametrize("extra", [-1, 0, 1])
def test_arguments_at_the_size_limit_decide_alike(extra: int) -> None:
    from histor_sign._limits import DEFAULT_MAX_ARGUMENT_BYTES
    from histor_sign.canonical import canonical_bytes

    padding = DEFAULT_MAX_ARGUMENT_BYTES - len(canonical_bytes({"s": ""})) + extra
    args = {"s": "a" * padding}
    assert len(canonical_bytes(args)) == DEFAULT_MAX_ARGUMENT_BYTES + extra
    schema = {"type": "object", "properties": {"s": {"type": "string"}}}
    fast, full = _both([{"name": "t", "inputSchema": schema}], {"name": "t", "arguments": args})
    assert fast == full
    assert (fast["decision"] == "allow") is (extra <= 0)


def test_replacing_the_policy_replaces_the_plans() -> None:
    from histor_sign.guard import Policy

    call = {"name": "update_user_email",
            "arguments": {"user_id": 42, "email": "ada@example.com", "dry_run": False}}
    guard = Guard.from_catalog(SEED_TOOLS, policy=SEED_POLICY)
    assert not guard.check(call).allowed  # a destructive call without its dry run
    guard.policy = Policy(require_dry_run_for_destructive=False)
    assert guard.check(call).allowed
    guard.policy = Policy.from_dict(SEED_POLICY)
    assert not guard.check(call).allowed


OK_ARGS = {"user_id": 42, "email": "ada@example.com", "dry_run": True}


@pytest.mark.parametrize("call", [
    {"name": "update_user_email", "arguments": OK_ARGS},
    {"name": "update_user_email", "arguments": OK_ARGS, "_meta": {"progressToken": 1}},
    {"name": "update_user_email", "arguments": OK_ARGS, "extra": 1},
    {"name": "update_user_email"},
    {"name": "update_user_email", "arguments": None},
    {"name": "update_user_email", "arguments": "{\"user_id\": 42}"},
    {"name": "no_such_tool", "arguments": OK_ARGS},
    {"name": ["update_user_email"], "arguments": OK_ARGS},
    {"arguments": OK_ARGS},
], ids=["plain", "meta", "extra-key", "no-arguments", "null-arguments", "text-arguments",
        "unknown-tool", "list-name", "no-name"])
def test_call_shapes_decide_alike(call: dict[str, Any]) -> None:
    fast, full = _both(SEED_TOOLS, call, SEED_POLICY)
    assert fast == full


RECURSIVE = {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}},
             "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}


@pytest.mark.parametrize("depth", [10, 300, 5_000, 40_000])
def test_arguments_built_deep_in_memory_are_decided_not_crashed(depth: int) -> None:
    """A host passing arguments it built itself: past the reader's depth the allow plan
    steps aside (40,000 levels crash jsonschema_rs), and past the interpreter's stack the
    call is denied as nested too deeply — never a RecursionError out of check()."""
    nested: Any = []
    for _ in range(depth):
        nested = [nested]
    fast, full = _both([{"name": "t", "inputSchema": RECURSIVE}],
                       {"name": "t", "arguments": {"a": nested}})
    assert fast == full
    if depth >= 5_000:
        assert fast["decision"] == "deny"
        assert "nested too deeply" in fast["reasons"][0]["message"]
    else:
        assert fast["decision"] == "allow"


class _Text(str):
    pass


class _Count(int):
    pass


@pytest.mark.parametrize("args", [
    {_Text("a"): 1}, {"a": 1, "s": _Text("x")}, {"a": _Count(2)}, {"a": [_Text("x")]},
    {_Text("zz"): _Count(1)},
])
def test_arguments_with_str_and_int_subclasses_decide_as_their_json(
        args: dict[str, Any]) -> None:
    """A host's own str/int subclasses are the JSON values they spell: decided as those
    (jsonschema_rs refuses to read a str subclass; check() never raises for content)."""
    plain = json.loads(json.dumps(args))
    for schema in (CLOSED, OPEN_BY_PATTERN):
        fast, full = _both([{"name": "t", "inputSchema": schema}],
                           {"name": "t", "arguments": args})
        expected, _ = _both([{"name": "t", "inputSchema": schema}],
                            {"name": "t", "arguments": plain})
        assert fast == full == expected
