"""Explain every way arguments fail a tool's ``inputSchema``, without echoing them.

Validation itself is the shared stack (:mod:`histor_sign._schema.validation`):
``jsonschema-rs`` by default (chosen on measurements, benchmarks/bench_guard.py: ~50-80x
faster on allowed calls, and stricter where it matters for a guard: ``pattern`` uses
ECMA-262 semantics, where Python's ``re`` lets a backslash-d match Arabic-Indic digits, and
``uri``/``date-time``/... formats are checked). ``engine="jsonschema"`` selects the
pure-Python reference engine with the same dialect, number and format rules. Remote
``$ref``s are never fetched (an untrusted schema must not make the guard send requests).

Exact JSON types come from the engine: ``"42"`` is not an integer, ``true`` is not a
number, ``1.0`` is an integer. Messages never contain argument values — only JSON
pointers, the JSON type found (unless the argument is secret) and the schema constraint.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from histor_sign._call_import import shown_name, shown_pointer
from histor_sign._schema.regex_subset import ecma_safe, printable_ascii, search
from histor_sign._schema.validation import (
    ENGINES,
    PATTERN_UNDECIDABLE,
    ArgumentValidator,
    Failure,
    SchemaProblem,
    compile_validator,
    json_type,
)

__all__ = [
    "ENGINES",
    "PATTERN_UNDECIDABLE",
    "Reason",
    "SchemaProblem",
    "compile_validator",
    "json_type",
    "pattern_matches",
    "schema_reasons",
]

MAX_SHOWN = 10  # enum members / names shown in one message


@dataclass(frozen=True)
class Reason:
    """Why a call is denied: a stable ``code``, where (JSON pointer into the arguments,
    ``""`` for the call itself), the schema keyword if any, and a value-free message."""

    code: str
    message: str
    pointer: str = ""
    keyword: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "pointer": self.pointer}
        if self.keyword is not None:
            out["keyword"] = self.keyword
        out["message"] = self.message
        return out


def schema_reasons(
    validator: ArgumentValidator, arguments: Mapping[str, Any], secret: frozenset[str]
) -> list[Reason]:
    """Every schema violation of ``arguments`` as a value-free :class:`Reason`."""
    if validator.is_valid(arguments):
        return []
    reasons: list[Reason] = []
    for failure in validator.failures(arguments):
        for reason in _explain(failure, secret):
            if reason not in reasons:
                reasons.append(reason)
    return reasons


def _explain(error: Failure, secret: frozenset[str]) -> Iterable[Reason]:
    """The reasons one validation failure gives, its path cut to the argument name when the
    argument is secret (then no value or type is shown)."""
    path, is_secret = _reported_path(error, secret)
    where = shown_pointer(path)
    label = where or "arguments"
    keyword = error.keyword
    value = error.value
    instance = error.instance

    if keyword == "required" and isinstance(instance, dict):
        return _missing_reasons(value, instance, path)
    if keyword in ("additionalProperties", "unevaluatedProperties") and not is_secret:
        unknown = _unknown_reasons(error, path)
        if unknown is not None:
            return unknown
    if keyword == "type":
        expected = " or ".join(value) if isinstance(value, list) else str(value)
        got = "" if is_secret else f", got {json_type(instance)}"
        return [Reason("type-mismatch", f"{label} must be {expected}{got}", where, keyword)]
    return [Reason("constraint", f"{label} {_constraint(keyword, value)}", where, keyword)]


def _reported_path(error: Failure, secret: frozenset[str]) -> tuple[list[Any], bool]:
    """The failure's path, cut to the argument name when that argument is secret; and
    whether it is."""
    path = list(error.path)
    is_secret = bool(path) and path[0] in secret
    return (path[:1] if is_secret else path), is_secret


def _missing_reasons(required: Any, instance: Mapping[str, Any],
                     path: list[Any]) -> list[Reason]:
    """One reason per required name the object lacks."""
    return [Reason("missing-required", f"missing required argument {shown_name(name)}",
                   shown_pointer([*path, name]), "required")
            for name in required if name not in instance]


def _unknown_reasons(error: Failure, path: list[Any]) -> list[Reason] | None:
    """One reason per member an object's ``false`` additional/unevaluated properties
    refuse, or None when the failure is not that (or which members cannot be said)."""
    instance = error.instance
    if not isinstance(instance, dict) or error.value is not False:
        return None
    extras = _extra_properties(instance, error.schema)
    if extras is None:
        return None
    return [Reason("unknown-argument",
                   f"unknown argument {shown_name(name)} (the schema does not declare it)",
                   shown_pointer([*path, name]), error.keyword)
            for name in extras]


#: Constraint messages with the keyword's value put in.
_VALUE_MESSAGES = {
    "minimum": "must be >= {}",
    "maximum": "must be <= {}",
    "exclusiveMinimum": "must be > {}",
    "exclusiveMaximum": "must be < {}",
    "multipleOf": "must be a multiple of {}",
    "minLength": "must be at least {} characters long",
    "maxLength": "must be at most {} characters long",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
    "minProperties": "must have at least {} properties",
    "maxProperties": "must have at most {} properties",
    "minContains": "must contain at least {} matching items",
    "maxContains": "must contain at most {} matching items",
    "format": "must be a valid {}",
}
#: Constraint messages that show nothing of the keyword's value.
_FIXED_MESSAGES = {
    "uniqueItems": "must not contain duplicate items",
    "not": "must not match the schema under 'not'",
    "dependentRequired": "is missing arguments that other present arguments require",
    "propertyNames": "has a property name the schema does not allow",
    "contains": "must contain an item matching the 'contains' schema",
    "false": "is not allowed by the schema",
}
#: Constraint messages that show the keyword's value as an inert literal.
_LITERAL_MESSAGES = {"const": "must equal {}", "pattern": "must match the pattern {}"}


def _one_of_values(values: list[Any]) -> str:
    """``enum``'s message: the first few allowed values as inert literals."""
    shown = ", ".join(_show_literal(v) for v in values[:MAX_SHOWN])
    more = f", … ({len(values)} in all)" if len(values) > MAX_SHOWN else ""
    return f"must be one of: {shown}{more}"


