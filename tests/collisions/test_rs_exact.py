"""The witness re-check trusts ``jsonschema-rs`` alone only where its verdict is provably that
of the exact validator and of ``jsonschema`` as published (``validation.rs_exact``): on
every schema of the official draft2020-12 suite in that class, the three agree on every
test instance; schemas with keywords the engines differ on are outside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from histor_sign._schema.validation import (
    Untrusted,
    plain_class,
    prepare_root,
    rs_exact,
)
from histor_sign._schema.witness import decide

SUITE = Path(__file__).parents[1] / "data" / "json-schema-test-suite" / "draft2020-12"


def _no_remote(uri: str) -> Any:
    raise ValueError("no remote references in tests")


def groups() -> list[tuple[str, Any, list[Any]]]:
    out = []
    for path in sorted(SUITE.rglob("*.json")):
        for group in json.loads(path.read_text()):
            out.append((f"{path.relative_to(SUITE)}: {group['description']}", group["schema"],
                        [test["data"] for test in group["tests"]]))
    return out


def test_in_the_class_the_three_validators_agree_on_the_suite() -> None:
    in_class = compared = 0
    for where, schema, instances in groups():
        if not rs_exact(schema):
            continue
        root = prepare_root(schema, where)
        if root.problem is not None:
            continue
        in_class += 1
        rs = jsonschema_rs.validator_for(schema, validate_formats=False, retriever=_no_remote)
        plain = plain_class(root.dialect)(schema)
        for instance in instances:
            try:
                exact = root.accepts(instance)
            except Untrusted:
                pytest.fail(f"{where}: the exact validator cannot judge an in-class schema")
            assert bool(rs.is_valid(instance)) == exact == bool(plain.is_valid(instance)), where
            assert root.fast_accepts(instance) == exact, where
            compared += 1
    # most of the suite's groups are in the class (the test can fail)
    assert in_class > 200 and compared > 1_400, (in_class, compared)


@pytest.mark.parametrize("schema", [
    {"properties": {"a": {"pattern": "^x"}}},
    {"patternProperties": {"^x": {}}},
    {"multipleOf": 0.1},
    {"contentEncoding": "base64"},
    {"unevaluatedProperties": False},
    {"items": {"minContains": 1}},
    {"$id": "https://example.com/s", "type": "object"},
    {"$ref": "https://example.com/other"},
    {"$ref": "#/properties"},  # a map of schemas, not a schema
    {"$ref": "#/x-extension", "x-extension": {"pattern": "^x"}},  # into an unknown keyword
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    {"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}},
    {"$dynamicRef": "#meta"},
])
def test_keywords_the_engines_differ_on_are_outside_the_class(schema: Any) -> None:
    assert not rs_exact(schema)
    assert not prepare_root(schema).fast_accepts({})


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"pattern": {"type": "string"},  # a property named so
                                      "format": {"type": "string", "format": "uri"}},
     "required": ["pattern"], "additionalProperties": False},
    {"$defs": {"n": {"type": "integer", "minimum": 1}},
     "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"$ref": "#"}}, "x-vendor": {"any": 1}},
    {"anyOf": [{"required": ["a"]}, {"not": {"properties": {"b": {"const": 1}}}}]},
])
def test_plain_tool_schemas_are_in_the_class(schema: Any) -> None:
    assert rs_exact(schema)


def test_a_witness_over_fast_checked_schemas_is_the_same_decision() -> None:
    a = {"type": "object", "properties": {"q": {"type": "string", "minLength": 2}},
         "required": ["q"]}
    b = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 3},
                                          "n": {"type": "integer"}}}
    decision = decide(a, b)
    assert decision.outcome == "overlap"
    assert prepare_root(a).accepts(decision.witness) and prepare_root(b).accepts(
        decision.witness)
