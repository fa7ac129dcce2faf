"""The finding model shared by scan, replay and the contract lint.

A finding names a rule, a severity, an outcome (for schema comparisons: ``overlap``,
``disjoint`` or ``unknown``), the tools involved with their source and index, and for
overlaps the witness that both schemas accepted. Rendering lives beside this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from histor_sign.errors import UsageError


class Severity(StrEnum):
    """How serious a finding is, in SARIF's levels (note < warning < error)."""

    note = "note"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return {"note": 0, "warning": 1, "error": 2}[self.value]


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    command: str
    summary: str
    help: str = ""


#: Every rule the toolkit can report. Scan TC001–TC005, replay TC006–TC009 (ToolClash
#: semantics, seed 000); contract lint HS1xx (seed 003).
RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule("TC001", "duplicate-name", Severity.error, "scan",
             "Two catalog entries have the same tool name."),
        Rule("TC002", "normalized-name-collision", Severity.warning, "scan",
             "Names collide after separator and case normalization."),
        Rule("TC003", "confusable-overlap", Severity.warning, "scan",
             "Confusable names/descriptions with a proven input-schema overlap."),
        Rule("TC004", "contradictory-effects", Severity.error, "scan",
             "A proven confusable overlap whose explicit effect hints contradict."),
        Rule("TC005", "undecided-confusable", Severity.note, "scan",
             "A lexically confusable pair could not be decided safely."),
        Rule("TC006", "replay-multiple-accept", Severity.warning, "replay",
             "Several catalog tools accept an observed call's arguments."),
        Rule("TC007", "replay-contradictory-effects", Severity.error, "replay",
             "Tools accepting an observed call have contradictory explicit effect hints."),
        Rule("TC008", "replay-selected-rejects", Severity.error, "replay",
             "The selected tool is missing, or every matching schema rejects the call."),
        Rule("TC009", "replay-incomplete", Severity.note, "replay",
             "Replay is incomplete: invalid, unsupported or bounded schema semantics."),
    ]
}


def register_rule(rule: Rule) -> None:
    """Add a rule (used by modules that define their own, e.g. the contract lint)."""
    RULES[rule.id] = rule


@dataclass(frozen=True)
class ToolRef:
    name: str
    source: str
    index: int
    pointer: str = ""


@dataclass(frozen=True)
class CallRef:
    """An observed call (replay): where it was and a digest — never its raw arguments."""

    source: str
    index: int
    tool: str
    arguments_digest: str
    pointer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "argumentsDigest": self.arguments_digest,
            "index": self.index,
            "source": self.source,
            "tool": self.tool,
        }


@dataclass
class Finding:
    """One rule result: the rule, its severity, a message, and the tools (or call) it is
    about; renderers turn it into human text, JSON or SARIF."""

    rule: str
    severity: Severity
    message: str
    tools: list[ToolRef]
    outcome: str | None = None  # "overlap" | "disjoint" | "unknown" for schema results
    witness: Any = None
    has_witness: bool = False
    incomplete: bool = False  # TC005/TC009-style "analysis did not finish"
    properties: dict[str, Any] = field(default_factory=dict)
    call: CallRef | None = None  # replay findings: the observed call

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "outcome": self.outcome,
            "tools": [
                {"name": t.name, "source": t.source, "index": t.index} for t in self.tools
            ],
            "message": self.message,
        }
        if self.has_witness:
            out["witness"] = self.witness
        if self.call is not None:
            out["call"] = self.call.to_json()
        if self.properties:
            out["properties"] = dict(sorted(self.properties.items()))
        return out


class FailOn(StrEnum):
    warning = "warning"
    error = "error"
    never = "never"


def effective_severity(finding: Finding, strict: bool) -> Severity:
    """``--strict`` promotes incomplete-analysis findings to warning."""
    if strict and finding.incomplete and finding.severity is Severity.note:
        return Severity.warning
    return finding.severity


def reaches_threshold(findings: Iterable[Finding], fail_on: FailOn, strict: bool) -> bool:
    """True when any finding is at or above ``--fail-on`` (or strict sees incompleteness)."""
    items = list(findings)
    if strict and any(f.incomplete for f in items):
        return True
    if fail_on is FailOn.never:
        return False
    floor = Severity(fail_on.value).rank
    return any(effective_severity(f, strict).rank >= floor for f in items)


def parse_threshold(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"--threshold must be a number in (0, 1], got {value!r}") from None
    if not 0 < number <= 1:
        raise UsageError(f"--threshold must be in (0, 1], got {value}")
    return number


def sort_key(finding: Finding) -> tuple[Any, ...]:
    """Deterministic order: rule, then the tools' (source, index), then the call, message."""
    call = finding.call
    return (
        finding.rule,
        [(t.source, t.index, t.name) for t in finding.tools],
        (call.source, call.index) if call is not None else ("", -1),
        finding.message,
    )


def sorted_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=sort_key)


def summary(findings: Iterable[Finding]) -> Mapping[str, int]:
    counts = {"error": 0, "warning": 0, "note": 0}
    for f in findings:
        counts[f.severity.value] += 1
    return counts
