"""Strict I-JSON input, RFC 8785 canonical bytes, and SHA-256 digests.

Everything we sign or compare goes through here, so two rules hold without exception:
input that is not I-JSON (RFC 7493) is rejected with the file and JSON pointer of the
problem, never "fixed"; and canonical bytes are exactly RFC 8785 (JCS).

Numbers follow I-JSON: a number must be exactly an IEEE double, and a number whose value is
an integer must lie within ±(2^53−1) however it is spelled. So ``9007199254740992``,
``9007199254740992.0`` and ``1e20`` are all rejected — JCS would write the last two as bare
integers outside that range, so accepting them would produce canonical bytes the reader
itself refuses. The guarantee this buys: every value :func:`parse_json` accepts re-reads
from its own :func:`canonical_bytes` to an equal value, and :func:`canonical_bytes` refuses
exactly what ``rfc8785.dumps`` refuses (raising :class:`InputError`).

Parsing uses the C ``json`` scanner, which builds every object itself: a hook only counts
their members, and the colons outside strings (counted at C speed) must match, so a
duplicate key is caught without building pair lists; integers go through a hook only when a
16-digit run exists. Floats and NaN/Infinity go through hooks that mark violations instead
of raising. Only when a sign of a violation was seen does the strict reader (every object's
pairs judged by a hook) parse again and walk the tree to name the pointer, so the happy
path stays close to ``json.loads`` speed. Canonicalization uses ``json.dumps`` where its output
provably equals JCS (checked per value) and falls back to the ``rfc8785`` package otherwise;
what the reader vouches for (:func:`parse_json_vouched`) is written by ``orjson``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import orjson

from histor_sign._limits import DEFAULT_MAX_DEPTH, DEFAULT_MAX_FILE_BYTES
from histor_sign.errors import InputError, LimitExceeded, UsageError

MAX_SAFE_INTEGER = 2**53 - 1
_MIN_SAFE_INTEGER = -MAX_SAFE_INTEGER
_SAFE_INTEGER_DIGITS = len(str(MAX_SAFE_INTEGER))

JsonValue = Any  # dict[str, JsonValue] | list[JsonValue] | str | int | float | bool | None


class _Violation:
    """Placeholder left in the parsed tree where the input broke an I-JSON rule."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


@dataclass
class _ParseState:
    violations: int = 0
    #: Every float the reader accepted (distinct values; see :func:`_orjson_writes_jcs`).
    floats: set[float] = field(default_factory=set)


# --- RFC 6901 JSON pointers -------------------------------------------------------------


def escape_pointer_token(token: str) -> str:
    """One reference token as it appears in a pointer: ``~`` → ``~0``, ``/`` → ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape_pointer_token(token: str) -> str:
    """Inverse of :func:`escape_pointer_token`. ``~1`` is undone before ``~0`` so ``~01``
    reads as ``~1`` (RFC 6901 §4); any other ``~`` sequence is kept as it is."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer(parts: Iterable[str | int]) -> str:
    """RFC 6901 JSON pointer for a path (``""`` is the whole document)."""
    tokens = [p if type(p) is str else str(p) for p in parts]
    if not tokens:
        return ""
    return "/" + "/".join(
        t.replace("~", "~0").replace("/", "~1") if "~" in t or "/" in t else t for t in tokens
    )


def pointer_parts(ptr: str) -> list[str]:
    """The unescaped reference tokens of a pointer (array indices stay strings);
    ``pointer_parts(pointer(p)) == [str(x) for x in p]``."""
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise InputError(f"JSON pointer {ptr[:60]!r} must be empty or start with '/'")
    return [unescape_pointer_token(token) for token in ptr[1:].split("/")]


