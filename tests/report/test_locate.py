"""SARIF regions: the line where the value at a JSON pointer starts, checked against an
independent oracle (line counts of ``json.dumps(indent=2)``) on generated documents."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from histor_sign.canonical import escape_pointer_token
from histor_sign.report._locate import pointer_lines

KEYS = ["a", "tools", "a/b", "~x", 'q"uote', "back\\slash", "é", "\u2028", "0", ""]


def value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([1, "s", None, True, "x{y[z", [], {}])
    if roll < 0.65:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {k: value(rng, depth + 1) for k in rng.sample(KEYS, rng.randint(0, 4))}


def height(v: Any) -> int:
    return json.dumps(v, indent=2).count("\n") + 1


def oracle(v: Any, ptr: str = "", line: int = 1) -> dict[str, int]:
    """Every pointer's start line, from the heights of the values before it."""
    out = {ptr: line}
    items = (list(v.items()) if isinstance(v, dict)
             else list(enumerate(v)) if isinstance(v, list) else [])
    at = line + 1
    for key, child in items:
        out.update(oracle(child, f"{ptr}/{escape_pointer_token(str(key))}", at))
        at += height(child)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_lines_match_the_oracle(seed: int) -> None:
    rng = random.Random(seed)
    doc = value(rng, 0)
    text = json.dumps(doc, indent=2, ensure_ascii=rng.random() < 0.5)
    every = oracle(doc)
    limit = rng.randint(0, 5)  # wanted pointers no deeper than this: deeper values skipped
    wanted = {p for p in every if p.count("/") <= limit and rng.random() < 0.7}
    assert pointer_lines(text, wanted) == {p: every[p] for p in wanted}


def test_tool_pointers_of_a_catalog() -> None:
    doc = {"tools": [{"name": f"t{i}", "inputSchema": {"type": "object", "properties": {
        "x": {"enum": [[1], {"/": "]"}]}}}} for i in range(5)]}
    text = json.dumps(doc, indent=2)
    every = oracle(doc)
    wanted = {f"/tools/{i}" for i in range(5)}
    assert pointer_lines(text, wanted) == {p: every[p] for p in wanted}
    assert pointer_lines(text, {"/tools/9"}) == {}
