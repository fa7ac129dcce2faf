"""The decision against the official JSON-Schema-Test-Suite (draft2020-12 + optional).

Vendored at a pinned commit (tests/data/README.md). Within each test file, every pair of
group schemas (the schema with itself included) is decided without the tool-argument object
constraint. An instance is valid for a group when the suite labels it valid there, or when
``jsonschema-rs`` (ECMA-262 regexes, exact numbers) accepts it; a pair sharing such an
instance must never be ``disjoint``. Every witness must validate under all three judges:
``jsonschema`` as published, ``jsonschema-rs`` and the exact validator.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest

from histor_sign._schema.algebra import Bounds
from histor_sign._schema.validation import Untrusted, prepare_root
from histor_sign._schema.witness import decide_roots

SUITE = Path(__file__).parents[1] / "data" / "json-schema-test-suite" / "draft2020-12"
FILES = sorted(SUITE.rglob("*.json"))
MAX_PAIRS_PER_FILE = 1000  # every pair today (the largest file has 990); ~2 s in all
BOUNDS = Bounds(seconds=0.5)


def _no_remote(uri: str) -> Any:
    raise ValueError("no remote references in tests")


def _rs(schema: Any) -> Any:
    try:
        return jsonschema_rs.validator_for(schema, retriever=_no_remote)
    except Exception:
        return None


def _rs_valid(validator: Any, instance: Any) -> bool:
    try:
        return validator is not None and bool(validator.is_valid(instance))
    except Exception:
        return False


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and type(a) is type(b)


def _judges_accept(schema: Any, instance: Any) -> bool:
    """``jsonschema`` as published, ``jsonschema-rs`` and the exact validator all accept."""
    cls = jsonschema.validators.validator_for(schema, jsonschema.Draft202012Validator)
    try:
        plain = bool(cls(schema).is_valid(instance))
        rs = jsonschema_rs.validator_for(schema, retriever=_no_remote, validate_formats=False)
        fast = bool(rs.is_valid(instance))
    except Exception:  # an unresolvable reference: no judge accepts
        return False
    return plain and fast and prepare_root(schema).accepts(instance)


def test_suite_is_vendored() -> None:
    assert len(FILES) > 70
    assert (SUITE / "optional" / "ecmascript-regex.json").is_file()


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(SUITE)))
def test_pairs_sharing_a_valid_instance_are_never_disjoint(path: Path) -> None:
    groups = json.loads(path.read_text())
    schemas = [g["schema"] for g in groups]
    labelled = [t["data"] for g in groups for t in g["tests"]]
    validators = [_rs(s) for s in schemas]
    valid: list[list[Any]] = []
    for i, group in enumerate(groups):
        mine = [t["data"] for t in group["tests"] if t["valid"]]
        mine += [x for x in labelled if _rs_valid(validators[i], x)
                 and not any(_same(x, t["data"]) and not t["valid"] for t in group["tests"])]
        valid.append(mine)
    roots = [prepare_root(s, f"{path.stem}[{i}]") for i, s in enumerate(schemas)]
    pairs = list(itertools.combinations_with_replacement(range(len(groups)), 2))
    random.Random(path.name).shuffle(pairs)
    wrong: list[Any] = []
    for i, j in pairs[:MAX_PAIRS_PER_FILE]:
        d = decide_roots(roots[i], roots[j], BOUNDS, arguments=False)
        if d.outcome == "disjoint":
            shared = [x for x in valid[i] if any(_same(x, y) for y in valid[j])]
            if shared:
                wrong.append((groups[i]["description"], groups[j]["description"], shared[0]))
        elif d.outcome == "overlap":
            try:
                ok = _judges_accept(schemas[i], d.witness) and _judges_accept(
                    schemas[j], d.witness)
            except Untrusted:
                ok = False
            if not ok:
                wrong.append((groups[i]["description"], groups[j]["description"], d.witness))
    assert not wrong, wrong[:5]
