"""A regular-expression subset on which Python ``re`` and ECMA-262 agree.

JSON Schema ``pattern`` is ECMA-262; Python's ``re`` differs (``\\d`` is Unicode, ``$``
matches before a final newline, ``{,n}`` is a quantifier, possessive quantifiers, inline
flags, ``\\B`` against the empty string, ...). We only trust a Python match result when the
pattern uses a small syntax whitelist that ECMA-262 also accepts under the ``u`` flag *and*
the subject is printable ASCII without newlines (the empty string included) — there both
engines give the same answer (tests/collisions/test_regex_ecma.py checks this against node's
``RegExp(p, "u")`` on generated patterns). Anything else is reported as untrusted, so
callers fail closed.

Matching is linear in the subject: :func:`search` runs the pattern on RE2 (an automaton,
no backtracking), so ``^(a|a)*$`` cannot take exponential time. RE2 refuses a repetition
count above 1,000 (nested counts multiply) and a program larger than :data:`MAX_PROGRAM_BYTES`;
such a pattern is outside the subset too, so a blow-up pattern is never expanded.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

#: RE2's memory budget for one compiled pattern (its program and DFA cache).
MAX_PROGRAM_BYTES = 2 << 20

_CLASS_ESCAPES = set("dDwWsS")
#: Identity escapes ECMA-262 allows under the ``u`` flag: syntax characters and ``/``
#: everywhere, ``-`` only inside a class (``\\-`` outside one is a SyntaxError there).
_META_ESCAPES = set(".\\/^$|?*+()[]{}")
_CLASS_ONLY_ESCAPES = set("-")
_CONTROL_ESCAPES = set("tnrfv")
#: Escapes of two characters everywhere: classes, identity escapes, controls.
_TWO_CHAR_ESCAPES = frozenset(_CLASS_ESCAPES | _META_ESCAPES | _CONTROL_ESCAPES)
_QUANTIFIER = re.compile(r"\{(\d{1,4})(,(\d{1,4})?)?\}")
_HEX4 = re.compile(r"u[0-9A-Fa-f]{4}")
_HEX2 = re.compile(r"x[0-9A-Fa-f]{2}")


def printable_ascii(text: str) -> bool:
    """True for strings of characters U+0020..U+007E only (no newline, no control)."""
    return all(" " <= ch <= "~" for ch in text)


def _escape_len(pattern: str, i: int, *, in_class: bool) -> int:
    """Length of the escape at ``pattern[i] == '\\\\'``, or 0 if outside the subset."""
    if i + 1 >= len(pattern):
        return 0
    ch = pattern[i + 1]
    if ch in _TWO_CHAR_ESCAPES:
        return 2
    if in_class and ch in _CLASS_ONLY_ESCAPES:
        return 2
    # ``\\b`` only: ``\\B`` matches the empty string in ECMA-262 but not in Python < 3.14.
    if not in_class and ch == "b":
        return 2
    if _HEX4.match(pattern, i + 1):
        # A surrogate escape pairs with the next one into one code point under ``u``
        # (a quantifier then repeats the pair); Python sees two characters.
        return 0 if 0xD800 <= int(pattern[i + 2:i + 6], 16) <= 0xDFFF else 6
    if _HEX2.match(pattern, i + 1):
        return 4
    return 0


#: One token's scan: (pattern, index, group depth, may a quantifier follow) → the state
#: after it (index, depth, quantifiable), or None when the token is outside the subset.
_Scan = tuple[int, int, bool] | None


def _tok_escape(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """An escape outside a class (``\\b`` cannot be quantified)."""
    step = _escape_len(pattern, i, in_class=False)
    if not step:
        return None
    return i + step, depth, pattern[i + 1] != "b"


def _tok_class(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """A character class ``[...]``."""
    end = _class_end(pattern, i)
    return None if end < 0 else (end, depth, True)


def _tok_open(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """A group opening: capturing or ``(?:``; every other ``(?`` form is outside."""
    if pattern.startswith("(?:", i):
        return i + 3, depth + 1, False
    if pattern.startswith("(?", i):
        return None
    return i + 1, depth + 1, False


def _tok_close(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """A group closing, matched by an earlier opening."""
    return None if depth < 1 else (i + 1, depth - 1, True)


def _tok_quantifier(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """``*``, ``+``, ``?`` or ``{m,n}`` after something quantifiable, optionally lazy, never
    possessive or stacked."""
    if not quantifiable:
        return None
    if pattern[i] == "{":
        match = _QUANTIFIER.match(pattern, i)
        if not match:
            return None
        if match.group(3) is not None and int(match.group(3)) < int(match.group(1)):
            return None
        i = match.end()
    else:
        i += 1
    n = len(pattern)
    if i < n and pattern[i] == "?":
        i += 1  # lazy
    if i < n and pattern[i] in "*+?{":
        return None  # possessive or stacked quantifiers differ between engines
    return i, depth, False


def _tok_anchor(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """``|``, ``^`` or ``$``: nothing to quantify after them."""
    return i + 1, depth, False


def _tok_stray(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """An unmatched ``]`` or ``}`` (an error under ECMA-262's ``u`` flag)."""
    return None


def _tok_literal(pattern: str, i: int, depth: int, quantifiable: bool) -> _Scan:
    """Any other character: itself."""
    return i + 1, depth, True


#: The scan of a token by its first character (table-driven: one lookup per token).
_TOKENS = {
    "\\": _tok_escape, "[": _tok_class, "(": _tok_open, ")": _tok_close,
    "*": _tok_quantifier, "+": _tok_quantifier, "?": _tok_quantifier, "{": _tok_quantifier,
    "|": _tok_anchor, "^": _tok_anchor, "$": _tok_anchor, "]": _tok_stray, "}": _tok_stray,
}


@lru_cache(maxsize=4096)
def ecma_safe(pattern: str) -> bool:
    """True when ``pattern`` is in the shared Python/ECMA-262 subset (see module doc)."""
    if len(pattern) > 2048 or any("\ud800" <= ch <= "\udfff" for ch in pattern):
        return False  # a literal surrogate is a code unit in Python, part of a code point in ECMA
    i, n = 0, len(pattern)
    depth = 0
    quantifiable = False  # may a quantifier follow here?
    while i < n:
        state = _TOKENS.get(pattern[i], _tok_literal)(pattern, i, depth, quantifiable)
        if state is None:
            return False
        i, depth, quantifiable = state
    if depth:
        return False
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return _linear(pattern) is not None


_HEX4_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u([0-9A-Fa-f]{4})")


@lru_cache(maxsize=4096)
def _linear(pattern: str) -> Any:
    """The RE2 program for a subset pattern, or None past RE2's bounds.

    Only ``\\uXXXX`` needs rewriting (RE2 spells it ``\\x{XXXX}``); every other subset
    construct has the same syntax and, on printable ASCII subjects, the same meaning.
    """
    options = re2.Options()
    options.log_errors = False  # RE2 would otherwise write parse errors to stderr
    options.max_mem = MAX_PROGRAM_BYTES
    options.never_capture = True
    try:
        return re2.compile(_HEX4_ESCAPE.sub(r"\1\\x{\2}", pattern), options)
    except re2.error:
        return None


def search(pattern: str, subject: str) -> bool:
    """``re.search(pattern, subject) is not None`` in time linear in ``subject``.

    ``pattern`` must be :func:`ecma_safe` (callers check, so they can answer ``unknown``
    first); the result is the one Python ``re`` and ECMA-262 give on printable ASCII.
    """
    program = _linear(pattern)
    if program is None:
        raise ValueError("pattern is outside the ECMA-safe subset")
    return program.search(subject) is not None


def _class_end(pattern: str, start: int) -> int:
    """Index after the character class starting at ``start``, or -1 if outside the subset."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    first = True
    while i < len(pattern):
        ch = pattern[i]
        if ch == "]":
            return -1 if first else i + 1
        if ch == "[":
            return -1
        if ch == "\\":
            step = _escape_len(pattern, i, in_class=True)
            if not step:
                return -1
            i += step
        else:
            i += 1
        first = False
    return -1
