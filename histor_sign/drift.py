"""Client-side drift check: what a server serves now vs. a signed revision (SPEC §4 ``check``).

A statement carries only digests, so with it alone a changed tool is "changed, fields
unknown". Given the signed catalog too (the tools file or snapshot that was signed, checked
against the statement's digests first) we can say which of the seven projected fields
changed and show a short diff of a changed description.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from histor_sign._internal.untrusted import printable
from histor_sign.canonical import canonical_bytes, sha256_digest
from histor_sign.catalog import PROJECTED_FIELDS, Catalog, Tool, tools_from_dicts
from histor_sign.errors import InputError
from histor_sign.revision import digests, statement_from

MATCH = "match"
DIFFERENT = "different"
ADDED = "added"
REMOVED = "removed"
CHANGED = "changed"
MAX_DIFF_LINES = 40


@dataclass
class ToolDrift:
    """One tool that differs. ``fields`` is None when only digests were available."""

    name: str
    change: str  # added | removed | changed
    signed_digest: str | None
    current_digest: str | None
    fields: list[str] | None = None
    description_diff: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "change": self.change,
            "signedDigest": self.signed_digest,
            "currentDigest": self.current_digest,
        }
        if self.change == CHANGED:
            out["fields"] = self.fields
        if self.description_diff is not None:
            out["descriptionDiff"] = self.description_diff
        return out


@dataclass
class DriftResult:
    """``status`` is ``match`` or ``different``; ``tools`` lists differing tools by name."""

    status: str
    server: str
    revision: int
    signed_manifest_digest: str
    current_manifest_digest: str
    tools: list[ToolDrift] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return self.status == MATCH

    def count(self, change: str) -> int:
        return sum(1 for t in self.tools if t.change == change)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "server": self.server,
            "revision": self.revision,
            "signedManifestDigest": self.signed_manifest_digest,
            "currentManifestDigest": self.current_manifest_digest,
            "summary": {c: self.count(c) for c in (ADDED, REMOVED, CHANGED)},
            "tools": [t.to_json() for t in self.tools],
        }

    def to_text(self) -> str:
        """Human summary: one line per differing tool, description diffs indented."""
        head = (
            f"{self.status}: {self.server} revision {self.revision}"
            f" ({self.count(CHANGED)} changed, {self.count(ADDED)} added, "
            f"{self.count(REMOVED)} removed)"
        )
        lines = [head]
        for item in self.tools:
            line = f"  {item.change:<8} {printable(item.name)}"
            if item.change == CHANGED:
                line += ": " + (", ".join(item.fields) if item.fields is not None
                                else "fields unknown (pass --signed-tools to name them)")
            lines.append(line)
            if item.description_diff:
                lines += ["      " + printable(d) for d in item.description_diff.splitlines()]
        return "\n".join(lines)


def compare(
    current_tools: Iterable[Any] | Catalog,
    statement: Mapping[str, Any],
    signed_tools: Iterable[Any] | Catalog | None = None,
    *,
    source: str = "signed revision",
) -> DriftResult:
    """Compare served tools with a signed revision (a statement or an envelope).

    Raises :class:`InputError` for duplicate names or non-MCP tools in either catalog, and
    when ``signed_tools`` is not the catalog the statement was built from.
    """
    # statement_from rejects a non-object (a JSON string, number, null) as one InputError.
    signed = statement_from(
        dict(statement) if isinstance(statement, Mapping) else statement, source
    )
    current = _tools(current_tools)
    manifest, current_digests = digests(current)  # rejects duplicates and non-MCP tools
    signed_digests: Mapping[str, str] = signed["toolDigests"]
    signed_by_name = _checked_signed_tools(signed_tools, signed) if signed_tools is not None \
        else None
    current_by_name = {t.name: t for t in current}
    drift: list[ToolDrift] = []
    for name in sorted(set(signed_digests) | set(current_digests)):
        before, now = signed_digests.get(name), current_digests.get(name)
        if before == now:
            continue
        if before is None:
            drift.append(ToolDrift(name, ADDED, None, now))
        elif now is None:
            drift.append(ToolDrift(name, REMOVED, before, None))
        else:
            item = ToolDrift(name, CHANGED, before, now)
            if signed_by_name is not None:
                old = signed_by_name[name].projected()
                new = current_by_name[name].projected()
                item.fields = changed_fields(old, new)
                if "description" in item.fields:
                    item.description_diff = description_diff(
                        old.get("description"), new.get("description")
                    )
            drift.append(item)
    same = manifest == signed["manifestDigest"] and not drift
    return DriftResult(
        status=MATCH if same else DIFFERENT,
        server=signed["server"],
        revision=signed["revision"],
        signed_manifest_digest=signed["manifestDigest"],
        current_manifest_digest=manifest,
        tools=drift,
    )


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Which of the seven projected fields differ (added, removed or changed), spec order."""
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


def _tools(value: Iterable[Any] | Catalog) -> list[Tool]:
    if isinstance(value, Catalog):
        return value.tools
    items = list(value)
    if all(isinstance(t, Tool) for t in items):
        return items
    return tools_from_dicts(items)


def _checked_signed_tools(
    value: Iterable[Any] | Catalog, signed: Mapping[str, Any]
) -> dict[str, Tool]:
    tools = _tools(value)
    manifest, per_tool = digests(tools)
    if manifest != signed["manifestDigest"]:
        wrong = sorted(
            n for n in set(per_tool) | set(signed["toolDigests"])
            if per_tool.get(n) != signed["toolDigests"].get(n)
        )
        detail = f" (first differing tool: {wrong[0]!r})" if wrong else ""
        raise InputError(
            "the signed tools file is not the catalog the revision was built from: its manifest "
            f"digest {manifest} differs from the signed {signed['manifestDigest']}{detail}"
        )
    return {t.name: t for t in tools}


def tool_digest(tool: Tool) -> str:
    """Per-tool digest (SPEC §2) of one imported tool."""
    return sha256_digest(canonical_bytes(tool.projected()))
