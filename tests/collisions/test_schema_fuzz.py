"""Hostile schema shapes never crash the engine: the answer is a decision, often unknown."""

from __future__ import annotations

from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from histor_sign._schema.witness import decide

KEYWORDS = ["type", "enum", "const", "allOf", "anyOf", "oneOf", "not", "$ref", "properties",
            "required", "additionalProperties", "items", "prefixItems", "minItems", "maxItems",
            "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "multipleOf",
            "pattern", "if", "then", "else", "$defs", "dependentRequired", "minProperties",
            "uniqueItems", "contains", "propertyNames", "format", "$id"]
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.5, -1.5, 2.0]),
    st.sampled_from(["object", "string", "integer", "a", "#", "#/$defs/x", "^a", "email"]),
)
JSONISH = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from([*KEYWORDS, "a", "x"]), inner,
                                            max_size=4)),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(JSONISH, JSONISH)
def test_decide_never_raises_and_witnesses_validate(a: Any, b: Any) -> None:
    d = decide(a, b)
    assert d.outcome in ("overlap", "disjoint", "unknown")
    if d.outcome == "overlap":
        for schema in (a, b):
            cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
            assert cls(schema).is_valid(d.witness)
