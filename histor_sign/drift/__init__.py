"""Client-side drift check: what a server serves now vs. a signed revision.

A statement carries only digests, so with it alone a changed tool is "changed, fields
unknown" (triaged as high risk: a wording fix and an attack look the same). Given the
signed catalog too (the tools file or snapshot that was signed, checked against the
statement's digests first) we can say which of the seven projected fields changed, show a
short diff of a changed description, report a removed and an added tool with the same
schema as one rename, report fields outside the seven signed ones that differ (never a
silent match), and triage every change into a kind, a risk and the rule that rated it (see
:mod:`histor_sign.drift._triage` and docs/drift.md for the rubric, which fails safe).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from histor_sign._escape import printable
from histor_sign.canonical import canonical_bytes
from histor_sign.catalog import ToolsLike, as_tools
from histor_sign.drift._triage import (
    DriftChange,
    DriftKind,
    SchemaClock,
    added_tool_changes,
    rename_changes,
    renames,
    tool_changes,
    unsigned_changes,
    unsigned_fields,
)
from histor_sign.errors import InputError
from histor_sign.models import (
    PROJECTED_FIELDS,
    SURFACE_LISTS,
    Risk,
    Snapshot,
    Statement,
    SurfaceDigests,
    Tool,
    max_risk,
    not_served_json,
    statement_of,
)
from histor_sign.revision import digests, surface_digests

if TYPE_CHECKING:
    from histor_sign.canonical import JsonValue
    from histor_sign.models import Snapshot, StatementLike

MAX_DIFF_LINES = 40


class DriftStatus(StrEnum):
    """Whether the served tools are exactly the signed ones.

    ``UNVERIFIED``: the tools are the signed ones and the served surface equals the
    release snapshot's, but that surface is not signed (no verified attestation): whoever
    can write the published files could have rewritten both, so this is never a match.
    """

    MATCH = "match"
    DIFFERENT = "different"
    UNVERIFIED = "unverified"


class ChangeKind(StrEnum):
    """How one tool differs from the signed revision."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    RENAMED = "renamed"


@dataclass(frozen=True)
class DigestChange:
    """One name whose digest differs between two digest maps."""

    name: str
    change: ChangeKind
    before: str | None
    after: str | None


def diff_digests(before: Mapping[str, str], after: Mapping[str, str]) -> list[DigestChange]:
    """Every tool name whose digest differs between two ``{name: digest}`` maps, by name.

    The one comparison of digest maps: drift, the verifier's tools axis and the check of a
    signed catalog all use it, so they agree on what "added/removed/changed" means.
    """
    out: list[DigestChange] = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        kind = (ChangeKind.ADDED if old is None
                else ChangeKind.REMOVED if new is None else ChangeKind.CHANGED)
        out.append(DigestChange(name, kind, old, new))
    return out


class SurfaceStatus(StrEnum):
    """Whether the served surface (instructions, prompts, resource templates) was compared
    with the signed one, and what was found."""

    MATCH = "match"
    DIFFERENT = "different"
    NOT_COMPARED = "not-compared"


class SurfaceBaseline(StrEnum):
    """What the served surface is compared against, so nobody reads an unsigned baseline as
    signed: the surface digests of a verified attestation (signed by the publisher), or the
    published snapshot's surface (the envelope signs tools only; the snapshot's tools are
    checked against it, its surface is not)."""

    ATTESTED = "attested"
    UNSIGNED_SNAPSHOT = "unsigned-snapshot"
    #: The digests a team recorded in a lock file on first use (:mod:`histor_sign.lock`):
    #: reviewed by whoever committed it, signed by nobody.
    LOCKED = "locked"


#: ``SurfaceChange.part`` of a whole optional list that is served on one side and not
#: served (answered with a JSON-RPC error) on the other, or refused with another code.
LIST_PART = "list"


