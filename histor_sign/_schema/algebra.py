"""Bounded intersection of JSON Schemas: find a common instance or prove there is none.

The solver works on a *conjunction* of subschemas (each with the root it came from, for
``$ref``). It flattens ``allOf`` and local ``$ref``, branches over ``anyOf``/``oneOf``
(``oneOf`` is treated as ``anyOf`` — an over-approximation), merges the remaining keywords
per instance type, and builds the smallest value it can for each type.

Soundness rests on one rule: every constraint the solver *uses* is implied by the schemas,
and every constraint it does not understand is *ignored* (a relaxation). So:

* "no value" (``None``) over a relaxation means the real schemas are disjoint too;
* a value found over a relaxation is only a *candidate*: it becomes an ``overlap`` witness
  only after the exact validator (:mod:`histor_sign._schema.validation`) accepts
  it for both original schemas.

Keywords we reason about exactly: boolean schemas, ``type``, ``enum``, ``const``, ``allOf``,
``anyOf``, ``oneOf``, local ``$ref`` into ``$defs``/``definitions`` (or any local pointer),
``properties``, ``required``, ``additionalProperties``, ``patternProperties`` and
``propertyNames`` (per concrete name), ``minProperties``, ``maxProperties``,
``dependentRequired`` (and draft-07 array ``dependencies``), ``items``, ``prefixItems`` (and
tuple ``items``/``additionalItems`` before 2020-12), ``contains``, ``uniqueItems``,
``minItems``, ``maxItems``, ``minLength``, ``maxLength``, ``minimum``, ``maximum``,
``exclusiveMinimum``, ``exclusiveMaximum``, ``multipleOf`` (exact rationals); ``not``,
``if``/``then``/``else`` and ``dependentSchemas`` are rewritten into exact disjunctions
(:mod:`.negation`). Relaxed (ignored, then checked on the witness): ``pattern`` (examples
are proposed), ``minContains``/``maxContains``, ``unevaluated*``, negations we cannot
rewrite. ``format`` is an annotation. Unknown outright: nested ``$id``, non-local ``$ref``,
``$dynamicRef``/``$recursiveRef``, and any bound.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from histor_sign._schema.negation import conditional, dependent_schemas, negate
from histor_sign._schema.regex_subset import ecma_safe, printable_ascii, search
from histor_sign._schema.regex_witness import examples
from histor_sign._schema.validation import (
    LEGACY_REF_DIALECTS,
    NO_CONSTRAINT_KEYWORDS,
    SchemaRoot,
    Untrusted,
    float_multiple_judges,
    json_type,
)
from histor_sign.canonical import unescape_pointer_token

KINDS = ("object", "null", "boolean", "int", "frac", "string", "array")
_TYPE_KINDS: dict[str, frozenset[str]] = {
    "object": frozenset({"object"}),
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "integer": frozenset({"int"}),
    "number": frozenset({"int", "frac"}),
    "string": frozenset({"string"}),
    "array": frozenset({"array"}),
}
ALL_KINDS = frozenset(KINDS)
MAX_SAFE_INTEGER = 2**53 - 1

#: Keywords that, when present, make a local candidate need an exact re-check.
RELAXED = frozenset({
    "pattern", "patternProperties", "propertyNames", "format", "not", "if", "then", "else",
    "contains", "minContains", "maxContains", "uniqueItems", "dependentSchemas",
    "unevaluatedProperties", "unevaluatedItems", "additionalItems", "dependencies",
})
_HARD_UNKNOWN = ("$dynamicRef", "$recursiveRef")


class Undecided(Exception):
    """The pair cannot be decided within the supported subset and bounds."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Bounds:
    """Resource bounds for one pair (defaults generous for tool schemas)."""

    max_depth: int = 32
    max_nodes: int = 20_000
    max_branches: int = 2_048
    max_enum: int = 512
    max_witness_items: int = 256
    max_string: int = 4_096
    seconds: float = 2.0


@dataclass
class Budget:
    bounds: Bounds
    deadline: float = 0.0
    nodes: int = 0
    branches: int = 0

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.bounds.seconds

    def tick(self, n: int = 1) -> None:
        self.nodes += n
        if self.nodes > self.bounds.max_nodes:
            raise Undecided(f"schema node bound ({self.bounds.max_nodes}) reached")
        if self.nodes % 256 == 0 and time.monotonic() > self.deadline:
            raise Undecided(f"time bound ({self.bounds.seconds:g} s) reached")

    def branch(self) -> None:
        self.branches += 1
        if self.branches > self.bounds.max_branches:
            raise Undecided(f"branch bound ({self.bounds.max_branches}) reached")
        if time.monotonic() > self.deadline:
            raise Undecided(f"time bound ({self.bounds.seconds:g} s) reached")


_NEUTRAL_ROOT = SchemaRoot(schema={}, label="<synthesized>")


@dataclass(frozen=True, eq=False)
class Sub:
    """A subschema with the root it resolves ``$ref`` against; ``local`` = own keywords only."""

    schema: Any
    root: SchemaRoot
    local: bool = False


@dataclass
class Found:
    value: Any


# --- flattening -----------------------------------------------------------------------


def _resolve(root: SchemaRoot, ref: Any) -> Any:
    """The target of a local ``$ref``, found exactly as ``referencing`` finds it.

    The fragment must start with ``/`` (else it is an anchor: Undecided); it is
    percent-decoded *before* it is split, so ``#/$defs/a%2Fb`` names ``$defs`` → ``a`` →
    ``b``, and ``~1``/``~0`` are unescaped per segment. A pointer that passes through a
    subschema with its own ``$id`` enters another resource, where ``$ref`` resolves against
    that resource: Undecided rather than resolving it against the document root.
    """
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise Undecided(f"non-local $ref {str(ref)[:60]!r}")
    fragment = ref[1:]
    if fragment and not fragment.startswith("/"):
        raise Undecided(f"anchor $ref {ref[:60]!r}")
    from urllib.parse import unquote

    node = root.schema
    for raw in unquote(fragment[1:]).split("/") if fragment else []:
        node = _ref_step(node, unescape_pointer_token(raw), ref)
        if isinstance(node, dict) and isinstance(node.get("$id"), str):
            raise Undecided(f"$ref {ref[:60]!r} enters a subschema with its own $id")
    return node


