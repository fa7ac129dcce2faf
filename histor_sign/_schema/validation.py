"""One JSON Schema validation stack for scan, replay and the guard.

Everything that decides "does this instance satisfy this schema" is built here, so the three
commands agree on dialects, numbers, patterns and formats:

* **Dialects** (:data:`DIALECTS`): a root's ``$schema`` picks the dialect, no ``$schema``
  means 2020-12, any other URI is refused. Scan and replay analyse only
  :data:`ANALYSED_DIALECTS` (the schema algebra models their keyword semantics); the guard
  validates every dialect in :data:`DIALECTS`, exactly the set ``jsonschema-rs`` supports.
* **Numbers**: ``multipleOf`` is decided with exact rationals (a JSON number is a decimal;
  ``jsonschema`` alone divides floats and calls 0.3 no multiple of 0.1).
* **Patterns**: Python ``re`` is not ECMA-262. The *exact* validator (scan, replay) raises
  :class:`Untrusted` when a result depends on a regex outside
  :mod:`histor_sign._schema.regex_subset` or on a subject that is not printable ASCII, so the
  caller says ``unknown``. The guard refuses a schema with a pattern outside the subset
  (:data:`SCHEMA_PATTERN_UNSUPPORTED`): its fast engine (``jsonschema-rs``) then matches
  ECMA-262 in linear time (no lookaround or backreference reaches its backtracking VM); its
  pure-Python reference engine uses the same guard as scan and answers
  :data:`PATTERN_UNDECIDABLE` where scan would say ``unknown``. Every validator here,
  ``jsonschema`` judges included, matches in linear time where that gives Python ``re``'s
  answer (:func:`regex_search`): the regex keywords are this module's own, on
  ``jsonschema``'s public API, and nothing in ``jsonschema`` is patched.
* **Formats**: an annotation for scan and replay (their answer must not depend on optional
  format checkers); asserted by the guard, which must be strict.
* **References and limits**: remote ``$ref``s are never fetched; unresolvable references,
  recursion blow-ups and schemas larger than :data:`MAX_SCHEMA_NODES` make the exact
  validator raise :class:`Untrusted` and the guard's validator raise :class:`SchemaProblem`.

``jsonschema`` and ``jsonschema_rs`` are imported lazily so that ``histor-sign --help``
stays fast.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from histor_sign._schema.regex_subset import ecma_safe, printable_ascii, search
from histor_sign.canonical import pointer

#: Dialect names by meta-schema URI (trailing ``#`` ignored). No ``$schema`` = 2020-12.
DIALECTS: dict[str, str] = {
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
    "https://json-schema.org/draft/2019-09/schema": "2019-09",
    "http://json-schema.org/draft-07/schema": "draft-07",
    "https://json-schema.org/draft-07/schema": "draft-07",
    "http://json-schema.org/draft-06/schema": "draft-06",
    "https://json-schema.org/draft-06/schema": "draft-06",
    "http://json-schema.org/draft-04/schema": "draft-04",
    "https://json-schema.org/draft-04/schema": "draft-04",
}
DEFAULT_DIALECT = "2020-12"
#: The dialects whose keyword semantics the schema algebra (scan, replay) models.
ANALYSED_DIALECTS = frozenset({"2020-12", "2019-09", "draft-07", "draft-06"})
#: Keywords that never constrain an instance for scan and replay: annotations, structure,
#: and ``format`` (an annotation under this stack's format policy). A schema made only of
#: these accepts everything; the schema algebra drops them wherever it reasons about keys.
NO_CONSTRAINT_KEYWORDS = frozenset({
    "title", "description", "$comment", "examples", "default", "deprecated", "readOnly",
    "writeOnly", "$schema", "$defs", "definitions", "$anchor", "contentMediaType",
    "contentEncoding", "contentSchema", "format", "$vocabulary",
})
#: Dialects whose ``$ref`` ignores its sibling keywords.
LEGACY_REF_DIALECTS = frozenset({"draft-07", "draft-06", "draft-04"})


class Untrusted(Exception):
    """The validator's answer cannot be trusted (or there is no answer): say unknown."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def json_type(value: Any) -> str:
    """JSON type name of a value (never the value itself); ``1.0`` is an integer."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def dialect_of(schema: Any, supported: frozenset[str] = ANALYSED_DIALECTS) -> str:
    """The dialect a root schema declares, or :class:`Untrusted` if not in ``supported``."""
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DEFAULT_DIALECT
    uri = schema["$schema"]
    if not isinstance(uri, str):
        raise Untrusted("$schema is not a string")
    dialect = DIALECTS.get(uri.rstrip("#"))
    if dialect is None or dialect not in supported:
        raise Untrusted(f"unsupported dialect $schema {uri[:80]!r}")
    return dialect


def float_multiple_judges(value: Any, divisors: list[Any]) -> bool:
    """True when ``jsonschema`` as published (float division) and ``jsonschema-rs`` both call
    ``value`` a multiple of every divisor.

    The exact validator decides ``multipleOf`` in rationals, where 0.3 is a multiple of 0.1;
    float division says 2.9999999999999996. A witness must satisfy every validator a
    user may run, so the solver keeps only values all of them accept.
    """
    return all(_judged_multiple(type(value).__name__, value, type(d).__name__, d)
               for d in divisors)


@lru_cache(maxsize=4096)
def _judged_multiple(_vt: str, value: Any, _dt: str, divisor: Any) -> bool:
    # the types are part of the cache key: 1 == 1.0 == True would share an entry otherwise
    import jsonschema

    schema = {"multipleOf": divisor}
    if not jsonschema.Draft202012Validator(schema).is_valid(value):
        return False
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - a declared dependency
        return True
    return bool(jsonschema_rs.validator_for(schema).is_valid(value))


# --- the extended validator classes ---------------------------------------------------
#
# Built on jsonschema's public API only: ``validators.extend`` over a published class, the
# originals read from its ``VALIDATORS`` mapping, ``descend``, ``evolve``, ``is_type`` and
# ``ValidationError``. Nothing in jsonschema is patched: the keywords that match regexes
# (``pattern``, ``patternProperties``, ``additionalProperties``, ``unevaluatedProperties``)
# are this module's own, written to give jsonschema's answers (and messages) with
# :func:`regex_search` in place of ``re.search``.

_CURRENT: contextvars.ContextVar[SchemaRoot | None] = contextvars.ContextVar(
    "histor_current_root", default=None
)
_CLASSES: dict[tuple[str, str], Any] = {}
#: Dialects with ``unevaluatedProperties`` (their keywords are wrapped for :func:`_target`).
_UNEVALUATED_DIALECTS = frozenset({"2020-12", "2019-09"})


def regex_search(pattern: Any, subject: Any) -> bool:
    """``re.search(pattern, subject) is not None``, in linear time wherever that is exact.

    An ECMA-safe pattern on a printable ASCII subject runs on RE2 (there RE2, Python ``re``
    and ECMA-262 agree, see :mod:`histor_sign._schema.regex_subset`); anything else goes to
    Python ``re`` unchanged, so an answer never differs from ``re``'s, only its cost.
    """
    if (isinstance(pattern, str) and isinstance(subject, str) and printable_ascii(subject)
            and ecma_safe(pattern)):
        return search(pattern, subject)
    return re.search(pattern, subject) is not None


def _search_joined(patterns: Any, subject: Any) -> bool:
    """jsonschema's ``additionalProperties`` test: ``re.search("|".join(patterns), subject)``.

    The joined pattern is the union of its parts (the subset has no backreference or inline
    flag), so when every part is ECMA-safe each runs on RE2 on its own: the union of two
    safe patterns may be too long, or too large a program, to be safe itself.
    """
    if (isinstance(subject, str) and printable_ascii(subject)
            and all(isinstance(p, str) and ecma_safe(p) for p in patterns)):
        return any(search(p, subject) for p in patterns)
    return re.search("|".join(patterns), subject) is not None


def _extras_msg(extras: Any) -> tuple[str, str]:
    verb = "was" if len(extras) == 1 else "were"
    return ", ".join(repr(extra) for extra in extras), verb


def _is_valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def _without_dialect(schema: Any) -> Any:
    """The root to validate with: ``schema`` without its top-level ``$schema``.

    ``jsonschema`` picks a validator class from a ``$schema`` wherever it enters a schema,
    so a ``$ref`` to the root (``"#"``) would leave this module's class for the published
    one of the same dialect (no regex guard, float ``multipleOf``, backtracking ``re``).
    The dialect was already chosen from ``$schema``; the copy shares every subschema.
    """
    if isinstance(schema, dict) and "$schema" in schema:
        return {key: value for key, value in schema.items() if key != "$schema"}
    return schema


class _Captured(BaseException):
    """Raised by the first keyword run under a probe: the validator and schema it ran on.

    Control flow, not an error: a ``BaseException`` so no ``except Exception`` on the way
    (a format checker's, say) can take it for a failure."""

    def __init__(self, validator: Any, schema: Any) -> None:
        super().__init__()
        self.validator = validator
        self.schema = schema


class _Foreign(BaseException):
    """A reference led to a schema validated by another class (a published meta-schema)."""


class _ProbeInstance:
    """What a probe validates: no JSON value, and the first type test on it (``isinstance``
    reads ``__class__``) raises :class:`_Foreign`. A keyword of this module's classes never
    gets that far (it raises :class:`_Captured` first); one of another class stops there,
    before validating anything else."""

    def _stop(self) -> type:
        raise _Foreign

    __class__ = property(_stop)


#: Set while :func:`_target` probes a reference; every keyword then raises :class:`_Captured`.
_PROBE: contextvars.ContextVar[bool] = contextvars.ContextVar("histor_probe", default=False)
_PROBE_INSTANCE = _ProbeInstance()


def _capturing(keyword: Any) -> Any:
    """``keyword`` that, under a probe, reports where it runs instead of running (None: a
    keyword the dialect ignores, present only to report)."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if _PROBE.get():
            raise _Captured(validator, schema)
        return () if keyword is None else keyword(validator, value, instance, schema)

    run.__name__ = getattr(keyword, "__name__", "keyword")
    run.__doc__ = getattr(keyword, "__doc__", None)
    return run


def _target(reference: Any, validator: Any, value: Any, schema: Any) -> tuple[Any, Any] | None:
    """Where a reference keyword (``$ref``, ``$dynamicRef``, ``$recursiveRef``) leads:
    ``(validator, schema)`` as jsonschema descends into it, or None for a target that
    evaluates nothing (a boolean, or no keyword at all).

    The published keyword resolves the reference and descends into its target; the first
    keyword run there raises :class:`_Captured` with the validator jsonschema built for it
    (resolver and dynamic scope included) — all without reading anything private.
    :class:`_Foreign` when the target is run by another class (a published meta-schema,
    whose keywords cannot report).
    """
    from referencing.exceptions import Unresolvable

    token = _PROBE.set(True)
    try:
        first = next(iter(reference(validator, value, _PROBE_INSTANCE, schema) or ()), None)
    except _Captured as found:
        return found.validator, found.schema
    except Unresolvable as exc:
        # jsonschema's own evaluated-keys walk raises the resolver's error unwrapped
        cause = exc.__cause__
        raise (cause if isinstance(cause, Unresolvable) else exc) from None
    finally:
        _PROBE.reset(token)
    if first is None or (first.schema is False and not first.relative_schema_path):
        return None  # the target is true, false, or has no keyword
    raise _Foreign


def _regex_keywords(base: Any, dialect: str, guard: bool) -> dict[str, Any]:
    """``pattern``, ``patternProperties``, ``additionalProperties`` and (2019-09, 2020-12)
    ``unevaluatedProperties``: jsonschema's semantics and messages, regexes through
    :func:`regex_search`; with ``guard``, :class:`Untrusted` first wherever Python ``re``
    might disagree with ECMA-262 (a pattern outside the subset, a subject outside printable
    ASCII)."""
    from jsonschema import ValidationError

    # The evaluated-keys walk of unevaluatedProperties: each dialect's own, except under the
    # guard, which has always run the 2020-12 keyword on 2019-09 too (kept: same answers).
    walk = "2020-12" if guard else dialect

    def _guard(patterns: Any, subjects: Any) -> None:
        if not guard:
            return
        for found in patterns:
            if not isinstance(found, str) or not ecma_safe(found):
                raise Untrusted(f"pattern {str(found)[:60]!r} is outside the ECMA-safe subset")
        for subject in subjects:
            if not printable_ascii(subject):
                raise Untrusted("a regex is matched against a non-ASCII or control string")

    def pattern(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string"):
            _guard([value], [instance])
            if not regex_search(value, instance):
                yield ValidationError(f"{instance!r} does not match {value!r}")

    def pattern_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        if instance:
            _guard(value, instance)
        for regex, subschema in value.items():
            for key, item in instance.items():
                if regex_search(regex, key):
                    yield from validator.descend(item, subschema, path=key, schema_path=regex)

    def additional_properties(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        if instance and "patternProperties" in schema:
            _guard(schema["patternProperties"], instance)
        extras = set(_additional(instance, schema))
        if validator.is_type(value, "object"):
            for extra in extras:
                yield from validator.descend(instance[extra], value, path=extra)
        elif not value and extras:
            yield ValidationError(_no_additional_message(extras, schema))

    def _additional(instance: Any, schema: Any) -> Iterator[Any]:
        properties = schema.get("properties", {})
        regexes = list(schema.get("patternProperties", {}))
        joined = "|".join(regexes)  # jsonschema skips an empty union: {"": ...} included
        for key in instance:
            if key not in properties:
                if joined and _search_joined(regexes, key):
                    continue
                yield key

    keywords = {
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
    }
    if dialect not in _UNEVALUATED_DIALECTS:
        return keywords

    def through(reference: str, validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        found = _target(_published(walk).VALIDATORS[reference], validator, value, schema)
        return [] if found is None else evaluated(found[0], instance, found[1])

    def evaluated(validator: Any, instance: Any, schema: Any) -> list[Any]:
        """The keys jsonschema counts as evaluated (``find_evaluated_property_keys_by_schema``
        of its 2020-12 or 2019-09 keyword, per ``walk``), patterns matched by
        :func:`regex_search`."""
        if validator.is_type(schema, "boolean"):
            return []
        keys: list[Any] = []
        ref = schema.get("$ref")
        if ref is not None:
            keys.extend(through("$ref", validator, ref, instance, schema))
        if walk == "2020-12":
            keys += own_2020(validator, instance, schema)
        else:
            keys += own_2019(validator, instance, schema)
        keys += by_pattern(instance, schema)
        keys += by_subschemas(validator, instance, schema)
        keys += by_condition(validator, instance, schema)
        return keys

    def own_2020(validator: Any, instance: Any, schema: Any) -> list[Any]:
        """2020-12: through ``$dynamicRef``, then the listed properties present, then the
        members additional/unevaluated properties accept."""
        keys: list[Any] = []
        dynamic = schema.get("$dynamicRef")
        if dynamic is not None:
            keys.extend(through("$dynamicRef", validator, dynamic, instance, schema))
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            keys += properties.keys() & instance.keys()
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if (subschema := schema.get(keyword)) is None:
                continue
            keys += (key for key, item in instance.items()
                     if _is_valid(validator.descend(item, subschema)))
        return keys

    def own_2019(validator: Any, instance: Any, schema: Any) -> list[Any]:
        """2019-09: through ``$recursiveRef``, then every member under a ``true`` properties
        keyword, or the present members an object one lists."""
        keys: list[Any] = []
        if "$recursiveRef" in schema:
            keys.extend(through("$recursiveRef", validator, schema["$recursiveRef"],
                                instance, schema))
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            if keyword in schema:
                value = schema[keyword]
                if validator.is_type(value, "boolean") and value:
                    keys += instance.keys()
                elif validator.is_type(value, "object"):
                    keys += (key for key in value if key in instance)
        return keys

    def by_pattern(instance: Any, schema: Any) -> list[Any]:
        """Each member once per ``patternProperties`` regex that matches its name."""
        keys: list[Any] = []
        if "patternProperties" in schema:
            for key in instance:
                for regex in schema["patternProperties"]:
                    if regex_search(regex, key):
                        keys.append(key)
        return keys

    def by_subschemas(validator: Any, instance: Any, schema: Any) -> list[Any]:
        """What the ``dependentSchemas`` of present members, and the valid ``allOf``,
        ``oneOf`` and ``anyOf`` branches, evaluate."""
        keys: list[Any] = []
        if "dependentSchemas" in schema:
            for key, subschema in schema["dependentSchemas"].items():
                if key in instance:
                    keys += evaluated(validator, instance, subschema)
        for keyword in ("allOf", "oneOf", "anyOf"):
            for subschema in schema.get(keyword, []):
                if _is_valid(validator.descend(instance, subschema)):
                    keys += evaluated(validator, instance, subschema)
        return keys

    def by_condition(validator: Any, instance: Any, schema: Any) -> list[Any]:
        """What ``if`` and ``then`` evaluate when ``if`` holds, else what ``else`` does."""
        if "if" not in schema:
            return []
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys = evaluated(validator, instance, schema["if"])
            if "then" in schema:
                keys += evaluated(validator, instance, schema["then"])
            return keys
        if "else" in schema:
            return evaluated(validator, instance, schema["else"])
        return []

    def unevaluated_properties(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        root = _CURRENT.get()
        if instance and root is not None and root.patterns:
            _guard(root.patterns, instance)
        try:
            done = evaluated(validator, instance, schema)
        except _Foreign:
            # through a published meta-schema: jsonschema's own keyword, Python re
            original = _published(walk).VALIDATORS["unevaluatedProperties"]
            yield from original(validator, value, instance, schema)
            return
        unevaluated = []
        for key in instance:
            if key not in done:
                for _ in validator.descend(instance[key], value, path=key, schema_path=key):
                    unevaluated.append(key)  # once per error, as jsonschema counts them
        if unevaluated:
            yield ValidationError(_unevaluated_message(unevaluated, value))

    keywords["unevaluatedProperties"] = unevaluated_properties
    return keywords


def _no_additional_message(extras: set[Any], schema: Any) -> str:
    """jsonschema's message for members ``additionalProperties: false`` refuses."""
    if "patternProperties" in schema:
        verb = "does" if len(extras) == 1 else "do"
        joined = ", ".join(repr(each) for each in sorted(extras))
        regexes = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
        return f"{joined} {verb} not match any of the regexes: {regexes}"
    error = "Additional properties are not allowed (%s %s unexpected)"
    return error % _extras_msg(sorted(extras, key=str))


def _unevaluated_message(unevaluated: list[Any], value: Any) -> str:
    """jsonschema's message for members ``unevaluatedProperties`` refuses."""
    if value is False:
        error = "Unevaluated properties are not allowed (%s %s unexpected)"
        return error % _extras_msg(sorted(unevaluated, key=str))
    error = ("Unevaluated properties are not valid under the given schema "
             "(%s %s unevaluated and invalid)")
    return error % _extras_msg(unevaluated)


def _as_fraction(number: Any) -> Fraction:
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``multipleOf`` in exact rationals (a JSON number is a decimal)."""
    from jsonschema import ValidationError

    if not validator.is_type(instance, "number"):
        return
    if (_as_fraction(instance) / _as_fraction(divisor)).denominator != 1:
        yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")


def _published(dialect: str) -> Any:
    import jsonschema

    return {
        "2020-12": jsonschema.Draft202012Validator,
        "2019-09": jsonschema.Draft201909Validator,
        "draft-07": jsonschema.Draft7Validator,
        "draft-06": jsonschema.Draft6Validator,
        "draft-04": jsonschema.Draft4Validator,
    }[dialect]


def _extended(dialect: str, kind: str) -> Any:
    """The class of one kind: ``"guarded"`` and ``"exact"`` (exact ``multipleOf``, with and
    without the regex guard) or ``"plain"`` (jsonschema's own ``multipleOf``)."""
    cls = _CLASSES.get((dialect, kind))
    if cls is None:
        from jsonschema import validators

        base = _published(dialect)
        keywords = dict(base.VALIDATORS)
        keywords.update(_regex_keywords(base, dialect, guard=kind == "guarded"))
        if kind != "plain":
            keywords["multipleOf"] = _multiple_of
        if dialect in _UNEVALUATED_DIALECTS:
            # a probe must stop at every target the evaluated-keys walk reads: the guarded
            # 2019-09 class walks as 2020-12 (see _regex_keywords), which follows $dynamicRef
            if kind == "guarded":
                keywords.setdefault("$dynamicRef", None)
            keywords = {name: _capturing(keyword) for name, keyword in keywords.items()}
        cls = validators.extend(base, keywords)
        _CLASSES[(dialect, kind)] = cls
    return cls


def local_registry() -> Any:
    """The only documents a ``$ref`` may reach besides the schema itself: the published
    meta-schemas (bundled with ``jsonschema``). jsonschema's default registry *fetches*
    remote ``$ref`` URLs; a schema from an untrusted server must never make us send a
    request (to a local service, say), so an unknown URL stays unresolvable."""
    from jsonschema_specifications import REGISTRY

    return REGISTRY


def plain_class(dialect: str) -> Any:
    """A validator factory with ``jsonschema``'s own answers for a dialect ("``jsonschema``
    as published": float ``multipleOf``, Python ``re`` meaning, no regex guard).

    Regexes run on RE2 where that gives Python ``re``'s answer (:func:`regex_search`), so a
    judge is as linear as the exact validator; call it with a root schema.
    """
    cls = _extended(dialect, "plain")

    def build(schema: Any, **options: Any) -> Any:
        options.setdefault("registry", local_registry())
        return cls(_without_dialect(schema), **options)

    return build


def validator_class(dialect: str, *, guard_regex: bool = True) -> Any:
    """The validator class for a dialect (created once per dialect and regex policy).

    ``guard_regex`` (scan, replay) raises :class:`Untrusted` where Python ``re`` might
    disagree with ECMA-262; without it patterns are matched with Python ``re``'s answers.
    Instantiate it with :func:`_without_dialect` of the root (see there).
    """
    return _extended(dialect, "guarded" if guard_regex else "exact")


def pattern_sites(schema: Any) -> Iterator[tuple[list[str | int], str]]:
    """Every regex in ``schema`` with the path to it: a ``pattern`` string (path ends in
    ``"pattern"``) or a ``patternProperties`` key (path ends in that key).

    Anywhere in the document, not only in schema positions (a ``pattern`` key inside a
    ``const`` counts too): the guard refuses a schema on any of these, and the release lint
    reports the same set, so both read it from here.
    """
    # (node, (parent link, key) or None); only containers are pushed, paths built on demand.
    stack: list[tuple[Any, Any]] = [(schema, None)] if isinstance(schema, (dict, list)) else []
    while stack:
        node, link = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    yield _path(link, key), value
                elif key == "patternProperties" and isinstance(value, dict):
                    for name in value:
                        yield _path((link, key), name), name
                if isinstance(value, (dict, list)):
                    stack.append((value, (link, key)))
        else:
            stack.extend((item, (link, i)) for i, item in enumerate(node)
                         if isinstance(item, (dict, list)))


def _path(link: Any, last: str | int) -> list[str | int]:
    parts: list[str | int] = [last]
    while link is not None:
        link, key = link
        parts.append(key)
    parts.reverse()
    return parts


def _collect_patterns(schema: Any) -> list[str]:
    return [found for _path_, found in pattern_sites(schema)]


@dataclass(eq=False)
class SchemaRoot:
    """One tool's input schema, prepared once: dialect, meta-validation, validator."""

    schema: Any
    label: str = ""
    dialect: str = DEFAULT_DIALECT
    problem: str | None = None  # why this schema cannot be analysed at all
    patterns: list[str] = field(default_factory=list)
    _validator: Any = None
    _judges: list[tuple[str, Any]] | None = None
    _fast: Any = None  # jsonschema-rs where it is exact (rs_exact), else False; None: not built

    def fast_accepts(self, value: Any) -> bool:
        """True only when ``jsonschema-rs`` accepts ``value`` *and* this schema is in the
        class where its verdict is provably that of the exact validator and of
        ``jsonschema`` as published (:func:`rs_exact`); False means "ask them" — never a
        rejection. The witness re-check uses it to skip the two pure-Python validators."""
        if self._fast is None:
            self._fast = False
            if self.problem is None and rs_exact(self.schema):
                try:
                    import jsonschema_rs

                    self._fast = jsonschema_rs.validator_for(
                        self.schema, validate_formats=False, retriever=_refuse_remote)
                except Exception:
                    self._fast = False
        if self._fast is False:
            return False
        try:
            return bool(self._fast.is_valid(value))
        except Exception:
            return False

    @property
    def usable(self) -> bool:
        return self.problem is None

    def validator(self) -> Any:
        if self._validator is None:
            self._validator = validator_class(self.dialect)(
                _without_dialect(self.schema), registry=local_registry())
        return self._validator

    def judges_reject(self, value: Any) -> str | None:
        """The first independent validator that rejects ``value``, or None.

        The judges are ``jsonschema`` as published (Python ``re``, float ``multipleOf``) and
        ``jsonschema-rs`` (ECMA-262 regexes), both without format assertion — this stack's
        format policy. A witness is reported only when every judge and :meth:`accepts`
        agree, so a user re-checking it with any of them sees it validate.
        """
        if self._judges is None:
            self._judges = [("jsonschema", plain_class(self.dialect)(self.schema))]
            try:
                import jsonschema_rs

                rs: Any = jsonschema_rs.validator_for(
                    self.schema, validate_formats=False, retriever=_refuse_remote)
            except ImportError:  # pragma: no cover - a declared dependency
                rs = True
            except Exception:  # e.g. a remote $ref it cannot resolve up front
                rs = None
            if rs is not True:
                self._judges.append(("jsonschema-rs", rs))
        for name, judge in self._judges:
            try:
                if judge is None or not judge.is_valid(value):
                    return name
            except Exception:
                return name
        return None

    def accepts(self, value: Any, sub: Any = None) -> bool:
        """Exact validity of ``value`` against the root (or a subschema of it)."""
        if self.problem is not None:
            raise Untrusted(self.problem)
        validator = self.validator()
        if sub is not None and sub is not self.schema:
            validator = validator.evolve(schema=sub)
        token = _CURRENT.set(self)
        try:
            return bool(validator.is_valid(value))
        except Untrusted:
            raise
        except RecursionError:
            raise Untrusted("validation recursed too deeply") from None
        except Exception as exc:  # referencing.Unresolvable and friends
            raise Untrusted(f"validation failed: {type(exc).__name__}") from None
        finally:
            _CURRENT.reset(token)


#: Draft 2020-12 keywords on which ``jsonschema-rs``, ``jsonschema`` as published and the exact
#: validator give the same verdict (formats not asserted by any of them): no regex
#: (``pattern``, ``patternProperties``: ECMA-262 vs Python ``re``), no ``multipleOf`` (float
#: vs exact division), no ``content*`` (asserted by some engines), no ``unevaluated*``,
#: ``minContains``/``maxContains``, ``$id``/anchors/dynamic references, no ``$schema`` below
#: the root. Equality is tested on every draft2020-12 test of the official suite.
_RS_EXACT_KEYWORDS = frozenset({
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "prefixItems", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "allOf", "anyOf", "oneOf", "not", "if", "then",
    "else", "$ref", "$defs", "definitions", "minProperties", "maxProperties",
    "dependentRequired", "dependentSchemas", "contains", "uniqueItems", "propertyNames",
    "title", "description", "default", "examples", "$comment", "format", "deprecated",
    "readOnly", "writeOnly",
})
#: Every keyword some dialect gives a meaning; a keyword outside this set is ignored by every
#: engine (an unknown keyword), one inside it but not in :data:`_RS_EXACT_KEYWORDS` is not.
_KNOWN_KEYWORDS = _RS_EXACT_KEYWORDS | frozenset({
    "pattern", "patternProperties", "multipleOf", "contentEncoding", "contentMediaType",
    "contentSchema", "unevaluatedProperties", "unevaluatedItems", "minContains", "maxContains",
    "$id", "id", "$anchor", "$dynamicRef", "$dynamicAnchor", "$recursiveRef",
    "$recursiveAnchor", "$vocabulary", "$schema", "additionalItems", "dependencies",
})
_SUBSCHEMA = frozenset({"additionalProperties", "items", "not", "if", "then", "else",
                        "contains", "propertyNames"})
_SUBSCHEMA_LISTS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
_SUBSCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})