@dataclass(frozen=True)
class SurfaceChange:
    """One changed part of the non-tool surface: ``part`` is ``instructions``, ``prompt``
    or ``resourceTemplate``; ``name`` the prompt name or URI template (``""`` for
    instructions).

    ``part`` ``list`` is a whole optional list whose *serving* changed: ``name`` is its
    method (``prompts/list``, ``resources/templates/list``), ``signed_code`` /
    ``current_code`` the JSON-RPC error code that side answered it with (None: served), and
    ``change`` ``added`` (served now, not served in the signed revision), ``removed`` (not
    served now) or ``changed`` (not served on both sides, with another error code); the
    digests are None."""

    part: str
    name: str
    change: ChangeKind
    before: str | None
    after: str | None
    signed_code: int | None = None
    current_code: int | None = None

    @property
    def risk(self) -> Risk:
        """Removed: low (a client can no longer use it). Added or changed: high — the
        surface is not triaged field by field, and new or reworded text that steers a model
        cannot be told from an attack (the same rule as a tool whose definition is unknown).
        A list refused with another error code serves nothing either way: low."""
        if self.change is ChangeKind.REMOVED or (
            self.part == LIST_PART and self.change is ChangeKind.CHANGED
        ):
            return Risk.LOW
        return Risk.HIGH

    @property
    def label(self) -> str:
        """``instructions``, ``prompt NAME``, ``resourceTemplate URI`` or, for a list,
        ``prompts/list (not served: error -32601 → served)`` (untrusted: escape)."""
        if self.part == LIST_PART:
            return f"{self.name} ({_serving(self.signed_code)} → {_serving(self.current_code)})"
        return self.part if not self.name else f"{self.part} {self.name}"

    def to_json(self) -> dict[str, Any]:
        """The change's entry in the JSON drift document's ``surface`` list."""
        out: dict[str, Any] = {
            "part": self.part,
            "name": self.name,
            "change": self.change.value,
            "signedDigest": self.before,
            "currentDigest": self.after,
        }
        if self.part == LIST_PART:
            out["signedNotServed"] = _code_json(self.signed_code)
            out["currentNotServed"] = _code_json(self.current_code)
        out["risk"] = self.risk.value
        return out


def _serving(code: int | None) -> str:
    return "served" if code is None else f"not served: error {code}"


def _code_json(code: int | None) -> dict[str, int] | None:
    return None if code is None else {"code": code}


@dataclass(frozen=True)
class ToolDrift:
    """One tool that differs. ``fields`` is None when only digests were available."""

    name: str
    change: ChangeKind
    signed_digest: str | None
    current_digest: str | None
    fields: tuple[str, ...] | None = None
    description_diff: str | None = None
    changes: tuple[DriftChange, ...] = ()
    renamed_from: str | None = None
    #: Fields outside the seven signed ones that differ (``_meta``, ``icons`` …): reported
    #: as ``changed-and-unsigned`` changes, never as a match.
    unsigned_fields: tuple[str, ...] = ()

    @property
    def risk(self) -> Risk:
        """The highest risk of this tool's triaged changes."""
        return max_risk(c.risk for c in self.changes) or Risk.LOW

    def summary(self, limit: int = 3) -> str:
        """``name: detail; detail`` — the riskiest changes first (untrusted: print escaped)."""
        ranked = sorted(self.changes, key=lambda c: -c.risk.rank)
        details = [c.detail for c in ranked[:limit]]
        if len(ranked) > limit:
            details.append(f"+{len(ranked) - limit} more")
        return f"{self.name}: {'; '.join(details)}"

    def to_json(self) -> dict[str, Any]:
        """The tool's entry in the JSON drift document."""
        out: dict[str, Any] = {
            "name": self.name,
            "change": self.change.value,
            "signedDigest": self.signed_digest,
            "currentDigest": self.current_digest,
        }
        if self.change in (ChangeKind.CHANGED, ChangeKind.RENAMED):
            out["fields"] = list(self.fields) if self.fields is not None else None
            out["unsignedFields"] = list(self.unsigned_fields)
        if self.renamed_from is not None:
            out["renamedFrom"] = self.renamed_from
        if self.description_diff is not None:
            out["descriptionDiff"] = self.description_diff
        out["risk"] = self.risk.value
        out["changes"] = [c.to_json() for c in self.changes]
        return out