def _make_hooks(state: _ParseState, *, pairs: bool = True, ints: bool = True) -> dict[str, Any]:
    """The scanner hooks that mark violations; ``pairs``/``ints`` leave out the object and
    integer hooks (the fast reader checks those another way)."""

    def on_object(pairs: list[tuple[str, Any]]) -> Any:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    state.violations += 1
                    return _Violation(f"duplicate object key {json.dumps(key)}")
                seen.add(key)
        return obj

    def on_constant(name: str) -> Any:
        state.violations += 1
        return _Violation(f"{name} is not a JSON number")

    def on_int(text: str) -> Any:
        # JSON integers have no leading zeros, so more digits than 2^53−1 has means out of
        # range: judged on the text, because int() refuses literals past 4,300 digits with a
        # ValueError that would escape the scanner (and huge ones cost quadratic time).
        if len(text) < _SAFE_INTEGER_DIGITS:  # 15 characters: in range whatever they are
            return int(text)
        if len(text) - text.startswith("-") <= _SAFE_INTEGER_DIGITS:
            value = int(text)
            if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return value
        state.violations += 1
        return _Violation(f"integer {_clip(text)} is outside ±(2^53−1)")

    accepted: dict[str, Any] = {}  # text -> value: a catalog repeats its numbers

    def on_float(text: str) -> Any:
        known = accepted.get(text)
        if known is not None:
            return known
        value = float(text)
        if value == _INF or value == -_INF:
            state.violations += 1
            return _Violation(f"number {_clip(text)} is outside the range of a double")
        try:
            # The shortest round-trip spelling is exact by definition (the common case).
            exact = text == repr(value) or Decimal(text) == Decimal(repr(value))
        except InvalidOperation:  # pragma: no cover - the scanner only passes valid numbers
            exact = False
        if not exact:
            state.violations += 1
            return _Violation(
                f"number {_clip(text)} changes value as a double (becomes {value!r})"
            )
        if value.is_integer():
            if abs(value) <= MAX_SAFE_INTEGER:
                # Below 2^53 JCS prints an integral double as that integer; so does int.
                accepted[text] = int(value)
                return accepted[text]
            # JCS would print this double as a bare integer (1e20 -> 100000000000000000000),
            # which on_int rejects: refuse it here too, so every accepted value re-reads.
            state.violations += 1
            return _Violation(f"number {_clip(text)} is an integer outside ±(2^53−1)")
        state.floats.add(value)
        accepted[text] = value
        return value

    hooks: dict[str, Any] = {"parse_constant": on_constant, "parse_float": on_float}
    if pairs:
        hooks["object_pairs_hook"] = on_object
    if ints:
        hooks["parse_int"] = on_int
    return hooks


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


_LONE_SURROGATE_HINT = re.compile(rb"\\u[dD][89a-fA-F]")


def _walk(value: Any) -> Iterator[tuple[list[str | int], Any]]:
    """Yield (path, node) in document order, iteratively — so any depth is safe."""
    stack: list[tuple[list[str | int], Any]] = [([], value)]
    while stack:
        path, node = stack.pop()
        yield path, node
        if isinstance(node, dict):
            for key in reversed(list(node)):
                stack.append(([*path, key], node[key]))
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                stack.append(([*path, i], node[i]))


