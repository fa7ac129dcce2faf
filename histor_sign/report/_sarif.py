"""SARIF 2.1.0 output for GitHub code scanning: rule metadata, levels, catalog locations."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from histor_sign._escape import inert_text, printable, whole_lines
from histor_sign._version import __version__
from histor_sign.models import SERVER_LOCATION_PREFIX, Finding, ToolRef
from histor_sign.report._findings import RULES, effective_severity, sorted_findings
from histor_sign.report._json_report import array_lines, one_line, pretty
from histor_sign.report._locate import lines_for

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@functools.lru_cache(maxsize=4096)
def artifact_uri(source: str) -> str:
    """A URI reference for a catalog or trace path (relative paths stay relative); cached,
    since every result names the few sources again."""
    if source == "-":
        return "stdin"
    if source.startswith(SERVER_LOCATION_PREFIX):  # a live server, not a file
        return SERVER_LOCATION_PREFIX + quote(source[len(SERVER_LOCATION_PREFIX):], safe="")
    path = PurePath(source)
    if path.is_absolute():
        return Path(source).as_uri()
    return quote(path.as_posix(), safe="/")


def _rule_doc(rule_id: str, index: int) -> dict[str, Any]:
    rule = RULES[rule_id]
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.help or rule.summary},
        "defaultConfiguration": {"level": rule.severity.value},
        "help": {"text": rule.help or rule.summary},
        "properties": {"tags": ["mcp", "tool-collision", rule.command]},
    }


def _location(
    source: str, pointer: str, name: str, lines: Mapping[str, Mapping[str, int]], kind: str
) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(source)}}
    line = lines.get(source, {}).get(pointer)
    if line is not None:
        physical["region"] = {"startLine": line}
    return {
        "physicalLocation": physical,
        "logicalLocations": [{
            "name": printable(name),
            "fullyQualifiedName": f"{source}#{pointer}" if pointer else source,
            "kind": kind,
        }],
    }


def _fingerprint(finding: Finding) -> str:
    parts = [finding.rule] + [f"{t.source}#{t.index}:{t.name}" for t in finding.tools]
    if finding.call is not None:
        parts.append(f"{finding.call.source}#{finding.call.index}")
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def iter_sarif(
    findings: Sequence[Finding],
    *,
    strict: bool = False,
    stats: Mapping[str, Any] | None = None,
    command: str = "scan",
) -> Iterator[str]:
    """The SARIF log's text in consecutive pieces: the frame indented, one result a line.

    Every piece goes through :func:`inert_text`, which keeps the JSON value and escapes what
    ``json.dumps`` leaves raw (C1 controls, U+2028/U+2029, bidi and other format
    characters) inside the strings that hold them: code scanning shows them as plain text.
    """
    return map(inert_text, whole_lines(_pieces(findings, strict, stats, command)))


def _pieces(findings: Sequence[Finding], strict: bool, stats: Mapping[str, Any] | None,
            command: str) -> Iterator[str]:
    """The pieces of :func:`iter_sarif`, before escaping."""
    ordered = sorted_findings(findings)
    rule_ids = sorted({r.id for r in RULES.values() if r.command == command}
                      | {f.rule for f in ordered})
    rule_index = {rid: i for i, rid in enumerate(rule_ids)}
    lines = _finding_lines(ordered)
    tool = {"driver": {
        "name": "histor-sign",
        "version": __version__,
        "rules": [_rule_doc(rid, i) for i, rid in enumerate(rule_ids)],
    }}
    yield (f'{{\n  "$schema": {one_line(SARIF_SCHEMA)},\n  "version": "2.1.0",\n  "runs": [\n'
           f'    {{\n      "tool": {pretty(tool, 3)},\n'
           '      "columnKind": "unicodeCodePoints",\n      "results": ')
    results = (_result(f, rule_index[f.rule], lines, strict) for f in ordered)
    yield from array_lines((one_line(r) for r in results if r is not None), 3)
    if stats:
        yield ',\n      "properties": ' + pretty({"summary": dict(sorted(stats.items()))}, 3)
    yield "\n    }\n  ]\n}\n"


def _finding_lines(ordered: Sequence[Finding]) -> dict[str, dict[str, int]]:
    """Per source file, the line of every pointer a finding names in it."""
    wanted: dict[str, set[str]] = {}
    for finding in ordered:
        for t in finding.tools:
            if t.pointer:
                wanted.setdefault(t.source, set()).add(t.pointer)
    return {source: lines_for(source, ptrs) for source, ptrs in sorted(wanted.items())}


def _result(finding: Finding, index: int, lines: Mapping[str, Mapping[str, int]],
            strict: bool) -> dict[str, Any] | None:
    """One SARIF result (None for a finding with no location to show)."""
    refs: list[ToolRef] = list(finding.tools)
    locations = [_location(t.source, t.pointer, t.name, lines, "member") for t in refs]
    if finding.call is not None:
        call_loc = _location(finding.call.source, "", f"call {finding.call.index}", lines,
                             "function")
        locations = [call_loc, *locations]
    if not locations:
        return None
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": effective_severity(finding, strict).value,
        # Shown by code scanning as plain text: made one inert line like every message.
        "message": {"text": printable(finding.message)},
        "locations": [locations[0]],
        "partialFingerprints": {"historSignFinding/v1": _fingerprint(finding)},
    }
    if len(locations) > 1:
        result["relatedLocations"] = [
            {"id": i, **loc} for i, loc in enumerate(locations[1:], start=1)
        ]
    props: dict[str, Any] = {}
    if finding.outcome is not None:
        props["outcome"] = finding.outcome
    if finding.has_witness:
        props["witness"] = finding.witness
    if finding.call is not None:
        props["call"] = finding.call.to_json()
    props.update(finding.properties)
    if props:
        result["properties"] = dict(sorted(props.items()))
    return result
