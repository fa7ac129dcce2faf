"""Renderers: SARIF 2.1.0 valid against the official schema, deterministic JSON, human."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_harness import REPO, run_cli

from histor_sign.catalog import load_catalog
from histor_sign.collisions import scan_catalogs
from histor_sign.errors import UsageError
from histor_sign.models import Finding, Severity, ToolRef
from histor_sign.report._findings import RULES
from histor_sign.report._render import render

SARIF_SCHEMA = json.loads((Path(__file__).parent.parent / "data" /
                           "sarif-schema-2.1.0.json").read_text())
EXAMPLE = REPO / "examples" / "scan" / "collision-mcp.json"


def sarif_valid(doc: Any) -> None:
    jsonschema.Draft7Validator(SARIF_SCHEMA).validate(doc)


def example_findings() -> list[Finding]:
    return scan_catalogs([load_catalog(EXAMPLE)]).findings


def test_sarif_is_valid_with_rule_metadata_levels_and_regions() -> None:
    doc = json.loads(render(example_findings(), "sarif"))
    sarif_valid(doc)
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["HS201", "TC001", "TC002", "TC003", "TC004", "TC005",
                                         "TC010", "TC011"]
    assert rules[0]["defaultConfiguration"]["level"] == "warning"
    assert rules[4]["defaultConfiguration"]["level"] == "error"
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {"TC002": "warning", "TC003": "warning", "TC004": "error", "TC005": "note"}
    text = EXAMPLE.read_text().splitlines()
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        loc = result["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == EXAMPLE.as_uri()
        line = loc["region"]["startLine"]
        assert text[line - 1].strip() == "{"  # the tool object starts on that line
        assert text[line].strip().startswith('"name"')
        assert len(result["relatedLocations"]) == 1
    tc4 = next(r for r in run["results"] if r["ruleId"] == "TC004")
    assert tc4["properties"]["witness"] == {"path": "a"}


def test_sarif_strict_promotes_incomplete_to_warning_and_relative_uris() -> None:
    finding = Finding(rule="TC005", severity=Severity.note, message="undecided",
                      tools=[ToolRef("a", "dir/my cat.json", 0, "/tools/0")], outcome="unknown",
                      incomplete=True)
    doc = json.loads(render([finding], "sarif", strict=True))
    sarif_valid(doc)
    result = doc["runs"][0]["results"][0]
    assert result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "dir/my%20cat.json")


def test_replay_sarif_is_valid() -> None:
    run = run_cli("replay", "--format", "sarif", "--catalog",
                  str(REPO / "examples/scan/replay-catalog-mcp.json"),
                  str(REPO / "examples/scan/replay-openai-responses.json"))
    assert run.code == 1
    doc = json.loads(run.stdout)
    sarif_valid(doc)
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {"TC006", "TC007"}
    assert [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]] == [
        "TC006", "TC007", "TC008", "TC009"]


def test_json_report_shape_and_determinism() -> None:
    findings = example_findings()
    one = render(findings, "json", stats={"tools": 4})
    two = render(list(reversed(findings)), "json", stats={"tools": 4})
    assert one == two
    doc = json.loads(one)
    assert list(doc) == ["findings", "schemaVersion", "summary"]
    assert doc["summary"]["error"] == 1 and doc["summary"]["tools"] == 4
    for f in doc["findings"]:
        assert f["rule"] in RULES
        assert {"name", "source", "index"} == set(f["tools"][0])
        if f["outcome"] == "overlap":
            assert "witness" in f


def test_human_output_is_compact_and_uncolored_unless_asked() -> None:
    text = render(example_findings(), "human")
    assert "\033[" not in text
    lines = text.splitlines()
    assert lines[-1].startswith("4 findings: 1 error, 2 warning, 1 note")
    assert all(line.split()[0] in RULES for line in lines[:-1])
    assert "\033[31m" in render(example_findings(), "human", color=True)
    with pytest.raises(UsageError):
        render([], "xml")


def test_human_output_escapes_control_characters_in_tool_names() -> None:
    from histor_sign.models import Finding, Severity, ToolRef
    from histor_sign.report._render import render

    name = "evil\x1b]0;owned\x07\u202ename\nTC001 error   forged line"
    finding = Finding(rule="TC002", severity=Severity.warning, message=f"names '{name}' collide",
                      tools=[ToolRef(name=name, source="c.json", index=0)])
    text = render([finding], "human")
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert len(text.splitlines()) == 2  # the finding and the summary: no forged line
    assert "\\u001b]0;owned\\u0007\\u202ename\\nTC001" in text


def _strict_mix() -> list[Finding]:
    ref = [ToolRef("a", "c.json", 0)]
    return [
        Finding(rule="TC005", severity=Severity.note, message="undecided", tools=ref,
                outcome="unknown", incomplete=True),
        Finding(rule="TC005", severity=Severity.note, message="undecided too", tools=ref,
                outcome="unknown", incomplete=True),
        Finding(rule="TC003", severity=Severity.warning, message="overlap", tools=ref),
        Finding(rule="TC004", severity=Severity.error, message="contradiction", tools=ref),
        Finding(rule="HS102", severity=Severity.note, message="open object", tools=ref),
    ]


@pytest.mark.parametrize("strict", [False, True])
def test_every_report_counts_severities_alike(strict: bool) -> None:
    import re
    from collections import Counter

    from histor_sign.models import parse_catalog
    from histor_sign.pipeline import ReleaseOutcome, ReleaseRequest, summary_markdown
    from histor_sign.report._findings import count_by_severity

    findings = _strict_mix()
    counts = count_by_severity(findings, strict)
    assert counts == ({"error": 1, "warning": 3, "note": 1} if strict
                      else {"error": 1, "warning": 1, "note": 3})
    sarif = json.loads(render(findings, "sarif", strict=strict))
    levels = Counter(r["level"] for r in sarif["runs"][0]["results"])
    assert {k: levels.get(k, 0) for k in counts} == counts
    summary = json.loads(render(findings, "json", strict=strict))["summary"]
    assert {k: summary[k] for k in counts} == counts
    human = render(findings, "human", strict=strict).splitlines()[-1]
    assert human.startswith(f"5 findings: {counts['error']} error, {counts['warning']} "
                            f"warning, {counts['note']} note")
    outcome = ReleaseOutcome(
        request=ReleaseRequest(server="io.github.a/b", server_version="1", out_dir=Path("o"),
                               strict=strict),
        findings=findings, gate_passed=False)
    text = summary_markdown(outcome, parse_catalog({"tools": []}, "c.json"))
    match = re.search(r"(\d+) errors, (\d+) warnings, (\d+) notes", text)
    assert match is not None
    assert dict(zip(("error", "warning", "note"), map(int, match.groups()), strict=True)) == counts
    rows = [line.split(" | ")[1] for line in text.splitlines() if line.startswith("| HS")
            or line.startswith("| TC")]
    assert Counter(rows) == {k: v for k, v in counts.items() if v}


def test_lint_findings_render_in_every_format(tmp_path: Path) -> None:
    """The contract lint's findings (HS106 among them) through SARIF, JSON, human and the
    release summary: valid SARIF with the rule's metadata, level and the tool's line."""
    from histor_sign.guard import lint_catalog
    from histor_sign.pipeline import ReleaseOutcome, ReleaseRequest, summary_markdown

    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"tools": [
        {"name": "fine", "inputSchema": {"type": "object", "additionalProperties": False}},
        {"name": "lookup", "inputSchema": {
            "type": "object", "additionalProperties": False,
            "patternProperties": {"^a/(?=b)": {"type": "string", "maxLength": 3}}}},
    ]}, indent=2))
    catalog = load_catalog(str(path))
    findings = lint_catalog(catalog.tools)
    assert [f.rule for f in findings] == ["HS106"]
    doc = json.loads(render(findings, "sarif", command="release"))
    sarif_valid(doc)
    run = doc["runs"][0]
    [rule] = run["tool"]["driver"]["rules"]
    assert (rule["id"], rule["name"]) == ("HS106", RULES["HS106"].name)
    assert rule["defaultConfiguration"]["level"] == "warning"
    [result] = run["results"]
    assert result["level"] == "warning"
    assert result["properties"]["pointers"] == ["/patternProperties/^a~1(?=b)"]
    line = result["locations"][0]["physicalLocation"]["region"]["startLine"]
    assert '"lookup"' in path.read_text().splitlines()[line]  # the tool's object starts there
    assert result["locations"][0]["logicalLocations"][0]["name"] == "lookup"
    [item] = json.loads(render(findings, "json"))["findings"]
    assert (item["rule"], item["severity"]) == ("HS106", "warning")
    assert item["tools"][0]["name"] == "lookup"
    assert item["properties"]["pointers"] == ["/patternProperties/^a~1(?=b)"]
    human = render(findings, "human").splitlines()
    assert human[0].startswith("HS106 warning 'lookup': ") and "^a~1(?=b)" in human[0]
    outcome = ReleaseOutcome(
        request=ReleaseRequest(server="io.github.a/b", server_version="1", out_dir=Path("o")),
        findings=findings, gate_passed=True)
    assert "| HS106 | warning | `lookup` |" in summary_markdown(outcome, catalog)


def test_every_rule_is_documented_with_its_default_severity() -> None:
    """docs/scan.md (TC), docs/guard.md (HS) and docs/monitor.md (HM) list every rule of
    RULES, and no other."""
    import re

    rows: dict[str, list[str]] = {}
    for doc in ("scan.md", "guard.md", "monitor.md"):
        for line in (REPO / "docs" / doc).read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if re.fullmatch(r"(TC|HS|HM)\d{3}", cells[0]):
                rows[cells[0]] = cells
    assert sorted(rows) == sorted(RULES)
    for rule_id, cells in rows.items():
        severities = next(c for c in cells[1:] if any(s.value in c for s in Severity))
        assert RULES[rule_id].severity.value in severities, cells