def _ref_step(node: Any, token: str, ref: str) -> Any:
    """One unescaped token of ``ref``'s pointer applied to ``node``."""
    if isinstance(node, dict) and token in node:
        return node[token]
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    raise Undecided(f"unresolvable $ref {ref[:60]!r}")


def _flatten(
    conj: Iterable[Sub], budget: Budget
) -> tuple[list[Sub], list[tuple[str, list[Sub], Sub]]] | None:
    """Split a conjunction into local keyword sets and pending disjunctions (None = false)."""
    stack = list(conj)
    atoms: list[Sub] = []
    groups: list[tuple[str, list[Sub], Sub]] = []
    expansions: dict[tuple[int, str], int] = {}
    while stack:
        sub = stack.pop()
        budget.tick()
        schema = sub.schema
        if schema is True:
            continue
        if schema is False:
            return None
        if not isinstance(schema, dict):
            raise Undecided("a subschema is neither an object nor a boolean")
        if sub.local:
            atoms.append(sub)
            continue
        if _expand(sub, schema, stack, groups, expansions):
            atoms.append(Sub(schema, sub.root, local=True))
    return atoms, groups


def _expand(sub: Sub, schema: dict[str, Any], stack: list[Sub],
            groups: list[tuple[str, list[Sub], Sub]],
            expansions: dict[tuple[int, str], int]) -> bool:
    """One not-yet-local subschema of :func:`_flatten`: its ``$ref`` target and ``allOf``
    parts onto ``stack``, its disjunctions into ``groups``; False when its own keywords are
    ignored (draft-06/07 siblings of ``$ref``)."""
    if "$id" in schema and schema is not sub.root.schema:
        raise Undecided("nested $id resources are not supported")
    for key in _HARD_UNKNOWN:
        if key in schema:
            raise Undecided(f"{key} is not supported")
    if "$ref" in schema:
        _push_ref(sub, schema["$ref"], stack, expansions)
        if sub.root.dialect in LEGACY_REF_DIALECTS:
            return False  # draft-06/07: siblings of $ref are ignored
    all_of = schema.get("allOf")
    if all_of is not None:
        if not isinstance(all_of, list):
            raise Undecided("allOf is not an array")
        stack.extend(Sub(s, sub.root) for s in all_of)
    groups.extend(_alternative_groups(sub, schema))
    groups.extend(_rewritten_groups(sub))
    return True


def _push_ref(sub: Sub, ref: Any, stack: list[Sub], expansions: dict[tuple[int, str], int]) -> None:
    """A ``$ref``'s target onto ``stack``; a fifth expansion of one reference is a cycle."""
    ref_key = (id(sub.root), str(ref))
    expansions[ref_key] = expansions.get(ref_key, 0) + 1
    if expansions[ref_key] > 4:
        raise Undecided(f"recursive $ref cycle through {str(ref)[:60]!r}")
    stack.append(Sub(_resolve(sub.root, ref), sub.root))


def _alternative_groups(sub: Sub, schema: dict[str, Any]) -> list[tuple[str, list[Sub], Sub]]:
    """``anyOf`` and ``oneOf`` as pending disjunctions."""
    out: list[tuple[str, list[Sub], Sub]] = []
    for kind in ("anyOf", "oneOf"):
        alts = schema.get(kind)
        if alts is None:
            continue
        if not isinstance(alts, list) or not alts:
            raise Undecided(f"{kind} is not a non-empty array")
        out.append((kind, [Sub(s, sub.root) for s in alts], Sub({kind: alts}, sub.root)))
    return out


def _rewritten_groups(sub: Sub) -> list[tuple[str, list[Sub], Sub]]:
    """``not``, ``if``/``then``/``else`` and ``dependentSchemas`` as exact disjunctions."""
    schema, root = sub.schema, sub.root
    dialect = root.dialect
    out: list[tuple[str, list[Sub], Sub]] = []
    if "not" in schema:
        alts = negate(schema["not"], dialect, lambda ref: _resolve(root, ref))
        if alts is not None:
            out.append(("anyOf", [Sub(a, root) for a in alts], Sub({"not": schema["not"]}, root)))
    cond = conditional(schema, dialect)
    if cond is not None:
        origin = {k: schema[k] for k in ("if", "then", "else") if k in schema}
        out.append(("anyOf", [Sub(a, root) for a in cond], Sub(origin, root)))
    for pair in dependent_schemas(schema, dialect):
        out.append(("anyOf", [Sub(a, root) for a in pair], Sub({"anyOf": pair}, root)))
    return out


# --- merged constraints ---------------------------------------------------------------


