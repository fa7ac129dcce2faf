"""Beyond ToolClash, per keyword: an overlap (validated witness), a disjoint pair, an unknown."""

from __future__ import annotations

from typing import Any

import jsonschema

from histor_sign._schema.witness import decide


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


def outcome(a: Any, b: Any) -> str:
    d = decide(a, b)
    if d.outcome == "overlap":
        for schema in (a, b):
            cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
            cls(schema).validate(d.witness)
    return d.outcome


def witness(a: Any, b: Any) -> Any:
    assert outcome(a, b) == "overlap"
    return decide(a, b).witness


def test_not_is_rewritten_exactly() -> None:
    no_danger = {"type": "object", "not": {"required": ["danger"]}}
    assert outcome(no_danger, obj(danger={})) == "disjoint"
    assert witness(no_danger, {"type": "object", "properties": {"danger": {}}}) == {}
    small = obj(n={"type": "integer", "not": {"minimum": 5}})
    assert outcome(small, obj(n={"minimum": 5})) == "disjoint"
    assert witness(small, obj(n={"minimum": 4})) == {"n": 4}
    neither = obj(v={"not": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})
    assert outcome(neither, obj(v={"type": "integer"})) == "disjoint"
    assert witness(neither, obj(v={"type": "number"})) == {"v": 0.5}
    not_x = {"type": "object", "not": {"properties": {"m": {"const": "x"}}}}
    assert outcome(not_x, obj(m={"const": "x"})) == "disjoint"
    assert witness(not_x, obj(m={"type": "string"})) == {"m": "a"}
    # double negation and not-of-not-required
    assert outcome({"type": "object", "not": {"not": {"required": ["k"]}}},
                   {"type": "object", "properties": {"k": False}}) == "disjoint"
    # a negated keyword we cannot rewrite stays relaxed: the candidate fails, so unknown
    odd = obj(v={"type": "array", "not": {"minContains": 1, "contains": {"const": 1}}})
    assert outcome(odd, obj(v={"type": "array", "minItems": 1, "items": {"const": 1}})) == (
        "unknown")


def test_if_then_else_is_a_two_way_disjunction() -> None:
    cond = {"type": "object", "properties": {"kind": {"enum": ["file", "url"]}},
            "required": ["kind"],
            "if": {"properties": {"kind": {"const": "file"}}},
            "then": {"required": ["path"]}, "else": {"required": ["url"]}}
    file_without_path = {"type": "object", "properties": {"kind": {"const": "file"},
                                                          "path": False}}
    assert outcome(cond, file_without_path) == "disjoint"
    url_without_url = {"type": "object", "properties": {"kind": {"const": "url"},
                                                        "url": False}}
    assert outcome(cond, url_without_url) == "disjoint"
    w = witness(cond, {"type": "object", "properties": {"kind": {"const": "url"}}})
    assert w["kind"] == "url" and "url" in w
    # draft-06 has no if/then/else: the keywords are annotations there
    legacy = {"$schema": "http://json-schema.org/draft-06/schema#", **cond}
    assert outcome(legacy, file_without_path) == "overlap"
    unknown_if = {"type": "object", "if": {"properties": {"s": {"pattern": "^\\p{L}"}}},
                  "then": {"required": ["t"]}}
    assert outcome(unknown_if, obj(s={"const": "x"}, t={})) == "unknown"


def test_dependent_required_and_dependent_schemas() -> None:
    dep = {"type": "object", "required": ["a"], "dependentRequired": {"a": ["b"]}}
    assert outcome(dep, {"type": "object", "properties": {"b": False}}) == "disjoint"
    assert witness(dep, {"type": "object"}) == {"a": {}, "b": {}}
    dep_s = {"type": "object", "dependentSchemas": {"a": {"required": ["b"]}}}
    assert outcome(dep_s, {"type": "object", "properties": {"b": False},
                           "required": ["a"]}) == "disjoint"
    assert witness(dep_s, obj(a={"const": 1})) == {"a": 1, "b": {}}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "dependencies": {"a": {"required": ["b"]}}, "required": ["a"]}
    assert outcome(draft7, {"type": "object", "properties": {"b": False}}) == "disjoint"
    assert outcome(dep_s, {"type": "object", "required": ["a"], "properties": {
        "b": {"type": "string", "pattern": "(?i)x"}}}) == "unknown"


