"""Compact terminal output: one line per finding, a summary line; color only on a TTY."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from histor_sign._escape import printable
from histor_sign.models import Finding, Severity
from histor_sign.report._findings import count_by_severity, effective_severity, sorted_findings

_COLORS = {Severity.error: "\033[31m", Severity.warning: "\033[33m", Severity.note: "\033[36m"}
_RESET = "\033[0m"


def iter_human(
    findings: Sequence[Finding],
    *,
    strict: bool = False,
    stats: Mapping[str, Any] | None = None,
    color: bool = False,
) -> Iterator[str]:
    """The report's lines (each ending in a newline): one a finding, then the summary."""
    for finding in sorted_findings(findings):
        severity = effective_severity(finding, strict)
        label = f"{severity.value:<7}"
        if color:
            label = f"{_COLORS[severity]}{label}{_RESET}"
        # Messages quote tool names and descriptions chosen by servers: keep them inert.
        yield f"{finding.rule} {label} {printable(finding.message)}\n"
    counts = count_by_severity(findings, strict)
    total = sum(counts.values())
    head = (f"{total} finding{'s' if total != 1 else ''}: {counts['error']} error, "
            f"{counts['warning']} warning, {counts['note']} note") if total else "no findings"
    yield head + _stats_text(stats) + "\n"


def _stats_text(stats: Mapping[str, Any] | None) -> str:
    if not stats:
        return ""
    if "candidatePairs" in stats:
        return (f" · {stats['tools']} tools, {stats['candidatePairs']} candidate pairs of "
                f"{stats['allPairs']} ({stats['overlap']} overlap, {stats['disjoint']} disjoint, "
                f"{stats['unknown']} unknown)")
    if "calls" in stats:
        return (f" · {stats['calls']} calls against {stats['tools']} tools, "
                f"{stats['validations']} validations")
    return ""