def _constraint(keyword: str, value: Any) -> str:
    """What a failed keyword asks of the value, in words (table-driven)."""
    if keyword in _VALUE_MESSAGES:
        return _VALUE_MESSAGES[keyword].format(value)
    if keyword in _FIXED_MESSAGES:
        return _FIXED_MESSAGES[keyword]
    if keyword in _LITERAL_MESSAGES:
        return _LITERAL_MESSAGES[keyword].format(_show_literal(value))
    if keyword == "enum" and isinstance(value, list):
        return _one_of_values(value)
    if keyword in ("anyOf", "oneOf"):
        return f"must match {'exactly one' if keyword == 'oneOf' else 'at least one'} of " \
            f"the {len(value)} {keyword} alternatives"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return f"has properties that the schema's {keyword} does not allow"
    return f"does not satisfy the schema keyword {keyword!r}"


def _extra_properties(instance: Mapping[str, Any], schema: Any) -> list[str] | None:
    if not isinstance(schema, dict):
        return None
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    if not isinstance(declared, dict) or not isinstance(patterns, dict):
        return None
    extras = []
    for key in instance:
        if key in declared:
            continue
        hits = [pattern_matches(p, key) for p in patterns]
        if None in hits:
            return None  # the generic message, rather than a guess about which key is extra
        if not any(hits):
            extras.append(key)
    return sorted(extras)


def pattern_matches(pattern: Any, subject: str) -> bool | None:
    """Whether the ECMA-262 regex ``pattern`` matches ``subject``, or None when the guard
    cannot say exactly.

    The answer comes from the linear-time matcher of the ECMA-safe subset (so a schema's
    ``^(a|a)*$`` cannot stall a call) and only where that subset agrees with ECMA-262:
    a printable ASCII subject. Callers treat None as a reason to deny.
    """
    if not isinstance(pattern, str) or not ecma_safe(pattern) or not printable_ascii(subject):
        return None
    return search(pattern, subject)


def _show_literal(value: Any, limit: int = 60) -> str:
    """A schema constant, shown compactly (schemas are public; arguments are never shown)."""
    import json

    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "…"
