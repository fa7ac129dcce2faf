"""drift.compare and ``histor-sign check``: match, added/removed/changed, named fields."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli

from histor_sign.drift import compare
from histor_sign.errors import InputError
from histor_sign.models import Statement
from histor_sign.revision import build_statement

SEARCH = {"name": "search", "description": "Search the docs.", "inputSchema": {
    "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}
GET = {"name": "get", "title": "Get a page", "description": "Get one page.",
       "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
       "annotations": {"readOnlyHint": True}}
DELETE = {"name": "delete", "description": "Delete a page.",
          "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}
SIGNED = [SEARCH, GET, DELETE]
RELEASE = {"server": "io.github.example/docs", "server_version": "1.4.2",
           "identity": "https://github.com/example/docs/.github/workflows/sign.yml@refs/heads/main"}


@pytest.fixture(scope="module")
def statement() -> Statement:
    return build_statement(tools=SIGNED, **RELEASE)


def served() -> list[dict[str, Any]]:
    return copy.deepcopy(SIGNED)


def test_match_in_any_order(statement: Statement) -> None:
    result = compare(statement, list(reversed(served())))
    assert result.status == "match" and result.tools == ()
    assert result.to_json()["summary"] == {"added": 0, "removed": 0, "changed": 0, "renamed": 0}


def test_seed_description_drift(statement: Statement) -> None:
    tools = served()
    tools[0]["description"] = "Search the private docs."
    result = compare(statement, tools)
    assert result.status == "different"
    [item] = result.tools
    assert (item.name, item.change, item.fields) == ("search", "changed", None)
    assert item.current_digest == \
        "sha256:1d0511838d72f698c74705d26cf73cc20bd7bb01071cce6900c0a31435eb788e"
    assert item.signed_digest == \
        "sha256:896aa19c0d891787f6a9f964ef5dbbde7fc840099a33a465678bc152df6fb7e0"
    named = compare(statement, tools, signed_tools=SIGNED).tools[0]
    assert named.fields == ("description",)
    assert named.description_diff == (
        "--- signed\n+++ current\n@@ -1 +1 @@\n-Search the docs.\n+Search the private docs.")


def test_added_removed_and_several_fields(statement: Statement) -> None:
    tools = served()
    del tools[2]  # delete removed
    tools[1]["annotations"] = {"readOnlyHint": False, "destructiveHint": True}
    del tools[1]["title"]
    tools[1]["inputSchema"]["properties"]["id"]["type"] = "integer"
    tools.append({"name": "purge", "inputSchema": {"type": "object"}})
    result = compare(statement, tools, SIGNED)
    summary = [(t.name, t.change, t.fields) for t in result.tools]
    assert summary == [("delete", "removed", None),
                       ("get", "changed", ("title", "inputSchema", "annotations")),
                       ("purge", "added", None)]
    doc = result.to_json()
    assert doc["summary"] == {"added": 1, "removed": 1, "changed": 1, "renamed": 0}
    assert doc["tools"][0]["currentDigest"] is None


def test_unprojected_fields_do_not_change_digests(statement: Statement) -> None:
    tools = served()
    tools[0]["_meta"] = {"com.example/seq": 1}
    tools[0]["icons"] = [{"src": "https://example.com/i.png"}]
    # The digests cover the seven signed fields only: with the statement alone nothing else
    # can be compared, so this is a match.
    assert compare(statement, tools).status == "match"
    # issue 23: with the signed catalog the difference is seen and reported as
    # changed-and-unsigned (medium), never as a silent match.
    result = compare(statement, tools, signed_tools=SIGNED)
    assert result.status == "different" and result.risk == "medium"
    [item] = result.tools
    assert (item.name, item.fields, item.unsigned_fields) == ("search", (), ("_meta", "icons"))
    assert item.signed_digest == item.current_digest
    assert {(c.kind.value, c.rule) for c in item.changes} == {
        ("changed-and-unsigned", "unsigned-field")}


def test_bad_inputs(statement: Statement) -> None:
    with pytest.raises(InputError, match="duplicate tool name 'search'"):
        compare(statement, [SEARCH, SEARCH])
    with pytest.raises(InputError, match="not the catalog the revision was built from"):
        compare(statement, served(), signed_tools=[SEARCH, GET])
    with pytest.raises(InputError, match="not a revision statement"):
        compare({"type": "histor.revision/v1"}, served())


def files(tmp_path: Path, statement: Statement, tools: list[dict[str, Any]]) -> list[str]:
    envelope = {**statement.to_json(), "signer": {"issuer": "i", "identity": "x", "signature": {}},
                "transparencyLog": {"logId": "00", "logIndex": 1, "integratedTime": 1}}
    paths = {"release.envelope.json": envelope, "signed.json": {"tools": SIGNED},
             "served.json": {"tools": tools}}
    for name, doc in paths.items():
        (tmp_path / name).write_text(json.dumps(doc))
    return [str(tmp_path / n) for n in paths]


def test_cli_match_and_different(tmp_path: Path, statement: Statement) -> None:
    envelope, signed, current = files(tmp_path, statement, served())
    run = run_cli("check", "--envelope", envelope, current)
    assert run.code == 0 and run.stdout.startswith("match: io.github.example/docs revision 1")
    tools = served()
    tools[0]["description"] = "Search the private docs.\x1b[2J"
    envelope, signed, current = files(tmp_path, statement, tools)
    run = run_cli("check", "--envelope", envelope, current)
    assert run.code == 1 and "changed  search: fields unknown" in run.stdout
    run = run_cli("check", "--envelope", envelope, "--signed-tools", signed, current)
    assert run.code == 1 and "changed  search: description" in run.stdout
    assert "+Search the private docs.\\u001b[2J" in run.stdout and "\x1b" not in run.stdout
    run = run_cli("check", "--envelope", envelope, "--signed-tools", signed, "-f", "json",
                  current)
    doc = json.loads(run.stdout)
    assert run.code == 1 and doc["status"] == "different"
    assert doc["tools"][0]["fields"] == ["description"]


def test_cli_bad_input(tmp_path: Path, statement: Statement) -> None:
    envelope, signed, current = files(tmp_path, statement, [SEARCH, SEARCH])
    run = run_cli("check", "--envelope", envelope, current)
    assert_clean_error(run, 2)
    assert "duplicate tool name 'search'" in run.stderr
    assert_clean_error(run_cli("check", "--envelope", current, signed), 2)
    assert_clean_error(run_cli("check", "--envelope", envelope, str(tmp_path / "nope.json")), 2)
    assert_clean_error(run_cli("check", signed), 2)
