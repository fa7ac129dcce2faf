"""Exact, fail-closed JSON Schema validation: the independent judge of every witness.

``jsonschema`` decides almost everything exactly. Two places are not exact and are
handled here: ``multipleOf`` (jsonschema divides floats; we use exact rationals, since a
JSON number is a decimal) and regular expressions (Python ``re`` is not ECMA-262; a result
that depends on a regex outside :mod:`histor_sign.scan._regex_subset`, or on a subject that
is not printable ASCII, raises :class:`Untrusted`). Unresolvable references, recursion
blow-ups and unknown dialects raise :class:`Untrusted` too, so callers say ``unknown``.

``jsonschema`` is imported lazily so that ``histor-sign --help`` stays fast.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from histor_sign.scan._regex_subset import ecma_safe, printable_ascii

#: Dialect names by meta-schema URI (trailing ``#`` ignored). No ``$schema`` = 2020-12.
DIALECTS: dict[str, str] = {
    "https://json-schema.org/draft/2020-12/schema": "2020-12",
    "https://json-schema.org/draft/2019-09/schema": "2019-09",
    "http://json-schema.org/draft-07/schema": "draft-07",
    "https://json-schema.org/draft-07/schema": "draft-07",
    "http://json-schema.org/draft-06/schema": "draft-06",
    "https://json-schema.org/draft-06/schema": "draft-06",
}
DEFAULT_DIALECT = "2020-12"


class Untrusted(Exception):
    """The validator's answer cannot be trusted (or there is no answer): say unknown."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def dialect_of(schema: Any) -> str:
    """The dialect a root schema declares, or :class:`Untrusted` for any other."""
    if not isinstance(schema, dict) or "$schema" not in schema:
        return DEFAULT_DIALECT
    uri = schema["$schema"]
    if not isinstance(uri, str):
        raise Untrusted("$schema is not a string")
    dialect = DIALECTS.get(uri.rstrip("#"))
    if dialect is None:
        raise Untrusted(f"unsupported dialect $schema {uri[:80]!r}")
    return dialect


# --- the extended validator classes ---------------------------------------------------

_CURRENT: contextvars.ContextVar[SchemaRoot | None] = contextvars.ContextVar(
    "histor_current_root", default=None
)
_CLASSES: dict[str, Any] = {}


def _as_fraction(number: Any) -> Fraction:
    return Fraction(repr(number)) if isinstance(number, float) else Fraction(number)


def _keywords() -> dict[str, Any]:
    from jsonschema import ValidationError
    from jsonschema import _keywords as kw

    def multiple_of(validator: Any, divisor: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "number"):
            return
        if (_as_fraction(instance) / _as_fraction(divisor)).denominator != 1:
            yield ValidationError(f"{instance!r} is not a multiple of {divisor!r}")

    def _guard(patterns: Any, subjects: Any) -> None:
        for pattern in patterns:
            if not isinstance(pattern, str) or not ecma_safe(pattern):
                raise Untrusted(f"pattern {str(pattern)[:60]!r} is outside the ECMA-safe subset")
        for subject in subjects:
            if not printable_ascii(subject):
                raise Untrusted("a regex is matched against a non-ASCII or control string")

    def pattern(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string"):
            _guard([value], [instance])
        yield from kw.pattern(validator, value, instance, schema)

    def pattern_properties(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "object") and instance:
            _guard(value, instance)
        yield from kw.patternProperties(validator, value, instance, schema)

    def additional_properties(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if validator.is_type(instance, "object") and instance and "patternProperties" in schema:
            _guard(schema["patternProperties"], instance)
        yield from kw.additionalProperties(validator, value, instance, schema)

    def unevaluated_properties(
        validator: Any, value: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        root = _CURRENT.get()
        if validator.is_type(instance, "object") and instance and root is not None and (
            root.patterns
        ):
            _guard(root.patterns, instance)
        yield from kw.unevaluatedProperties(validator, value, instance, schema)

    return {
        "multipleOf": multiple_of,
        "pattern": pattern,
        "patternProperties": pattern_properties,
        "additionalProperties": additional_properties,
        "unevaluatedProperties": unevaluated_properties,
    }


def validator_class(dialect: str) -> Any:
    """The exact validator class for a dialect (created once)."""
    cls = _CLASSES.get(dialect)
    if cls is None:
        import jsonschema
        from jsonschema import validators

        base = {
            "2020-12": jsonschema.Draft202012Validator,
            "2019-09": jsonschema.Draft201909Validator,
            "draft-07": jsonschema.Draft7Validator,
            "draft-06": jsonschema.Draft6Validator,
        }[dialect]
        overrides = {k: v for k, v in _keywords().items() if k in base.VALIDATORS}
        cls = validators.extend(base, overrides)
        _CLASSES[dialect] = cls
    return cls


def _collect_patterns(schema: Any) -> list[str]:
    found: list[str] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "pattern" and isinstance(value, str):
                    found.append(value)
                elif key == "patternProperties" and isinstance(value, dict):
                    found.extend(value)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return found


@dataclass(eq=False)
class SchemaRoot:
    """One tool's input schema, prepared once: dialect, meta-validation, validator."""

    schema: Any
    label: str = ""
    dialect: str = DEFAULT_DIALECT
    problem: str | None = None  # why this schema cannot be analysed at all
    patterns: list[str] = field(default_factory=list)
    _validator: Any = None

    @property
    def usable(self) -> bool:
        return self.problem is None

    def validator(self) -> Any:
        if self._validator is None:
            self._validator = validator_class(self.dialect)(self.schema)
        return self._validator

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
