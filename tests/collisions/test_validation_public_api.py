"""The validation stack uses ``jsonschema`` through its public API and leaves it untouched.

``histor_sign._schema.validation`` implements the regex keywords (``pattern``,
``patternProperties``, ``additionalProperties``, ``unevaluatedProperties``) itself, on
``validators.extend``, ``descend`` and ``evolve``, matching with RE2 where that is exact.
These tests check that nothing in ``jsonschema`` is patched, that those keywords give the
published answers and messages (the official JSON-Schema-Test-Suite, every dialect, plus the
paths the suite does not reach), and that they stay linear where ``re`` would backtrack.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema._keywords
import jsonschema._legacy_keywords
import jsonschema._utils
import pytest
import referencing
from cli_harness import bytecode_env

from histor_sign._schema.validation import (
    PATTERN_UNDECIDABLE,
    SchemaProblem,
    SchemaRoot,
    Untrusted,
    compile_validator,
    meta_problem,
    plain_class,
    prepare_root,
    validator_class,
)

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "data" / "json-schema-test-suite" / "draft2020-12"
KEYWORDS = ("pattern", "patternProperties", "additionalProperties", "unevaluatedProperties")
#: Suite files that exercise a reimplemented keyword (remote references are not served here).
FILES = sorted(p for p in SUITE.rglob("*.json") if p.name != "refRemote.json"
               and any(f'"{k}"' in p.read_text() for k in KEYWORDS))
URIS = {
    "2020-12": "https://json-schema.org/draft/2020-12/schema",
    "2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft-07": "http://json-schema.org/draft-07/schema#",
    "draft-06": "http://json-schema.org/draft-06/schema#",
    "draft-04": "http://json-schema.org/draft-04/schema#",
}
PUBLISHED = {
    "2020-12": jsonschema.Draft202012Validator,
    "2019-09": jsonschema.Draft201909Validator,
    "draft-07": jsonschema.Draft7Validator,
    "draft-06": jsonschema.Draft6Validator,
    "draft-04": jsonschema.Draft4Validator,
}


def _in(dialect: str, schema: Any) -> Any:
    return {**schema, "$schema": URIS[dialect]} if isinstance(schema, dict) else schema


def _outcome(check: Any, instance: Any) -> Any:
    try:
        return check(instance)
    except RecursionError:
        return "RecursionError"
    except Exception as exc:
        return type(exc).__name__


def _errors(validator: Any, instance: Any) -> Any:
    """Everything a caller can read off the errors (the subschema aside: the exact stack
    validates the root without its ``$schema``), or the exception raised."""
    try:
        return [(e.message, list(e.absolute_path), list(e.absolute_schema_path), e.validator,
                 e.validator_value) for e in validator.iter_errors(instance)]
    except RecursionError:
        return "RecursionError"
    except Exception as exc:
        return type(exc).__name__


def _published(dialect: str, schema: Any) -> Any:
    return PUBLISHED[dialect](schema, registry=referencing.Registry())


#: The regex guard has always run jsonschema's 2020-12 ``unevaluatedProperties`` (its
#: evaluated-keys walk) in 2019-09 too; kept, so scan and replay answer as before.
GUARDED_2019 = jsonschema.validators.extend(jsonschema.Draft201909Validator, {
    "unevaluatedProperties": jsonschema.Draft202012Validator.VALIDATORS["unevaluatedProperties"],
})


def _ours(dialect: str, schema: Any) -> Any:
    return plain_class(dialect)(schema, registry=referencing.Registry())


# --- jsonschema is left as published ---------------------------------------------------

def _published_state() -> Any:
    return (
        [(cls, dict(cls.VALIDATORS)) for cls in PUBLISHED.values()],
        dict(jsonschema.validators._META_SCHEMAS),
        dict(jsonschema.validators._VALIDATORS),
    )


def test_using_the_stack_patches_nothing_in_jsonschema() -> None:
    before = _published_state()
    for dialect in URIS:
        schema = _in(dialect, {
            "type": "object", "properties": {"n": {"$ref": "#"}, "s": {"pattern": "^a+$"}},
            "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False,
            "unevaluatedProperties": False, "multipleOf": 1,
        })
        if dialect != "draft-04":  # scan and replay analyse the others only
            root = prepare_root(schema, "t")
            assert root.usable, root.problem
            assert root.accepts({"s": "aa", "x1": 1, "n": {"s": "a"}})
            assert not root.accepts({"s": "b"})
            with pytest.raises(Untrusted):
                root.accepts({"s": "\u00e9"})
            assert root.judges_reject({"zz": 1}) is not None
        assert meta_problem(schema, dialect) is None
        assert validator_class(dialect, guard_regex=False)(schema).is_valid({"x2": 2})
        for engine in ("jsonschema", "jsonschema-rs"):
            checked = compile_validator(schema, engine)
            assert [f.keyword for f in checked.failures({"s": "b"})] == ["pattern"]
    assert jsonschema._keywords.re is re
    assert jsonschema._utils.re is re
    assert jsonschema._legacy_keywords.re is re
    assert _published_state() == before


def test_the_package_reads_nothing_private_from_jsonschema() -> None:
    private = re.compile(r"jsonschema\._|from jsonschema import _")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "histor_sign").rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if private.search(line)]
    assert not found


# --- same answers as jsonschema ---------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SUITE)))
def test_regex_keywords_answer_as_published_on_the_test_suite(path: Path) -> None:
    """Every case, in every dialect: the published judge (float ``multipleOf``, Python ``re``
    meaning) gives jsonschema's errors exactly; the exact classes give its answers or, with
    the regex guard, ``Untrusted``."""
    wrong = []
    for group in json.loads(path.read_text()):
        for dialect in URIS:
            schema = _in(dialect, group["schema"])
            published = _published(dialect, schema)
            guarded = GUARDED_2019(schema, registry=referencing.Registry()) if (
                dialect == "2019-09") else published
            ours = _ours(dialect, schema)
            exact = validator_class(dialect, guard_regex=False)
            root = prepare_root(schema, check=False)
            for test in group["tests"]:
                where = (group["description"], test["description"], dialect)
                instance = test["data"]
                expected = _errors(published, instance)
                if _errors(ours, instance) != expected:
                    wrong.append((*where, "judge", expected, _errors(ours, instance)))
                if isinstance(expected, str) or "multipleOf" in json.dumps(schema):
                    continue
                valid = not expected
                if exact(schema, registry=referencing.Registry()).is_valid(instance) != valid:
                    wrong.append((*where, "exact", valid))
                try:
                    if root.accepts(instance) != guarded.is_valid(instance):
                        wrong.append((*where, "guarded", guarded.is_valid(instance)))
                except Untrusted:
                    pass
    assert not wrong, wrong[:5]


S19 = URIS["2019-09"]
S20 = URIS["2020-12"]
#: Paths the suite does not reach: a reference into a published meta-schema under
#: unevaluatedProperties, 2019-09's $recursiveRef, unresolvable references inside the
#: evaluated-keys walk, pattern unions, one message entry per error.
EDGES: list[tuple[str, Any, list[Any]]] = [
    ("2020-12", {"$ref": S20, "unevaluatedProperties": False},
     [{"type": "string"}, {"nope": 1}, {"properties": {"a": {}}}, {}]),
    ("2020-12", {"allOf": [{"$ref": S20}], "unevaluatedProperties": False},
     [{"type": "string"}, {"nope": 1}]),
    ("2019-09", {"$ref": S19, "unevaluatedProperties": False}, [{"type": "string"}, {"x": 1}]),
    ("2019-09", {"$recursiveAnchor": True, "properties": {"n": {"$recursiveRef": "#"}},
                 "patternProperties": {"^p": {}}, "unevaluatedProperties": False},
     [{"n": {"p1": 1}}, {"n": {"q": 1}}, {"p": 1, "n": {"n": {"zz": 1}}}]),
    ("2019-09", {"$recursiveAnchor": True, "allOf": [{"$recursiveRef": "#"}],
                 "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False},
     [{"a": 1}]),
    ("2019-09", {"allOf": [{"additionalProperties": {"type": "integer"}}],
                 "unevaluatedProperties": False}, [{"type": 1}, {"x": 1}, {"x": "s"}]),
    ("2020-12", {"unevaluatedProperties": False, "$ref": "#/nope"}, [{"a": 1}, 1]),
    ("2020-12", {"unevaluatedProperties": False, "allOf": [{"$ref": "#/$defs/missing"}]},
     [{"a": 1}]),
    ("2020-12", {"$id": "http://example.com/root", "$ref": "http://example.com/a/",
                 "$defs": {"a": {"$id": "a/", "$defs": {"b": {"properties": {"bb": {}}}},
                                 "allOf": [{"$ref": "#/$defs/b"}],
                                 "patternProperties": {"^p": {}}}},
                 "unevaluatedProperties": False}, [{"bb": 1}, {"p1": 1}, {"x": 1}]),
    ("2020-12", {"anyOf": [True, {"$ref": "#/$defs/f"}], "$defs": {"f": False, "t": True},
                 "allOf": [{"$ref": "#/$defs/t"}], "unevaluatedProperties": False},
     [{"a": 1}, {}]),
    ("2020-12", {"$defs": {"e": {"title": "no keyword"}}, "allOf": [{"$ref": "#/$defs/e"}],
                 "unevaluatedProperties": False}, [{"a": 1}, {}]),
    ("2020-12", {"patternProperties": {"": {}}, "additionalProperties": False}, [{"a": 1}]),
    ("2020-12", {"patternProperties": {"": {}, "a": {}}, "additionalProperties": False},
     [{"b": 1}]),
    ("2020-12", {"patternProperties": {"^a": {}, "b$": {"type": "string"}},
                 "additionalProperties": {"type": "integer"}},
     [{"ab": "s", "c": 1, "d": "x"}, {"xb": 1}]),
    ("2020-12", {"patternProperties": {"^x+$" + "(?:y)?" * 150: {}, "z" * 1500: {}},
                 "additionalProperties": False}, [{"xxx": 1}, {"q": 1}, {"z" * 1500: 1}]),
    ("2020-12", {"patternProperties": {"\\d": {}}, "additionalProperties": False},
     [{"\u0663": 1}, {"3": 1}, {"x": 1}]),
    ("2020-12", {"unevaluatedProperties": {"type": "integer", "minimum": 5}},
     [{"a": 1.5, "b": 6, "c": "s"}]),
    ("2020-12", {"if": {"patternProperties": {"^i": {"type": "integer"}}},
                 "then": {"properties": {"t": {}}}, "else": {"properties": {"e": {}}},
                 "unevaluatedProperties": False},
     [{"i": 1, "t": 1}, {"i": "s", "e": 1}, {"i": "s", "t": 1}]),
    ("2020-12", {"dependentSchemas": {"d": {"patternProperties": {"^x": {}}}},
                 "properties": {"d": {}}, "unevaluatedProperties": False},
     [{"d": 1, "x1": 1}, {"x1": 1}]),
    ("2020-12", {"propertyNames": {"pattern": "^[a-z]+$"},
                 "unevaluatedProperties": {"type": "string"}}, [{"ab": "x"}, {"A": "x"}]),
]


@pytest.mark.parametrize(("dialect", "schema", "instances"), EDGES)
def test_regex_keywords_answer_as_published_off_the_suite(
    dialect: str, schema: Any, instances: list[Any]
) -> None:
    for instance in instances:
        assert _errors(_ours(dialect, schema), instance) == _errors(
            _published(dialect, schema), instance), instance
        # the default registry too (no remote reference here, so nothing is fetched)
        ours, published = plain_class(dialect)(schema), PUBLISHED[dialect](schema)
        assert _outcome(ours.is_valid, instance) == _outcome(published.is_valid, instance)


# --- a $ref to the root keeps this stack's rules -----------------------------------------

def test_a_reference_to_a_root_declaring_its_dialect_keeps_the_exact_rules() -> None:
    """jsonschema picks a class from ``$schema`` wherever it enters a schema; the stack
    validates the root without it, so ``"$ref": "#"`` keeps exact ``multipleOf`` and the
    regex guard below the top level as at it."""
    schema = {"$schema": S20, "type": ["object", "number"], "multipleOf": 0.1,
              "properties": {"a": {"$ref": "#"}, "p": {"type": "string", "pattern": "^x$"}}}
    root = prepare_root(schema, "t")
    assert root.accepts(0.3) and root.accepts({"a": 0.3}) and root.accepts({"a": {"a": 0.3}})
    assert not root.accepts({"a": 0.25})
    for value in ({"p": "\u00e9"}, {"a": {"p": "\u00e9"}}, {"a": {"a": {"p": "\u00e9"}}}):
        with pytest.raises(Untrusted):
            root.accepts(value)
    unsafe = {**schema, "properties": {"a": {"$ref": "#"}, "q": {"pattern": "(?i)x"}}}
    for value in ({"q": "X"}, {"a": {"q": "X"}}):
        with pytest.raises(Untrusted):
            prepare_root(unsafe, "t").accepts(value)
    # the guard's reference engine: same rules, and failures name the caller's schema
    checked = compile_validator(schema, "jsonschema")
    assert checked.is_valid({"a": {"a": 0.3}})
    with pytest.raises(SchemaProblem) as undecidable:
        checked.is_valid({"a": {"p": "\u00e9"}})
    assert undecidable.value.code == PATTERN_UNDECIDABLE
    failures = list(checked.failures({"a": 0.25, "p": "y"}))
    assert {(f.path, f.keyword) for f in failures} == {(("a",), "multipleOf"), (("p",), "pattern")}
    (top,) = checked.failures("s")
    assert top.keyword == "type" and top.schema is schema


# --- linear where re backtracks ------------------------------------------------------------

_CHILD = r"""
import json, sys, time
from histor_sign._schema.validation import SchemaRoot, plain_class, prepare_root, Untrusted
out = []
for dialect, schema, instance in json.loads(sys.stdin.read()):
    t = time.monotonic()
    try:
        exact = prepare_root(schema, "t").accepts(instance)
    except Untrusted:
        exact = None
    judged = plain_class(dialect)(schema).is_valid(instance)  # first: no exact class built
    out.append({"exact": exact, "judged": judged, "seconds": time.monotonic() - t})