def rs_exact(schema: Any) -> bool:
    """True when ``schema`` (a Draft 2020-12 root) uses only keywords on which
    ``jsonschema-rs`` gives the verdict of the exact validator and of ``jsonschema`` as
    published (:data:`_RS_EXACT_KEYWORDS`; unknown keywords, ignored by all, are allowed),
    and its every ``$ref`` is a local JSON pointer to one of the subschemas walked.
    Conservative: anything else is False, and the caller asks the Python validators."""
    try:
        if not isinstance(schema, dict) or dialect_of(schema) != "2020-12":
            return False
    except Untrusted:
        return False
    walked: set[int] = set()
    refs: list[str] = []
    if not _rs_walk(schema, walked, refs):
        return False
    return all(_rs_ref_walked(schema, ref, walked) for ref in refs)


def _rs_walk(schema: dict[str, Any], walked: set[int], refs: list[str]) -> bool:
    """Step 1 of :func:`rs_exact`: walk every subschema once (ids into ``walked``, ``$ref``
    strings into ``refs``); False at the first node or keyword outside the exact class."""
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            return False
        if id(node) in walked:
            continue
        walked.add(id(node))
        for key, value in node.items():
            if key == "$schema" and node is schema:
                continue
            if key in _KNOWN_KEYWORDS and not _rs_keyword(key, value, stack, refs):
                return False
    return True


