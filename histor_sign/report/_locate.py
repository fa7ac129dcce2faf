"""Find the line of a JSON value by its JSON pointer, for SARIF regions.

One regex tokenizer pass over the levels that can hold a wanted pointer; deeper values are
stepped over by the C decoder. Files that cannot be read (stdin, vanished files) simply get
no region.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from histor_sign._limits import DEFAULT_MAX_FILE_BYTES
from histor_sign.canonical import escape_pointer_token, read_bytes
from histor_sign.models import SERVER_LOCATION_PREFIX

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+')


def pointer_lines(text: str, wanted: set[str]) -> dict[str, int]:
    """1-based line numbers where the values at ``wanted`` pointers start.

    Tokens are read only down to the deepest wanted pointer; a container there is stepped
    over by the C JSON decoder (a catalog's tool objects: most of its bytes).
    """
    found: dict[str, int] = {}
    newlines = [m.start() for m in re.finditer("\n", text)]
    stack: list[list[object]] = []  # [is_object, pointer, key_or_index, expecting_key]
    remaining = len(wanted)
    deepest = max((p.count("/") for p in wanted), default=0)  # "/" inside a token is "~1"
    skip = json.JSONDecoder().raw_decode
    pos = 0
    while remaining:
        m = _TOKEN.search(text, pos)
        if m is None:
            break
        tok, pos = m.group(), m.end()
        if tok in _PUNCTUATION:
            _punctuation(tok, stack)
            continue
        if stack and stack[-1][0] and stack[-1][3]:
            if not _read_key(tok, stack[-1]):
                return found
            continue
        ptr = "" if not stack else f"{stack[-1][1]}/{escape_pointer_token(str(stack[-1][2]))}"
        if ptr in wanted and ptr not in found:
            found[ptr] = bisect.bisect_right(newlines, m.start()) + 1
            remaining -= 1
        if tok not in "{[":
            continue
        if len(stack) < deepest:
            stack.append([True, ptr, None, True] if tok == "{" else [False, ptr, 0, False])
            continue
        pos = _step_over(skip, text, m.start())  # nothing wanted inside: the whole value
        if pos < 0:
            return found
    return found


def _step_over(skip: Callable[[str, int], tuple[Any, int]], text: str, start: int) -> int:
    """Where the JSON value starting at ``start`` ends (read by the C decoder), or -1 when
    it is not valid JSON."""
    try:
        return skip(text, start)[1]
    except ValueError:
        return -1


#: Tokens that only move the reader: a member or element ends, a key ends, a container ends.
_PUNCTUATION = frozenset({",", ":", "}", "]"})


def _punctuation(tok: str, stack: list[list[object]]) -> None:
    """After ``,`` an object expects a key and an array counts its next index; ``}``/``]``
    close the innermost container."""
    if not stack:
        return
    frame = stack[-1]
    if tok == ",":
        if frame[0]:
            frame[3] = True
        else:
            frame[2] = int(frame[2]) + 1  # type: ignore[call-overload]
    elif tok in "}]":
        stack.pop()


def _read_key(tok: str, frame: list[object]) -> bool:
    """Take a member's key token into the object's frame; False for an undecodable key."""
    if "\\" not in tok:  # no escapes: the key is the text between the quotes
        frame[2] = tok[1:-1]
    else:
        try:
            frame[2] = json.loads(tok)
        except ValueError:
            return False
    frame[3] = False
    return True


def lines_for(source: str, pointers: Iterable[str]) -> dict[str, int]:
    """Line numbers for pointers into a file (empty when the file cannot be read)."""
    if source == "-" or source.startswith(SERVER_LOCATION_PREFIX):
        return {}
    try:
        text = read_bytes(source, max_bytes=DEFAULT_MAX_FILE_BYTES).decode("utf-8", "replace")
    except Exception:
        return {}
    return pointer_lines(text, set(pointers))
