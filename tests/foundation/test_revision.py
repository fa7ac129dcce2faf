"""Digests and chained revision statements: the published digest vectors and HISTOR's example."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign.errors import InputError
from histor_sign.models import PROJECTED_FIELDS, Statement
from histor_sign.revision import build_statement, digests

TOOL: dict[str, Any] = {
    "name": "search",
    "description": "Search the docs.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
}
RELEASE = {
    "server": "io.github.example/docs",
    "identity": "https://github.com/example/docs/.github/workflows/sign.yml@refs/heads/main",
    "server_version": "1.4.2",
}


def test_spec_vectors_bit_for_bit() -> None:
    manifest, per_tool = digests([TOOL])
    assert per_tool == {
        "search": "sha256:896aa19c0d891787f6a9f964ef5dbbde7fc840099a33a465678bc152df6fb7e0"
    }
    assert manifest == "sha256:4f97f46c59c1d9185c9c12fc012e1da949abebd79764ce1af124ac8a86a9ed30"
    manifest, per_tool = digests([{**TOOL, "description": "Search the private docs."}])
    assert per_tool["search"] == (
        "sha256:1d0511838d72f698c74705d26cf73cc20bd7bb01071cce6900c0a31435eb788e"
    )
    assert manifest == "sha256:cdf20eebf43ac1464672edff0a7e98507429031e9ad382ad98862c8ac8fcf635"


def test_histor_example_runs_on_the_typed_statement(capsys: pytest.CaptureFixture[str]) -> None:
    tool = TOOL
    changed = {**tool, "description": "Search the private docs."}
    before = build_statement(tools=[tool], **RELEASE)
    after = build_statement(tools=[changed], previous=before, **RELEASE)
    assert before.server_version == after.server_version == "1.4.2"
    assert after.previous_manifest_digest == before.manifest_digest
    assert before.manifest_digest != after.manifest_digest
    assert before.tool_digests["search"] != after.tool_digests["search"]
    assert after.to_json()["previousManifestDigest"] == before.to_json()["manifestDigest"]
    for snapshot in ([tool], [changed]):
        manifest, per_tool = digests(snapshot)
        print(per_tool["search"][7:15], manifest[7:15])
    assert capsys.readouterr().out == "896aa19c 4f97f46c\n1d051183 cdf20eeb\n"


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {k: _shuffled(v, rng) for k, v in items}
    if isinstance(value, list):
        return [_shuffled(v, rng) for v in value]
    return value


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=2**32))
def test_digests_ignore_key_order_and_tool_order(seed: int) -> None:
    rng = random.Random(seed)
    tools = [
        {**TOOL, "name": f"tool_{i}", "title": f"T{i}", "annotations": {"readOnlyHint": i % 2 == 0}}
        for i in range(6)
    ]
    shuffled = [_shuffled(t, rng) for t in tools]
    rng.shuffle(shuffled)
    assert digests(shuffled) == digests(tools)


@pytest.mark.parametrize("field", PROJECTED_FIELDS[1:])
def test_each_projected_field_changes_both_digests(field: str) -> None:
    base = {**TOOL, "title": "Search", "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}, "execution": {"taskSupport": "forbidden"}}
    changed = copy.deepcopy(base)
    changed[field] = {"changed": True} if field != "description" and field != "title" else "x"
    m1, t1 = digests([base])
    m2, t2 = digests([changed])
    assert m1 != m2 and t1["search"] != t2["search"]


def test_name_change_changes_manifest() -> None:
    assert digests([TOOL])[0] != digests([{**TOOL, "name": "search2"}])[0]


@pytest.mark.parametrize("extra", [{"_meta": {"x": 1}}, {"icons": [{"src": "a.png"}]}, {"vendor": 1}])
def test_fields_outside_projection_do_not_change_digests(extra: dict[str, Any]) -> None:
    assert digests([{**TOOL, **extra}]) == digests([TOOL])


def test_absent_field_differs_from_null_field() -> None:
    assert digests([TOOL]) != digests([{**TOOL, "title": None}])


def test_duplicate_names_are_an_error_naming_both_positions() -> None:
    with pytest.raises(InputError, match=r"duplicate tool name 'search': <tools>#/0 and <tools>#/2"):
        digests([TOOL, {**TOOL, "name": "other"}, TOOL])


def test_chain_numbers_and_previous_digest() -> None:
    first = build_statement(tools=[TOOL], **RELEASE)
    second = build_statement(tools=[TOOL], previous=first, **RELEASE)
    third = build_statement(tools=[{**TOOL, "title": "S"}], previous=second, **RELEASE)
    assert [first.revision, second.revision, third.revision] == [1, 2, 3]
    assert first.previous_manifest_digest is None
    assert second.previous_manifest_digest == first.manifest_digest
    assert third.previous_manifest_digest == second.manifest_digest


def test_previous_may_be_an_envelope() -> None:
    first = build_statement(tools=[TOOL], **RELEASE)
    envelope = {**first.to_json(), "signer": {"issuer": "x", "identity": "y", "signature": {}}}
    assert build_statement(tools=[TOOL], previous=envelope, **RELEASE).revision == 2


def test_server_mismatch_is_refused() -> None:
    first = build_statement(tools=[TOOL], **RELEASE)
    with pytest.raises(InputError, match="previous revision is for server"):
        build_statement(tools=[TOOL], previous=first, **{**RELEASE, "server": "io.github.example/other"})


@pytest.mark.parametrize("server", ["docs", "a/b/c", "io.github.x/", "/x", "io github/x", "a" * 201 + "/x"])
def test_invalid_server_names(server: str) -> None:
    with pytest.raises(InputError, match="invalid server name"):
        build_statement(tools=[TOOL], **{**RELEASE, "server": server})


@pytest.mark.parametrize(
    "identity",
    ["", "http://example.com/x", "https://github.com/o/r", "https://github.com/o/r/.github/workflows/x.yml", "a b"],
)
def test_invalid_identities(identity: str) -> None:
    with pytest.raises(InputError, match="invalid identity"):
        build_statement(tools=[TOOL], **{**RELEASE, "identity": identity})


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda s: s.pop("manifestDigest"), "missing manifestDigest"),
        (lambda s: s.update(type="other"), "expected 'histor.revision/v1'"),
        (lambda s: s.update(revision=0), "positive integer"),
        (lambda s: s.update(revision=True), "positive integer"),
        (lambda s: s.update(manifestDigest="sha256:XYZ"), "manifestDigest"),
        (lambda s: s.update(previousManifestDigest="sha256:" + "0" * 64), "revision 1 has no"),
        (lambda s: s.update(toolDigests={"a": 1}), "toolDigests"),
    ],
)
def test_statement_validation(mutate: Any, fragment: str) -> None:
    statement = build_statement(tools=[TOOL], **RELEASE).to_json()
    mutate(statement)
    with pytest.raises(InputError, match=fragment):
        Statement.from_json(statement, "prev.json")
