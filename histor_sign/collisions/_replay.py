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

from histor_sign._call_import import calls_from_document, load_calls
from histor_sign._limits import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_SCAN_TOOLS,
    DEFAULT_MAX_TRACE_BYTES,
    DEFAULT_MAX_VALIDATIONS,
)
from histor_sign._schema.validation import (
    LEGACY_REF_DIALECTS,
    SchemaRoot,
    Untrusted,
    prepare_root,
)
from histor_sign.canonical import JsonValue
from histor_sign.catalog import ToolsLike, as_tools, load_catalogs
from histor_sign.collisions._rules import CallOutcome, replay_findings
from histor_sign.models import CallRef, Finding, ObservedCall, Tool
from histor_sign.report._findings import sorted_findings

MAX_LISTED_TOOLS = 20


@dataclass
class ReplayOptions:
    """Bounds of a replay: catalog size, calls, schema validations, trace and argument bytes."""

    max_tools: int = DEFAULT_MAX_SCAN_TOOLS
    max_calls: int = DEFAULT_MAX_CALLS
    max_validations: int = DEFAULT_MAX_VALIDATIONS
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES


@dataclass
class ReplayResult:
    """Findings (TC006–TC009, sorted) plus counts for the summary."""

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
        legacy_ref = self.root.dialect in LEGACY_REF_DIALECTS and isinstance(s, dict) and (
            "$ref" in s)
        if self.root.problem is None and isinstance(s, dict) and not legacy_ref:
            self.required, self.closed = _root_members(s)

    def quick_reject(self, arguments: dict[str, Any]) -> bool:
        """Exact consequences of the root schema that already reject the arguments."""
        if self.root.problem is not None:
            return False
        if not self.required.issubset(arguments):
            return True
        return self.closed is not None and not self.closed.issuperset(arguments)


def _root_members(s: dict[str, Any]) -> tuple[frozenset[str], frozenset[str] | None]:
    """The names a root schema requires, and the only names it allows (None: any)."""
    required: frozenset[str] = frozenset()
    closed: frozenset[str] | None = None
    req = s.get("required")
    if isinstance(req, list) and all(isinstance(r, str) for r in req):
        required = frozenset(req)
    props = s.get("properties", {})
    if (s.get("additionalProperties") is False and isinstance(props, dict)
            and "patternProperties" not in s):
        closed = frozenset(props)
    return required, closed


class _Replayer:
    """Decides observed calls against one catalog, within one validation budget."""

    def __init__(self, tools: Sequence[Tool], max_validations: int) -> None:
        self.tools = tools
        self.prepared = [_Prepared(t) for t in tools]
        self.by_name: dict[str, list[int]] = {}
        for i, tool in enumerate(tools):
            self.by_name.setdefault(tool.name, []).append(i)
        self.max_validations = max_validations
        self.validations = 0

    def validate(self, p: _Prepared, arguments: dict[str, Any]) -> bool | str:
        """Full validation of ``arguments`` (within the bound), or why it cannot be decided."""
        if self.validations >= self.max_validations:
            return f"validation bound ({self.max_validations}) reached"
        self.validations += 1
        try:
            return p.root.accepts(arguments)
        except Untrusted as exc:
            return exc.reason

    def outcome(self, call: ObservedCall) -> CallOutcome:
        """Validate the call's arguments against every schema, the selected name first."""
        selected = self.by_name.get(call.name, [])
        others = [i for i, t in enumerate(self.tools) if t.name != call.name]
        arguments = call.arguments
        accepted: list[int] = []
        unknown: dict[int, str] = {}
        rejected = 0
        for i in [*selected, *others]:
            p = self.prepared[i]
            # the cheap exact pre-check rejects most tools without a full validation
            verdict = False if p.quick_reject(arguments) else self.validate(p, arguments)
            if verdict is True:
                accepted.append(i)
            elif verdict is False:
                if i in selected:
                    rejected += 1
            else:
                unknown[i] = verdict
        return self._call_outcome(call, selected, accepted, unknown, rejected)

    def _call_outcome(self, call: ObservedCall, selected: list[int], accepted: list[int],
                      unknown: dict[int, str], rejected: int) -> CallOutcome:
        """The outcome of one call, tools by index turned into the tools themselves."""
        return CallOutcome(
            ref=CallRef(call.source, call.index, call.name, call.arguments_digest),
            selected=[self.tools[i] for i in selected],
            accepted=[self.tools[i] for i in accepted],
            unknown=[(self.tools[i], unknown[i]) for i in sorted(unknown)],
            selected_rejected=rejected,
        )


def replay(
    tools: ToolsLike,
    calls: JsonValue | Sequence[ObservedCall],
    options: ReplayOptions | None = None,
) -> ReplayResult:
    """Which tools accept the exact arguments of calls that happened (rules TC006–TC009).

    ``calls`` is a parsed trace (a provider's call objects, e.g. an OpenAI or Anthropic
    message list, or ``{"name", "arguments"}`` objects) or observed calls; reports carry
    argument digests, never argument values.
    """
    observed: Sequence[ObservedCall]
    if isinstance(calls, list) and calls and all(isinstance(c, ObservedCall) for c in calls):
        observed = calls
    else:
        observed = calls_from_document(calls, "<calls>")
    return replay_calls(as_tools(tools), observed, options)


def replay_calls(
    tools: Sequence[Tool], calls: Sequence[ObservedCall], options: ReplayOptions | None = None
) -> ReplayResult:
    """Replay observed calls against a catalog (library entry point)."""
    opts = options or ReplayOptions()
    replayer = _Replayer(tools, opts.max_validations)
    findings: list[Finding] = []
    for call in calls:
        findings.extend(replay_findings(replayer.outcome(call)))
    stats = {"calls": len(calls), "tools": len(tools), "validations": replayer.validations}
    return ReplayResult(findings=sorted_findings(findings), stats=stats)


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