@dataclass(frozen=True)
class DriftResult:
    """What :func:`compare` found; ``tools`` lists the differing tools by name, ``surface``
    the differing instructions, prompts and resource templates (when compared)."""

    status: DriftStatus
    server: str
    revision: int
    signed_manifest_digest: str
    current_manifest_digest: str
    tools: tuple[ToolDrift, ...] = ()
    surface: tuple[SurfaceChange, ...] = ()
    surface_status: SurfaceStatus = SurfaceStatus.NOT_COMPARED
    #: Why the surface was not compared (``None`` when it was).
    surface_note: str | None = None
    #: Not compared although one side captured the surface (the text report says so; when
    #: neither side has any, as with plain tool files, it stays quiet).
    surface_one_sided: bool = False
    #: Where the signed side of the surface came from (None: there was none).
    surface_baseline: SurfaceBaseline | None = None
    #: The optional lists the served side advertised but did not serve, with the error
    #: code (``{"prompts": -32601}``; empty when all were served or it is no snapshot).
    surface_not_served: Mapping[str, int] = field(default_factory=dict)

    @property
    def matches(self) -> bool:
        """True when the served tools (and the surface, when compared) are the signed ones."""
        return self.status is DriftStatus.MATCH

    def count(self, change: ChangeKind | str) -> int:
        """How many tools differ in this way."""
        return sum(1 for t in self.tools if t.change == change)

    @property
    def risk(self) -> Risk | None:
        """The highest risk of any change; None when the served tools match. An unverified
        surface is medium: nothing signed says the surface is the released one."""
        if self.matches:
            return None
        if self.status is DriftStatus.UNVERIFIED:
            return Risk.MEDIUM
        return max_risk([*(t.risk for t in self.tools), *(c.risk for c in self.surface)]
                        ) or Risk.LOW

    def reaches(self, level: Risk | str) -> bool:
        """True when some change is at least ``level`` (what a drift gate fails on)."""
        risk = self.risk
        return risk is not None and risk.rank >= Risk(level).rank

    def to_json(self) -> dict[str, Any]:
        """The JSON drift document (stable keys)."""
        risk = self.risk
        return {
            "status": self.status.value,
            "server": self.server,
            "revision": self.revision,
            "signedManifestDigest": self.signed_manifest_digest,
            "currentManifestDigest": self.current_manifest_digest,
            "summary": {c.value: self.count(c) for c in ChangeKind},
            "risk": risk.value if risk is not None else None,
            "tools": [t.to_json() for t in self.tools],
            "surfaceStatus": self.surface_status.value,
            "surfaceNote": self.surface_note,
            "surfaceBaseline": (self.surface_baseline.value
                                if self.surface_baseline is not None else None),
            "surface": [c.to_json() for c in self.surface],
            "surfaceNotServed": not_served_json(self.surface_not_served),
        }

    def headline(self, tool_limit: int = 3) -> str:
        """``match``, or ``different — risk: high  (1 changed: name: detail; detail)``
        with the riskiest tools first (escaped: safe to print)."""
        if self.matches:
            return self.status.value
        if self.status is DriftStatus.UNVERIFIED:
            return (f"{self.status.value} — risk: {Risk.MEDIUM.value}  (tools match; the surface "
                    "matches an unsigned baseline, which proves nothing)")
        counts = self._counts()
        parts = self._riskiest(tool_limit)
        detail = f"{counts}: {' | '.join(parts)}" if parts else counts or "manifest differs"
        risk = self.risk or Risk.LOW
        return f"{self.status.value} — risk: {risk.value}  ({detail})"

    def _counts(self) -> str:
        """``1 changed, 2 added, 1 surface change``: the non-zero counts of the headline."""
        order = (ChangeKind.CHANGED, ChangeKind.RENAMED, ChangeKind.ADDED, ChangeKind.REMOVED)
        counts = ", ".join(f"{self.count(c)} {c.value}" for c in order if self.count(c))
        if self.surface:
            n = len(self.surface)
            surface = f"{n} surface change{'s' if n > 1 else ''}"
            counts = f"{counts}, {surface}" if counts else surface
        return counts

    def _riskiest(self, tool_limit: int) -> list[str]:
        """The headline's details: up to ``tool_limit`` tools, riskiest first, then surface
        changes in the room left (escaped)."""
        ranked = sorted(self.tools, key=lambda t: -t.risk.rank)
        parts = [printable(t.summary(), 160) for t in ranked[:tool_limit]]
        if len(ranked) > tool_limit:
            parts.append(f"+{len(ranked) - tool_limit} more tools")
        parts += [printable(f"{c.label}: {c.change.value}", 160)
                  for c in self.surface[: max(0, tool_limit - len(parts))]]
        return parts

    def to_text(
        self, *, fields_hint: str = "pass signed_tools to name them",
        surface_hint: str | None = None,
    ) -> str:
        """Human summary: the headline with the risk, then one line per differing tool with
        its triaged changes, description diffs indented, then the surface: one line per
        changed instruction text, prompt or resource template, or why it was not compared.

        ``fields_hint`` tells the reader how to learn which fields of a changed tool
        differ when only digests were compared, ``surface_hint`` how to get the surface
        compared (the CLI names its flags here).
        """
        where = f"{printable(self.server)} revision {self.revision}"
        if self.matches:
            head = f"{self.status.value}: {where} (0 changed, 0 added, 0 removed)"
        else:
            head = f"{self.headline()} · {where}"
        lines = [head]
        for item in self.tools:
            lines += _tool_lines(item, fields_hint)
        return "\n".join(lines + self._surface_lines(surface_hint))

    def _surface_lines(self, surface_hint: str | None) -> list[str]:
        """The surface part of :meth:`to_text`: why it was not compared, or that it
        matches, each change, what is not served now, and the baseline."""
        lines: list[str] = []
        if self.surface_status is SurfaceStatus.NOT_COMPARED and self.surface_one_sided:
            hint = f"; {surface_hint}" if surface_hint else ""
            lines.append(f"  surface not compared: {self.surface_note}{hint}")
        elif self.surface_status is SurfaceStatus.MATCH:
            lines.append("  surface  match (instructions, prompts, resource templates)")
        lines += [f"  surface  {c.change.value:<8} {printable(c.label)}  [risk: {c.risk.value}]"
                  for c in self.surface]
        if self.surface_not_served:
            gaps = ", ".join(f"{SURFACE_LISTS[m]} (error {code})"
                             for m, code in sorted(self.surface_not_served.items()))
            lines.append(f"  surface  not served now: {gaps} — advertised, answered with an "
                         "error")
        if self.surface_status is not SurfaceStatus.NOT_COMPARED:
            lines.append(_BASELINE_LINES[self.surface_baseline or
                                         SurfaceBaseline.UNSIGNED_SNAPSHOT])
        return lines


