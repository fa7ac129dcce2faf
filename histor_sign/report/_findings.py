"""The finding model shared by scan, replay and the contract lint.

A finding names a rule, a severity, an outcome (for schema comparisons: ``overlap``,
``disjoint`` or ``unknown``), the tools involved with their source and index, and for
overlaps the witness that both schemas accepted. Rendering lives beside this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from histor_sign.models import Finding, Severity
from histor_sign.models import ToolRef as ToolRef


@dataclass(frozen=True)
class Rule:
    id: str
    name: str
    severity: Severity
    command: str
    summary: str
    help: str = ""


#: Every rule the toolkit can report, in one table: the collision scan (TC001-TC005, TC010,
#: TC011, and HS201 for effects read from action words), the
#: replay of observed calls (TC006-TC009) and the guard's release-time lint (HS101-HS107).
#: ``severity`` is the default; a strict run promotes incomplete analysis (see
#: :func:`effective_severity`). Help texts say what to do, never which CLI flag to pass.
RULES: dict[str, Rule] = {
    r.id: r
    for r in [
        Rule("TC001", "duplicate-name", Severity.error, "scan",
             "Two catalog entries have the same tool name.",
             "A client cannot tell the two tools apart; rename one of them."),
        Rule("TC002", "normalized-name-collision", Severity.warning, "scan",
             "Names collide after separator and case normalization.",
             "Models and some clients normalize names; choose names that differ after "
             "case folding and separator removal."),
        Rule("TC003", "confusable-overlap", Severity.warning, "scan",
             "Confusable tools (same action on the same object, or same action and similar "
             "descriptions) with a proven input-schema overlap: a witness both accept.",
             "A model may pick one for the other, and the witness is accepted by both tools, "
             "so the wrong pick still makes a valid call. Make the names or descriptions "
             "distinct."),
        Rule("TC004", "contradictory-effects", Severity.error, "scan",
             "A proven confusable overlap whose explicit MCP effect hints contradict: "
             "read-only vs destructive (error), read-only vs a non-destructive write "
             "(warning), or destructiveHint true vs false (error).",
             "Both tools state their effects and one of two interchangeable-looking tools "
             "changes or destroys data the other leaves alone; a confused call can change "
             "data. Separate them clearly, or correct the hint that is wrong."),
        Rule("TC005", "undecided-confusable", Severity.note, "scan",
             "A lexically confusable pair could not be decided safely.",
             "The schemas use semantics outside the analysed subset or hit a bound; the "
             "reason says which. A strict run treats this as a warning."),
        Rule("TC010", "description-shadowing", Severity.warning, "scan",
             "A tool's description steers the model toward or away from another tool in the "
             "scan (\"instead of\", \"never use\", \"always call ... first\").",
             "Tool shadowing: a description that names another server's tool can redirect "
             "calls meant for it. Across servers, steering away (instead of, never, do not) is "
             "an error and ordering demands (always, first, before) a warning; within one "
             "server it is a note. Remove the instruction or keep it to this tool's own use."),
        Rule("TC011", "confusable-disjoint", Severity.note, "scan",
             "Confusable tools whose input schemas are proven disjoint: no argument object is "
             "valid for both.",
             "A model may still pick one for the other, but the wrong pick fails validation "
             "instead of running. Distinct names or descriptions avoid the failed call."),
        Rule("HS201", "divergent-effects", Severity.warning, "scan",
             "A proven confusable overlap whose effects differ as their action words say, not "
             "as contradictory explicit hints state: contrasting actions on one object "
             "(archive, close, stop, trash, detach or disable vs delete), one item vs every "
             "item, or an effect inferred from a verb on one side.",
             "A request worded one way can reach either tool, and they do different things "
             "to the same data. Say in each description what the tool does that the other "
             "does not (kept or gone, one item or all), and state the MCP effect hints."),
        Rule("TC006", "replay-multiple-accept", Severity.warning, "replay",
             "Several catalog tools accept an observed call's arguments.",
             "The arguments the model actually sent would be valid for another tool too."),
        Rule("TC007", "replay-contradictory-effects", Severity.error, "replay",
             "Tools accepting an observed call have contradictory explicit effect hints.",
             "A mix-up between the accepting tools would change what the call does to data."),
        Rule("TC008", "replay-selected-rejects", Severity.error, "replay",
             "The selected tool is missing, or every matching schema rejects the call.",
             "The trace was recorded against a different catalog, or the schema changed."),
        Rule("TC009", "replay-incomplete", Severity.note, "replay",
             "Replay is incomplete: invalid, unsupported or bounded schema semantics.",
             "Some catalog schemas could not be decided for this call; the reasons say why. "
             "A strict run treats this as a warning."),
        Rule("HS101", "destructive-without-dry-run", Severity.warning, "lint",
             "A tool that needs a dry run has no dry-run parameter in its input schema.",
             "Add a boolean dry-run parameter (default: dry_run) so the guard can allow "
             "previews and hold real runs for approval."),
        Rule("HS102", "open-object-schema", Severity.note, "lint",
             "An object schema does not say additionalProperties: false.",
             "Unknown arguments (e.g. an extra admin: true) may be accepted silently."),
        Rule("HS103", "unbounded-array", Severity.note, "lint",
             "An array schema has no maxItems.",
             "A single call can then affect an unbounded number of records."),
        Rule("HS104", "id-without-minimum", Severity.note, "lint",
             "An integer id-like property has no minimum.",
             "0 or negative ids are often sentinels for 'all' or 'none'."),
        Rule("HS105", "policy-argument-not-in-schema", Severity.warning, "lint",
             "The policy names an argument the tool's schema does not declare.",
             "An effect budget, secret or dry-run parameter that never matches is a no-op."),
        Rule("HS106", "schema-pattern-unsupported", Severity.warning, "lint",
             "An input schema has a regex (pattern or patternProperties key) outside the "
             "subset the guard evaluates: linear time, same meaning in ECMA-262 and Python.",
             "Clients running the guard deny every call to this tool, and the collision scan "
             "answers unknown where the regex decides an overlap. Rewrite it without "
             "lookaround, backreferences, \\p{...} classes, inline flags, named groups, "
             "possessive quantifiers or repetition counts above 1000."),
        Rule("HS107", "tool-name-unsafe", Severity.error, "lint",
             "A tool name holds a control or invisible format character (C0, DEL, C1, "
             "bidirectional or zero-width) or '::'.",
             "No client can show such a name as it is signed: a control character hides or "
             "rewrites text on a terminal, and '::' is the separator clients put between a "
             "server and its tool names, so the tool can pass for another server's. Rename it "
             "(letters, digits, '_', '-', '.', '/')."),
        Rule("HM001", "unpublished-signature", Severity.error, "monitor",
             "A transparency-log entry signed by the publisher's identity is no revision, "
             "attestation or yank of the published chain.",
             "Someone who can run the publishing workflow (a pushed branch, a compromised "
             "action, a stolen token) signed in the publisher's name. Find the run that made "
             "the entry, revoke what it could reach, and yank any revision it published."),
        Rule("HM002", "other-workflow-signature", Severity.warning, "monitor",
             "A transparency-log entry was signed from the publisher's repository by a "
             "workflow or ref the identity policy does not cover.",
             "Clients pinned to the publishing workflow refuse such signatures, but they "
             "show that the repository can sign; check that the run was expected."),
        Rule("HM003", "log-inconsistent", Severity.error, "monitor",
             "The transparency log does not extend the stored checkpoint: it shrank, forked, "
             "or served an entry its tree does not hold.",
             "A log that rewrites history can hide signatures. Keep the stored checkpoint "
             "as evidence and report the log's two views to its operator."),
        Rule("HM004", "unverified-chain-file", Severity.warning, "monitor",
             "A file under the published chain path does not verify as what its name says "
             "(the envelope, attestation part or yank of that revision, one log entry per "
             "bundle), so its log entries are not counted as published.",
             "Someone wrote the chain directory: a file no client reads can still hide log "
             "entries from a monitor that trusts it. Find who changed the revisions branch "
             "and restore the file the release wrote."),
    ]
}


def new_finding(rule: str, message: str, tools: list[ToolRef], *,
                severity: Severity | None = None, **fields: Any) -> Finding:
    """A finding of ``rule`` at its default severity, or at ``severity`` where the rule
    grades its findings (TC004 read vs write, TC010 by imperative) — the one
    place findings get one."""
    return Finding(rule=rule, severity=severity or RULES[rule].severity, message=message,
                   tools=tools, **fields)


class FailOn(StrEnum):
    warning = "warning"
    error = "error"
    never = "never"


def effective_severity(finding: Finding, strict: bool) -> Severity:
    """A strict run promotes incomplete-analysis findings to warning."""
    if strict and finding.incomplete and finding.severity is Severity.note:
        return Severity.warning
    return finding.severity


def reaches_threshold(findings: Iterable[Finding], fail_on: FailOn, strict: bool) -> bool:
    """True when any finding is at or above ``fail_on`` (or strict sees incompleteness)."""
    items = list(findings)
    if strict and any(f.incomplete for f in items):
        return True
    if fail_on is FailOn.never:
        return False
    floor = Severity(fail_on.value).rank
    return any(effective_severity(f, strict).rank >= floor for f in items)


def at_least(findings: Iterable[Finding], minimum: Severity, strict: bool) -> list[Finding]:
    """The findings whose (effective) severity is ``minimum`` or above: what a report shows
    under ``--min-severity``. Only what is shown changes; a gate judges every finding."""
    return [f for f in findings if effective_severity(f, strict).rank >= minimum.rank]


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


def count_by_severity(findings: Iterable[Finding], strict: bool = False) -> dict[str, int]:
    """``{"error": n, "warning": n, "note": n}`` by *effective* severity.

    Every report (human, JSON, SARIF levels, the release summary) counts with this, so a
    strict run reports the same numbers everywhere.
    """
    counts = {s.value: 0 for s in sorted(Severity, key=lambda s: -s.rank)}
    for f in findings:
        counts[effective_severity(f, strict).value] += 1
    return counts