def _is_lone_surrogate_str(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def parse_json(
    data: bytes,
    source: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> JsonValue:
    """Parse strict I-JSON from bytes, or raise :class:`InputError` naming where it broke."""
    return parse_json_vouched(data, source, max_depth=max_depth, max_bytes=max_bytes)[0]


def parse_json_vouched(
    data: bytes,
    source: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> tuple[JsonValue, bool]:
    """:func:`parse_json`, plus whether the reader vouches for :func:`jcs_of_vouched`.

    True means: for the value *as returned* and every part of it, ``orjson.dumps`` with
    sorted keys writes exactly its RFC 8785 bytes (see :func:`_orjson_writes_jcs`). The
    promise is about what the reader built: it does not survive a change to the value, so
    a caller that modifies the value, or lets other code run before it is used, must not
    rely on it. False only means "not vouched for" (:func:`canonical_bytes` still applies).
    """
    text = _document_text(data, source, max_bytes)
    long_digits = _has_long_digit_run(data)
    object_hook, member_sizes = _member_sizes()
    state = _ParseState()
    try:
        # The fast reader: the C scanner builds the objects itself (the hook only counts
        # their members); integers go through a hook only when the text holds a run of
        # 16 digits somewhere, as only such a run can spell one outside ±(2^53−1).
        value = json.loads(text, object_hook=object_hook, **_make_hooks(state, pairs=False,
                                                                         ints=long_digits))
    except RecursionError:
        raise LimitExceeded(
            f"{source}: JSON nesting is deeper than the limit of {max_depth}"
        ) from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    structure = _structure(data)
    # Every member of every object is one ':' outside strings and the objects the scanner
    # built hold sum(member_sizes) of them: fewer means some object repeated a key.
    if (
        state.violations
        or structure.count(b":") != sum(member_sizes)
        or (b"\\" in data and _LONE_SURROGATE_HINT.search(data))
    ):
        value = _parse_strict(text, source, max_depth)
        _raise_first_violation(value, source)
        vouched = False  # a surrogate pair escape may spell an astral character
    else:
        vouched = _orjson_writes_jcs(data, state.floats)
    if _depth_of_structure(structure, max_depth) > max_depth:
        raise LimitExceeded(f"{source}: JSON nesting is deeper than the limit of {max_depth}")
    return value, vouched


def json_text(data: bytes, source: str) -> str:
    """The text of a JSON document's bytes as RFC 8259 allows them: UTF-8 without a byte
    order mark (:class:`InputError` naming ``source`` and the byte otherwise)."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError(f"{source}: starts with a UTF-8 byte order mark; JSON must not")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: invalid UTF-8 at byte {exc.start}") from None


def _document_text(data: bytes, source: str, max_bytes: int) -> str:
    """Step 1 of :func:`parse_json_vouched`: the text of a document within ``max_bytes``,
    valid UTF-8 without a byte order mark, and not blank."""
    if len(data) > max_bytes:
        raise LimitExceeded(f"{source}: {len(data)} bytes is more than the limit of {max_bytes}")
    text = json_text(data, source)
    if not text.strip():
        raise InputError(f"{source}: empty file, expected a JSON document")
    return text


def _member_sizes() -> tuple[Callable[[dict[str, Any]], dict[str, Any]], list[int]]:
    """The fast reader's ``object_hook`` and the list it fills: the member count of every
    object it is given (a duplicate key leaves one member fewer than the text spells);
    the objects are returned as they are. A closure, not a callable object: it is called
    once per object, and a plain function call is the cheaper of the two."""
    sizes: list[int] = []
    add = sizes.append

    def hook(obj: dict[str, Any]) -> dict[str, Any]:
        add(len(obj))
        return obj

    return hook, sizes


def _parse_strict(text: str, source: str, max_depth: int) -> JsonValue:
    """The strict reader: every object's pairs judged by a hook (duplicates marked where
    they are), every integer judged. Slower than the fast reader; used when the fast one
    saw a sign of a violation, so that the first violation can be named with its pointer.
    Accepts exactly what the fast reader accepts and builds an equal value."""
    state = _ParseState()
    try:
        return json.loads(text, **_make_hooks(state))
    except RecursionError:  # pragma: no cover - the fast reader raised it first
        raise LimitExceeded(
            f"{source}: JSON nesting is deeper than the limit of {max_depth}"
        ) from None


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_SIXTEEN_ZEROS = b"0" * _SAFE_INTEGER_DIGITS


def _has_long_digit_run(data: bytes) -> bool:
    """Whether ``data`` holds 16 consecutive ASCII digits anywhere (inside strings too:
    a false alarm only costs the integer hook)."""
    return _SIXTEEN_ZEROS in data.translate(_DIGITS_AS_ZERO)


def _inert(_value: Any) -> None:
    return None


def is_json_syntax(text: str) -> bool:
    """Whether ``text`` is one complete JSON value by the grammar alone (a cheap probe).

    Numbers and constants are not converted and duplicate keys are not judged — the strict
    reader does that and names the pointer; a value nested too deep for the scanner counts
    as JSON, so the strict reader reports its depth. Never raises.
    """
    try:
        json.loads(
            text, parse_int=_inert, parse_float=_inert, parse_constant=_inert,
            object_pairs_hook=_inert,
        )
    except RecursionError:
        return True
    except ValueError:
        return False
    return True


_KEEP_QUOTES_BRACKETS_COLONS = bytes(b for b in range(256) if b not in b'"[]{}:')


def _structure(data: bytes) -> bytes:
    """The brackets and colons of a *valid* JSON text that lie outside strings, in order,
    computed at C speed.

    Escaped backslashes and quotes are dropped first (left to right, as JSON pairs them),
    then everything but quotes, brackets and colons; string bodies then hold no quotes.
    """
    reduced = data
    if b"\\" in data:  # a text without escapes (one memchr) skips the two passes
        reduced = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    reduced = reduced.translate(None, _KEEP_QUOTES_BRACKETS_COLONS)
    # '""' is an empty string body or a close/open junction with nothing between: safe
    # to drop. What is left alternates outside/inside string bodies around each quote.
    reduced = reduced.replace(b'""', b"")
    return b"".join(reduced.split(b'"')[::2]) if b'"' in reduced else reduced


def nesting_depth(data: bytes, limit: int) -> int:
    """Nesting depth of a *valid* JSON text, computed at C speed; stops past ``limit``."""
    return _depth_of_structure(_structure(data), limit)


def _depth_of_structure(structure: bytes, limit: int) -> int:
    """Each pass removes the innermost bracket pairs, so the passes count the depth."""
    brackets = structure.translate(None, b":")
    depth = 0
    while brackets and depth <= limit:
        # Mark innermost pairs first so one pass never removes two levels.
        brackets = brackets.replace(b"[]", b"x").replace(b"{}", b"x").translate(None, b"x")
        depth += 1
    return depth


def _violates(value: Any) -> bool:
    """Whether any node breaks a rule :func:`_raise_first_violation` names — without the
    paths it spells: a valid document with escaped surrogate pairs (emoji) comes here, and
    in a registry mirror such documents were most of the read time."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, _Violation):
            return True
        if isinstance(node, str):
            if not node.isascii() and _is_lone_surrogate_str(node):
                return True
        elif isinstance(node, dict):
            if any(not key.isascii() and _is_lone_surrogate_str(key) for key in node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _raise_first_violation(value: Any, source: str) -> None:
    if not _violates(value):
        return
    for path, node in _walk(value):
        problem = _violation_of(node)
        if problem:
            raise InputError(f"{source}: {problem} at {pointer(path) or '/'}")


def _violation_of(node: Any) -> str:
    """What one node breaks ("" when nothing): the reader's mark, or a lone surrogate in a
    string or an object key."""
    if isinstance(node, _Violation):
        return node.reason
    if isinstance(node, str) and _is_lone_surrogate_str(node):
        return "string contains a lone UTF-16 surrogate"
    if isinstance(node, dict) and any(_is_lone_surrogate_str(key) for key in node):
        return "object key contains a lone UTF-16 surrogate"
    return ""


def read_json_file(
    path: str | Path,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> JsonValue:
    """Read and strictly parse a JSON file; ``-`` reads standard input."""
    source = str(path)
    data = read_bytes(source, max_bytes=max_bytes)
    return parse_json(data, source, max_depth=max_depth, max_bytes=max_bytes)


class _Stdin:
    """Whether ``-`` was read already: a second read would see an empty stream and report
    a confusing "empty file" for what is really two inputs naming stdin."""

    consumed = False


def reset_stdin() -> None:
    """Forget that stdin was read (the CLI calls this once per invocation)."""
    _Stdin.consumed = False


def read_bytes(source: str, *, max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """Read a file (or stdin for ``-``) with a size bound, as one clear error on failure."""
    try:
        if source == "-":
            if _Stdin.consumed:
                raise UsageError("standard input (-) can be read only once")
            if sys.stdin is None:  # started with fd 0 closed
                raise InputError("-: standard input is closed")
            _Stdin.consumed = True
            data = sys.stdin.buffer.read(max_bytes + 1)
        else:
            data = _read_regular_file(source, max_bytes + 1)
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source}: is a directory, expected a file") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise LimitExceeded(f"{source}: larger than the limit of {max_bytes} bytes")
    return data


def _read_regular_file(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of a regular file; anything else is refused before a read.

    A FIFO, socket, terminal or device named as a file could block forever (a FIFO with no
    writer) or never end (``/dev/zero``), so — like cosign — only regular files are read by
    name; standard input is read with ``-``. The file is opened non-blocking (opening a FIFO
    would otherwise wait for a writer) and judged by ``fstat`` on the open descriptor, so a
    file swapped after a check cannot slip through.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError
        if not stat.S_ISREG(mode):
            raise InputError(
                f"{path}: is not a regular file ({_file_kind(mode)}); "
                "read standard input with -"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(limit)
    finally:
        os.close(fd)


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


# --- RFC 8785 -------------------------------------------------------------------------

#: Sorted keys, compact: the only ``orjson.dumps`` options used (see :func:`jcs_of_vouched`).
_ORJSON_SORTED = orjson.OPT_SORT_KEYS
_ASTRAL_LEAD_BYTES = bytes(range(0xF0, 0xF5))
_ALL_BUT_ASTRAL_LEAD_BYTES = bytes(b for b in range(256) if b not in _ASTRAL_LEAD_BYTES)


def _orjson_writes_jcs(data: bytes, floats: set[float]) -> bool:
    """Whether ``orjson.dumps(v, option=OPT_SORT_KEYS)`` equals RFC 8785 for every part ``v``
    of what the fast reader built from ``data`` (valid UTF-8 without ``\\uD8..``–``\\uDF..``
    escapes, which send the reader down its strict path); ``floats`` are the floats it
    accepted.

    Why the two agree on such a value, node by node (``tests/foundation/test_jcs_orjson.py``
    checks each claim against ``rfc8785``):

    - Types: the reader builds only exact ``dict``/``list``/``str``/``int``/``float``/
      ``bool``/``None``, object keys are strings and never repeat (a duplicate is refused).
    - Literals and integers: ``null``/``true``/``false`` and decimal integers alike; the
      reader refuses integers outside ±(2^53−1), where JCS would print the double instead.
    - Strings: both escape exactly ``"``, ``\\`` and U+0000–U+001F (``\\b \\t \\n \\f \\r``,
      else ``\\u00xx`` in lower case) and write every other code point as UTF-8; the reader
      refuses lone surrogates.
    - Key order: orjson sorts keys by code point (UTF-8 byte order), JCS by UTF-16 code
      units; the two orders differ only between a key with an astral-plane character and
      one with a character in U+E000–U+FFFF. Checked here: no 4-byte UTF-8 sequence in the
      text (and no surrogate escape, see above) means no astral character anywhere.
    - Floats: the reader turns every integral float into an int and accepts only finite
      ones; each distinct remaining value is written by orjson and by ``rfc8785`` here and
      must match, so no claim about orjson's float format is needed.
    """
    if not data.isascii() and data.translate(None, _ALL_BUT_ASTRAL_LEAD_BYTES):
        return False
    if floats:
        import rfc8785

        for number in floats:
            if orjson.dumps(number) != rfc8785.dumps(number):
                return False
    return True


def jcs_of_vouched(value: JsonValue) -> bytes:
    """RFC 8785 bytes of a value built only of parts of a value that
    :func:`parse_json_vouched` returned with True, unmodified since, under object keys
    that are strings without astral-plane characters (a tool's projection, for instance).

    This is ``orjson.dumps`` with sorted keys — several times faster than
    :func:`canonical_bytes`, which must first establish for an arbitrary value what the
    reader established while reading (:func:`_orjson_writes_jcs` says why the bytes are
    exact). orjson refuses nesting deeper than it supports; :func:`canonical_bytes` then
    answers. For any other value, call :func:`canonical_bytes`.
    """
    try:
        return orjson.dumps(value, option=_ORJSON_SORTED)
    except orjson.JSONEncodeError:
        return canonical_bytes(value)


#: Raw bytes orjson copies into its output as they are; orjson itself never writes a NUL
#: byte (U+0000 in a string is written ``\\u0000``), so this one marks where a part ends.
_PART_END = orjson.Fragment(b"\x00")


def jcs_of_vouched_many(values: list[JsonValue]) -> list[bytes]:
    """``[jcs_of_vouched(v) for v in values]``, in one ``orjson.dumps`` call.

    The values are written as one array, a raw NUL fragment between each two; every value
    is written exactly as on its own (same options, nothing depends on the neighbours),
    and ``,NUL,`` occurs nowhere else in orjson's output, so splitting there gives the
    parts. One call for thousands of small values instead of thousands of calls.
    """
    if not values:
        return []
    items: list[Any] = [_PART_END] * (2 * len(values) - 1)
    items[::2] = values
    try:
        out = orjson.dumps(items, option=_ORJSON_SORTED)
    except orjson.JSONEncodeError:  # nesting orjson refuses: each value on its own
        return [jcs_of_vouched(value) for value in values]
    parts = out.split(b",\x00,")  # "[" + part + (",NUL," + part)... + "]"
    if len(parts) != len(values):  # pragma: no cover - the marker is unique
        return [jcs_of_vouched(value) for value in values]
    parts[0] = parts[0][1:]
    parts[-1] = parts[-1][:-1]
    return parts

_FAST_DUMPS = json.JSONEncoder(
    ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
).encode


def _fast_path_ok(value: Any) -> bool:
    """True when ``json.dumps(sort_keys=True)`` is byte-identical to JCS for ``value``.

    The two differ only in (a) float spelling — Python writes ``1.0``, ``1e-05``; JCS
    writes ``1``, ``0.00001`` — which matters for integral floats and for magnitudes below
    1e-4, and (b) key order for keys with characters outside the BMP (JCS sorts by UTF-16
    code units, Python by code points). Non-integral doubles are always below 2^52, where
    both print the same shortest round-trip digits in fixed notation.

    Exact ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` nodes (everything a
    parsed document holds) are judged in one pass by type identity, which is what makes a
    digest cheap; a tree holding anything else (subclasses, tuples, ...) is judged by
    :func:`_fast_path_ok_general`, the isinstance-based rules, so the answer never changes.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind is str or _fast_path_ok_general(value)  # strings always agree
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        if type(node) is dict:
            for key in node:
                # json.dumps would stringify int/bool/None keys; rfc8785 rejects them.
                if type(key) is not str or (
                    not key.isascii() and any(ord(c) > 0xFFFF for c in key)
                ):
                    return False
            items: Iterable[Any] = node.values()
        else:
            items = node
        for item in items:
            kind = type(item)
            if kind is str or kind is bool or item is None:
                continue
            if kind is dict or kind is list:
                push(item)
            elif kind is int:
                if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                    return False  # json.dumps would print it; rfc8785 rejects it
            elif kind is float:
                if item.is_integer() or abs(item) < 1e-4:
                    return False
            else:
                return _fast_path_ok_general(value)
    return True


def _fast_path_ok_general(value: Any) -> bool:
    """:func:`_fast_path_ok` for any Python value (isinstance rules)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not _keys_sort_alike(node):
                return False
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float):
            if node.is_integer() or abs(node) < 1e-4:
                return False
        elif isinstance(node, int) and not -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
            return False
    return True


def _keys_sort_alike(node: dict[Any, Any]) -> bool:
    """Every key is an exact ``str`` inside the BMP, where Python's key order is JCS's."""
    return all(type(key) is str and (key.isascii() or all(ord(c) <= 0xFFFF for c in key))
               for key in node)


def fits_json_bound(value: Any, max_bytes: int) -> bool:
    """A cheap, conservative test: True only when ``value`` is certainly a JSON value
    :func:`canonical_bytes` accepts whose canonical bytes are at most ``max_bytes`` long.

    False means "not certain" (anything but exact dict/list/str/int/float/bool/None nodes, a
    string holding a lone surrogate, an integer past ±(2^53−1), a non-finite float, nesting
    deeper than
    :data:`~histor_sign._limits.DEFAULT_MAX_DEPTH` — what the JSON reader allows; a value
    nested tens of thousands deep crashes ``jsonschema_rs`` — or a size bound over the
    limit): the caller then asks :func:`canonical_bytes` for the exact answer. Lets a
    size-bounded caller (the guard) skip building bytes it does not need.

    The bound is ``6 × (characters of every key and string) + 32 × (members + containers)``:
    a character is at most 6 bytes (``\\u00XX`` for a control character; any other code
    point is written as its UTF-8, at most 4 bytes), and a member at most
    32 more (a key's quotes, colon and comma, plus a scalar: a double is at most 25
    characters, a string's quotes 2; a container's brackets are counted as one more member).
    It is counted in two small sums rather than byte by byte because, on the guard's hot
    path, Python arithmetic on sizes past 256 (a new int each time) cost more than the walk.
    """
    node = value if type(value) is dict or type(value) is list else [value]
    # (container, its depth), made only when a container nests another
    stack: list[tuple[Any, int]] | None = None
    depth = 1
    chars = 0
    members = 0
    while True:
        if type(node) is dict:
            for key in node:
                if type(key) is not str or (not key.isascii() and _SURROGATE.search(key)):
                    return False
                chars += len(key)
            items: Iterable[Any] = node.values()
        else:
            items = node
        members += len(node) + 1
        for item in items:
            kind = type(item)
            if kind is str:
                if not item.isascii() and _SURROGATE.search(item):
                    return False
                chars += len(item)
            elif kind is int:
                if not _MIN_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                    return False
            elif kind is bool or item is None:
                pass
            elif kind is float:
                if item - item:  # NaN for NaN and ±inf, 0.0 for every finite double
                    return False
            elif kind is dict or kind is list:
                if depth >= DEFAULT_MAX_DEPTH:
                    return False
                if stack is None:
                    stack = [(item, depth + 1)]
                else:
                    stack.append((item, depth + 1))
            else:
                return False
        if 6 * chars + 32 * members > max_bytes:
            return False
        if not stack:
            return True
        node, depth = stack.pop()


_INF = float("inf")
#: A lone surrogate code point (no JSON text spells one: canonical_bytes refuses it).
_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_bytes(value: JsonValue) -> bytes:
    """RFC 8785 canonical UTF-8 bytes of a JSON value.

    Raises :class:`InputError` for exactly the values ``rfc8785.dumps`` refuses: integers
    outside ±(2^53−1), NaN and infinities, object keys that are not strings, lone
    surrogates, and types JSON has no spelling for.
    """
    if type(value) is str:
        # orjson escapes a string exactly as JCS does (see _orjson_writes_jcs) and refuses
        # a lone surrogate, which rfc8785 then reports. A manifest names every tool so.
        try:
            return orjson.dumps(value)
        except orjson.JSONEncodeError:
            pass
    elif _fast_path_ok(value):
        try:
            return _FAST_DUMPS(value).encode("utf-8")
        except (ValueError, TypeError, UnicodeEncodeError):
            pass  # let rfc8785 produce its precise error below
        except RecursionError:
            raise _too_deep() from None
    import rfc8785

    try:
        return bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, UnicodeEncodeError) as exc:
        # rfc8785 lets a lone surrogate in an object key escape as UnicodeEncodeError.
        raise InputError(f"cannot canonicalize value: {exc}") from None
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> LimitExceeded:
    """A value built in memory (never one the reader parsed: it bounds depth) nested past
    what the interpreter's stack lets the serialisers walk."""
    return LimitExceeded("cannot canonicalize value: nested too deeply")


def sha256_digest(data: bytes) -> str:
    """``sha256:<lowercase hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def utf16_key(key: str) -> bytes:
    """Sort key ordering strings by UTF-16 code units, as RFC 8785 §3.2.3 requires."""
    return key.encode("utf-16-be", "surrogatepass")


def canonical_object_from_parts(parts: dict[str, bytes]) -> bytes:
    """JCS bytes of an object whose values are already canonical bytes.

    Lets the manifest reuse each tool's canonical bytes instead of canonicalizing twice.
    """
    joined = "".join(parts)
    if all(type(key) is str for key in parts) and (
        joined.isascii() or not any(ord(c) > 0xFFFF for c in joined)
    ):
        # Exact string keys without astral-plane characters: orjson's code point order is
        # the UTF-16 order and its escaping is JCS's (see _orjson_writes_jcs); the parts
        # are copied in as they are. A lone surrogate makes orjson refuse: handled below.
        try:
            return orjson.dumps(
                {key: orjson.Fragment(part) for key, part in parts.items()},
                option=_ORJSON_SORTED,
            )
        except orjson.JSONEncodeError:
            pass
    out = [b"{"]
    for key in sorted(parts, key=utf16_key):
        out += (canonical_bytes(key), b":", parts[key], b",")
    if len(out) > 1:
        out.pop()  # the last comma
    out.append(b"}")
    return b"".join(out)