def _rs_keyword(key: str, value: Any, stack: list[Any], refs: list[str]) -> bool:
    """One known keyword of :func:`_rs_walk`: False when it is outside the exact class or
    malformed; else its subschemas go on ``stack`` (its ``$ref`` into ``refs``)."""
    if key not in _RS_EXACT_KEYWORDS:
        return False
    if key == "$ref":
        if not isinstance(value, str):
            return False
        refs.append(value)
    elif key in _SUBSCHEMA:
        stack.append(value)
    elif key in _SUBSCHEMA_LISTS:
        if not isinstance(value, list):
            return False
        stack.extend(value)
    elif key in _SUBSCHEMA_MAPS:
        if not isinstance(value, dict):
            return False
        stack.extend(value.values())
    return True


def _rs_ref_walked(schema: dict[str, Any], ref: str, walked: set[int]) -> bool:
    """Step 2 of :func:`rs_exact`: ``ref`` is a local JSON pointer to a boolean or to one of
    the subschemas walked."""
    if ref == "#":
        return True
    if not ref.startswith("#/") or "%" in ref:
        return False
    node: Any = schema
    for part in ref[2:].split("/"):
        found, node = _pointer_step(node, part.replace("~1", "/").replace("~0", "~"))
        if not found:
            return False
    return isinstance(node, bool) or id(node) in walked


