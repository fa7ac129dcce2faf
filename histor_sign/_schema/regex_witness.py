"""Example strings for ECMA-safe patterns, so ``pattern`` pairs can be decided as overlaps.

Only patterns in :func:`~histor_sign._schema.regex_subset.ecma_safe` are used, examples are
printable ASCII, and every example is still checked by the exact validator — this module
only proposes candidates; it never decides anything by itself.
"""

from __future__ import annotations

import string
from typing import Any

from histor_sign._schema.regex_subset import ecma_safe

_PRINTABLE = string.ascii_lowercase + string.ascii_uppercase + string.digits + "_-. /:@"


def _parser() -> Any:
    import importlib

    return importlib.import_module("re._parser")  # 3.11+; the sre_parse alias is deprecated


class _Unsupported(Exception):
    pass


def _in_class(ch: str, items: list[tuple[Any, Any]], c: Any) -> bool:
    negate = False
    hit = False
    for op, arg in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            hit = hit or ord(ch) == arg
        elif op is c.RANGE:
            hit = hit or arg[0] <= ord(ch) <= arg[1]
        elif op is c.CATEGORY:
            hit = hit or _category(ch, arg, c)
        else:
            raise _Unsupported
    return hit != negate


def _category(ch: str, cat: Any, c: Any) -> bool:
    table = {
        c.CATEGORY_DIGIT: ch.isdigit(),
        c.CATEGORY_NOT_DIGIT: not ch.isdigit(),
        c.CATEGORY_WORD: ch.isalnum() or ch == "_",
        c.CATEGORY_NOT_WORD: not (ch.isalnum() or ch == "_"),
        c.CATEGORY_SPACE: ch.isspace(),
        c.CATEGORY_NOT_SPACE: not ch.isspace(),
    }
    if cat not in table:
        raise _Unsupported
    return table[cat]


def _pick(pred: Any) -> str:
    for ch in _PRINTABLE:
        if pred(ch):
            return ch
    for code in range(0x20, 0x7F):
        if pred(chr(code)):
            return chr(code)
    raise _Unsupported


def _gen(nodes: Any, extra: list[int], c: Any, cap: int) -> str:
    """A string for ``nodes`` (``extra`` more characters where a repeat allows), at most
    ``cap`` characters: a longer one is refused before it is built (``a{999}`` nested)."""
    out: list[str] = []
    size = 0
    for op, arg in nodes:
        piece = _piece(op, arg, extra, c, cap, size)
        if piece is None:
            continue
        out.append(piece)
        size += len(piece)
        if size > cap:
            raise _Unsupported
    return "".join(out)


def _piece(op: Any, arg: Any, extra: list[int], c: Any, cap: int, size: int) -> str | None:
    """The string one parsed node contributes (None for an anchor), ``size`` characters
    already built of at most ``cap``."""
    if op in (c.MAX_REPEAT, c.MIN_REPEAT):
        return _repeat_piece(arg, extra, c, cap, size)
    if op is c.SUBPATTERN:
        return _gen(arg[-1], extra, c, cap - size)
    if op is c.BRANCH:
        return _branch_piece(arg[1], c, cap - size)
    if op is c.AT:
        return None
    return _char_piece(op, arg, c)


def _char_piece(op: Any, arg: Any, c: Any) -> str:
    """One character for a literal, a negated literal, any, a class or a category."""
    if op is c.LITERAL:
        return chr(arg)
    if op is c.NOT_LITERAL:
        return _pick(lambda ch, a=arg: ord(ch) != a)
    if op is c.ANY:
        return "a"
    if op is c.IN:
        return _pick(lambda ch, items=arg: _in_class(ch, items, c))
    if op is c.CATEGORY:
        return _pick(lambda ch, cat=arg: _category(ch, cat, c))
    raise _Unsupported


def _repeat_piece(arg: Any, extra: list[int], c: Any, cap: int, size: int) -> str:
    """A repeat: its unit the fewest times, plus what ``extra`` asks where the upper bound
    allows; refused when it would pass ``cap``."""
    low, high, sub = arg
    unit = _gen(sub, [0], c, cap)
    count: int = low
    if extra[0] > 0 and unit and (high is c.MAXREPEAT or high > low):
        room = extra[0] // len(unit)
        more = room if high is c.MAXREPEAT else min(room, high - low)
        count += more
        extra[0] -= more * len(unit)
    if len(unit) * count > cap - size:
        raise _Unsupported
    return unit * count


def _branch_piece(alternatives: Any, c: Any, cap: int) -> str:
    """The shortest alternative that can be built within ``cap``."""
    options = []
    for alt in alternatives:
        try:
            options.append(_gen(alt, [0], c, cap))
        except _Unsupported:
            continue  # too long (or unsupported): another alternative may do
    if not options:
        raise _Unsupported
    return min(options, key=len)


def examples(pattern: str, min_len: int, max_len: int | None, limit: int = 4096) -> list[str]:
    """A few candidate strings that likely match ``pattern`` within the length bounds."""
    if not ecma_safe(pattern):
        return []
    sre = _parser()
    try:
        tree = sre.parse(pattern)
        c = sre  # the opcode constants are re-exported by the parser module
        if min_len > limit or tree.getwidth()[0] > limit:
            return []  # every match is longer than the caller may build
        base = _gen(tree, [0], c, limit)
        target = max(min_len - len(base), 0)
        stretched = _gen(tree, [target], c, limit) if target else base
    except (_Unsupported, RecursionError, AttributeError, TypeError, ValueError):
        return []
    pad = "a" * (min_len - len(stretched))
    return _fitting((base, stretched, stretched + pad, pad + stretched), min_len,
                    max_len if max_len is not None and max_len < limit else limit)


def _fitting(candidates: tuple[str, ...], min_len: int, max_len: int) -> list[str]:
    """The distinct candidates within [``min_len``, ``max_len``], in order."""
    out: list[str] = []
    for cand in candidates:
        if cand not in out and min_len <= len(cand) <= max_len:
            out.append(cand)
    return out