print(json.dumps(out))
"""
EVIL = "a" * 40 + "!"
REDOS = r"^(a+)+$"  # minutes for Python re on EVIL; ECMA-safe


def test_regex_keywords_are_linear_on_every_path() -> None:
    """Each path below backtracks in Python ``re`` on EVIL; none may. Judges first, in a
    fresh interpreter: they must be linear on their own, not after the exact class ran."""
    cases = [
        ("2020-12", {"type": "object", "properties": {"x": {"pattern": REDOS}}}, {"x": EVIL}),
        ("2020-12", {"patternProperties": {REDOS: {"type": "string"}}, "minProperties": 2},
         {EVIL: 1}),
        ("2020-12", {"patternProperties": {REDOS: {}}, "additionalProperties": False},
         {EVIL: 1}),
        # a union of safe patterns too long to be safe as one pattern
        ("2020-12", {"patternProperties": {REDOS + "(?:y)?" * 150: {}, "z" * 1500: {}},
                     "additionalProperties": False}, {EVIL: 1}),
        ("2020-12", {"patternProperties": {REDOS: {}}, "unevaluatedProperties": False},
         {EVIL: 1}),
        # the evaluated-keys walk through a reference
        ("2020-12", {"$defs": {"t": {"patternProperties": {REDOS: {}}}}, "$ref": "#/$defs/t",
                     "unevaluatedProperties": False}, {EVIL: 1}),
        # 2019-09's own walk (jsonschema's _legacy_keywords)
        ("2019-09", {"$schema": S19, "patternProperties": {REDOS: {}},
                     "unevaluatedProperties": False}, {EVIL: 1}),
        # a reference to a root that declares its dialect
        ("2020-12", {"$schema": S20, "properties": {"n": {"$ref": "#"}, "s": {"pattern": REDOS}}},
         {"n": {"n": {"s": EVIL}}}),
        ("draft-07", {"$schema": URIS["draft-07"], "properties": {
            "n": {"$ref": "#"}, "s": {"pattern": REDOS}}}, {"n": {"s": EVIL}}),
    ]
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(cases), cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", **bytecode_env()})
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert max(r["seconds"] for r in results) < 10.0, results
    assert all(r["exact"] is False and r["judged"] is False for r in results), results


def test_schema_root_validator_is_built_without_the_dialect_keyword() -> None:
    schema = {"$schema": S20, "type": "object"}
    root = SchemaRoot(schema=schema)
    assert "$schema" not in root.validator().schema
    assert schema == {"$schema": S20, "type": "object"}
