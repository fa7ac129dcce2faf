"""One entry point for every report format."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

from histor_sign.errors import UsageError
from histor_sign.models import Finding


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
    return "".join(render_pieces(findings, fmt, strict=strict, stats=stats, command=command,
                                 color=color))


def render_pieces(
    findings: Sequence[Finding],
    fmt: ReportFormat | str = ReportFormat.human,
    *,
    strict: bool = False,
    stats: Mapping[str, Any] | None = None,
    command: str = "scan",
    color: bool = False,
) -> Iterator[str]:
    """The text :func:`render` returns, in consecutive pieces, so a report of any size is
    written without being held whole. The format is checked before the first piece."""
    try:
        kind = ReportFormat(fmt)
    except ValueError:
        raise UsageError(f"unknown report format {fmt!r} (use human, json or sarif)") from None
    if kind is ReportFormat.json:
        from histor_sign.report._json_report import iter_json

        return iter_json(findings, strict=strict, stats=stats)
    if kind is ReportFormat.sarif:
        from histor_sign.report._sarif import iter_sarif

        return iter_sarif(findings, strict=strict, stats=stats, command=command)
    from histor_sign.report._human import iter_human

    return iter_human(findings, strict=strict, stats=stats, color=color)
