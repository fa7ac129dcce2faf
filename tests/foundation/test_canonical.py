"""Strict I-JSON parsing and RFC 8785 canonical bytes."""

from __future__ import annotations

import json

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign._limits import DEFAULT_MAX_DEPTH
from histor_sign.canonical import (
    MAX_SAFE_INTEGER,
    canonical_bytes,
    escape_pointer_token,
    fits_json_bound,
    nesting_depth,
    parse_json,
    pointer,
    pointer_parts,
    unescape_pointer_token,
)
from histor_sign.errors import InputError, LimitExceeded


def test_ordinary_number_spellings_canonicalize_per_rfc8785() -> None:
    value = parse_json(b'{"a":0.1,"b":1.0,"c":1e2,"d":-0,"e":-0.0,"f":1E-7,"g":123.456}', "t")
    assert canonical_bytes(value) == b'{"a":0.1,"b":1,"c":100,"d":0,"e":0,"f":1e-7,"g":123.456}'


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (b'{"a":1,"a":2}', 'duplicate object key "a" at /'),
        (b'{"x":[{"k":1,"k":1}]}', 'duplicate object key "k" at /x/0'),
        (b'{"n":NaN}', "NaN is not a JSON number at /n"),
        (b'[Infinity]', "Infinity is not a JSON number at /0"),
        (b'{"n":-Infinity}', "-Infinity is not a JSON number at /n"),
        (b'{"big":79228162514264337593543950336}', "outside ±(2^53−1) at /big"),
        (b'{"big":9007199254740992}', "outside ±(2^53−1) at /big"),
        (b'{"f":0.10000000000000000001}', "changes value as a double (becomes 0.1) at /f"),
        (b'{"f":1e400}', "outside the range of a double at /f"),
        (b'{"f":1e20}', "number 1e20 is an integer outside ±(2^53−1) at /f"),
        (b'{"f":-9007199254740992.0}', "is an integer outside ±(2^53−1) at /f"),
        (b'{"f":9007199254740992e0}', "is an integer outside ±(2^53−1) at /f"),
        (b'{"s":"\\ud800"}', "lone UTF-16 surrogate at /s"),
        (b'{"\\udfff":1}', "object key contains a lone UTF-16 surrogate at /"),
        (b'{"a~b/c":{"d":NaN}}', "at /a~0b~1c/d"),
    ],
)
def test_violations_are_rejected_with_a_pointer(text: bytes, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        parse_json(text, "in.json")
    assert str(info.value).startswith("in.json: ")
    assert fragment in str(info.value)


def test_max_safe_integer_is_accepted() -> None:
    assert parse_json(b"[9007199254740991,-9007199254740991]", "t") == [2**53 - 1, -(2**53 - 1)]


def test_valid_surrogate_pair_escape_is_accepted() -> None:
    assert parse_json(b'"\\ud83d\\ude00"', "t") == "\U0001f600"


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty file"),
        (b"  \n", "empty file"),
        (b'{"a":"\xff"}', "invalid UTF-8 at byte 6"),
        (b"\xef\xbb\xbf{}", "byte order mark"),
        (b"{", "not valid JSON"),
        (b'{"a":1} x', "not valid JSON"),
    ],
)
def test_malformed_bytes_are_rejected(data: bytes, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        parse_json(data, "t")


def test_deep_nesting_is_a_clean_limit_error() -> None:
    for depth in (300, 100_000):
        with pytest.raises(LimitExceeded, match="nesting is deeper than the limit"):
            parse_json(b"[" * depth + b"]" * depth, "t")
    assert parse_json(b"[" * 256 + b"]" * 256, "t") is not None


def test_nesting_depth_ignores_brackets_inside_strings() -> None:
    assert nesting_depth(b'{"a":"[[[[{{{\\"]]","b":[[1]]}', 100) == 3


def test_size_bound() -> None:
    with pytest.raises(LimitExceeded):
        parse_json(b"[1]" + b" " * 100, "t", max_bytes=50)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53 - 1), max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canonical_bytes_equal_rfc8785(value: object) -> None:
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parsed_floats_canonicalize_like_rfc8785(number: float) -> None:
    text = repr(number).encode()
    if number.is_integer() and abs(number) > MAX_SAFE_INTEGER:
        # An integral value outside ±(2^53−1) is refused however it is spelled.
        with pytest.raises(InputError, match="integer outside"):
            parse_json(text, "t")
        return
    parsed = parse_json(text, "t")
    assert canonical_bytes(parsed) == rfc8785.dumps(number)


def test_astral_keys_sort_by_utf16_code_units() -> None:
    value = {"\U0001f600": 1, "\ufb01": 2}
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert canonical_bytes(value).startswith('{"\U0001f600"'.encode())


