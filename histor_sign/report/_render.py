"""One entry point for every report format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from histor_sign.errors import UsageError
from histor_sign.report._findings import Finding


class ReportFormat(str, Enum):  # noqa: UP042  (matches the CLI enums)
    human = "human"
    json = "json"
    sarif = "sarif"


def render(
    findings: Sequence[Finding],
    fmt: ReportFormat | str = ReportFormat.human,
    *,
    strict: bool = False,
    stats: Mapping[str, Any] | None = None,
    command: str = "scan",
    color: bool = False,
) -> str:
    """Render findings as ``human`` (compact terminal), ``json`` or ``sarif`` text."""
    try:
        kind = ReportFormat(fmt)
    except ValueError:
        raise UsageError(f"unknown report format {fmt!r} (use human, json or sarif)") from None
    if kind is ReportFormat.json:
        from histor_sign.report._json_report import render_json

        return render_json(findings, strict=strict, stats=stats)
    if kind is ReportFormat.sarif:
        from histor_sign.report._sarif import render_sarif

        return render_sarif(findings, strict=strict, stats=stats, command=command)
    from histor_sign.report._human import render_human

    return render_human(findings, strict=strict, stats=stats, color=color)
