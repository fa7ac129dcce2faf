"""Release-time lint: the guard's contract rules applied to a catalog, as findings.

What the guard would have to deny at run time (a destructive tool with no way to ask for a
dry run) or cannot bound (open objects, unbounded arrays, ids without a floor) is cheaper
to fix before release, and so is a schema regex the guard will not run (every call to that
tool is denied), and so is a tool name no client can show safely. Rules HS101–HS107
are defined with every other rule in :data:`histor_sign.report._findings.RULES`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import Any

from histor_sign._escape import printable
from histor_sign._schema.regex_subset import ecma_safe
from histor_sign._schema.validation import pattern_sites
from histor_sign.canonical import pointer
from histor_sign.guard._core import requires_dry_run
from histor_sign.guard._policy import Policy
from histor_sign.models import Finding, Tool
from histor_sign.report._findings import new_finding

_ID_NAME = re.compile(r"(^|_|-)ids?$|[a-z0-9]Ids?$|^ID$")
_MAX_DEPTH = 64
#: Pointers an HS106 message names (all of them are in its ``pointers`` property).
_SHOWN_POINTERS = 5
_SHOWN_CHARS = 120


def lint_catalog(tools: Iterable[Tool], policy: Policy | None = None) -> list[Finding]:
    """Findings for every tool, sorted by (tool name, rule)."""
    policy = policy or Policy()
    findings: list[Finding] = []
    for tool in tools:
        findings.extend(_lint_tool(tool, policy))
    return sorted(findings, key=lambda f: (f.tools[0].name, f.tools[0].index, f.rule))


def _lint_tool(tool: Tool, policy: Policy) -> Iterator[Finding]:
    """Every finding for one tool, rule by rule (HS107, HS101, HS102–104, HS106, HS105)."""
    schema = tool.input_schema if tool.has_input_schema else {}
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    props = props if isinstance(props, dict) else {}
    yield from _name_findings(tool)
    yield from _dry_run_findings(tool, policy, props)
    yield from _shape_findings(tool, schema)
    yield from _regex_findings(tool, schema)
    yield from _policy_findings(tool, policy, props)


def _finding(tool: Tool, rule: str, message: str, pointers: list[str] | None = None) -> Finding:
    """One finding on ``tool``, with the schema pointers it is about (if any)."""
    extra = {"pointers": pointers} if pointers else {}
    return new_finding(rule, message, [tool.ref], properties=extra)


def _name_findings(tool: Tool) -> Iterator[Finding]:
    """HS107: a tool name no client can show as signed."""
    unsafe = _unsafe_name(tool.name)
    if unsafe:
        yield _finding(tool, "HS107", f"'{printable(tool.name)}': the tool name holds "
                                      f"{unsafe}; no client can show it as signed")


def _dry_run_findings(tool: Tool, policy: Policy, props: dict[str, Any]) -> Iterator[Finding]:
    """HS101: a tool that needs a dry run without a boolean dry-run parameter."""
    param = policy.dry_run_parameter_for(tool.name, props)
    if requires_dry_run(tool, policy):
        declared = props.get(param)
        if not isinstance(declared, dict) or declared.get("type") not in ("boolean", None):
            yield _finding(
                tool, "HS101",
                f"{tool.name!r} needs a dry run (destructive hints or policy) but its input "
                f"schema has no boolean {param!r} parameter",
            )


def _open_shapes(schema: Any) -> tuple[list[str], list[str], list[str]]:
    """Pointers to open objects, unbounded arrays and floorless integer ids in ``schema``."""
    open_objects: list[str] = []
    open_arrays: list[str] = []
    floorless_ids: list[str] = []
    for path, node in _subschemas(schema):
        types = _types(node)
        if "object" in types and node.get("additionalProperties") is not False \
                and node.get("unevaluatedProperties") is not False:
            open_objects.append(pointer(path))
        if "array" in types and "maxItems" not in node:
            open_arrays.append(pointer(path))
        if _floorless_id(path, node, types):
            floorless_ids.append(pointer(path))
    return open_objects, open_arrays, floorless_ids


def _floorless_id(path: list[str | int], node: dict[str, Any], types: set[str]) -> bool:
    """An integer property whose name says it is an id, with no lower bound or fixed set."""
    return bool(path) and len(path) >= 2 and path[-2] == "properties" \
        and isinstance(path[-1], str) and "integer" in types \
        and bool(_ID_NAME.search(path[-1])) and not any(
            k in node for k in ("minimum", "exclusiveMinimum", "enum", "const"))


def _shape_findings(tool: Tool, schema: Any) -> Iterator[Finding]:
    """HS102, HS103, HS104: open objects, unbounded arrays, floorless integer ids."""
    open_objects, open_arrays, floorless_ids = _open_shapes(schema)
    if open_objects:
        yield _finding(
            tool, "HS102",
            f"{tool.name!r}: {len(open_objects)} object schema(s) without "
            "additionalProperties: false",
            open_objects,
        )
    if open_arrays:
        yield _finding(
            tool, "HS103",
            f"{tool.name!r}: {len(open_arrays)} array schema(s) without maxItems",
            open_arrays,
        )
    if floorless_ids:
        yield _finding(
            tool, "HS104", f"{tool.name!r}: integer id-like propert(ies) without minimum",
            floorless_ids,
        )


def _regex_findings(tool: Tool, schema: Any) -> Iterator[Finding]:
    """HS106: the same regexes the guard refuses a schema for (pattern_sites feeds both)."""
    unsupported = sorted({pointer(path) for path, found in pattern_sites(schema)
                          if not ecma_safe(found)}) if isinstance(schema, dict) else []
    if unsupported:
        # A pointer into patternProperties holds the server's regex: shown inert and clipped.
        shown = ", ".join(printable(p, _SHOWN_CHARS) for p in unsupported[:_SHOWN_POINTERS])
        more = len(unsupported) - _SHOWN_POINTERS
        yield new_finding(
            "HS106",
            f"{tool.name!r}: clients running the guard deny every call to this tool: its "
            f"input schema has {len(unsupported)} regex(es) outside the subset the guard "
            f"evaluates (linear time, ECMA-262 meaning), at {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "; the collision scan answers unknown where they decide an overlap",
            [tool.ref], properties={"pointers": unsupported},
        )


def _policy_findings(tool: Tool, policy: Policy, props: dict[str, Any]) -> Iterator[Finding]:
    """HS105: policy rules naming arguments the schema does not declare."""
    rules = policy.for_tool(tool.name)
    named = [*sorted(rules.secret)]
    if rules.effect_from:
        named.append(rules.effect_from)
    if rules.dry_run_parameter:
        named.append(rules.dry_run_parameter)
    missing = [n for n in named if n not in props]
    if missing:
        yield _finding(
            tool, "HS105",
            f"policy for {tool.name!r} names argument(s) its schema does not declare: "
            + ", ".join(repr(n) for n in missing),
        )


def _unsafe_name(name: str) -> str:
    """What makes ``name`` unsafe to show ("" when nothing): control or format characters
    (C0, DEL, C1, bidirectional controls, zero-width), or the ``::`` namespace separator."""
    found = sorted({f"U+{ord(c):04X}" for c in name if unicodedata.category(c) in ("Cc", "Cf")})
    parts = []
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        parts.append(f"control or format character(s) {shown}")
    if "::" in name:
        parts.append("'::' (the separator clients put between a server and its tools)")
    return " and ".join(parts)


def _types(node: dict[str, Any]) -> set[str]:
    value = node.get("type")
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {t for t in value if isinstance(t, str)}
    if "properties" in node:
        return {"object"}
    if "items" in node or "prefixItems" in node:
        return {"array"}
    return set()


_CHILD_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_CHILD_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
_CHILD_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")


def _subschemas(schema: Any) -> Iterator[tuple[list[str | int], dict[str, Any]]]:
    """Every object subschema with its path, iteratively and depth-bounded."""
    stack: list[tuple[list[str | int], Any]] = [([], schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict) or len(path) > _MAX_DEPTH:
            continue
        yield path, node
        _push_children(stack, path, node)


def _push_children(stack: list[tuple[list[str | int], Any]], path: list[str | int],
                   node: dict[str, Any]) -> None:
    """Push the subschemas of ``node`` with their paths (each kind reversed: pops in order)."""
    for key in _CHILD_MAPS:
        children = node.get(key)
        if isinstance(children, dict):
            for name in sorted(children, reverse=True):
                stack.append(([*path, key, name], children[name]))
    for key in _CHILD_LISTS:
        children = node.get(key)
        if isinstance(children, list):
            for i in range(len(children) - 1, -1, -1):
                stack.append(([*path, key, i], children[i]))
    for key in _CHILD_ONE:
        if isinstance(node.get(key), dict):
            stack.append(([*path, key], node[key]))