def _pointer_step(node: Any, part: str) -> tuple[bool, Any]:
    """One unescaped JSON-pointer token applied to ``node``: (found, the child)."""
    if isinstance(node, dict) and part in node:
        return True, node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return True, node[int(part)]
    return False, None


#: Schemas with more JSON nodes than this are not analysed (meta-validation alone would be slow).
MAX_SCHEMA_NODES = 5_000


def _too_large(schema: Any, limit: int) -> bool:
    stack, count = [schema], 0
    while stack:
        node = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _nested_schema_keyword(schema: Any) -> bool:
    """True when an object below the root carries a string ``$schema``.

    ``jsonschema`` switches validator class on it (dropping this module's regex guard and
    exact ``multipleOf``, and possibly the dialect, e.g. ``if`` ignored under draft-06)
    while other validators ignore it outside a resource root; no single answer exists.
    Conservative: any object anywhere (even inside ``enum``) counts.
    """
    stack = list(schema.values()) if isinstance(schema, dict) else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("$schema"), str):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def prepare_root(schema: Any, label: str = "", *, check: bool = True) -> SchemaRoot:
    """Check a tool's input schema once; problems make every later answer ``unknown``."""
    root = SchemaRoot(schema=schema, label=label)
    if isinstance(schema, bool):
        root.problem = "inputSchema is a boolean, not a JSON Schema object"
        return root
    if not isinstance(schema, dict):
        root.problem = "inputSchema is not a JSON Schema object"
        return root
    try:
        root.dialect = dialect_of(schema)
    except Untrusted as exc:
        root.problem = exc.reason
        return root
    if _too_large(schema, MAX_SCHEMA_NODES):
        root.problem = f"schema has more than {MAX_SCHEMA_NODES} nodes"
        return root
    if _nested_schema_keyword(schema):
        root.problem = "a subschema declares its own $schema (validators disagree on its dialect)"
        return root
    root.patterns = _collect_patterns(schema)
    if check:
        root.problem = meta_problem(schema, root.dialect)
    return root


