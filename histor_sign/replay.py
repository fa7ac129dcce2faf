"""``replay``: which catalog tools accept the exact arguments of calls that happened.

For every observed call: resolve the catalog entries with the selected name; validate the
arguments against *every* catalog schema (no lexical filter) with the exact, fail-closed
validator; report TC006 (several accept), TC007 (accepting tools with contradictory explicit
hints), TC008 (selected tool missing, or every matching schema rejects), TC009 (incomplete).
Reports carry source, call index, selected tool and the SHA-256 of the canonical arguments —
never raw argument values or provider call ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from histor_sign._internal.calls import ObservedCall, load_calls
from histor_sign._internal.limits import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_SCAN_TOOLS,
    DEFAULT_MAX_TRACE_BYTES,
    DEFAULT_MAX_VALIDATIONS,
)
from histor_sign.catalog import Tool, load_catalogs
from histor_sign.report._findings import RULES, CallRef, Finding, ToolRef, sorted_findings
from histor_sign.scan._effects import contradictions, explicit_hints
from histor_sign.scan._validation import SchemaRoot, Untrusted, prepare_root

MAX_LISTED_TOOLS = 20


@dataclass
class ReplayOptions:
    max_tools: int = DEFAULT_MAX_SCAN_TOOLS
    max_calls: int = DEFAULT_MAX_CALLS
    max_validations: int = DEFAULT_MAX_VALIDATIONS
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES


@dataclass
class ReplayResult:
    findings: list[Finding]
    stats: dict[str, Any]


class _Prepared:
    """A tool's schema plus cheap exact pre-checks that reject without full validation."""

    def __init__(self, tool: Tool) -> None:
        schema = tool.input_schema if tool.has_input_schema else None
        self.root: SchemaRoot = prepare_root(schema, tool.name)
        if not tool.has_input_schema:
            self.root.problem = "tool has no input schema"
        self.required: frozenset[str] = frozenset()
        self.closed: frozenset[str] | None = None
        s = self.root.schema
        legacy_ref = self.root.dialect in ("draft-06", "draft-07") and isinstance(s, dict) and (
            "$ref" in s)
        if self.root.problem is None and isinstance(s, dict) and not legacy_ref:
            req = s.get("required")
            if isinstance(req, list) and all(isinstance(r, str) for r in req):
                self.required = frozenset(req)
            props = s.get("properties", {})
            if (s.get("additionalProperties") is False and isinstance(props, dict)
                    and "patternProperties" not in s):
                self.closed = frozenset(props)

    def quick_reject(self, arguments: dict[str, Any]) -> bool:
        """Exact consequences of the root schema that already reject the arguments."""
        if self.root.problem is not None:
            return False
        if not self.required.issubset(arguments):
            return True
        return self.closed is not None and not self.closed.issuperset(arguments)


def _ref(tool: Tool) -> ToolRef:
    return ToolRef(name=tool.name, source=tool.source, index=tool.index, pointer=tool.pointer)


def _names(tools: Sequence[Tool]) -> str:
    shown = ", ".join(f"{t.name!r} ({t.location})" for t in tools[:5])
    return shown + (f" and {len(tools) - 5} more" if len(tools) > 5 else "")