def _json_key(value: Any) -> Any:
    """A hashable key equal for two values exactly when JSON Schema calls them equal.

    Numbers compare by exact value (``1 == 1.0``), booleans are not numbers, object key
    order is irrelevant.
    Exclusion checks (``not``/``enum``, ``uniqueItems``) look values up in a set of these
    instead of comparing against every excluded value, so n distinct array elements cost
    O(n) lookups, not O(n²) deep comparisons.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, (int, float)):
        return ("number", _frac(value))
    if isinstance(value, list):
        return ("array", tuple(_json_key(x) for x in value))
    if isinstance(value, dict):
        return ("object", frozenset((k, _json_key(v)) for k, v in value.items()))
    return ("other", type(value).__name__, repr(value))


def _frac(n: Any) -> Fraction:
    return Fraction(repr(n)) if isinstance(n, float) else Fraction(n)


#: The algebra's value kinds: JSON types, with numbers split into integral and fractional.
_KINDS = {"integer": "int", "number": "frac", "null": "null", "boolean": "boolean",
          "string": "string", "array": "array"}


def _kind_of(value: Any) -> str:
    return _KINDS.get(json_type(value), "object")


def _num(value: Any, keyword: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Undecided(f"{keyword} is not a number")
    _safe_numbers(value, keyword)
    return _frac(value)


def _safe_numbers(value: Any, keyword: str) -> None:
    """Undecided when ``value`` holds an integer beyond ±(2^53−1).

    Within that range every integer is an IEEE double, so the order and equality this
    module computes (exact rationals; a float as its shortest decimal, which keeps the
    order of doubles) is the order every validator computes — exact (Python, Rust) or in
    doubles (ECMAScript). Beyond it a bound like 9007199254740993 is one number to an exact
    validator and 9007199254740992 to a double-based one: no single answer.
    """
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, int) and not isinstance(node, bool):
            if abs(node) > MAX_SAFE_INTEGER:
                raise Undecided(f"{keyword} holds an integer beyond ±(2^53−1); validators "
                                "compare such numbers differently")
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _count(value: Any, keyword: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise Undecided(f"{keyword} is not a non-negative integer")
    if isinstance(value, float) and not value.is_integer():
        raise Undecided(f"{keyword} is not an integer")
    return int(value)


@dataclass
class Merged:
    kinds: frozenset[str] = ALL_KINDS
    values: list[Any] | None = None
    excluded: list[Any] = field(default_factory=list)
    excluded_keys: set[Any] = field(default_factory=set)  # _json_key of ``excluded``
    excluded_seen: int = 0  # how many of ``excluded`` are in ``excluded_keys``
    relaxed: bool = False
    lo: Fraction | None = None
    lo_excl: bool = False
    hi: Fraction | None = None
    hi_excl: bool = False
    mults: list[Fraction] = field(default_factory=list)
    divisors: list[Any] = field(default_factory=list)  # the multipleOf values as written
    min_len: int = 0
    max_len: int | None = None
    formats: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    min_items: int = 0
    max_items: int | None = None
    objects: list[Sub] = field(default_factory=list)
    arrays: list[Sub] = field(default_factory=list)
    contains: list[Sub] = field(default_factory=list)
    unique: bool = False
    required: list[str] = field(default_factory=list)
    min_props: int = 0
    max_props: int | None = None

    def lower(self, value: Fraction, exclusive: bool) -> None:
        if self.lo is None or value > self.lo or (value == self.lo and exclusive):
            self.lo, self.lo_excl = value, exclusive

    def upper(self, value: Fraction, exclusive: bool) -> None:
        if self.hi is None or value < self.hi or (value == self.hi and exclusive):
            self.hi, self.hi_excl = value, exclusive


_OBJECT_SHAPE = ("properties", "additionalProperties", "patternProperties", "propertyNames")


def _merge(atoms: list[Sub], bounds: Bounds) -> Merged | None:
    """Merge the local keywords of every atom; None when the merge is already empty."""
    m = Merged()
    for atom in atoms:
        s = atom.schema
        if any(k in s for k in RELAXED):
            m.relaxed = True
        _merge_values(m, s, bounds)
        _merge_numbers(m, s)
        _merge_strings(m, s)
        _merge_arrays(m, atom)
        _merge_objects(m, atom)
    if m.values is not None:
        m.values = [v for v in m.values if _kind_of(v) in m.kinds]
        if not m.values:
            return None
    return m if m.kinds else None


def _merge_values(m: Merged, s: dict[str, Any], bounds: Bounds) -> None:
    """``type``, ``const``, ``enum`` and an exactly subtractable ``not``."""
    if "type" in s:
        m.kinds = m.kinds & _type_kinds(s["type"])
    if "const" in s:
        _merge_options(m, [s["const"]], "const", bounds)
    if "enum" in s:
        if not isinstance(s["enum"], list):
            raise Undecided("enum is not an array")
        _merge_options(m, s["enum"], "enum", bounds)
    if "not" in s:
        _merge_not(m, s["not"])


def _type_kinds(t: Any) -> frozenset[str]:
    """The value kinds a ``type`` keyword allows."""
    names = [t] if isinstance(t, str) else t
    if not isinstance(names, list) or not all(n in _TYPE_KINDS for n in names):
        raise Undecided("type is not a known type name or list of them")
    return frozenset().union(*(_TYPE_KINDS[n] for n in names))


def _merge_options(m: Merged, options: list[Any], key: str, bounds: Bounds) -> None:
    """Intersect the allowed values with a ``const`` or ``enum``'s options."""
    if len(options) > bounds.max_enum:
        raise Undecided(f"enum bound ({bounds.max_enum}) reached")
    _safe_numbers(options, key)
    if m.values is None:
        m.values = list(options)
    else:
        wanted = {_json_key(o) for o in options}
        m.values = [v for v in m.values if _json_key(v) in wanted]


def _merge_numbers(m: Merged, s: dict[str, Any]) -> None:
    if "minimum" in s:
        m.lower(_num(s["minimum"], "minimum"), False)
    if "maximum" in s:
        m.upper(_num(s["maximum"], "maximum"), False)
    if "exclusiveMinimum" in s:
        m.lower(_num(s["exclusiveMinimum"], "exclusiveMinimum"), True)
    if "exclusiveMaximum" in s:
        m.upper(_num(s["exclusiveMaximum"], "exclusiveMaximum"), True)
    if "multipleOf" in s:
        divisor = _num(s["multipleOf"], "multipleOf")
        if divisor <= 0:
            raise Undecided("multipleOf is not positive")
        m.mults.append(divisor)
        m.divisors.append(s["multipleOf"])


