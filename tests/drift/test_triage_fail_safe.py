"""Drift triage fails safe (issue 23): before/after pairs, data-driven.

Each pair sets one field of a ``search`` tool to ``old`` in the signed catalog and to ``new``
in the served one (``null``: the field is absent), compares them with :func:`compare` and
checks the tool's risk (``risk`` exact, or ``min`` a floor) and, where given, that ``rule``
fired. The catalog also has ``fetch_page`` and ``send_sms``, the "other tools" a text may
name. ``triage_pairs.json`` holds the pairs the rules were tuned on; the pairs of
``triage_pairs_heldout.json`` were written before the rules were tuned and not used to tune
them. The rule (docs/drift.md): any change to text the model reads is at least medium; high
when it adds instructions, other tools' names, URLs, paths, secrets or scope words (or
drops a restriction, or adds hidden characters or another writing system); low only when
whitespace, letter case, punctuation or a typo fix provably keeps the meaning.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli

from histor_sign.drift import DriftResult, compare
from histor_sign.drift._triage import RULES, Risk
from histor_sign.revision import build_statement

HERE = Path(__file__).resolve().parent
DOCS = HERE.parents[1] / "docs" / "drift.md"
IDENTITY = "https://github.com/acme/docs/.github/workflows/sign.yml@refs/heads/main"
SEARCH: dict[str, Any] = {
    "name": "search", "description": "Search the docs.",
    "inputSchema": {"type": "object", "properties": {
        "query": {"type": "string", "description": "What to look for."}},
        "required": ["query"]},
}
SIBLINGS: list[dict[str, Any]] = [
    {"name": "fetch_page", "description": "Fetch one page by its id.",
     "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}},
    {"name": "send_sms", "description": "Send a text message to a phone number.",
     "inputSchema": {"type": "object", "properties": {"to": {"type": "string"}}}},
]


def pairs(name: str) -> list[dict[str, Any]]:
    doc = json.loads((HERE / name).read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = doc["pairs"]
    return found


TUNED = pairs("triage_pairs.json")
HELD_OUT = pairs("triage_pairs_heldout.json")


def with_field(field: str, value: Any) -> list[dict[str, Any]]:
    """The catalog with ``search``'s ``field`` set to ``value`` (absent when None)."""
    tool = copy.deepcopy(SEARCH)
    node, key = tool, field
    if field == "query.description":
        node, key = tool["inputSchema"]["properties"]["query"], "description"
    if value is None:
        node.pop(key, None)
    else:
        node[key] = copy.deepcopy(value)
    return [tool, *copy.deepcopy(SIBLINGS)]


def triage(pair: dict[str, Any]) -> DriftResult:
    signed = with_field(pair["field"], pair["old"])
    served = with_field(pair["field"], pair["new"])
    statement = build_statement(tools=signed, server="io.github.acme/docs",
                                server_version="1.0.0", identity=IDENTITY)
    return compare(statement, served, signed)


def verdict(pair: dict[str, Any]) -> tuple[bool, str]:
    """(the pair's expectation holds, what was reported)."""
    result = triage(pair)
    [item] = result.tools
    rules = [c.rule for c in item.changes]
    said = f"{item.risk.value} {rules}"
    if "risk" in pair and item.risk is not Risk(pair["risk"]):
        return False, said
    if "min" in pair and item.risk.rank < Risk(pair["min"]).rank:
        return False, said
    if "rule" in pair and pair["rule"] not in rules:
        return False, said
    return True, said


def test_the_tables_are_big_enough() -> None:
    assert len(TUNED) >= 40 and len(HELD_OUT) >= 15
    groups = {p["group"] for p in TUNED}
    assert groups == {"attack", "medium", "language", "low"}
    assert sum(p.get("risk") == "low" for p in TUNED) >= 10
    assert len({p["id"] for p in TUNED + HELD_OUT}) == len(TUNED) + len(HELD_OUT)


@pytest.mark.parametrize("pair", TUNED, ids=[p["id"] for p in TUNED])
def test_tuned_pairs(pair: dict[str, Any]) -> None:
    ok, said = verdict(pair)
    assert ok, f"{pair['id']}: expected {pair.get('risk') or 'at least ' + pair['min']}" \
               f"{' via ' + pair['rule'] if 'rule' in pair else ''}, reported {said}"


@pytest.mark.parametrize("pair", HELD_OUT, ids=[p["id"] for p in HELD_OUT])
def test_held_out_pairs(pair: dict[str, Any]) -> None:
    ok, said = verdict(pair)
    assert ok, f"{pair['id']}: expected {pair.get('risk') or 'at least ' + pair['min']}, " \
               f"reported {said}"


@pytest.mark.parametrize("pair", TUNED + HELD_OUT, ids=[p["id"] for p in TUNED + HELD_OUT])
def test_every_change_names_a_documented_rule(pair: dict[str, Any]) -> None:
    result = triage(pair)
    [item] = result.tools
    assert item.changes
    for change in item.changes:
        assert change.rule in RULES
    entry = result.to_json()["tools"][0]
    assert [c["rule"] for c in entry["changes"]] == [c.rule for c in item.changes]
    text = result.to_text()
    for change in item.changes:
        assert f"[rule: {change.rule}]" in text