def replay_calls(
    tools: Sequence[Tool], calls: Sequence[ObservedCall], options: ReplayOptions | None = None
) -> ReplayResult:
    """Replay observed calls against a catalog (library entry point)."""
    opts = options or ReplayOptions()
    prepared = [_Prepared(t) for t in tools]
    by_name: dict[str, list[int]] = {}
    for i, tool in enumerate(tools):
        by_name.setdefault(tool.name, []).append(i)
    findings: list[Finding] = []
    validations = 0
    for call in calls:
        ref = CallRef(call.source, call.index, call.name, call.arguments_digest)
        label = f"call {call.index} in {call.source} selected {call.name!r}"
        selected = by_name.get(call.name, [])
        others = [i for i in range(len(tools)) if tools[i].name != call.name]
        accepted: list[int] = []
        unknown: dict[int, str] = {}
        rejected_selected = 0
        for i in [*selected, *others]:
            p = prepared[i]
            if p.quick_reject(call.arguments):
                ok = False
            elif validations >= opts.max_validations:
                unknown[i] = f"--max-validations {opts.max_validations} reached"
                continue
            else:
                validations += 1
                try:
                    ok = p.root.accepts(call.arguments)
                except Untrusted as exc:
                    unknown[i] = exc.reason
                    continue
            if ok:
                accepted.append(i)
            elif i in selected:
                rejected_selected += 1
        counts = {"accepted": len(accepted), "unknown": len(unknown)}
        if not selected:
            findings.append(Finding(
                rule="TC008", severity=RULES["TC008"].severity, tools=[], call=ref,
                properties={**counts, "reason": "missing"},
                message=f"{label}, but no catalog tool has that name",
            ))
        elif rejected_selected == len(selected):
            findings.append(Finding(
                rule="TC008", severity=RULES["TC008"].severity, call=ref,
                tools=[_ref(tools[i]) for i in selected], outcome="disjoint",
                properties={**counts, "reason": "rejected"},
                message=(f"{label}, but every catalog schema with that name rejects its "
                         f"arguments ({ref.arguments_digest})"),
            ))
        if len(accepted) >= 2:
            acc = [tools[i] for i in accepted]
            findings.append(Finding(
                rule="TC006", severity=RULES["TC006"].severity, call=ref,
                tools=[_ref(t) for t in acc[:MAX_LISTED_TOOLS]], outcome="overlap",
                properties=dict(counts),
                message=(f"{label}; {len(acc)} catalog tools accept the same arguments "
                         f"({ref.arguments_digest}): {_names(acc)}"),
            ))
            clashes = _clashes(acc)
            if clashes:
                involved = sorted({i for pair in clashes for i in pair[:2]})
                findings.append(Finding(
                    rule="TC007", severity=RULES["TC007"].severity, call=ref,
                    tools=[_ref(acc[i]) for i in involved], outcome="overlap",
                    properties={**counts, "contradictions": [
                        {"tools": [acc[a].name, acc[b].name], "hints": keys}
                        for a, b, keys in clashes]},
                    message=(f"{label}; accepting tools have contradictory explicit effect "
                             f"hints: " + "; ".join(
                                 f"{acc[a].name!r} vs {acc[b].name!r} ({', '.join(keys)})"
                                 for a, b, keys in clashes[:5])),
                ))
        if unknown:
            first = sorted(unknown)[:MAX_LISTED_TOOLS]
            reasons = sorted(set(unknown.values()))
            findings.append(Finding(
                rule="TC009", severity=RULES["TC009"].severity, call=ref, incomplete=True,
                tools=[_ref(tools[i]) for i in first], outcome="unknown",
                properties={**counts, "reasons": reasons[:10]},
                message=(f"{label}; {len(unknown)} catalog schema(s) could not be decided: "
                         f"{reasons[0]}" + (f" (and {len(reasons) - 1} other reasons)"
                                            if len(reasons) > 1 else "")),
            ))
    stats = {"calls": len(calls), "tools": len(tools), "validations": validations}
    return ReplayResult(findings=sorted_findings(findings), stats=stats)


def _clashes(accepted: Sequence[Tool]) -> list[tuple[int, int, list[str]]]:
    out = []
    hinted = [i for i, t in enumerate(accepted) if explicit_hints(t.annotations)]
    for x, a in enumerate(hinted):
        for b in hinted[x + 1:]:
            keys = contradictions(accepted[a].annotations, accepted[b].annotations)
            if keys:
                out.append((a, b, keys))
    return out


def replay_paths(
    catalogs: Sequence[str], traces: Sequence[str], options: ReplayOptions | None = None
) -> ReplayResult:
    """Load catalogs and traces from files and replay (``-`` = stdin once overall)."""
    opts = options or ReplayOptions()
    if sum(1 for p in [*catalogs, *traces] if p == "-") > 1:
        from histor_sign.errors import InputError

        raise InputError("standard input (-) can be read only once")
    tools = [t for c in load_catalogs(catalogs, max_tools=opts.max_tools) for t in c.tools]
    calls = load_calls(traces, max_calls=opts.max_calls, max_trace_bytes=opts.max_trace_bytes,
                       max_argument_bytes=opts.max_argument_bytes)
    return replay_calls(tools, calls, opts)