def test_round_trip_of_real_corpus_is_stable(corpus_tools: list[dict[str, object]]) -> None:
    data = json.dumps(corpus_tools).encode()
    parsed = parse_json(data, "corpus")
    assert canonical_bytes(parsed) == rfc8785.dumps(parsed)


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_nesting_depth_matches_the_parsed_structure(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert nesting_depth(text.encode("utf-8", "surrogatepass"), 1000) == _depth(value)


# --- canonical_bytes refuses exactly what rfc8785 refuses ---------------------------------


def _rfc8785_outcome(value: object) -> bytes | None:
    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError):
        return None


def _ours(value: object) -> bytes | None:
    try:
        return canonical_bytes(value)
    except InputError:
        return None


def test_large_integers_and_non_string_keys_raise_input_error() -> None:
    for bad in ({"a": 2**60}, 2**53, -(2**53), [1, {"b": -(2**70)}],
                {1: "x"}, {None: 1}, {True: 1}, {1.5: 1}, {("t",): 1},
                {"\ud800": 1}, "\udfff", float("nan"), {"a": b"bytes"}):
        with pytest.raises(InputError):
            canonical_bytes(bad)
        assert _rfc8785_outcome(bad) is None, bad
    assert canonical_bytes({"a": 2**53 - 1, "b": -(2**53 - 1)}) == (
        b'{"a":9007199254740991,"b":-9007199254740991}')


@settings(max_examples=500, deadline=None)
@given(st.integers() | st.integers(min_value=-(2**54), max_value=2**54))
def test_integers_agree_with_rfc8785_over_the_full_range(number: int) -> None:
    for value in (number, {"k": number}, [0.5, number]):
        assert _ours(value) == _rfc8785_outcome(value)


@pytest.mark.parametrize("edge", [2**53 - 2, 2**53 - 1, 2**53, 2**53 + 1, 2**64, 10**400])
def test_integer_edges_agree_with_rfc8785(edge: int) -> None:
    for number in (edge, -edge):
        assert _ours({"n": number}) == _rfc8785_outcome({"n": number})


keys = st.text(max_size=6) | st.integers() | st.none() | st.booleans() | st.floats()
any_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(any_json)
def test_generated_values_raise_together_or_agree_with_rfc8785(value: object) -> None:
    assert _ours(value) == _rfc8785_outcome(value)


# --- the reader's round trip --------------------------------------------------------------

numbers_as_text = st.one_of(
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)


@st.composite
def json_texts(draw: st.DrawFn) -> bytes:
    """JSON text with arbitrary number spellings, including ones the reader must refuse."""
    leaf = st.one_of(numbers_as_text, st.text(max_size=5).map(json.dumps),
                     st.sampled_from(["true", "false", "null"]))
    tree = draw(st.recursive(
        leaf,
        lambda children: st.lists(children, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
        | st.dictionaries(st.text(max_size=4), children, max_size=4).map(
            lambda d: "{" + ",".join(f"{json.dumps(k)}:{v}" for k, v in d.items()) + "}"),
        max_leaves=12,
    ))
    return tree.encode("utf-8", "surrogatepass")


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(json_texts())
def test_every_accepted_value_rereads_from_its_canonical_bytes(text: bytes) -> None:
    try:
        value = parse_json(text, "t")
    except InputError:
        return
    again = parse_json(canonical_bytes(value), "canonical")
    assert again == value
    assert canonical_bytes(again) == canonical_bytes(value)


@pytest.mark.parametrize("text", [b"1e20", b"9007199254740992.0", b"[1E16]", b"-1.8e308"])
def test_integral_doubles_beyond_the_safe_range_are_refused_like_their_canonical_bytes(
    text: bytes,
) -> None:
    with pytest.raises(InputError):
        parse_json(text, "t")
    as_double = json.loads(text)
    with pytest.raises(InputError):
        parse_json(canonical_bytes(as_double), "t")


def test_integral_doubles_inside_the_safe_range_read_as_integers() -> None:
    assert parse_json(b"[9007199254740991.0, 1e15, -2.0]", "t") == [2**53 - 1, 10**15, -2]


# --- JSON pointers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "text"),
    [([], ""), ([""], "/"), (["a/b", "m~n", 0], "/a~1b/m~0n/0"), (["~1"], "/~01"), (["/", "~"], "/~1/~0")],
)
def test_pointer_escaping(parts: list[str | int], text: str) -> None:
    assert pointer(parts) == text
    assert pointer_parts(text) == [str(p) for p in parts]


def test_pointer_parts_rejects_a_relative_pointer() -> None:
    with pytest.raises(InputError, match="start with '/'"):
        pointer_parts("a/b")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="~/01a", max_size=6), max_size=5))
def test_pointer_round_trip(parts: list[str]) -> None:
    assert pointer_parts(pointer(parts)) == parts
    for part in parts:
        assert unescape_pointer_token(escape_pointer_token(part)) == part


# --- the cheap bound the guard uses instead of building bytes -----------------------------


@settings(max_examples=500, deadline=None)
@given(any_json, st.sampled_from([0, 2, 16, 64, 1024]))
def test_fits_json_bound_never_vouches_for_what_canonical_bytes_refuses(
    value: object, limit: int
) -> None:
    if fits_json_bound(value, limit):
        assert len(canonical_bytes(value)) <= limit


