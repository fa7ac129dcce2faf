"""orjson's sorted-key bytes against ``rfc8785`` (the referee), wherever histor-sign uses them.

``canonical.jcs_of_vouched`` trusts orjson for what the reader vouched for; ``canonical_bytes``
uses it for exact strings and manifest keys. These tests generate JSON text and Python
values — astral-plane keys beside U+E000–U+FFFF ones, control characters, DEL, U+2028/9,
integers around ±(2^53−1), floats of every magnitude, duplicate keys — and compare bytes.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign.canonical import (
    _orjson_writes_jcs,
    canonical_bytes,
    canonical_object_from_parts,
    jcs_of_vouched,
    jcs_of_vouched_many,
    parse_json,
    parse_json_vouched,
)
from histor_sign.errors import InputError
from histor_sign.models import parse_catalog, parse_catalog_bytes
from histor_sign.revision import digests

_CHARS = st.sampled_from([
    "a", "B", "~", "/", ":", '"', "\\", "\x00", "\x01", "\b", "\t", "\n", "\f", "\r", "\x1f",
    "\x7f", "\u0080", "\u00e9", "\u2028", "\u2029", "\ud7ff", "\ue000", "\uffff", "\U00010000",
    "\U0001f600", "\U0010ffff", "\x00,\x00",
])
_TEXT = st.lists(_CHARS, max_size=5).map("".join)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.1, 1e-7, 1.5e-7, 1e-6, 0.00001, 0.0001, 123456.789, 1e21, 1e-300, 5e-324, -0.0, 0.5])
_INTS = st.integers(min_value=-(2**53) - 2, max_value=2**53 + 2) | st.integers()
_VALUES = st.recursive(
    st.none() | st.booleans() | _INTS | _FLOATS | _TEXT,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(_TEXT, children, max_size=4),
    max_leaves=12,
)


def _referee(value: object) -> bytes | str:
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        return "refused"


def _ours(value: object) -> bytes | str:
    try:
        return canonical_bytes(value)
    except InputError:
        return "refused"


def _parts(value: object) -> list[object]:
    """The value and every part of it."""
    out = [value]
    if isinstance(value, dict):
        for item in value.values():
            out += _parts(item)
    elif isinstance(value, list):
        for item in value:
            out += _parts(item)
    return out


# The two 1,500-value properties (~3 s each, mostly Hypothesis generating values) are deep
# checks, slow-marked so the quick set stays quick; the module's example-based tests of the
# same writers stay in it.
@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_VALUES)
def test_canonical_bytes_agrees_with_rfc8785(value: object) -> None:
    assert _ours(value) == _referee(value)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(_VALUES)
def test_a_vouched_value_is_written_by_orjson_exactly_as_rfc8785_writes_it(value: object) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except ValueError:
        return
    for data in (text, json.dumps(value).encode()):  # raw characters and \u escapes
        try:
            read, vouched = parse_json_vouched(data, "t")
        except InputError:
            continue
        assert repr(read) == repr(parse_json(data, "t"))
        if not vouched:
            continue
        parts = _parts(read)
        assert [jcs_of_vouched(p) for p in parts] == [_referee(p) for p in parts]
        assert jcs_of_vouched_many(parts) == [_referee(p) for p in parts]


@pytest.mark.parametrize(("text", "vouched"), [
    ('{"\\ud83d\\ude00": 1, "\\uffff": 2}', False),  # a surrogate pair escape
    ('{"\U0001f600": 1, "\uffff": 2}', False),  # orjson would put U+FFFF first
    ('{"\ue000": 1, "\uffff": 2, "\u00e9": [0.5, 1e-7, 123.25]}', True),
    ('{"a": 1.0, "b": -0.0, "c": 1e2}', True),  # integral floats become ints when read
])
def test_what_the_reader_vouches_for(text: str, vouched: bool) -> None:
    value, got = parse_json_vouched(text.encode(), "t")
    assert got is vouched
    assert canonical_bytes(value) == rfc8785.dumps(value)
    if got:
        assert jcs_of_vouched(value) == rfc8785.dumps(value)


def test_a_float_orjson_writes_otherwise_is_not_vouched_for() -> None:
    assert not _orjson_writes_jcs(b"[1.0]", {1.0})  # orjson "1.0", JCS "1"
    assert not _orjson_writes_jcs(b"[0]", {-0.0})
    assert _orjson_writes_jcs(b"[0.5]", {0.5})
    assert not _orjson_writes_jcs("[0.5, \"\U0001f600\"]".encode(), {0.5})


def test_many_floats_of_every_magnitude() -> None:
    rng = random.Random(29)
    floats = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-330, 308) for _ in range(20000)]
    floats += [float.fromhex(f"0x1.{rng.getrandbits(52):013x}p{rng.randint(-1074, 1023)}")
               for _ in range(20000)]
    checked = 0
    for number in floats:
        if number != number or number in (float("inf"), float("-inf")):
            continue
        data = json.dumps([number]).encode()
        try:
            value, vouched = parse_json_vouched(data, "t")
        except InputError:  # integral beyond ±(2^53−1): refused, as rfc8785 would
            continue
        if vouched:
            checked += 1
            assert jcs_of_vouched(value) == rfc8785.dumps(value), number
    assert checked > 10000  # most are vouched for (small ones: orjson writes them as JCS)


def test_every_code_point_is_escaped_as_rfc8785_escapes_it() -> None:
    text = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    assert canonical_bytes(text) == rfc8785.dumps(text)
    assert canonical_bytes({text: text[:50]}) == rfc8785.dumps({text: text[:50]})
    with pytest.raises(InputError):
        canonical_bytes("\ud800")


def test_parts_are_split_where_they_end_even_around_nul_characters() -> None:
    values = [{"a": "\x00,\x00,"}, [",\x00,"], "x", {}, [], 1, None, {"b": [{"c": "\x00"}]}]
    assert jcs_of_vouched_many(values) == [rfc8785.dumps(v) for v in values]
    assert jcs_of_vouched_many([]) == []


def test_nesting_orjson_refuses_falls_back_to_canonical_bytes() -> None:
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    assert jcs_of_vouched(deep) == rfc8785.dumps(deep)
    assert jcs_of_vouched_many([deep, 2]) == [rfc8785.dumps(deep), b"2"]


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_TEXT, st.binary(min_size=1, max_size=3).map(
    lambda b: json.dumps(b.hex()).encode()), max_size=6))
def test_manifest_from_parts_agrees_with_rfc8785(parts: dict[str, bytes]) -> None:
    try:
        expected = rfc8785.dumps({k: json.loads(v) for k, v in parts.items()})
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        with pytest.raises(InputError):
            canonical_object_from_parts(parts)
        return
    assert canonical_object_from_parts(parts) == expected


def _catalog(rng: random.Random, n: int) -> bytes:
    keys = ["a", "\u00e9", "\ue000", "\uffff", "\U0001f600", "z:", "\\", '"']
    tools = []
    for i in range(n):
        props = {rng.choice(keys) + str(j): {"minimum": rng.choice([0.5, 1, 1.0, 1e-7, -3])}
                 for j in range(3)}
        tools.append({"name": f"t{i}{rng.choice(keys)}", "description": rng.choice(keys) * 3,
                      "inputSchema": {"type": "object", "properties": props},
                      "annotations": {"readOnlyHint": bool(i % 2)}, "_meta": {"x": 1}})
    return json.dumps({"tools": tools}, ensure_ascii=rng.random() < 0.5).encode()


@pytest.mark.parametrize("seed", range(40))
def test_a_catalog_read_from_bytes_digests_as_a_parsed_one(seed: int) -> None:
    rng = random.Random(seed)
    data = _catalog(rng, rng.randint(0, 12))
    from_bytes = parse_catalog_bytes(data, "t")
    parsed = parse_catalog(parse_json(data, "t"), "t")
    assert digests(from_bytes) == digests(parsed)
    for tool in from_bytes.tools:
        assert tool.canonical_projection() == rfc8785.dumps(tool.projected())


def test_a_tool_read_from_bytes_keeps_the_bytes_it_was_read_with() -> None:
    data = b'{"tools": [{"name": "a", "description": "read", "inputSchema": {}}]}'
    tool = parse_catalog_bytes(data, "t").tools[0]
    before = tool.canonical_projection()
    tool.raw["description"] = "changed"  # type: ignore[index]  # raw is evidence: never do this
    assert tool.canonical_projection() == before
    # A tool made anew from it computes its bytes from what it holds.
    replaced = dataclasses.replace(tool, raw={**tool.raw})
    assert replaced.canonical_projection() == rfc8785.dumps(replaced.projected())


@pytest.mark.parametrize("data", [
    b'{"tools": [{"name": "a", "name": "b", "inputSchema": {}}]}',
    b'{"tools": [{"name": "a", "inputSchema": {"x": 9007199254740992}}]}',
    b'{"tools": [{"name": "a", "inputSchema": {"x": NaN}}]}',
    b'{"tools": [{"name": "\\ud800", "inputSchema": {}}]}',
    b'{"tools": [{"inputSchema": {}}]}',
    b'{"tools": 1}',
    b'[' * 300 + b']' * 300,
])
def test_parse_catalog_bytes_refuses_as_parse_catalog_of_parse_json(data: bytes) -> None:
    with pytest.raises(InputError) as ours:
        parse_catalog_bytes(data, "t")
    with pytest.raises(InputError) as theirs:
        parse_catalog(parse_json(data, "t"), "t")
    assert str(ours.value) == str(theirs.value)
