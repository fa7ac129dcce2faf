"""Rewrite ``not``, ``if``/``then``/``else`` and ``dependentSchemas`` into disjunctions.

The solver only branches over ``anyOf``; these keywords are turned into ``anyOf`` groups of
*synthesized* subschemas that are exactly equivalent to the original keyword (negation
normal form, one level at a time — a nested ``not`` is rewritten when the solver reaches it).
A part we cannot negate exactly stays as ``{"not": {keyword: value}}`` — a relaxed
alternative that the solver ignores and the exact validator re-checks — so the rewrite
never makes a schema *smaller* than it is, which keeps "no value" a proof of disjointness.

Every synthesized schema is a valid schema of the dialect it came from, because candidate
values are also checked against it by the exact validator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from histor_sign._schema.validation import LEGACY_REF_DIALECTS, NO_CONSTRAINT_KEYWORDS

#: ``not`` of only these is subtracted exactly while merging (see ``_merge_not``).
MERGED_NOT = (frozenset({"type"}), frozenset({"const"}), frozenset({"enum"}))

_ALL_TYPES = ("null", "boolean", "object", "array", "number", "string")
_OTHER_THAN = {t: [o for o in _ALL_TYPES if o != t] for t in _ALL_TYPES}

# keyword -> (instance type it applies to, keyword of the complement, offset)
_BOUND_FLIPS: dict[str, tuple[str, str, int]] = {
    "minimum": ("number", "exclusiveMaximum", 0),
    "maximum": ("number", "exclusiveMinimum", 0),
    "exclusiveMinimum": ("number", "maximum", 0),
    "exclusiveMaximum": ("number", "minimum", 0),
    "minLength": ("string", "maxLength", -1),
    "maxLength": ("string", "minLength", 1),
    "minItems": ("array", "maxItems", -1),
    "maxItems": ("array", "minItems", 1),
    "minProperties": ("object", "maxProperties", -1),
    "maxProperties": ("object", "minProperties", 1),
}
_UNITS = (
    frozenset({"properties", "patternProperties", "additionalProperties"}),
    frozenset({"prefixItems", "items", "additionalItems"}),
    frozenset({"contains", "minContains", "maxContains"}),
    frozenset({"if", "then", "else"}),
)
_WHOLE_ONLY = frozenset({"unevaluatedProperties", "unevaluatedItems", "$dynamicRef",
                         "$recursiveRef", "$dynamicAnchor", "$recursiveAnchor"})


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _bound(keyword: str, value: Any) -> list[Any] | None:
    kind, flipped, offset = _BOUND_FLIPS[keyword]
    others: list[Any] = [{"type": _OTHER_THAN[kind]}]
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return [*others, {"type": "number", flipped: value}]
    if not _is_count(value):
        return None
    limit = value + offset
    if limit < 0:
        return others
    return [*others, {"type": kind, flipped: limit}]


def negate(
    schema: Any, dialect: str, resolve: Callable[[Any], Any] | None = None
) -> list[Any] | None:
    """Alternatives whose union is exactly ``not schema``; None = leave it relaxed.

    None is also returned when the merge step already subtracts the negation exactly
    (``not`` of a pure ``type``/``const``/``enum``), so callers add no group then.
    """
    if isinstance(schema, bool):
        return [] if schema else [True]
    if not isinstance(schema, dict) or "$id" in schema:
        return None  # a nested $id changes what "#" means: leave it to the exact validator
    keys = set(schema) - NO_CONSTRAINT_KEYWORDS
    if not keys:
        return []  # the schema accepts everything: its negation accepts nothing
    if keys in MERGED_NOT or keys & _WHOLE_ONLY:  # (a tuple: ``in`` compares with ==)
        return None
    if "$ref" in keys and dialect in LEGACY_REF_DIALECTS:
        # the siblings of $ref are ignored
        return _not_ref(schema["$ref"], dialect, resolve)
    return _negate_parts(schema, keys, dialect, resolve)


def _negate_parts(schema: dict[str, Any], keys: set[str], dialect: str,
                  resolve: Callable[[Any], Any] | None) -> list[Any] | None:
    """The alternatives of :func:`negate`: each unit of keywords that act together, then
    each remaining keyword, negated (or kept as a relaxed ``not``)."""
    out: list[Any] = []
    handled: set[str] = set()
    for unit in _UNITS:
        present = keys & unit
        if not present:
            continue
        handled |= present
        part = {k: schema[k] for k in present}
        alts = _negate_unit(part, dialect)
        if alts is None:
            if len(keys) == len(present):
                return None  # the whole schema is one relaxed unit
            alts = [{"not": part}]
        out.extend(alts)
    for key in sorted(keys - handled):
        alts = _negate_keyword(key, schema[key], dialect, resolve)
        if alts is None:
            if len(keys) == 1:
                return None
            alts = [{"not": {key: schema[key]}}]
        out.extend(alts)
    return out


def _negate_unit(part: dict[str, Any], dialect: str) -> list[Any] | None:
    keys = set(part)
    if keys == {"properties"} and isinstance(part["properties"], dict):
        return [{"type": "object", "required": [name], "properties": {name: {"not": sub}}}
                for name, sub in part["properties"].items()]
    if "if" in keys:
        if dialect == "draft-06":
            return []  # no if/then/else in draft-06: annotations only
        cond = part["if"]
        # not (if ? then : else) == (if and not then) or (not if and not else)
        return [{"allOf": [cond, {"not": part.get("then", True)}]},
                {"allOf": [{"not": cond}, {"not": part.get("else", True)}]}]
    if keys <= {"then", "else"}:
        return []  # without if, then/else are ignored
    if keys == {"contains"}:
        # not (some item matches) == not an array, or an array whose items all fail
        return [{"type": _OTHER_THAN["array"]},
                {"type": "array", "items": {"not": part["contains"]}}]
    if keys == {"items"} and not isinstance(part["items"], list):
        return [{"type": "array", "contains": {"not": part["items"]}}]
    return None


_Resolve = Callable[[Any], Any] | None


def _not_required(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not required``: one of the names is absent."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return [{"properties": {name: False}} for name in value]


def _not_all_of(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not allOf``: some branch fails."""
    return [{"not": sub} for sub in value] if isinstance(value, list) else None