def _merge_strings(m: Merged, s: dict[str, Any]) -> None:
    if "minLength" in s:
        m.min_len = max(m.min_len, _count(s["minLength"], "minLength"))
    if "maxLength" in s:
        value = _count(s["maxLength"], "maxLength")
        m.max_len = value if m.max_len is None else min(m.max_len, value)
    if isinstance(s.get("format"), str):
        m.formats.append(s["format"])
    if isinstance(s.get("pattern"), str):
        m.patterns.append(s["pattern"])


def _merge_arrays(m: Merged, atom: Sub) -> None:
    s = atom.schema
    if "minItems" in s:
        m.min_items = max(m.min_items, _count(s["minItems"], "minItems"))
    if "maxItems" in s:
        value = _count(s["maxItems"], "maxItems")
        m.max_items = value if m.max_items is None else min(m.max_items, value)
    if any(k in s for k in ("items", "prefixItems", "additionalItems")):
        m.arrays.append(atom)
    if "contains" in s:
        if "minContains" not in s and "maxContains" not in s:  # else relaxed
            m.contains.append(Sub(s["contains"], atom.root))
    if s.get("uniqueItems") is True:
        m.unique = True


def _merge_objects(m: Merged, atom: Sub) -> None:
    s = atom.schema
    dialect = atom.root.dialect
    if any(k in s for k in _OBJECT_SHAPE):
        m.objects.append(atom)
    if "required" in s:
        req = s["required"]
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            raise Undecided("required is not an array of strings")
        m.required.extend(r for r in req if r not in m.required)
    _merge_property_counts(m, s)
    deps = _dependent_required(s, dialect)
    if isinstance(deps, dict):
        _close_required(m, deps)


def _merge_property_counts(m: Merged, s: dict[str, Any]) -> None:
    """``minProperties`` and ``maxProperties``."""
    if "minProperties" in s:
        m.min_props = max(m.min_props, _count(s["minProperties"], "minProperties"))
    if "maxProperties" in s:
        value = _count(s["maxProperties"], "maxProperties")
        m.max_props = value if m.max_props is None else min(m.max_props, value)


def _dependent_required(s: dict[str, Any], dialect: str) -> Any:
    """The name-to-names dependencies of the dialect (``dependentRequired``, or the array
    entries of draft-06/07 ``dependencies``); not a dict when there are none."""
    deps = s.get("dependentRequired") if dialect in ("2020-12", "2019-09") else None
    if dialect in ("draft-06", "draft-07") and isinstance(s.get("dependencies"), dict):
        deps = {k: v for k, v in s["dependencies"].items() if isinstance(v, list)}
    return deps


def _close_required(m: Merged, deps: dict[str, Any]) -> None:
    """Required names pull in their dependentRequired names (a sound consequence)."""
    changed = True
    while changed:
        changed = False
        for name in list(m.required):
            extra = deps.get(name)
            if isinstance(extra, list):
                for other in extra:
                    if isinstance(other, str) and other not in m.required:
                        m.required.append(other)
                        changed = True


def _merge_not(m: Merged, negated: Any) -> None:
    """Use ``not`` exactly when it negates only a type, const or enum; else relax.

    Keys are read with :data:`NO_CONSTRAINT_KEYWORDS`, the same set :func:`negate` uses to
    decide that the merge handles a negation, so the two never disagree about a ``not``.
    """
    if negated is True:
        m.kinds = frozenset()
        return
    if not isinstance(negated, dict):
        return
    keys = set(negated) - NO_CONSTRAINT_KEYWORDS
    if not keys:
        m.kinds = frozenset()  # the negated schema accepts everything
    elif keys == {"type"}:
        _ban_types(m, negated["type"])
    elif keys == {"const"}:
        _safe_numbers(negated["const"], "not const")
        m.excluded.append(negated["const"])
    elif keys == {"enum"} and isinstance(negated["enum"], list):
        _safe_numbers(negated["enum"], "not enum")
        m.excluded.extend(negated["enum"])


def _ban_types(m: Merged, t: Any) -> None:
    """``not {"type": t}``: remove the kinds ``t`` names (a malformed ``t`` is relaxed)."""
    names = [t] if isinstance(t, str) else t
    if isinstance(names, list) and all(n in _TYPE_KINDS for n in names):
        m.kinds = m.kinds - _type_kinds(t)


# --- solving ----------------------------------------------------------------------------


def solve(conj: list[Sub], budget: Budget, depth: int = 0) -> Found | None:
    """A value satisfying (a relaxation of) every schema in ``conj``, or None if none can."""
    if depth > budget.bounds.max_depth:
        raise Undecided(f"depth bound ({budget.bounds.max_depth}) reached")
    flat = _flatten(conj, budget)
    if flat is None:
        return None
    atoms, groups = flat
    if groups:
        return _solve_branches(atoms, groups, budget, depth)
    merged = _merge(atoms, budget.bounds)
    if merged is None:
        return None
    return _build(merged, atoms, budget, depth)


def _solve_branches(atoms: list[Sub], groups: list[tuple[str, list[Sub], Sub]],
                    budget: Budget, depth: int) -> Found | None:
    """Branch on the disjunction with the fewest alternatives (the others stay pending):
    the first alternative that yields a value (one ``oneOf`` accepts exactly once)."""
    groups.sort(key=lambda g: len(g[1]))
    kind, alternatives, origin = groups[0]
    rest = [g[2] for g in groups[1:]]
    undecided: Undecided | None = None
    for alt in alternatives:
        budget.branch()
        try:
            found = solve([*atoms, *rest, alt], budget, depth)
        except Undecided as exc:
            undecided = undecided or exc
            continue
        if found is None:
            continue
        if kind == "oneOf" and not _check(origin, found.value):
            undecided = undecided or Undecided("oneOf candidate matched several branches")
            continue
        return found
    if undecided is not None:
        raise undecided
    return None