def _fast_meta_valid(schema: Any) -> bool:
    """Meta-validation in Rust when ``jsonschema-rs`` is installed (~1000x faster).

    Only a *valid* verdict short-cuts; an invalid one is re-checked by ``jsonschema`` so the
    message and the final word stay with the reference implementation.
    """
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - optional accelerator
        return False
    try:
        return bool(jsonschema_rs.meta.is_valid(schema))
    except Exception:
        return False


def meta_problem(schema: Any, dialect: str) -> str | None:
    """Why ``schema`` is not a valid schema of its dialect, or None."""
    from jsonschema.exceptions import SchemaError

    if _fast_meta_valid(schema):
        return None
    try:
        validator_class(dialect).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return f"invalid schema at /{where}: {exc.message[:120]}"
    except RecursionError:
        return "schema is nested too deeply to check"
    return None


# --- the guard's validators: decide arguments and explain every failure -----------------

#: Validation engines of the guard: the fast one first (the default).
ENGINES = ("jsonschema-rs", "jsonschema")
SCHEMA_INVALID = "schema-invalid"
SCHEMA_UNRESOLVABLE = "schema-unresolvable"
#: The schema has a regex the guard will not run: outside the ECMA-safe subset.
SCHEMA_PATTERN_UNSUPPORTED = "schema-pattern-unsupported"
#: A pattern applies to a string on which the engine cannot give the ECMA-262 answer.
PATTERN_UNDECIDABLE = "pattern-undecidable"
#: A subschema declares its own ``$schema``: ``jsonschema`` would switch to a validator class
#: without this module's rules there (its regexes back on Python ``re``).
SCHEMA_DIALECT_NESTED = "schema-dialect-nested"
#: Every dialect the guard validates (``jsonschema-rs`` supports exactly these).
VALIDATED_DIALECTS = frozenset(DIALECTS.values())


