"""The fast I-JSON reader against the strict one: same value or the same error, always.

``parse_json`` lets the C scanner build objects and only counts their members (a duplicate
key leaves fewer members than the text has colons outside strings) and judges integers only
when a 16-digit run exists. These properties generate JSON *text* — with duplicate keys,
integers around ±(2^53−1), number spellings I-JSON refuses, lone surrogate escapes, and
keys and strings full of colons, quotes and backslashes — and compare its outcome with the
strict reader's, which judges every object's pairs and every integer by a hook.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign._limits import DEFAULT_MAX_DEPTH
from histor_sign.canonical import (
    _make_hooks,
    _ParseState,
    _raise_first_violation,
    nesting_depth,
    parse_json,
)
from histor_sign.errors import InputError, LimitExceeded

_NUMBERS = st.sampled_from([
    "0", "-0", "7", "-12", "0.25", "1.0", "-0.0", "1e2", "1E-7", "0.1", "123.456",
    "9007199254740991", "-9007199254740991", "9007199254740992", "-9007199254740992",
    "12345678901234567890", "1234567890123456", "900719925474099.5", "1e20", "1e400",
    "0.10000000000000001", "9007199254740991.0", "NaN", "-Infinity",
]) | st.integers(min_value=-(2**60), max_value=2**60).map(str)

_STRING_BODIES = st.lists(
    st.sampled_from(["a", "k", ":", "\\\"", "\\\\", "\\\\\"", "{", "]", "1234567890123456",
                     "\\ud800", "\\udc00x", "\\ud83d\\ude00", "\u00e9", "\U0001f600", " ",
                     "\\n", "\\u003a"]),
    max_size=4,
).map("".join)

_STRINGS = _STRING_BODIES.map(lambda body: f'"{body}"')
_KEYS = st.one_of(st.sampled_from(['"a"', '"b"', '"a:"', '":"', '"\\u0061"']), _STRINGS)

_SCALARS = _NUMBERS | _STRINGS | st.sampled_from(["true", "false", "null"])


def _object(pairs: list[tuple[str, str]]) -> str:
    return "{" + " , ".join(f"{k} :{v}" for k, v in pairs) + "}"


_JSON_TEXTS = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
    | st.lists(st.tuples(_KEYS, children), max_size=4).map(_object),
    max_leaves=16,
)


def _strict_outcome(data: bytes) -> object:
    """What the strict reader (every object and integer through a hook) makes of ``data``."""
    try:
        state = _ParseState()
        try:
            value = json.loads(data.decode("utf-8"), **_make_hooks(state))
        except json.JSONDecodeError:
            return "not JSON"
        _raise_first_violation(value, "t")
        if nesting_depth(data, DEFAULT_MAX_DEPTH) > DEFAULT_MAX_DEPTH:
            return "too deep"
    except InputError as exc:
        return str(exc)
    return _typed(value)


def _fast_outcome(data: bytes) -> object:
    try:
        return _typed(parse_json(data, "t"))
    except LimitExceeded:
        return "too deep"
    except InputError as exc:
        return "not JSON" if "not valid JSON" in str(exc) else str(exc)


def _typed(value: object) -> object:
    """The value with every scalar's type kept (so 1 and 1.0 differ) and key order kept."""
    if isinstance(value, dict):
        return ("object", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("array", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


# 1,500 generated texts (~4 s, nearly all of it Hypothesis generating them): a deep check,
# slow-marked so the quick set stays quick; the repeated-key property below stays in it.
@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_JSON_TEXTS)
def test_fast_reader_agrees_with_the_strict_reader(text: str) -> None:
    data = text.encode("utf-8")
    assert _fast_outcome(data) == _strict_outcome(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_KEYS, _SCALARS), min_size=2, max_size=6))
def test_a_repeated_key_is_always_refused(pairs: list[tuple[str, str]]) -> None:
    doubled = [*pairs, pairs[0]]  # the first key again, perhaps spelled the same
    data = json.dumps({"x": [1]}).encode()[:-1] + b',"y":' + _object(doubled).encode() + b"}"
    outcome = _fast_outcome(data)
    assert outcome == _strict_outcome(data)
    assert isinstance(outcome, str) and outcome  # refused: duplicate key or another rule


def test_duplicate_key_hidden_behind_colons_in_strings_is_refused() -> None:
    data = b'{"a:":":","b":"\\":","a:":1}'
    assert _fast_outcome(data) == 't: duplicate object key "a:" at /'