def test_fits_json_bound_answers_yes_for_ordinary_arguments() -> None:
    arguments = {"user_id": 42, "email": "ada@example.com", "ratio": 0.5, "tags": ["a", None],
                 "nested": {"ok": True}}
    assert fits_json_bound(arguments, 1 << 20)
    assert not fits_json_bound(arguments, 10)  # over the bound: "not certain"
    assert not fits_json_bound({"n": 2**53}, 1 << 20)
    assert not fits_json_bound({1: "non-string key"}, 1 << 20)
    assert not fits_json_bound({"t": (1, 2)}, 1 << 20)


@given(st.lists(st.text(max_size=6) | st.integers(min_value=0, max_value=99), max_size=5))
def test_pointer_escapes_each_token(parts: list[str | int]) -> None:
    expected = "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    assert pointer(parts) == expected
    assert pointer_parts(pointer(parts)) == [str(p) for p in parts]


def test_fits_json_bound_counts_the_commas_between_nested_containers() -> None:
    value = [[], [], [], [None]]  # 17 canonical bytes
    assert len(canonical_bytes(value)) == 17
    assert not fits_json_bound(value, 16)
    assert fits_json_bound(value, 1024)  # 32 bytes a member or container: loose, not wrong


@pytest.mark.parametrize(
    ("value", "fits"),
    [
        ({"n": MAX_SAFE_INTEGER, "m": -MAX_SAFE_INTEGER}, True),
        ({"n": MAX_SAFE_INTEGER + 1}, False),
        ({"n": -MAX_SAFE_INTEGER - 1}, False),
        ({"x": [0.5, -0.0, 1e300, 5e-324]}, True),
        ({"x": float("nan")}, False),
        ({"x": [1, float("inf")]}, False),
        ({"x": {"y": [float("-inf")]}}, False),
        ({"s": "caf\u00e9"}, True),  # not ASCII: written as UTF-8, within 6 bytes a character
        ({"caf\u00e9": 1}, True),
        ({"s": "\ud800"}, False),  # a lone surrogate, which canonical_bytes refuses
        ({"s": "\x00\x1f\"\\"}, True),  # escaped by JCS, 6 bytes a character at most
        ({"a": [{"b": [[], {"c": None}]}, True, False]}, True),
        ({"t": (1, 2)}, False),
        ({"s": type("S", (str,), {})("x")}, False),  # subclasses: not certain
        ({type("K", (str,), {})("k"): 1}, False),
        ({"i": type("I", (int,), {})(1)}, False),
        ({"d": type("D", (dict,), {})()}, False),
        ({"b": b"bytes"}, False),
        ({1: "x"}, False),
        ("just a string", True),
        (None, True),
    ],
)
def test_fits_json_bound_edge_values(value: object, fits: bool) -> None:
    assert fits_json_bound(value, 1 << 20) is fits
    if fits:
        assert len(canonical_bytes(value)) <= 1 << 20


@pytest.mark.parametrize("length", [0, 1, 2, 5, 100, 1000])
def test_fits_json_bound_is_never_true_under_the_exact_size(length: int) -> None:
    value = {"s": "\x01" * length, "t": "a" * length, "n": [1, None, 0.25, {}]}
    exact = len(canonical_bytes(value))  # \x01 is written \u0001: 6 bytes a character
    assert not fits_json_bound(value, exact - 1)
    assert fits_json_bound(value, 6 * exact + 512)  # and yes with room to spare


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_fits_json_bound_is_not_certain_past_the_readers_depth() -> None:
    """The reader refuses nesting past DEFAULT_MAX_DEPTH; a value built in memory deeper
    than that is left to the exact answer (tens of thousands deep crash jsonschema_rs)."""
    assert fits_json_bound(_nested(DEFAULT_MAX_DEPTH), 1 << 20)
    assert not fits_json_bound(_nested(DEFAULT_MAX_DEPTH + 1), 1 << 20)
    assert not fits_json_bound({"a": _nested(DEFAULT_MAX_DEPTH)}, 1 << 20)


def test_canonical_bytes_of_a_value_nested_past_the_stack_is_a_limit() -> None:
    with pytest.raises(LimitExceeded, match="nested too deeply"):
        canonical_bytes(_nested(50_000))
    with pytest.raises(LimitExceeded, match="nested too deeply"):
        canonical_bytes([_nested(50_000), 2**60])  # past the fast path's checks too


def test_fits_json_bound_vouches_for_text_in_any_script_but_not_lone_surrogates() -> None:
    for value in ({"q": "北京天气"}, {"城市": "x"}, {"e": "é😀\u2028"}):
        assert fits_json_bound(value, 1 << 20)
        assert len(canonical_bytes(value)) <= 6 * 8 + 32 * 2
    for value in ({"q": "a\ud800"}, {"\udc00": 1}, [["\udbff"]]):
        assert not fits_json_bound(value, 1 << 20)
        with pytest.raises(InputError):
            canonical_bytes(value)