class SchemaProblem(Exception):
    """The tool's own schema is unusable (invalid, or a ``$ref`` we cannot resolve)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _invalid(where: str = "") -> SchemaProblem:
    at = f" at {where}" if where else ""
    return SchemaProblem(SCHEMA_INVALID, f"the tool's inputSchema is not a valid JSON Schema{at}")


def _unresolvable() -> SchemaProblem:
    return SchemaProblem(
        SCHEMA_UNRESOLVABLE, "the tool's inputSchema has a $ref that cannot be resolved"
    )


@dataclass(frozen=True)
class Failure:
    """One validation failure, engine-neutral: where in the instance (``path``), the value
    there, the schema ``keyword`` and its ``value``, and the subschema holding it."""

    path: tuple[str | int, ...]
    instance: Any
    keyword: str
    value: Any
    schema: Any


class ArgumentValidator:
    """A compiled schema that decides instances and lists every failure."""

    def is_valid(self, instance: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def failures(self, instance: Any) -> Iterator[Failure]:  # pragma: no cover - interface
        raise NotImplementedError

    @property
    def check(self) -> Callable[[Any], bool]:
        """:meth:`is_valid` as the cheapest callable the engine has (the hot path)."""
        return self.is_valid


def compile_validator(schema: Any, engine: str = ENGINES[0]) -> ArgumentValidator:
    """A ready validator for ``schema`` (formats asserted, no remote ``$ref``); raises
    :class:`SchemaProblem` when the schema is not a valid schema of a supported dialect, or
    when one of its regexes (``pattern``, ``patternProperties``, also under
    ``propertyNames``) is outside :func:`~histor_sign._schema.regex_subset.ecma_safe`: a
    schema comes from an untrusted server, and a pattern outside the subset may have no
    linear-time matcher (``^(a|a)*$`` backtracks for minutes) or mean something else in
    Python than in ECMA-262, so the guard refuses it instead of running it.

    ``jsonschema-rs`` is the fast path: it agrees with the reference on every keyword
    (ECMA-262 patterns, exact ``multipleOf``) and is 50-100x faster.
    """
    if not isinstance(schema, (dict, bool)):
        raise SchemaProblem(SCHEMA_INVALID, "the tool's inputSchema is not a JSON Schema")
    try:
        dialect = dialect_of(schema, VALIDATED_DIALECTS)
    except Untrusted:
        raise _invalid() from None
    unsafe = next((p for p in _collect_patterns(schema) if not ecma_safe(p)), None)
    if unsafe is not None:
        import json

        shown = json.dumps(unsafe, ensure_ascii=True)
        raise SchemaProblem(
            SCHEMA_PATTERN_UNSUPPORTED,
            f"the tool's inputSchema has the pattern {shown[:60]}{'…' if len(shown) > 60 else ''}"
            ", outside the regex subset the guard evaluates (linear time, ECMA-262 meaning)",
        )
    if engine == "jsonschema-rs":
        return _RsValidator(schema)
    return _ReferenceValidator(schema, dialect)


def _pointer(parts: Any) -> str:

    return pointer(list(parts or []))


class _ReferenceValidator(ArgumentValidator):
    """Pure-Python ``jsonschema`` with this module's keyword rules, including the regex guard:
    patterns run on the linear ECMA-safe matcher, and a pattern that applies to a string
    that is not printable ASCII (where Python ``re`` and ECMA-262 may disagree) makes the
    call undecidable (:data:`PATTERN_UNDECIDABLE`) instead of falling back to ``re``."""

    __slots__ = ("_root", "_v", "_validated")

    def __init__(self, schema: dict[str, Any] | bool, dialect: str) -> None:
        from jsonschema import exceptions

        if _nested_schema_keyword(schema):
            raise SchemaProblem(
                SCHEMA_DIALECT_NESTED,
                "the tool's inputSchema declares $schema in a subschema, where the jsonschema "
                "engine would drop the guard's regex and number rules (jsonschema-rs does not)",
            )
        cls = validator_class(dialect, guard_regex=True)
        try:
            cls.check_schema(schema)
        except exceptions.SchemaError as exc:
            raise _invalid(_pointer(exc.absolute_path) or "/") from None
        self._validated = _without_dialect(schema)
        self._v = cls(self._validated, format_checker=cls.FORMAT_CHECKER,
                      registry=local_registry())
        # unevaluatedProperties reads the patterns of the whole root from _CURRENT
        self._root = SchemaRoot(schema=schema, dialect=dialect, patterns=_collect_patterns(schema))

    def is_valid(self, instance: Any) -> bool:
        token = _CURRENT.set(self._root)
        try:
            return bool(self._v.is_valid(instance))
        except Exception as exc:
            raise _unresolvable_or(exc) from None
        finally:
            _CURRENT.reset(token)

    def failures(self, instance: Any) -> Iterator[Failure]:
        # materialised: a generator must not hold _CURRENT across its caller's code
        token = _CURRENT.set(self._root)
        try:
            found = [
                Failure(tuple(error.absolute_path), error.instance, str(error.validator),
                        error.validator_value,
                        self._root.schema if error.schema is self._validated else error.schema)
                for error in self._v.iter_errors(instance)
            ]
        except Exception as exc:
            raise _unresolvable_or(exc) from None
        finally:
            _CURRENT.reset(token)
        yield from found


def _unresolvable_or(exc: Exception) -> Exception:
    """referencing's Unresolvable (and the legacy RefResolutionError) as a SchemaProblem;
    the regex guard's :class:`Untrusted` as :data:`PATTERN_UNDECIDABLE`."""
    if isinstance(exc, Untrusted):
        return SchemaProblem(
            PATTERN_UNDECIDABLE,
            "a schema pattern applies to a string that is not printable ASCII, where the "
            "jsonschema engine cannot give the ECMA-262 answer (jsonschema-rs can)",
        )
    name = type(exc).__name__
    if "Unresolvable" in name or "Referencing" in name or "RefResolution" in name:
        return _unresolvable()
    return exc


