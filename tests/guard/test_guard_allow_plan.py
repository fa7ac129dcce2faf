"""The allow plan (an allowed call decided by the engine's ``is_valid`` and a few lookups)
gives exactly the decisions of the full rules, which explain every deny."""

from __future__ import annotations

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
