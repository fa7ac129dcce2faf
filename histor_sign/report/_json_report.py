"""Deterministic JSON report: ``{"findings": [...], "summary": {...}}``."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from histor_sign.report._findings import (
    Finding,
    count_by_severity,
    effective_severity,
    sorted_findings,
)


def report_document(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    items = []
    for finding in sorted_findings(findings):
        doc = finding.to_json()
        doc["severity"] = effective_severity(finding, strict).value
        items.append(doc)
    summary: dict[str, Any] = {"findings": len(items), **count_by_severity(findings, strict)}
    if stats:
        summary.update(stats)
    return {"findings": items, "summary": dict(sorted(summary.items()))}


def render_json(
    findings: Sequence[Finding], *, strict: bool = False, stats: Mapping[str, Any] | None = None
) -> str:
    doc = report_document(findings, strict=strict, stats=stats)
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
