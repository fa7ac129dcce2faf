"""Soundness at the edges around the solver: ``$ref`` pointers, nested ``$schema``, numbers.

Each class is checked against the real validators, not against expected strings: a pair is
probed with instances, and whenever ``jsonschema`` and ``jsonschema-rs`` both accept one
instance for both schemas, the decision must not be ``disjoint``; every ``overlap`` witness
must validate under both of them.
"""

from __future__ import annotations

import random
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from histor_sign._schema.validation import prepare_root
from histor_sign._schema.witness import decide

PROBES: list[Any] = [None, True, 0, 1, -1, 3, 0.5, 0.3, "", "a", "7", "٣", [], {},
                     9007199254740992, 9007199254740993, 2**64, 10**23, 1e23]


def obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props)}


def _accepts(schema: Any, instance: Any) -> bool:
    py = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    return bool(py(schema).is_valid(instance)) and bool(
        jsonschema_rs.validator_for(schema).is_valid(instance))


def check_sound(a: Any, b: Any, probes: list[Any] = PROBES) -> str:
    """The decision, after checking it against the judges on ``{"x": probe}`` instances."""
    d = decide(a, b)
    if d.outcome == "overlap":
        assert _accepts(a, d.witness) and _accepts(b, d.witness), d
    common = [p for p in probes if _accepts(a, {"x": p}) and _accepts(b, {"x": p})]
    if common:
        assert d.outcome != "disjoint", (d, common)
    return d.outcome


# --- $ref: pointers resolve exactly as `referencing` resolves them ----------------------

DEFS = {"a/b": {"type": "string"}, "a": {"b": {"type": "integer"}}, "a~b": {"type": "null"},
        "a%b": {"type": "boolean"}, "%": {"type": "array"}}


@pytest.mark.parametrize("ref", ["#/$defs/a%2Fb", "#/$defs/a~1b", "#/%24defs/a%2fb",
                                 "#/$defs/a%7E0b", "#/$defs/a~0b", "#/$defs/a%25b",
                                 "#/$defs/%25", "#/$defs/a/b"])
@pytest.mark.parametrize("other", [{"type": "string"}, {"type": "integer"}, {"type": "null"},
                                   {"type": "boolean"}, {"type": "array"}])
def test_percent_encoded_pointers(ref: str, other: dict[str, Any]) -> None:
    a = {"$defs": DEFS, **obj(x={"$ref": ref})}
    check_sound(a, obj(x=other))


def test_a_percent_encoded_slash_separates_segments() -> None:
    a = {"$defs": DEFS, **obj(x={"$ref": "#/$defs/a%2Fb"})}
    assert check_sound(a, obj(x={"type": "integer"})) == "overlap"
    assert check_sound(a, obj(x={"type": "string"})) == "disjoint"


@pytest.mark.parametrize("inner", ["#/$defs/C", "#"])
def test_a_pointer_through_a_nested_id_is_not_resolved_against_the_root(inner: str) -> None:
    a = {"$defs": {"A": {"$id": "https://example.com/a", "$defs": {"C": {"type": "string"}},
                         "B": {"$ref": inner}},
                   "C": {"type": "integer"}},
         **obj(x={"$ref": "#/$defs/A/B"})}
    for other in ({"type": "string"}, {"type": "integer"}, {"type": "object"}):
        assert check_sound(a, obj(x=other), [*PROBES, {"x": 1}]) == "unknown"


# --- $schema inside a subschema ---------------------------------------------------------

NESTED_SCHEMA = [
    {"$schema": "http://json-schema.org/draft-06/schema#", "if": {"type": "string"},
     "then": {"type": "integer"}},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "pattern": r"^\d+$"},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "multipleOf": 0.1},
    {"$schema": "http://json-schema.org/draft-07/schema#", "$ref": "#/$defs/s",
     "type": "integer"},
]


@pytest.mark.parametrize("inner", NESTED_SCHEMA)
@pytest.mark.parametrize("where", ["property", "defs", "items", "not-not"])
def test_nested_schema_keyword_is_unknown(inner: dict[str, Any], where: str) -> None:
    if where == "property":
        a = obj(x=inner)
    elif where == "defs":
        a = {"$defs": {"s": {"type": "string"}, "d": inner}, **obj(x={"$ref": "#/$defs/d"})}
    elif where == "items":
        a = obj(x={"type": "array", "items": inner})
    else:
        a = obj(x={"not": {"not": inner}})
    a = {"$defs": {"s": {"type": "string"}}, **a}
    for other in ({"type": "string"}, {"type": "string", "pattern": "^[0-9٣]+$"},
                  {"type": "array"}, {"type": "number"}):
        assert check_sound(a, obj(x=other)) == "unknown"
    assert prepare_root(a).problem is not None


def test_a_property_named_schema_is_not_a_nested_schema_keyword() -> None:
    a = obj(**{"$schema": {"type": "string"}})
    assert prepare_root(a).problem is None
    assert decide(a, obj(**{"$schema": {"type": "string"}})).outcome == "overlap"


# --- numbers beyond 2^53: exact validators and double-based ones disagree ---------------

BIG = [2**53 + 1, -(2**53) - 1, 2**64 + 1, 10**23]


@pytest.mark.parametrize("big", BIG)
@pytest.mark.parametrize(("left", "right"), [
    ("minimum", "maximum"), ("exclusiveMinimum", "maximum"), ("const", "const"),
    ("enum", "const"), ("maximum", "minimum"), ("not-const", "const"),
])
def test_integers_beyond_2_53_are_not_compared(big: int, left: str, right: str) -> None:
    def schema(keyword: str, value: int) -> dict[str, Any]:
        if keyword == "enum":
            return {"enum": [value, "z"]}
        if keyword == "not-const":
            return {"not": {"const": value}}
        return {keyword: value}

    # as IEEE doubles `big` and its neighbour are one number: some validator finds overlap
    neighbour = big - 1 if big > 0 else big + 1
    d = decide(obj(x=schema(left, big)), obj(x=schema(right, neighbour)))
    assert d.outcome != "disjoint", d
    assert float(big) == float(neighbour)


# --- multipleOf witnesses satisfy float-dividing validators too -------------------------


@pytest.mark.slow
def test_multiple_of_witnesses_validate_under_every_judge() -> None:
    rng = random.Random(15)
    outcomes: dict[str, int] = {}
    for _ in range(300):
        divisor = rng.choice([0.1, 0.2, 0.3, 0.01, 0.07, 1.1, 2.5, 0.5, 3, 7, 1e-3])
        lo = round(rng.uniform(-5, 5), rng.choice([0, 1, 2]))
        hi = lo + rng.choice([0.05, 0.3, 1, 4])
        a = obj(x={"type": "number", "multipleOf": divisor, "minimum": lo})
        b = obj(x={"type": rng.choice(["number", "integer"]), "maximum": hi,
                   "not": {"const": 0}})
        outcome = check_sound(a, b, [k * divisor for k in range(-60, 61)])
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("overlap", 0) > 100, outcomes