def test_contains() -> None:
    has3 = obj(xs={"type": "array", "contains": {"const": 3}})
    assert witness(has3, obj(xs={"items": {"type": "integer"}})) == {"xs": [3]}
    assert outcome(has3, obj(xs={"items": {"type": "string"}})) == "disjoint"
    assert outcome(has3, obj(xs={"maxItems": 0})) == "disjoint"
    w = witness(has3, obj(xs={"minItems": 2, "items": {"type": "number"}}))
    assert w["xs"][0] == 3 and len(w["xs"]) == 2
    # two contains that cannot share one element: not constructed, and not claimed disjoint
    assert outcome(has3, obj(xs={"contains": {"const": 4}})) == "unknown"


def test_unique_items() -> None:
    uniq = obj(xs={"type": "array", "uniqueItems": True, "minItems": 3})
    assert witness(uniq, obj(xs={"items": {"type": "integer"}})) == {"xs": [0, 1, -1]}
    assert outcome(uniq, obj(xs={"items": {"enum": [1, 2]}})) == "disjoint"
    assert outcome(uniq, obj(xs={"items": {"type": "boolean"}})) == "disjoint"
    assert witness(uniq, obj(xs={"items": {"type": "string", "maxLength": 1}}))["xs"] == [
        "a", "b", "c"]
    # distinct objects are not constructed: unknown, never a duplicate witness
    assert outcome(uniq, obj(xs={"items": {"type": "object"}})) == "unknown"


def test_prefix_items() -> None:
    pair = obj(p={"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                  "minItems": 2})
    assert witness(pair, obj(p={"maxItems": 2})) == {"p": [0, "a"]}
    assert outcome(pair, obj(p={"items": {"type": "integer"}})) == "disjoint"
    assert outcome(pair, obj(p={"contains": {"const": True}, "maxItems": 2})) == "unknown"


def test_pattern_properties() -> None:
    typed = {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
             "additionalProperties": False}
    assert witness(typed, obj(x_a={"type": "integer"})) == {"x_a": 0}
    assert outcome(typed, obj(x_a={"type": "string"})) == "disjoint"
    assert outcome(typed, obj(other={})) == "disjoint"
    assert outcome({"type": "object", "patternProperties": {"\\p{L}": {}}},
                   obj(a={})) == "unknown"


def test_property_names() -> None:
    short = {"type": "object", "propertyNames": {"maxLength": 3}}
    assert outcome(short, obj(long_name={})) == "disjoint"
    assert witness(short, obj(id={"type": "string"})) == {"id": "a"}
    lower = {"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "minProperties": 2}
    w = witness(lower, {"type": "object"})
    assert len(w) == 2 and all(k.isalpha() for k in w)
    assert outcome({"type": "object", "propertyNames": {"pattern": "^\\p{Lu}"}},
                   obj(A={})) == "unknown"


def test_format_is_an_annotation() -> None:
    email = obj(m={"type": "string", "format": "email"})
    assert "@" in witness(email, obj(m={"maxLength": 40}))["m"]
    # format does not assert, so a non-email string is accepted by both
    assert witness(email, obj(m={"const": "not an email"})) == {"m": "not an email"}
    assert outcome(email, obj(m={"type": "integer"})) == "disjoint"


def test_pattern() -> None:
    digits = obj(p={"type": "string", "pattern": "^[0-9]+$"})
    assert witness(digits, obj(p={"maxLength": 3})) == {"p": "0"}
    assert outcome(digits, obj(p={"enum": ["abc", "x"]})) == "disjoint"
    # two patterns whose example strings fail each other: no regex intersection yet
    assert outcome(digits, obj(p={"type": "string", "pattern": "^[a-z]+$"})) == "unknown"


def test_negation_of_a_nested_resource_is_never_rewritten() -> None:
    nested = {"type": "object", "not": {"$id": "urn:x", "required": ["a"]}}
    assert outcome(nested, obj(a={})) == "unknown"