def _tool_lines(item: ToolDrift, fields_hint: str) -> list[str]:
    """One differing tool in :meth:`DriftResult.to_text`: its line (fields named, or how to
    learn them), its triaged changes, and its description diff, indented and escaped."""
    line = f"  {item.change.value:<8} {printable(item.name)}"
    if item.renamed_from is not None:
        line += f" (from {printable(item.renamed_from)})"
    if item.change in (ChangeKind.CHANGED, ChangeKind.RENAMED):
        named = ([*item.fields, *(f"{f} (unsigned)" for f in item.unsigned_fields)]
                 if item.fields is not None else None)
        line += ": " + (printable(", ".join(named)) if named is not None
                        else f"fields unknown ({fields_hint})")
    lines = [f"{line}  [risk: {item.risk.value}]"]
    lines += [f"      {c.risk.value:<6} {printable(c.detail, 200)}"
              + ("" if c.detail.startswith(c.kind.value) else f"  ({c.kind.value})")
              + f"  [rule: {printable(c.rule)}]"
              for c in item.changes]
    if item.description_diff:
        lines += ["      " + printable(d) for d in item.description_diff.splitlines()]
    return lines


_BASELINE_LINES = {
    SurfaceBaseline.ATTESTED: "  surface baseline: attested (digests signed in the "
                              "publisher's verified attestation)",
    SurfaceBaseline.UNSIGNED_SNAPSHOT: "  surface baseline: unsigned snapshot (the signature "
                                       "covers the tools only; this surface is not signed)",
    SurfaceBaseline.LOCKED: "  surface baseline: locked (trust on first use), not "
                            "publisher-signed",
}


