"""Reports are written in pieces: the same JSON values as one document, the frame indented,
one finding (SARIF result) a line, inert where the whole text was, never held whole."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from cli_harness import REPO

from histor_sign.catalog import load_catalog, tools_from_dicts
from histor_sign.collisions import ScanOptions, scan_catalogs, scan_tools
from histor_sign.models import Finding
from histor_sign.report._findings import effective_severity, sorted_findings
from histor_sign.report._json_report import array_lines, pretty
from histor_sign.report._render import render, render_pieces

EXAMPLE = REPO / "examples" / "scan" / "collision-mcp.json"
#: Server-chosen text json.dumps leaves raw with ensure_ascii=False.
HOSTILE = "read\u2028file\x85\u202e::warning::x##[error]"


def hostile_findings() -> list[Finding]:
    items = [{"name": f"{HOSTILE}_{i}" if i % 2 else f"read_file_{i}",
              "description": f"Read a file. {HOSTILE}",
              "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}
             for i in range(6)]
    return scan_tools(tools_from_dicts(items, "hostile.json"), ScanOptions(workers=1)).findings


def reference_json(findings: list[Finding], stats: dict[str, Any]) -> dict[str, Any]:
    """The JSON report's value, built independently of the streaming writer."""
    items = []
    for f in sorted_findings(findings):
        doc = f.to_json()
        doc["severity"] = effective_severity(f, False).value
        items.append(doc)
    counts = {s: sum(1 for d in items if d["severity"] == s) for s in ("error", "warning", "note")}
    return json.loads(json.dumps({"schemaVersion": 1, "findings": items,
                                  "summary": {"findings": len(items), **counts, **stats}}))


@pytest.mark.parametrize("findings", ["none", "example", "hostile"])
def test_json_report_value_and_one_finding_a_line(findings: str) -> None:
    found: list[Finding] = {"example": lambda: scan_catalogs([load_catalog(EXAMPLE)]).findings,
                            "hostile": hostile_findings, "none": list}[findings]()
    stats = {"tools": 4}
    text = render(found, "json", stats=stats)
    assert json.loads(text) == reference_json(found, stats)
    lines = text.split("\n")  # not splitlines(): U+2028 and U+0085 stay inside JSON strings
    item_lines = [ln for ln in lines if ln.startswith("    {")]
    assert len(item_lines) == len(found)
    for line in item_lines:  # each finding alone is a JSON object on its line
        assert isinstance(json.loads(line.strip().rstrip(",")), dict)
    if not found:
        assert text == json.dumps(json.loads(text), indent=2, sort_keys=True) + "\n"


@pytest.mark.parametrize("fmt", ["human", "json", "sarif"])
def test_pieces_are_lazy_and_join_to_render(fmt: str) -> None:
    found = hostile_findings() * 300  # a few hundred kilobytes of report
    pieces = render_pieces(found, fmt, stats={"tools": 6})
    assert isinstance(pieces, Iterator)
    parts = list(pieces)
    whole = "".join(parts)
    assert len(parts) >= 3 and max(map(len, parts)) < len(whole) / 2  # never held whole
    assert whole == render(found, fmt, stats={"tools": 6})


def test_sarif_stays_inert_and_keeps_its_value() -> None:
    found = hostile_findings()
    text = render(found, "sarif")
    for raw in ("\u2028", "\x85", "\u202e"):
        assert raw not in text
    assert not any(line.lstrip().startswith("::") for line in text.split("\n"))
    doc = json.loads(text)
    names = {loc["logicalLocations"][0]["name"]
             for r in doc["runs"][0]["results"] for loc in r["locations"]}
    assert any("\\u2028" in n for n in names)  # printable(): escaped once, visibly
    messages = [r["message"]["text"] for r in doc["runs"][0]["results"]]
    assert len(messages) == len([line for line in text.split("\n")
                                 if line.startswith('        {"ruleId"')])


@pytest.mark.parametrize("value", [[], {}, [1, {"a": [2, 3]}], {"b": {"c": []}, "a": "x\ny"}])
@pytest.mark.parametrize("depth", [0, 1, 3])
def test_frame_helpers_match_json_dumps(value: Any, depth: int) -> None:
    """``pretty`` and ``array_lines`` write what ``json.dumps(indent=2)`` writes at a depth."""
    wrapped: Any = value
    for _ in range(depth):
        wrapped = {"k": wrapped}
    whole = json.dumps(wrapped, indent=2, sort_keys=True)
    head = "".join('{\n' + "  " * (d + 1) + '"k": ' for d in range(depth))
    tail = "".join("\n" + "  " * d + "}" for d in reversed(range(depth)))
    assert head + pretty(value, depth, sort_keys=True) + tail == whole
    if isinstance(value, list):
        items = [pretty(v, depth + 1, sort_keys=True) for v in value]
        assert head + "".join(array_lines(items, depth)) + tail == whole
