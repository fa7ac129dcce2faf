"""``check --fail-on``: the exit code follows the triaged risk; JSON and text carry it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli

from histor_sign.drift import compare
from histor_sign.models import Statement
from histor_sign.pins import verified_drift_text
from histor_sign.revision import build_statement

DELETE = {"name": "delete_index", "description": "Delete one search index.",
          "inputSchema": {"type": "object", "properties": {"index": {"type": "string"}},
                          "required": ["index"], "additionalProperties": False},
          "annotations": {"destructiveHint": False}}
SEARCH = {"name": "search", "description": "Search the index.",
          "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
          "annotations": {"readOnlyHint": True}}
SIGNED = [DELETE, SEARCH]
SERVER = "io.github.acme/search"
IDENTITY = "https://github.com/acme/search-mcp/.github/workflows/sign.yml@refs/tags/v2.3.0"


@pytest.fixture(scope="module")
def statement() -> Statement:
    return build_statement(tools=SIGNED, server=SERVER, server_version="2.3.0",
                           identity=IDENTITY)


def served() -> list[dict[str, Any]]:
    return copy.deepcopy(SIGNED)


def risky() -> list[dict[str, Any]]:
    tools = served()
    tools[0]["annotations"]["destructiveHint"] = True
    tools[0]["inputSchema"]["properties"]["force"] = {"type": "boolean"}
    tools[0]["inputSchema"]["required"].append("force")
    return tools


def wording() -> list[dict[str, Any]]:
    tools = served()
    tools[1]["description"] = "Search the index for documents."
    return tools


def cosmetic() -> list[dict[str, Any]]:
    tools = served()
    tools[1]["description"] = "search the index"
    return tools


def files(tmp_path: Path, statement: Statement, tools: list[dict[str, Any]]) -> list[str]:
    envelope = {**statement.to_json(), "signer": {"issuer": "i", "identity": "x", "signature": {}},
                "transparencyLog": {"logId": "00", "logIndex": 1, "integratedTime": 1}}
    paths = {"release.envelope.json": envelope, "signed.json": {"tools": SIGNED},
             "served.json": {"tools": tools}}
    for name, doc in paths.items():
        (tmp_path / name).write_text(json.dumps(doc))
    return [str(tmp_path / n) for n in paths]


# issue 23 (drift triage must fail safe): a rewording is text the model reads, so it is
# medium and fails a medium gate (it passed before); only a change that provably keeps the
# meaning (case, whitespace, punctuation, a typo fix) is low.
@pytest.mark.parametrize(("tools", "fail_on", "code"), [
    (wording, None, 1), (wording, "low", 1), (wording, "medium", 1), (wording, "high", 0),
    (cosmetic, None, 1), (cosmetic, "low", 1), (cosmetic, "medium", 0),
    (risky, None, 1), (risky, "medium", 1), (risky, "high", 1), (served, "low", 0),
    (served, None, 0),
])
def test_exit_code_follows_the_risk(tmp_path: Path, statement: Statement, tools: Any,
                                    fail_on: str | None, code: int) -> None:
    envelope, signed, current = files(tmp_path, statement, tools())
    gate = ["--fail-on", fail_on] if fail_on else []
    run = run_cli("check", "--envelope", envelope, "--signed-tools", signed, *gate, current)
    assert run.code == code, run.stderr


def test_human_headline(tmp_path: Path, statement: Statement) -> None:
    envelope, signed, current = files(tmp_path, statement, risky())
    run = run_cli("check", "--envelope", envelope, "--signed-tools", signed, current)
    head = run.stdout.splitlines()[0]
    assert head.startswith('different — risk: high  (1 changed: delete_index: destructiveHint '
                           'false → true; new required argument "force"')
    assert head.endswith(f" · {SERVER} revision 1 (signature not verified)")
    assert "      high   destructiveHint false → true  (annotation riskier)" in run.stdout


def test_json_has_kind_and_risk_per_change(tmp_path: Path, statement: Statement) -> None:
    envelope, signed, current = files(tmp_path, statement, risky())
    run = run_cli("check", "--envelope", envelope, "--signed-tools", signed, "-f", "json",
                  "--fail-on", "high", current)
    doc = json.loads(run.stdout)
    assert run.code == 1 and doc["risk"] == "high"
    [tool] = doc["tools"]
    for key in ("name", "change", "signedDigest", "currentDigest", "fields"):
        assert key in tool  # the keys check had before triage
    kinds = {(c["kind"], c["risk"]) for c in tool["changes"]}
    assert {("annotation riskier", "high"), ("new required argument", "medium")} <= kinds
    widened = next(c for c in tool["changes"] if c["kind"] == "schema widened")
    assert widened["witness"]["force"] is not None and "index" in widened["witness"]


def test_bad_fail_on_is_a_usage_error(tmp_path: Path, statement: Statement) -> None:
    envelope, _, current = files(tmp_path, statement, risky())
    run = run_cli("check", "--envelope", envelope, "--fail-on", "severe", current)
    assert run.code == 2 and "Traceback" not in run.stderr and not run.stdout
    assert "--fail-on" in run.stderr


def test_verified_headline_folds_the_risk(statement: Statement) -> None:
    headline = f"{SERVER} revision 1 · signed by {IDENTITY}"
    text = verified_drift_text(compare(statement, risky(), SIGNED), headline)
    first = text.splitlines()[0]
    assert first.startswith("different — risk: high  (1 changed: delete_index: ")
    assert first.endswith(f" · {headline}")
    assert verified_drift_text(compare(statement, served(), SIGNED), headline) == (
        f"match · {headline}")


def test_digest_only_change_is_high(tmp_path: Path, statement: Statement) -> None:
    envelope, _, current = files(tmp_path, statement, wording())
    run = run_cli("check", "--envelope", envelope, "--fail-on", "high", current)
    assert run.code == 1 and "definition unknown" in run.stdout
    assert_clean_error(run_cli("check", "--fail-on", "low", current), 2)
