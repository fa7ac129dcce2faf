"""Deterministic JSON report: ``{"findings": [...], "summary": {...}}``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from histor_sign.report._findings import Finding, effective_severity, sorted_findings


def report_document(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    items = []
    counts = {"error": 0, "warning": 0, "note": 0}
    for finding in sorted_findings(findings):
        doc = finding.to_json()
        severity = effective_severity(finding, strict)
        doc["severity"] = severity.value
        counts[severity.value] += 1
        items.append(doc)
    summary: dict[str, Any] = {"findings": len(items), **counts}
    if stats:
        summary.update(stats)
    return {"findings": items, "summary": dict(sorted(summary.items()))}


def render_json(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> str:
    doc = report_document(findings, strict=strict, stats=stats)
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
