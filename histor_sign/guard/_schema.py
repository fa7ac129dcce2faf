"""Validate arguments against a tool's ``inputSchema`` and explain every failure.

Engine (chosen on measurements, benchmarks/bench_guard.py): ``jsonschema-rs`` by default,
Draft 2020-12 unless the schema names another ``$schema``, formats asserted. Over the pure
Python ``jsonschema`` it is ~50–80x faster on allowed calls and, more importantly for a
guard, *stricter where it matters*: ``pattern`` uses ECMA-262 semantics (Python's ``re``
lets a backslash-d match Arabic-Indic digits) and ``uri``/``date-time``/… formats are checked
(``jsonschema`` skips them unless optional packages are installed). Remote ``$ref``s are
never fetched (an untrusted schema must not make the guard send requests).
``engine="jsonschema"`` selects the pure-Python engine, which ``scan``/``replay`` use.

Exact JSON types come from the engine: ``"42"`` is not an integer, ``true`` is not a
number, ``1.0`` is an integer. Messages never contain argument values — only JSON
pointers, the JSON type found (unless the argument is secret) and the schema constraint.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from histor_sign._internal.calls import shown_name, shown_pointer
from histor_sign.canonical import pointer

MAX_SHOWN = 10  # enum members / names shown in one message


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


class SchemaProblem(Exception):
    """The tool's own schema is unusable (invalid, or a ``$ref`` we cannot resolve)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


ENGINES = ("jsonschema-rs", "jsonschema")


def compile_schema(schema: Any, engine: str = "jsonschema-rs") -> Any:
    """A ready validator for ``schema``; raises :class:`SchemaProblem` if it is invalid."""
    if engine == "jsonschema-rs":
        return _RsValidator(schema)
    import jsonschema
    from jsonschema import exceptions

    if not isinstance(schema, (dict, bool)):
        raise SchemaProblem("schema-invalid", "the tool's inputSchema is not a JSON Schema")
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        where = pointer(exc.absolute_path) or "/"
        raise SchemaProblem(
            "schema-invalid", f"the tool's inputSchema is not a valid JSON Schema at {where}"
        ) from None
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_reasons(
    validator: Any, arguments: Mapping[str, Any], secret: frozenset[str]
) -> list[Reason]:
    """Every schema violation of ``arguments`` as a value-free :class:`Reason`."""
    from jsonschema import exceptions

    if isinstance(validator, _RsValidator):
        return validator.reasons(arguments, secret)
    reasons: list[Reason] = []
    try:
        for error in validator.iter_errors(arguments):
            for reason in _explain(error, secret):
                if reason not in reasons:
                    reasons.append(reason)
    except exceptions._RefResolutionError:  # public alias differs across versions
        raise SchemaProblem(
            "schema-unresolvable", "the tool's inputSchema has a $ref that cannot be resolved"
        ) from None
    except Exception as exc:  # referencing.exceptions.Unresolvable and friends
        if "Unresolvable" in type(exc).__name__ or "Referencing" in type(exc).__name__:
            raise SchemaProblem(
                "schema-unresolvable",
                "the tool's inputSchema has a $ref that cannot be resolved",
            ) from None
        raise
    return reasons


def _refuse_remote(uri: str) -> Any:
    raise ValueError("remote $ref retrieval is disabled in the guard")


class _RsValidator:
    """``jsonschema-rs`` validator whose errors are explained like ``jsonschema``'s."""

    __slots__ = ("_rs", "_schema")

    def __init__(self, schema: Any) -> None:
        import jsonschema_rs

        if not isinstance(schema, (dict, bool)):
            raise SchemaProblem("schema-invalid", "the tool's inputSchema is not a JSON Schema")
        self._schema = schema
        try:
            self._rs = jsonschema_rs.validator_for(
                schema, validate_formats=True, retriever=_refuse_remote
            )
        except (jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError, ValueError) as exc:
            text = str(exc)
            if "registry" in text or "retriev" in text or "resolve" in text:
                raise SchemaProblem(
                    "schema-unresolvable",
                    "the tool's inputSchema has a $ref that cannot be resolved",
                ) from None
            where = pointer(getattr(exc, "instance_path", []) or []) or "/"
            raise SchemaProblem(
                "schema-invalid", f"the tool's inputSchema is not a valid JSON Schema at {where}"
            ) from None

    def reasons(self, arguments: Mapping[str, Any], secret: frozenset[str]) -> list[Reason]:
        if self._rs.is_valid(arguments):
            return []
        reasons: list[Reason] = []
        for error in self._rs.iter_errors(arguments):
            for reason in _explain(_RsError(error, self._schema), secret):
                if reason not in reasons:
                    reasons.append(reason)
        return reasons