def test_every_rule_is_documented() -> None:
    doc = DOCS.read_text(encoding="utf-8")
    for rule in RULES:
        assert f"`{rule}`" in doc, rule


LANGUAGES = [p for p in TUNED if p["group"] == "language"]


def test_at_least_five_languages_and_none_is_low() -> None:
    added = {p["id"].split("-")[0] for p in LANGUAGES}
    assert len(added) >= 5
    for pair in LANGUAGES:
        assert triage(pair).risk is not Risk.LOW, pair["id"]


# --- the source article's example, through the library and the CLI --------------------

ARTICLE = next(p for p in TUNED if p["id"] == "article-private-docs")


def test_the_article_example_fails_the_medium_gate() -> None:
    result = triage(ARTICLE)
    assert result.reaches(Risk.MEDIUM) and result.risk is Risk.HIGH
    [item] = result.tools
    [change] = item.changes
    assert (change.kind.value, change.risk.value, change.rule) == (
        "text widens scope", "high", "scope")
    assert "'private'" in change.detail


def write(tmp_path: Path, signed: list[dict[str, Any]], served: list[dict[str, Any]]
          ) -> tuple[str, str, str]:
    statement = build_statement(tools=signed, server="io.github.acme/docs",
                                server_version="1.0.0", identity=IDENTITY)
    envelope = {**statement.to_json(), "signer": {"issuer": "i", "identity": "x",
                                                  "signature": {}},
                "transparencyLog": {"logId": "00", "logIndex": 1, "integratedTime": 1}}
    paths = {"release.envelope.json": envelope, "signed.json": {"tools": signed},
             "served.json": {"tools": served}}
    for name, doc in paths.items():
        (tmp_path / name).write_text(json.dumps(doc), encoding="utf-8")
    env, sig, cur = (str(tmp_path / n) for n in paths)
    return env, sig, cur


def test_cli_article_example_fails_fail_on_medium(tmp_path: Path) -> None:
    """``check --fail-on medium`` accepted "Search the private docs." before issue 23."""
    env, signed, served = write(tmp_path, with_field("description", "Search the docs."),
                                with_field("description", "Search the private docs."))
    run = run_cli("check", "--envelope", env, "--signed-tools", signed, "--fail-on", "medium",
                  served)
    assert run.code == 1, run.stderr
    assert run.stdout.startswith("different — risk: high")
    assert "[rule: scope]" in run.stdout
    doc = json.loads(run_cli("check", "--envelope", env, "--signed-tools", signed,
                             "--fail-on", "medium", "-f", "json", served).stdout)
    assert doc["risk"] == "high"
    assert doc["tools"][0]["changes"][0]["rule"] == "scope"


def test_cli_cosmetic_change_passes_fail_on_medium(tmp_path: Path) -> None:
    env, signed, served = write(tmp_path, with_field("description", "Serach the docs."),
                                with_field("description", "Search the docs"))
    gated = run_cli("check", "--envelope", env, "--signed-tools", signed, "--fail-on",
                    "medium", served)
    assert gated.code == 0, gated.stdout
    assert re.search(r"low +description: typo fixed .*\[rule: typo-fix\]", gated.stdout)
    # The default gate is unchanged: any difference fails.
    assert run_cli("check", "--envelope", env, "--signed-tools", signed, served).code == 1


def test_cli_unsigned_field_is_not_a_match(tmp_path: Path) -> None:
    """Only ``_meta`` differs: the digests match, yet with the signed catalog the check is
    different (changed-and-unsigned, medium); with digests alone it cannot be seen."""
    served = with_field("_meta", {"com.example/route": "https://other.example"})
    env, signed, current = write(tmp_path, with_field("_meta", None), served)
    run = run_cli("check", "--envelope", env, "--signed-tools", signed, "--fail-on", "medium",
                  "-f", "json", current)
    doc = json.loads(run.stdout)
    assert run.code == 1 and doc["status"] == "different" and doc["risk"] == "medium"
    [tool] = doc["tools"]
    assert tool["signedDigest"] == tool["currentDigest"]
    assert tool["fields"] == [] and tool["unsignedFields"] == ["_meta"]
    assert [(c["kind"], c["rule"]) for c in tool["changes"]] == [
        ("changed-and-unsigned", "unsigned-field")]
    text = run_cli("check", "--envelope", env, "--signed-tools", signed, current).stdout
    assert "changed  search: _meta (unsigned)  [risk: medium]" in text
    blind = run_cli("check", "--envelope", env, current)
    assert blind.code == 0 and blind.stdout.startswith("match")


@pytest.mark.parametrize("unit", ["a", "a-", "a.", "a@", "1.", "/a", "$a", "%a", "a:/", "a.b@",
                                  "x "])
def test_hostile_text_is_scanned_in_linear_time(unit: str) -> None:
    """The URL and path patterns start only where a run starts and repeat a bounded number
    of times: 80 000 characters of a repeated unit take well under a second (unbounded
    patterns took minutes)."""
    import time

    from histor_sign.drift._triage import DriftKind, text_changes

    text = unit * (80_000 // len(unit))
    start = time.monotonic()
    [change] = text_changes(text, text + " end", where="description",
                            kind=DriftKind.DESCRIPTION_WORDING)
    assert time.monotonic() - start < 10  # generous: shared, loaded CI machines
    assert change.risk is not Risk.LOW
