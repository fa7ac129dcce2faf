"""The intersection engine: overlap with a validated witness, sound disjointness, unknown."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from histor_sign._schema.algebra import Bounds
from histor_sign._schema.witness import decide


def obj(**props: Any) -> dict[str, Any]:
    """An object schema whose listed properties are all required."""
    return {"type": "object", "properties": props, "required": list(props)}


def assert_overlap(a: Any, b: Any) -> Any:
    d = decide(a, b)
    assert d.outcome == "overlap", d
    for schema in (a, b):
        jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)(
            schema).validate(d.witness)
    assert isinstance(d.witness, dict)
    return d.witness


def assert_disjoint(a: Any, b: Any) -> None:
    d = decide(a, b)
    assert d.outcome == "disjoint", d


def assert_unknown(a: Any, b: Any, reason: str = "") -> None:
    d = decide(a, b)
    assert d.outcome == "unknown", d
    assert reason in d.reason


def test_multiple_of_two_and_three_in_one_to_five_are_disjoint() -> None:
    a = obj(n={"type": "integer", "multipleOf": 2, "minimum": 1, "maximum": 5})
    b = obj(n={"type": "integer", "multipleOf": 3, "minimum": 1, "maximum": 5})
    assert_disjoint(a, b)
    b7 = obj(n={"type": "integer", "multipleOf": 3, "minimum": 1, "maximum": 7})
    a7 = obj(n={"type": "integer", "multipleOf": 2, "minimum": 1, "maximum": 7})
    assert assert_overlap(a7, b7) == {"n": 6}


def test_required_integer_versus_string_is_disjoint() -> None:
    assert_disjoint(obj(id={"type": "integer"}), obj(id={"type": "string"}))


def test_const_clash_is_disjoint_and_equal_const_overlaps() -> None:
    assert_disjoint(obj(mode={"const": "read"}), obj(mode={"const": "write"}))
    assert assert_overlap(obj(mode={"enum": ["a", "b"]}), obj(mode={"enum": ["b", "c"]})) == {
        "mode": "b"}
    # 1 and 1.0 are the same JSON number; true is not 1
    assert_overlap(obj(n={"const": 1}), obj(n={"enum": [1.0]}))
    assert_disjoint(obj(n={"const": 1}), obj(n={"enum": [True]}))


def test_closed_object_versus_required_extra_property_is_disjoint() -> None:
    closed = {"type": "object", "properties": {"path": {"type": "string"}},
              "additionalProperties": False}
    assert_disjoint(closed, obj(force={"type": "boolean"}))
    assert assert_overlap(closed, obj(path={"type": "string"})) == {"path": "a"}


def test_additional_properties_schema_constrains_unlisted_required_names() -> None:
    a = {"type": "object", "additionalProperties": {"type": "integer"}}
    assert_disjoint(a, obj(x={"type": "string"}))
    assert assert_overlap(a, obj(x={"type": "number", "minimum": 2.5})) == {"x": 3}


def test_numeric_bounds_with_exclusive_limits_and_exact_rationals() -> None:
    assert_disjoint(obj(n={"exclusiveMaximum": 5}), obj(n={"type": "number", "minimum": 5}))
    assert assert_overlap(obj(n={"maximum": 5}), obj(n={"type": "integer", "minimum": 5})) == {
        "n": 5}
    # 0.3 is a multiple of 0.1 as decimals, but plain float division says otherwise: the
    # only candidate is not a witness every validator accepts, and it is no proof either
    d = decide(obj(x={"type": "number", "multipleOf": 0.1, "exclusiveMinimum": 0.2}),
               obj(x={"type": "number", "maximum": 0.35, "not": {"type": "integer"}}))
    assert d.outcome == "unknown" and "every validator" in d.reason
    w = assert_overlap(obj(x={"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0.2}),
                       obj(x={"maximum": 0.35}))
    assert w == {"x": 0.25}
    assert_disjoint(obj(x={"type": "integer", "minimum": 0.5, "maximum": 0.9}), {})
    assert assert_overlap(obj(x={"type": "number", "minimum": 0.5, "maximum": 0.9}), {}) == {
        "x": 0.5}


def test_strings_arrays_and_property_counts() -> None:
    assert_disjoint(obj(s={"type": "string", "minLength": 5}), obj(s={"maxLength": 3}))
    assert_disjoint(obj(xs={"type": "array", "items": {"type": "integer"}, "minItems": 1}),
                    obj(xs={"items": {"type": "string"}}))
    assert assert_overlap(obj(xs={"type": "array", "items": {"type": "integer"}}),
                          obj(xs={"items": {"type": "string"}})) == {"xs": []}
    assert_disjoint({"type": "object", "maxProperties": 0}, obj(a={}))
    w = assert_overlap({"type": "object", "minProperties": 2},
                       {"type": "object", "properties": {"a": {"type": "null"}}})
    assert len(w) == 2
    assert_disjoint({"type": "object", "minProperties": 2},
                    {"type": "object", "properties": {"a": {}}, "additionalProperties": False})


def test_combinators_refs_and_boolean_schemas() -> None:
    a = {"type": "object", "properties": {"v": {"anyOf": [{"type": "string"},
                                                          {"type": "integer"}]}},
         "required": ["v"]}
    assert assert_overlap(a, obj(v={"type": "integer", "minimum": 3})) == {"v": 3}
    assert_disjoint(a, obj(v={"type": "boolean"}))
    one = obj(v={"oneOf": [{"type": "integer"}, {"minimum": 10}]})
    assert assert_overlap(one, obj(v={"type": "number"}))["v"] == 0
    ref = {"$defs": {"id": {"type": "string", "minLength": 3}},
           "type": "object", "properties": {"id": {"$ref": "#/$defs/id"}}, "required": ["id"]}
    assert assert_overlap(ref, obj(id={"maxLength": 3})) == {"id": "aaa"}
    assert_disjoint(ref, obj(id={"maxLength": 2}))
    legacy = {"$schema": "http://json-schema.org/draft-07/schema#",
              "definitions": {"o": {"type": "object"}}, "$ref": "#/definitions/o",
              "required": ["never-checked"]}
    assert assert_overlap(legacy, {"type": "object"}) == {}
    # booleans work nested; a tool's inputSchema itself must be an object (seed 000)
    assert_disjoint({"type": "object", "properties": {"a": False}, "required": ["a"]}, {})
    assert assert_overlap(obj(a=True), {"allOf": [True]}) == {"a": {}}
    assert_unknown(True, {}, "boolean")


def test_tool_arguments_are_objects() -> None:
    assert_disjoint({}, {"type": "string"})
    assert_disjoint({"type": ["string", "integer"]}, {})


def test_beyond_toolclash_not_if_dependent_required_prefix_items_format() -> None:
    assert_disjoint(obj(v={"not": {"type": "string"}}), obj(v={"type": "string"}))
    assert_disjoint(obj(v={"not": {"const": "x"}, "enum": ["x"]}), {})
    assert assert_overlap({"type": "object", "not": {"required": ["danger"]}},
                          {"type": "object"}) == {}
    cond = {"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}}
    assert assert_overlap(cond, {"type": "object"}) in ({}, {"a": {}, "b": {}})
    dep = {"type": "object", "required": ["a"], "dependentRequired": {"a": ["b"]}}
    assert_disjoint(dep, {"type": "object", "properties": {"b": False}})
    prefix = obj(xs={"type": "array", "prefixItems": [{"type": "integer"}], "minItems": 1})
    assert_disjoint(prefix, obj(xs={"items": {"type": "string"}}))
    w = assert_overlap(obj(m={"type": "string", "format": "email"}), obj(m={"maxLength": 40}))
    assert "@" in w["m"]


def test_unknown_for_patterns_bounds_and_unsupported_references() -> None:
    assert_unknown(obj(p={"type": "string", "pattern": "^a"}),
                   obj(p={"type": "string", "pattern": "^b"}), "pattern")
    assert_unknown(obj(p={"$ref": "other.json#/x"}), {}, "non-local")
    assert_unknown(obj(p={"$id": "urn:x", "type": "string"}), {}, "$id")
    assert_unknown({"$ref": "#"}, {}, "recursive")
    assert_unknown({"$schema": "http://json-schema.org/draft-04/schema#"}, {}, "dialect")
    assert_unknown({"type": 5}, {}, "invalid schema")
    assert_unknown(["not", "a", "schema"], {}, "not a JSON Schema object")
    assert_unknown(obj(s={"type": "string", "minLength": 100_000}), {}, "bound")


def test_ten_thousand_branch_any_of_ends_quickly_as_unknown() -> None:
    import time

    wide = {"anyOf": [{"type": "string", "minLength": i} for i in range(10_000)]}
    started = time.monotonic()
    assert_unknown(wide, {}, "nodes")
    assert_unknown({"anyOf": [False] * 3000}, {}, "branch bound")
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("depth", [40, 200])
def test_deep_nesting_is_bounded(depth: int) -> None:
    schema: Any = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    d = decide(schema, {}, Bounds(max_depth=32))
    assert d.outcome == "unknown"


def test_safe_patterns_are_decided_as_overlaps_with_validated_witnesses() -> None:
    w = assert_overlap(obj(p={"type": "string", "pattern": "^/"}),
                       obj(p={"type": "string", "pattern": "^[a-z/]+$", "minLength": 3}))
    assert w["p"].startswith("/") and len(w["p"]) >= 3
    w = assert_overlap(obj(tel={"type": "string", "pattern": "^\\d{3}-\\d{4}$"}),
                       obj(tel={"maxLength": 8}))
    assert w == {"tel": "000-0000"}
    # outside the shared Python/ECMA subset: unknown, never a guess
    assert_unknown(obj(p={"type": "string", "pattern": "^\\p{L}+$"}), obj(p={}), "ECMA-safe")


@pytest.mark.parametrize("annotation", [
    {"title": "t"}, {"deprecated": True}, {"readOnly": True}, {"description": "d"},
    {"$comment": "c"}, {"examples": ["x"]}, {"format": "email"}, {},
])
def test_negated_type_with_any_annotation_is_the_same_decision(annotation: Any) -> None:
    # One set of no-constraint keywords: an annotation beside a negated type never changes
    # the answer (once `deprecated` made it unknown while `title` made it disjoint).
    a = obj(x={"type": "string"})
    b = obj(x={"not": {"type": "string", **annotation}})
    assert_disjoint(a, b)
    c = obj(x={"not": {"type": "integer", **annotation}})
    witness = assert_overlap(a, c)
    assert isinstance(witness["x"], str)


def test_negated_annotation_only_schema_accepts_nothing() -> None:
    assert_disjoint(obj(x={"type": "string"}), obj(x={"not": {"deprecated": True}}))