class _RsError:
    """Adapts a ``jsonschema_rs.ValidationError`` to the attributes :func:`_explain` reads."""

    def __init__(self, error: Any, root: Any) -> None:
        path = list(error.schema_path)
        self.absolute_path = list(error.instance_path)
        self.instance = error.instance
        self.validator = path[-1] if path and isinstance(path[-1], str) else error.kind.name
        found, value = _resolve(root, path)
        self.validator_value = value if found else error.kind.as_dict()
        self.schema = _resolve(root, path[:-1])[1]


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


def _explain(error: Any, secret: frozenset[str]) -> Iterable[Reason]:
    path = list(error.absolute_path)
    is_secret = bool(path) and path[0] in secret
    if is_secret:
        path = path[:1]
    where = shown_pointer(path)
    label = where or "arguments"
    keyword = str(error.validator)
    value = error.validator_value
    instance = error.instance
    got = "" if is_secret else f", got {json_type(instance)}"

    if keyword == "required" and isinstance(instance, dict):
        for name in value:
            if name not in instance:
                yield Reason(
                    "missing-required",
                    f"missing required argument {shown_name(name)}",
                    shown_pointer([*path, name]),
                    keyword,
                )
        return
    if keyword in ("additionalProperties", "unevaluatedProperties") and isinstance(
        instance, dict
    ):
        extras = _extra_properties(instance, error.schema) if value is False else None
        if extras is not None and not is_secret:
            for name in extras:
                yield Reason(
                    "unknown-argument",
                    f"unknown argument {shown_name(name)} (the schema does not declare it)",
                    shown_pointer([*path, name]),
                    keyword,
                )
            return
    if keyword == "type":
        expected = " or ".join(value) if isinstance(value, list) else str(value)
        yield Reason("type-mismatch", f"{label} must be {expected}{got}", where, keyword)
        return
    yield Reason("constraint", f"{label} {_constraint(keyword, value)}", where, keyword)


def _constraint(keyword: str, value: Any) -> str:
    simple = {
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
    if keyword in simple:
        return simple[keyword].format(value)
    if keyword == "enum" and isinstance(value, list):
        shown = ", ".join(_show_literal(v) for v in value[:MAX_SHOWN])
        more = f", … ({len(value)} in all)" if len(value) > MAX_SHOWN else ""
        return f"must be one of: {shown}{more}"
    if keyword == "const":
        return f"must equal {_show_literal(value)}"
    if keyword == "pattern":
        return f"must match the pattern {_show_literal(value)}"
    if keyword == "uniqueItems":
        return "must not contain duplicate items"
    if keyword in ("anyOf", "oneOf"):
        return f"must match {'exactly one' if keyword == 'oneOf' else 'at least one'} of " \
            f"the {len(value)} {keyword} alternatives"
    if keyword == "not":
        return "must not match the schema under 'not'"
    if keyword == "dependentRequired":
        return "is missing arguments that other present arguments require"
    if keyword == "propertyNames":
        return "has a property name the schema does not allow"
    if keyword == "contains":
        return "must contain an item matching the 'contains' schema"
    if keyword in ("additionalProperties", "unevaluatedProperties"):
        return f"has properties that the schema's {keyword} does not allow"
    if keyword == "false":
        return "is not allowed by the schema"
    return f"does not satisfy the schema keyword {keyword!r}"


def _extra_properties(instance: Mapping[str, Any], schema: Any) -> list[str] | None:
    if not isinstance(schema, dict):
        return None
    declared = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    if not isinstance(declared, dict) or not isinstance(patterns, dict):
        return None
    return sorted(
        k for k in instance if k not in declared and not any(re.search(p, k) for p in patterns)
    )


def _show_literal(value: Any, limit: int = 60) -> str:
    """A schema constant, shown compactly (schemas are public; arguments are never shown)."""
    import json

    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "…"