def _not_any_of(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not anyOf``: every branch fails."""
    return [{"allOf": [{"not": sub} for sub in value]}] if isinstance(value, list) else None


def _not_ref(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not $ref``: the negated target, when the caller can resolve it."""
    return [{"not": resolve(value)}] if resolve is not None else None


def _not_dependent_required(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not dependentRequired`` (2019-09 on): some present name lacks one dependency."""
    if dialect not in ("2020-12", "2019-09") or not isinstance(value, dict):
        return None
    out: list[Any] = []
    for name, deps in value.items():
        if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
            return None
        out.extend({"type": "object", "required": [name], "properties": {d: False}}
                   for d in deps)
    return out


def _not_dependent_schemas(value: Any, dialect: str, resolve: _Resolve) -> list[Any] | None:
    """``not dependentSchemas`` (2019-09 on): some present name's schema fails."""
    if dialect not in ("2020-12", "2019-09") or not isinstance(value, dict):
        return None
    return [{"type": "object", "required": [name], "not": sub} for name, sub in value.items()]


def _not_itself(key: str) -> Callable[[Any, str, _Resolve], list[Any] | None]:
    """``not {key: value}`` as one alternative: the merge step subtracts it exactly."""
    return lambda value, dialect, resolve: [{"not": {key: value}}]


#: The negation of one keyword by name (table-driven); a keyword not here stays relaxed.
_KEYWORD_NEGATIONS: dict[str, Callable[[Any, str, _Resolve], list[Any] | None]] = {
    "type": _not_itself("type"), "const": _not_itself("const"), "enum": _not_itself("enum"),
    "required": _not_required, "allOf": _not_all_of, "anyOf": _not_any_of,
    "not": lambda value, dialect, resolve: [value], "$ref": _not_ref,
    "dependentRequired": _not_dependent_required,
    "dependentSchemas": _not_dependent_schemas,
}


def _negate_keyword(
    key: str, value: Any, dialect: str, resolve: Callable[[Any], Any] | None
) -> list[Any] | None:
    """Alternatives whose union is ``not {key: value}``; None = leave it relaxed."""
    if key in _BOUND_FLIPS:
        return _bound(key, value)
    negation = _KEYWORD_NEGATIONS.get(key)
    return negation(value, dialect, resolve) if negation is not None else None


def conditional(schema: dict[str, Any], dialect: str) -> list[Any] | None:
    """``if``/``then``/``else`` as two alternatives, or None when absent or inapplicable."""
    if "if" not in schema or dialect == "draft-06":
        return None
    cond = schema["if"]
    return [{"allOf": [cond, schema.get("then", True)]},
            {"allOf": [{"not": cond}, schema.get("else", True)]}]


def dependent_schemas(schema: dict[str, Any], dialect: str) -> list[list[Any]]:
    """One two-way disjunction per ``dependentSchemas`` entry (draft-07 ``dependencies``)."""
    if dialect in ("2020-12", "2019-09"):
        deps = schema.get("dependentSchemas")
    else:
        raw = schema.get("dependencies")
        deps = ({k: v for k, v in raw.items() if not isinstance(v, list)}
                if isinstance(raw, dict) else None)
    if not isinstance(deps, dict):
        return []
    return [[{"properties": {name: False}}, {"required": [name], "allOf": [sub]}]
            for name, sub in deps.items()]