def _check(sub: Sub, value: Any) -> bool:
    try:
        return sub.root.accepts(value, sub.schema)
    except Untrusted as exc:
        raise Undecided(exc.reason) from None


def _check_all(atoms: list[Sub], value: Any) -> bool:
    return all(_check(a, value) for a in atoms)


def _build(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    """A value of the merged constraints: one of the listed values when there are any,
    else the first kind's builder whose candidate every (relaxed) keyword accepts."""
    if m.values is not None:
        return _build_listed(m, m.values, atoms, budget)
    undecided: Undecided | None = None
    for kind in KINDS:
        if kind not in m.kinds:
            continue
        try:
            found = _build_kind(kind, m, atoms, budget, depth)
        except Undecided as exc:
            undecided = undecided or exc
            continue
        if found is not None:
            return found
    if undecided is not None:
        raise undecided
    return None


def _build_kind(kind: str, m: Merged, atoms: list[Sub], budget: Budget,
                depth: int) -> Found | None:
    """A value of one kind, checked against the relaxed keywords when there are any."""
    found = _BUILDERS[kind](m, atoms, budget, depth)
    if found is not None and m.relaxed and not _check_all(atoms, found.value):
        names = ", ".join(_relaxed_names(atoms))
        raise Undecided(f"a relaxed keyword ({names}) rejected the candidate")
    return found


def _build_listed(m: Merged, values: list[Any], atoms: list[Sub],
                  budget: Budget) -> Found | None:
    """The first ``const``/``enum`` value not excluded that every atom accepts."""
    trusted = True
    for value in values:
        budget.tick()
        if not _not_excluded(m, value):
            continue
        try:
            if all(a.root.accepts(value, a.schema) for a in atoms):
                return Found(value)
        except Untrusted:
            trusted = False
    if not trusted:
        raise Undecided("an enum/const candidate could not be checked exactly")
    return None


def _relaxed_names(atoms: list[Sub]) -> list[str]:
    return sorted({k for a in atoms for k in a.schema if k in RELAXED})


def _not_excluded(m: Merged, value: Any) -> bool:
    if m.excluded_seen != len(m.excluded):
        m.excluded_keys.update(_json_key(x) for x in m.excluded[m.excluded_seen:])
        m.excluded_seen = len(m.excluded)
    return _json_key(value) not in m.excluded_keys


def _build_null(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    return Found(None) if _not_excluded(m, None) else None


def _build_boolean(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    for value in (False, True):
        if _not_excluded(m, value):
            return Found(value)
    return None


def _lcm(values: Iterable[Fraction]) -> Fraction:
    """Least positive rational L such that every value divides L (L/v is an integer)."""
    num, den = 1, 0
    for v in values:
        num = math.lcm(num, v.numerator)
        den = v.denominator if den == 0 else math.gcd(den, v.denominator)
    return Fraction(num, den or 1)


def _multiple_range(m: Merged, step: Fraction) -> tuple[int | None, int | None]:
    """The least and greatest k with k × ``step`` in the merged interval (None: unbounded)."""
    lo_k: int | None = None
    hi_k: int | None = None
    if m.lo is not None:
        q = m.lo / step
        lo_k = math.floor(q) + 1 if (m.lo_excl and q.denominator == 1) else math.ceil(q)
    if m.hi is not None:
        q = m.hi / step
        hi_k = math.ceil(q) - 1 if (m.hi_excl and q.denominator == 1) else math.floor(q)
    return lo_k, hi_k


def _multiples(m: Merged, step: Fraction, budget: Budget, limit: int) -> list[Fraction]:
    """Up to ``limit`` multiples of ``step`` in the merged interval, smallest |x| first."""
    lo_k, hi_k = _multiple_range(m, step)
    if lo_k is not None and hi_k is not None and lo_k > hi_k:
        return []
    start = 0
    if lo_k is not None and lo_k > 0:
        start = lo_k
    elif hi_k is not None and hi_k < 0:
        start = hi_k
    return _nearest_multiples(step, start, lo_k, hi_k, limit)


def _nearest_multiples(step: Fraction, start: int, lo_k: int | None, hi_k: int | None,
                       limit: int) -> list[Fraction]:
    """Up to ``limit`` multiples k × ``step`` with k in [lo_k, hi_k], k nearest ``start``
    first (ties: the larger k)."""
    out: list[Fraction] = []
    offsets = [0]
    for d in range(1, limit * 2 + 2):
        offsets += [d, -d]
    for off in offsets:
        k = start + off
        if (lo_k is None or k >= lo_k) and (hi_k is None or k <= hi_k):
            out.append(k * step)
            if len(out) >= limit:
                break
    return out


def _number_value(x: Fraction) -> Any:
    if x.denominator == 1:
        if abs(x.numerator) > MAX_SAFE_INTEGER:
            raise Undecided("witness integer outside ±(2^53−1)")
        return int(x)
    f = float(x)
    if Fraction(repr(f)) != x:
        raise Undecided("witness number is not exactly representable")
    return f


def _build_int(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    step = _lcm([*m.mults, Fraction(1)])
    multiples = _multiples(m, step, budget, len(m.excluded) + (16 if m.divisors else 1))
    # None: fewer multiples exist than the limit, and all of them are excluded
    return _judged_multiple(m, multiples)


def _judged_multiple(m: Merged, candidates: Iterable[Fraction]) -> Found | None:
    """The first candidate that is not excluded and that every validator accepts as a
    multiple; :class:`Undecided` when some candidate was only refused by a validator's
    arithmetic, None when every candidate was excluded."""
    judged_out = False
    for x in candidates:
        value = _number_value(x)
        if not _not_excluded(m, value):
            continue
        if float_multiple_judges(value, m.divisors):
            return Found(value)
        judged_out = True
    if judged_out:
        raise Undecided("no multipleOf witness found that every validator accepts")
    return None


def _frac_multiple(m: Merged, budget: Budget) -> Found | None:
    """A non-integer multiple of every ``multipleOf`` in the interval."""
    step = _lcm(m.mults)
    if step.denominator == 1:
        return None  # every multiple is an integer
    fractional = [x for x in _multiples(m, step, budget, 64) if x.denominator != 1]
    found = _judged_multiple(m, fractional)
    if found is not None:
        return found
    lo_ok = _multiples(m, step, budget, 1)
    if not lo_ok:
        return None
    raise Undecided("no small non-integer multiple found")


def _frac_point(m: Merged, point: Fraction) -> Found | None:
    """The interval is one point: that point, when it is a non-integer and not excluded."""
    if m.lo_excl or m.hi_excl or point.denominator == 1:
        return None
    value = _number_value(point)
    return Found(value) if _not_excluded(m, value) else None


def _frac_at_lo(m: Merged) -> Found | None:
    """An inclusive non-integer lower bound below the upper one, when it is representable
    and not excluded."""
    if m.lo is not None and not m.lo_excl and m.lo.denominator != 1 and (
        m.hi is None or m.lo < m.hi
    ):
        try:
            value = _number_value(m.lo)
        except Undecided:
            value = None
        if value is not None and _not_excluded(m, value):
            return Found(value)
    return None


def _in_interval(m: Merged, x: Fraction) -> bool:
    """Whether ``x`` lies within the merged bounds, each inclusive or exclusive."""
    inside_lo = m.lo is None or x > m.lo or (x == m.lo and not m.lo_excl)
    inside_hi = m.hi is None or x < m.hi or (x == m.hi and not m.hi_excl)
    return inside_lo and inside_hi


def _frac_dyadic(m: Merged) -> Found | None:
    """The first dyadic non-integer (halves, quarters, … up to 2**-39) just above the lower
    bound that lies in the interval and is not excluded."""
    for j in range(1, 40):
        d = 2**j
        base = m.lo if m.lo is not None else (m.hi - 1 if m.hi is not None else Fraction(0))
        x = Fraction(math.floor(base * d) + 1, d)
        if x.denominator == 1:
            x += Fraction(1, d)
        if _in_interval(m, x) and x.denominator != 1:
            value = _number_value(x)
            if _not_excluded(m, value):
                return Found(value)
    return None


def _frac_interval_empty(m: Merged) -> bool:
    """The interval holds no non-integer at all (a proof, not a failed search)."""
    return m.lo is not None and m.hi is not None and (
        m.lo > m.hi or (m.lo == m.hi and (m.lo_excl or m.hi_excl or m.lo.denominator == 1))
    )


def _build_frac(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    """A non-integer number in the interval (only reached when integers were ruled out)."""
    if m.mults:
        return _frac_multiple(m, budget)
    if m.lo is not None and m.lo == m.hi:
        return _frac_point(m, m.lo)
    found = _frac_at_lo(m)
    if found is None:
        found = _frac_dyadic(m)
    if found is not None:
        return found
    if _frac_interval_empty(m):
        return None
    raise Undecided("no exactly representable non-integer found")


_FORMAT_SAMPLES = {
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "00:00:00Z",
    "email": "a@example.com",
    "idn-email": "a@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com",
    "iri": "https://example.com",
    "uri-reference": "a",
    "iri-reference": "a",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "duration": "P1D",
    "json-pointer": "",
    "regex": "a",
}


def _length_fits(value: str, lo: int, hi: int | None) -> bool:
    """``lo`` <= len(value) <= ``hi`` (no upper bound when ``hi`` is None)."""
    return len(value) >= lo and (hi is None or len(value) <= hi)


def _string_candidates(m: Merged, lo: int, hi: int | None, budget: Budget) -> list[str]:
    """Candidate strings in order: format samples that fit the length, pattern examples,
    then plain letters of the smallest useful length."""
    candidates: list[str] = []
    for fmt in m.formats:
        sample = _FORMAT_SAMPLES.get(fmt)
        if sample is not None and lo <= len(sample) and (hi is None or len(sample) <= hi):
            candidates.append(sample)
    for pattern in m.patterns:
        candidates.extend(examples(pattern, lo, hi, budget.bounds.max_string))
    size = lo if lo > 0 or hi == 0 else 1
    candidates += ["a" * size, "b" * size, "a" * (size + 1), "c" * size]
    return candidates


def _build_string(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    """The first candidate string within the length bounds, not excluded, and (with
    patterns, which are relaxed) accepted by the exact validator."""
    lo, hi = m.min_len, m.max_len
    if hi is not None and lo > hi:
        return None
    if lo > budget.bounds.max_string:
        raise Undecided(f"witness string bound ({budget.bounds.max_string}) reached")
    candidates = _string_candidates(m, lo, hi, budget)
    for value in candidates:
        if _length_fits(value, lo, hi) and _not_excluded(m, value) \
                and (not m.patterns or _check_all(atoms, value)):
            return Found(value)
    if m.patterns:
        # Patterns are relaxed: candidates were proposed, the exact validator refused them all.
        raise Undecided("no candidate string satisfies the pattern(s) exactly")
    raise Undecided("no string candidate avoids the excluded values")


def _position_conj(arrays: list[Sub], i: int) -> tuple[list[Sub], str]:
    """Subschemas constraining array element ``i``, and a key for reusing solutions."""
    conj: list[Sub] = []
    key: list[str] = []
    for atom in arrays:
        s = atom.schema
        if atom.root.dialect == "2020-12":
            prefix = s.get("prefixItems")
            rest = s.get("items")
        else:
            items = s.get("items")
            prefix, rest = (items, s.get("additionalItems")) if isinstance(items, list) else (
                None, items)
        if isinstance(prefix, list) and i < len(prefix):
            conj.append(Sub(prefix[i], atom.root))
            key.append(f"{id(atom)}:{i}")
        elif rest is not None:
            conj.append(Sub(rest, atom.root))
            key.append(f"{id(atom)}:*")
    return conj, "|".join(key)


def _distinct(conj: list[Sub], taken: list[Any]) -> list[Sub]:
    """``conj`` plus "differs from every value in ``taken``" (exact: not-const is merged)."""
    if not taken:
        return conj
    return [*conj, Sub({"not": {"enum": list(taken)}}, _NEUTRAL_ROOT)]


def _build_array(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    """Smallest array: ``minItems`` elements, one of them satisfying every ``contains``.

    With ``uniqueItems`` each element must differ from the earlier ones. "No array" is
    claimed only where it is a proof: every position has the same schema (no tuple
    prefix), so failing to find a fresh element means too few distinct values exist, and
    failing to place the ``contains`` element means no element can satisfy it.
    """
    n = _array_length(m, budget)
    if n is None:
        return None
    uniform = all(
        not (isinstance(a.schema.get("prefixItems"), list) and a.root.dialect == "2020-12")
        and not isinstance(a.schema.get("items"), list) for a in m.arrays)
    solved: dict[str, Any] = {}
    out: list[Any] = []
    for i in range(n):
        found = _array_element(m, i, out, solved, budget, depth)
        if found is None:
            _no_element_is_proof(m, i, budget, depth, uniform)
            return None
        out.append(found.value)
    return Found(out)


def _no_element_is_proof(m: Merged, i: int, budget: Budget, depth: int, uniform: bool) -> None:
    """Element ``i`` could not be built: return only where that proves no array exists
    (else Undecided)."""
    if i == 0 and m.contains:
        _prove_no_contains_element(m, budget, depth, uniform)
        return
    if i > 0 and m.unique and not uniform:
        raise Undecided("no distinct array element found (uniqueItems)")
    # position i must exist and its schema is exact; under uniqueItems with one
    # schema for every position, the i values found are all there are


def _array_length(m: Merged, budget: Budget) -> int | None:
    """The smallest length to build (at least 1 with ``contains``), None when no array
    fits the item bounds."""
    n = m.min_items
    if m.max_items is not None and n > m.max_items:
        return None
    if m.contains and m.max_items == 0:
        return None
    n = max(n, 1) if m.contains else n
    if n > budget.bounds.max_witness_items:
        raise Undecided(f"witness array bound ({budget.bounds.max_witness_items}) reached")
    return n


def _array_element(m: Merged, i: int, out: list[Any], solved: dict[str, Any], budget: Budget,
                   depth: int) -> Found | None:
    """Element ``i`` (the first also satisfying every ``contains``), distinct from ``out``
    under ``uniqueItems``, else reused from an earlier position with the same schemas."""
    conj, key = _position_conj(m.arrays, i)
    if i == 0 and m.contains:
        conj, key = [*conj, *m.contains], key + "|contains"
    if m.unique:
        budget.tick(1 + len(out) // 16)  # the distinctness work grows with the array
        found = solve(_distinct(conj, out), budget, depth + 1)
    elif key in solved:
        found = Found(solved[key])
    else:
        found = solve(conj, budget, depth + 1)
    if found is not None:
        solved[key] = found.value
    return found


def _prove_no_contains_element(m: Merged, budget: Budget, depth: int, uniform: bool) -> None:
    """The first element cannot satisfy every ``contains`` at once: return only if provably
    no array can (else Undecided).

    Proof: all positions share one schema R and some ``contains`` schema C has no value in
    R (so no element anywhere can satisfy C).
    """
    if uniform:
        rest, _ = _position_conj(m.arrays, 0)
        for c in m.contains:
            if solve([*rest, c], budget, depth + 1) is None:
                return
    raise Undecided("contains: elements for several contains schemas not constructed")


@dataclass
class _Shape:
    """One object-shaping atom: listed names, patterns, the rest, and allowed names."""

    root: SchemaRoot
    listed: set[str]
    additional: Any
    patterns: dict[str, Any]
    names: Any  # propertyNames schema (True = any name)


def _object_parts(objects: list[Sub]) -> tuple[dict[str, list[Sub]], list[_Shape]]:
    props: dict[str, list[Sub]] = {}
    shapes: list[_Shape] = []
    for atom in objects:
        s = atom.schema
        own = s.get("properties", {})
        patterns = s.get("patternProperties", {})
        if not isinstance(own, dict) or not isinstance(patterns, dict):
            raise Undecided("properties/patternProperties is not an object")
        for name, sub in own.items():
            props.setdefault(name, []).append(Sub(sub, atom.root))
        shapes.append(_Shape(atom.root, set(own), s.get("additionalProperties", True),
                             patterns, s.get("propertyNames", True)))
    return props, shapes


def _matches(pattern: Any, name: str) -> bool:
    """Exact ``patternProperties`` match, or Undecided outside the trusted regex subset."""
    if not isinstance(pattern, str) or not ecma_safe(pattern):
        raise Undecided(f"pattern {str(pattern)[:60]!r} is outside the ECMA-safe subset")
    if not printable_ascii(name):
        raise Undecided("a property name is not printable ASCII (regex semantics differ)")
    return search(pattern, name)


def _name_conj(name: str, props: dict[str, list[Sub]], shapes: list[_Shape]) -> list[Sub]:
    """Exact constraints on the value of property ``name``."""
    conj = list(props.get(name, []))
    for shape in shapes:
        hits = [Sub(sub, shape.root) for pat, sub in shape.patterns.items()
                if _matches(pat, name)]
        conj.extend(hits)
        if name not in shape.listed and not hits and shape.additional is not True:
            conj.append(Sub(shape.additional, shape.root))
    return conj


def _name_allowed(name: str, shapes: list[_Shape]) -> bool:
    """Exact ``propertyNames`` check of one name."""
    return all(shape.names is True or _check(Sub(shape.names, shape.root), name)
               for shape in shapes)


def _fresh_names(
    props: dict[str, list[Sub]], shapes: list[_Shape], taken: dict[str, Any], needed: int,
    budget: Budget, depth: int,
) -> list[str]:
    """Up to ``needed`` unlisted names that match no pattern and satisfy ``propertyNames``."""
    candidates = [f"x{i}" for i in range(64)]
    candidates = _solved_names(props, shapes, taken, candidates, needed, budget,
                               depth) + candidates
    out: list[str] = []
    for name in candidates:
        budget.tick()
        if name in props or name in taken or name in out:
            continue
        if _unlisted_allowed(name, shapes):
            out.append(name)
            if len(out) >= needed:
                break
    return out


def _unlisted_allowed(name: str, shapes: list[_Shape]) -> bool:
    """A name no pattern matches and every ``propertyNames`` allows."""
    if any(_matches(p, name) for shape in shapes for p in shape.patterns):
        return False
    return _name_allowed(name, shapes)


def _required_props(m: Merged, props: dict[str, list[Sub]], shapes: list[_Shape],
                    budget: Budget, depth: int) -> dict[str, Any] | None:
    """Step 1 of :func:`_build_object`: a value for every required name, or None when one
    has none (or ``propertyNames`` forbids it)."""
    out: dict[str, Any] = {}
    for name in m.required:
        if not _name_allowed(name, shapes):
            return None  # a required name that propertyNames forbids
        found = solve(_name_conj(name, props, shapes), budget, depth + 1)
        if found is None:
            return None
        out[name] = found.value
    return out


def _listed_props(m: Merged, props: dict[str, list[Sub]], shapes: list[_Shape],
                  out: dict[str, Any], budget: Budget, depth: int) -> Undecided | None:
    """Step 2 of :func:`_build_object`: add listed optional names (sorted) to ``out`` until
    ``minProperties`` is met; the first name left undecided, if any."""
    undecided: Undecided | None = None
    for name in sorted(props):
        if name in out:
            continue
        try:
            if not _name_allowed(name, shapes):
                continue
            found = solve(_name_conj(name, props, shapes), budget, depth + 1)
        except Undecided as exc:
            undecided = undecided or exc
            continue
        if found is not None:
            out[name] = found.value
            if len(out) >= m.min_props:
                break
    return undecided


def _fresh_props(m: Merged, props: dict[str, list[Sub]], shapes: list[_Shape],
                 out: dict[str, Any], undecided: Undecided | None, budget: Budget,
                 depth: int) -> Found | None:
    """Step 3 of :func:`_build_object`: fill the rest of ``minProperties`` with unlisted
    names sharing one value; None only where that is a proof."""
    try:
        names = _fresh_names(props, shapes, out, m.min_props - len(out), budget, depth)
        if not names:
            raise Undecided("no unlisted property name satisfies propertyNames")
        fresh = solve(_name_conj(names[0], props, shapes), budget, depth + 1)
    except Undecided as exc:
        raise undecided or exc from None
    if fresh is None:
        if undecided is not None:
            raise undecided
        if any(shape.patterns for shape in shapes):
            raise Undecided("patternProperties: names matching a pattern were not tried")
        return None  # only listed names are allowed, and too few of them can be present
    if len(out) + len(names) < m.min_props:
        raise Undecided("not enough unlisted property names satisfy propertyNames")
    for name in names:
        out[name] = fresh.value
    return Found(out)


def _solved_names(
    props: dict[str, list[Sub]], shapes: list[_Shape], taken: dict[str, Any],
    candidates: list[str], needed: int, budget: Budget, depth: int,
) -> list[str]:
    """Up to ``needed`` fresh names the ``propertyNames`` schemas accept, solved one by one
    (each avoiding the listed, taken, plain and earlier ones); fewer when solving stops."""
    name_schemas = [Sub(shape.names, shape.root) for shape in shapes if shape.names is not True]
    solved: list[str] = []
    while name_schemas and len(solved) < needed:
        avoid = sorted({*props, *taken, *candidates, *solved})
        conj = [*name_schemas, Sub({"type": "string", "not": {"enum": avoid}}, _NEUTRAL_ROOT)]
        try:
            found = solve(conj, budget, depth + 1)
        except Undecided:
            break
        if found is None or not isinstance(found.value, str):
            break
        solved.append(found.value)
    return solved


def _build_object(m: Merged, atoms: list[Sub], budget: Budget, depth: int) -> Found | None:
    """Smallest object: the required names, then listed names, then unlisted ones until
    ``minProperties`` is met."""
    if m.max_props is not None and (
        len(m.required) > m.max_props or m.min_props > m.max_props
    ):
        return None
    if len(m.required) > budget.bounds.max_witness_items:
        raise Undecided(f"witness object bound ({budget.bounds.max_witness_items}) reached")
    props, shapes = _object_parts(m.objects)
    out = _required_props(m, props, shapes, budget, depth)
    if out is None:
        return None
    if len(out) >= m.min_props:
        return Found(out)
    if m.min_props > budget.bounds.max_witness_items:
        raise Undecided(f"witness object bound ({budget.bounds.max_witness_items}) reached")
    undecided = _listed_props(m, props, shapes, out, budget, depth)
    if len(out) >= m.min_props:
        return Found(out)
    return _fresh_props(m, props, shapes, out, undecided, budget, depth)


_BUILDERS = {
    "object": _build_object,
    "null": _build_null,
    "boolean": _build_boolean,
    "int": _build_int,
    "frac": _build_frac,
    "string": _build_string,
    "array": _build_array,
}