def compare(
    signed: StatementLike | JsonValue,
    tools: ToolsLike,
    signed_tools: ToolsLike | None = None,
    *,
    source: str = "signed revision",
    signed_surface: SurfaceDigests | None = None,
    surface_baseline: SurfaceBaseline = SurfaceBaseline.ATTESTED,
) -> DriftResult:
    """Compare served ``tools`` with a signed revision (a statement or an envelope).

    ``signed`` is a :class:`~histor_sign.revision.Statement`, a signed envelope, or either's
    JSON document (named ``source`` in messages). ``signed_tools``, the catalog that was
    signed, lets the result name changed fields. When ``signed_tools`` and ``tools`` are both
    fetch snapshots that captured the server surface, instructions, prompts and resource
    templates are compared too (a difference makes the result different); otherwise the
    surface is reported as not compared. With ``signed_tools``, a tool whose fields outside
    the seven signed ones (``_meta``, ``icons`` …) differ is reported too (changed and
    unsigned, medium), even when every digest matches. ``signed_surface``, the digests of a
    *verified* attestation, replaces the signed snapshot's surface as the baseline (which
    the result names: :class:`SurfaceBaseline`); ``surface_baseline`` says where those digests
    come from (``LOCKED`` for a lock file's, which nobody signed). Raises
    :class:`InputError` for duplicate names or non-MCP tools in either catalog, and when
    ``signed_tools`` is not the catalog the statement was built from.
    """
    statement = statement_of(signed, source)
    current = as_tools(tools)
    manifest, current_digests = digests(current)  # rejects duplicates and non-MCP tools
    signed_by_name = (
        _checked_signed_tools(signed_tools, statement) if signed_tools is not None else None
    )
    current_by_name = {t.name: t for t in current}
    drift = _triaged(diff_digests(statement.tool_digests, current_digests), signed_by_name,
                     current_by_name, current_digests)
    (surface_status, surface, surface_note, one_sided), baseline = _surface_compared(
        signed_tools, tools, signed_surface, surface_baseline)
    same = manifest == statement.manifest_digest and not drift and not surface
    status = DriftStatus.MATCH if same else DriftStatus.DIFFERENT
    if (same and surface_status is not SurfaceStatus.NOT_COMPARED
            and baseline is SurfaceBaseline.UNSIGNED_SNAPSHOT):
        status = DriftStatus.UNVERIFIED
    return DriftResult(
        status=status,
        server=statement.server,
        revision=statement.revision,
        signed_manifest_digest=statement.manifest_digest,
        current_manifest_digest=manifest,
        tools=tuple(drift),
        surface=surface,
        surface_status=surface_status,
        surface_note=surface_note,
        surface_one_sided=one_sided,
        surface_baseline=baseline,
        surface_not_served=_served_gaps(tools),
    )


def _surface_compared(
    signed_tools: ToolsLike | None, tools: ToolsLike, signed_surface: SurfaceDigests | None,
    surface_baseline: SurfaceBaseline,
) -> tuple[tuple[SurfaceStatus, tuple[SurfaceChange, ...], str | None, bool],
           SurfaceBaseline | None]:
    """The surface comparison of :func:`compare` and the baseline it was made against: a
    verified attestation's digests when given, else the signed snapshot's surface."""
    if signed_surface is not None:
        return _compare_attested(signed_surface, tools), surface_baseline
    compared = compare_surface(signed_tools, tools)
    return compared, (SurfaceBaseline.UNSIGNED_SNAPSHOT if _surface_of(signed_tools) is not None
                      else None)