def _refuse_remote(uri: str) -> Any:
    raise ValueError("remote $ref retrieval is disabled")


class _RsValidator(ArgumentValidator):
    """``jsonschema-rs``, its errors adapted to :class:`Failure`."""

    __slots__ = ("_rs", "_schema")

    def __init__(self, schema: dict[str, Any] | bool) -> None:
        import jsonschema_rs

        self._schema = schema
        try:
            self._rs = jsonschema_rs.validator_for(
                schema, validate_formats=True, retriever=_refuse_remote
            )
        except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
            text = str(exc)
            if "registry" in text or "retriev" in text or "resolve" in text:
                raise _unresolvable() from None
            raise _invalid(_pointer(getattr(exc, "instance_path", None)) or "/") from None

    def is_valid(self, instance: Any) -> bool:
        return bool(self._rs.is_valid(instance))

    @property
    def check(self) -> Callable[[Any], bool]:
        return self._rs.is_valid

    def failures(self, instance: Any) -> Iterator[Failure]:
        for error in self._rs.iter_errors(instance):
            path = list(error.schema_path)
            keyword = path[-1] if path and isinstance(path[-1], str) else error.kind.name
            found, value = _resolve(self._schema, path)
            yield Failure(tuple(error.instance_path), error.instance, keyword,
                          value if found else error.kind.as_dict(),
                          _resolve(self._schema, path[:-1])[1])


def _resolve(root: Any, path: list[Any]) -> tuple[bool, Any]:
    node = root
    for part in path:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            return False, None
    return True, node
