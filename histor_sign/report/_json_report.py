"""Deterministic JSON report: ``{"findings": [...], "summary": {...}}``.

Written as it is produced: the document's frame is indented, and each finding is one line
(keys sorted), so a report of hundreds of thousands of findings is never held whole — and
stays easy to ``grep`` and to diff, a changed finding being a changed line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from histor_sign._version import JSON_SCHEMA_VERSION
from histor_sign.models import Finding
from histor_sign.report._findings import count_by_severity, effective_severity, sorted_findings


def pretty(value: Any, depth: int, *, sort_keys: bool = False) -> str:
    """``value`` as ``json.dumps(indent=2)`` writes it ``depth`` levels deep in a document."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=sort_keys)
    return text.replace("\n", "\n" + "  " * depth)


def one_line(value: Any, *, sort_keys: bool = False) -> str:
    """``value`` on one line (``", "`` and ``": "`` separators): how a report writes an item."""
    return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)


def array_lines(items: Iterable[str], depth: int) -> Iterator[str]:
    """The text of a JSON array ``depth`` levels deep, one item (already encoded) a line."""
    pad = "  " * (depth + 1)
    first = True
    for item in items:
        yield ("[\n" if first else ",\n") + pad + item
        first = False
    yield "[]" if first else "\n" + "  " * depth + "]"


def summary_of(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    summary: dict[str, Any] = {"findings": len(findings), **count_by_severity(findings, strict)}
    if stats:
        summary.update(stats)
    return dict(sorted(summary.items()))


def finding_document(finding: Finding, *, strict: bool = False) -> dict[str, Any]:
    doc = finding.to_json()
    doc["severity"] = effective_severity(finding, strict).value
    return doc


def iter_json(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> Iterator[str]:
    """The report's text in consecutive pieces."""
    yield '{\n  "findings": '
    yield from array_lines((one_line(finding_document(f, strict=strict), sort_keys=True)
                            for f in sorted_findings(findings)), 1)
    # Members in sorted order, as the rest of the report (schemaVersion: docs/api.md).
    summary = pretty(summary_of(findings, strict=strict, stats=stats), 1, sort_keys=True)
    yield f',\n  "schemaVersion": {JSON_SCHEMA_VERSION},\n  "summary": {summary}\n}}\n'