def _triaged(
    diffs: list[DigestChange], signed: dict[str, Tool] | None, current: dict[str, Tool],
    current_digests: Mapping[str, str],
) -> list[ToolDrift]:
    """One :class:`ToolDrift` per differing tool (renames folded), each with its changes.
    With the signed catalog, a tool whose signed fields match but whose other fields
    (``_meta``, ``icons`` …) differ is one too: changed-and-unsigned, never a match."""
    names = sorted(set(current) | set(signed or ()))
    by_name = {d.name: d for d in diffs}
    pairs = _rename_pairs(diffs, signed, current) if signed is not None else []
    clock = SchemaClock()
    renamed_to = {new: old for old, new in pairs}
    renamed_old = set(renamed_to.values())
    out = [_one_drift(diff, renamed_to.get(diff.name), by_name, signed, current, names, clock)
           for diff in diffs if diff.name not in renamed_old]
    if signed is not None:
        out += _unsigned_only_drift(signed, current, by_name, current_digests)
    return sorted(out, key=lambda t: t.name)


def _one_drift(diff: DigestChange, old_name: str | None, by_name: Mapping[str, DigestChange],
               signed: dict[str, Tool] | None, current: dict[str, Tool], names: list[str],
               clock: SchemaClock) -> ToolDrift:
    """The :class:`ToolDrift` of one differing tool (``old_name``: the name it was renamed
    from)."""
    if old_name is not None and signed is not None:
        return _renamed_drift(diff, by_name[old_name], signed[old_name], current[diff.name],
                              names, clock)
    if diff.change is ChangeKind.CHANGED and signed is not None:
        return _changed_drift(diff, signed[diff.name], current[diff.name], names, clock)
    return _unpaired_drift(diff, current, names)


def _rename_pairs(diffs: list[DigestChange], signed: dict[str, Tool],
                  current: dict[str, Tool]) -> list[tuple[str, str]]:
    """(old name, new name) of the removed and added tools that are one tool renamed."""
    removed = {d.name: signed[d.name].projected() for d in diffs
               if d.change is ChangeKind.REMOVED}
    added = {d.name: current[d.name].projected() for d in diffs
             if d.change is ChangeKind.ADDED}
    return renames(removed, added)


def _renamed_drift(diff: DigestChange, old_diff: DigestChange, signed: Tool, current: Tool,
                   names: list[str], clock: SchemaClock) -> ToolDrift:
    """A tool renamed (``diff`` its new name's, ``old_diff`` its old name's), with what else
    changed."""
    old = signed.projected()
    new = current.projected()
    fields = [f for f in changed_fields(old, new) if f != "name"]
    unsigned, unsigned_names = _unsigned(signed, current)
    return ToolDrift(
        diff.name, ChangeKind.RENAMED, old_diff.before, diff.after,
        tuple(fields), _description_diff_if(fields, old, new),
        (*rename_changes(old, new, names, clock), *unsigned), renamed_from=old_diff.name,
        unsigned_fields=unsigned_names)


def _changed_drift(diff: DigestChange, signed: Tool, current: Tool, names: list[str],
                   clock: SchemaClock) -> ToolDrift:
    """A changed tool whose signed definition is known: its fields and triaged changes."""
    old = signed.projected()
    new = current.projected()
    fields = changed_fields(old, new)
    unsigned, unsigned_names = _unsigned(signed, current)
    return ToolDrift(diff.name, diff.change, diff.before, diff.after,
                     tuple(fields), _description_diff_if(fields, old, new),
                     (*tool_changes(old, new, names, clock), *unsigned),
                     unsigned_fields=unsigned_names)


