"""The Markdown summary renders untrusted tool text inside its table, harmlessly."""

from __future__ import annotations

from pathlib import Path

from histor_sign.catalog import parse_catalog
from histor_sign.release import ReleaseOutcome, ReleaseRequest, summary_markdown
from histor_sign.report._findings import Finding, Severity, ToolRef


def test_hostile_tool_names_stay_in_their_cell() -> None:
    name = "evil|<img src=x>`\n## injected"
    finding = Finding(rule="TC002", severity=Severity.warning, message=f"names '{name}' collide",
                      tools=[ToolRef(name=name, source="c.json", index=0)])
    outcome = ReleaseOutcome(
        request=ReleaseRequest(server="io.github.a/b", server_version="1", out_dir=Path("o")),
        findings=[finding], gate_passed=False,
    )
    text = summary_markdown(outcome, parse_catalog({"tools": []}, "c.json"))
    [row] = [line for line in text.splitlines() if line.startswith("| TC002")]
    assert row.count("|") - row.count("\\|") == 5  # still exactly four cells
    assert "<img" not in text and "`" not in row and "\n## injected" not in text
    assert "Gate failed" in text