def _unpaired_drift(diff: DigestChange, current: dict[str, Tool],
                    names: list[str]) -> ToolDrift:
    """A changed tool without its signed definition (rated high), an added tool, or a
    removed one."""
    if diff.change is ChangeKind.CHANGED:
        unknown = DriftChange(DriftKind.DEFINITION_UNKNOWN, Risk.HIGH,
                              "definition changed; the signed definition is not available, "
                              "so a wording fix cannot be told from an attack (rated high)",
                              rule="definition-unknown")
        return ToolDrift(diff.name, diff.change, diff.before, diff.after, changes=(unknown,))
    if diff.change is ChangeKind.ADDED:
        return ToolDrift(diff.name, diff.change, diff.before, diff.after,
                         changes=tuple(added_tool_changes(current[diff.name].projected(),
                                                          names)))
    gone = DriftChange(DriftKind.TOOL_REMOVED, Risk.LOW,
                       "tool removed; calls to it now fail", rule="tool-removed")
    return ToolDrift(diff.name, diff.change, diff.before, diff.after, changes=(gone,))


def _unsigned_only_drift(signed: dict[str, Tool], current: dict[str, Tool],
                         by_name: Mapping[str, DigestChange],
                         current_digests: Mapping[str, str]) -> list[ToolDrift]:
    """Tools whose signed fields match but whose other fields (``_meta``, ``icons`` …)
    differ: changed and unsigned."""
    out: list[ToolDrift] = []
    for name in sorted((set(signed) & set(current)) - set(by_name)):
        unsigned, unsigned_names = _unsigned(signed[name], current[name])
        if unsigned:
            out.append(ToolDrift(name, ChangeKind.CHANGED, current_digests[name],
                                 current_digests[name], (), None, tuple(unsigned),
                                 unsigned_fields=unsigned_names))
    return out


def _unsigned(old: Tool, new: Tool) -> tuple[list[DriftChange], tuple[str, ...]]:
    """The changed-and-unsigned changes between two tools' raw objects, and their fields."""
    return unsigned_changes(old.raw, new.raw), tuple(unsigned_fields(old.raw, new.raw))


def _description_diff_if(
    fields: list[str], old: Mapping[str, Any], new: Mapping[str, Any]
) -> str | None:
    if "description" not in fields:
        return None
    return description_diff(old.get("description"), new.get("description"))


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Which of the seven projected fields differ (added, removed or changed), in MCP order."""
    out = []
    for key in PROJECTED_FIELDS:
        if (key in old) != (key in new):
            out.append(key)
        elif key in old and canonical_bytes(old[key]) != canonical_bytes(new[key]):
            out.append(key)
    return out


def description_diff(old: Any, new: Any) -> str:
    """A short unified diff of two descriptions (non-strings shown as JSON)."""
    def lines(value: Any) -> list[str]:
        if value is None:
            return []
        text = value if isinstance(value, str) else canonical_bytes(value).decode("utf-8")
        return text.splitlines() or [""]

    diff = list(
        difflib.unified_diff(lines(old), lines(new), "signed", "current", lineterm="", n=1)
    )
    if len(diff) > MAX_DIFF_LINES:
        diff = [*diff[:MAX_DIFF_LINES], f"… ({len(diff) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(diff)


def _checked_signed_tools(value: ToolsLike, signed: Statement) -> dict[str, Tool]:
    tools = as_tools(value)
    manifest, per_tool = digests(tools)
    if manifest != signed.manifest_digest:
        wrong = diff_digests(signed.tool_digests, per_tool)
        detail = f" (first differing tool: {wrong[0].name!r})" if wrong else ""
        raise InputError(
            "the signed tools file is not the catalog the revision was built from: its manifest "
            f"digest {manifest} differs from the signed {signed.manifest_digest}{detail}"
        )
    return {t.name: t for t in tools}


# --- surface drift: instructions, prompts, resource templates (baseline: an attestation's
#     signed digests, or an unsigned snapshot)


def surface_drift(before: Snapshot, after: Snapshot) -> tuple[SurfaceChange, ...]:
    """Differences in instructions, prompts and resource templates between two snapshots.

    A part one snapshot did not capture (an old snapshot, a server without the capability)
    compares as empty. Raises :class:`InputError` for duplicate prompt names or URI templates.
    """
    return surface_changes(surface_digests(before), surface_digests(after))


def surface_changes(old: SurfaceDigests, new: SurfaceDigests) -> tuple[SurfaceChange, ...]:
    """The one comparison of two surfaces' digests (snapshot against snapshot, served
    snapshot against an attestation's signed digests, and ``verify``'s surface axis).

    A list not served on one side (answered with a JSON-RPC error) and served on the other
    is a ``list`` change even when the served list is empty: never a silent match. A list
    that is not captured at all (the capability not offered) compares as served and empty,
    as its items always have."""
    out: list[SurfaceChange] = []
    if old.instructions != new.instructions:
        kind = (ChangeKind.ADDED if old.instructions is None else ChangeKind.REMOVED
                if new.instructions is None else ChangeKind.CHANGED)
        out.append(SurfaceChange("instructions", "", kind, old.instructions, new.instructions))
    for member, part, a, b in (
        ("prompts", "prompt", old.prompts, new.prompts),
        ("resourceTemplates", "resourceTemplate", old.resource_templates,
         new.resource_templates),
    ):
        was, now = old.not_served.get(member), new.not_served.get(member)
        if was != now:
            kind = (ChangeKind.ADDED if now is None else ChangeKind.REMOVED if was is None
                    else ChangeKind.CHANGED)
            out.append(SurfaceChange(LIST_PART, SURFACE_LISTS[member], kind, None, None,
                                     signed_code=was, current_code=now))
        out += [SurfaceChange(part, d.name, d.change, d.before, d.after)
                for d in diff_digests(a, b)]
    return tuple(out)


#: Why a surface comparison was skipped (the library names no flags; see ``to_text``).
_NO_SIGNED_SURFACE = ("the signed catalog is not a fetch snapshot holding the server surface "
                      "(a tools-only file, or a snapshot from before surface capture)")
_NO_SIGNED_CATALOG = "no signed catalog was given (the release snapshot holds the signed surface)"
_NO_SERVED_SURFACE = ("the served tools are not a fetch snapshot holding the server surface "
                      "(a tools-only file, or a snapshot from before surface capture)")


def _served_gaps(value: object) -> dict[str, int]:
    """The lists a served snapshot records as not served (``{}`` for anything else)."""
    return value.not_served if isinstance(value, Snapshot) else {}


def _surface_of(value: object) -> Snapshot | None:
    """The snapshot, when ``value`` is one that captured the surface."""
    return value if isinstance(value, Snapshot) and value.surface_captured else None


def compare_surface(
    signed: object | None, served: object
) -> tuple[SurfaceStatus, tuple[SurfaceChange, ...], str | None, bool]:
    """(status, changes, why not compared, one side captured it) for two catalogs.

    Compared only when both are fetch snapshots that captured the surface; otherwise
    ``NOT_COMPARED`` with the reason, never a reported drift.
    """
    before = _surface_of(signed) if signed is not None else None
    after = _surface_of(served)
    if before is None or after is None:
        why = (_NO_SIGNED_CATALOG if signed is None
               else _NO_SIGNED_SURFACE if before is None else _NO_SERVED_SURFACE)
        return SurfaceStatus.NOT_COMPARED, (), why, before is not None or after is not None
    changes = surface_drift(before, after)
    return (SurfaceStatus.DIFFERENT if changes else SurfaceStatus.MATCH), changes, None, False


def _compare_attested(
    signed: SurfaceDigests, served: object
) -> tuple[SurfaceStatus, tuple[SurfaceChange, ...], str | None, bool]:
    """:func:`compare_surface` with the attested digests as the signed side."""
    after = _surface_of(served)
    if after is None:
        return SurfaceStatus.NOT_COMPARED, (), _NO_SERVED_SURFACE, True
    changes = surface_changes(signed, surface_digests(after))
    return (SurfaceStatus.DIFFERENT if changes else SurfaceStatus.MATCH), changes, None, False
