"""Untrusted text (tool names, descriptions, model-chosen names) made inert for display.

Servers and models choose these strings. Printed raw they could move the cursor, rewrite a
terminal title, reorder a line with bidi overrides, or forge extra output lines; escaped,
they stay one visible line of plain characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator


def printable(text: str, limit: int | None = None) -> str:
    """``text`` as one line of printable characters, clipped to ``limit`` characters (then
    ending in ``…``) when given.

    Every character ``str.isprintable`` refuses is written as its JSON escape (``\\n``,
    ``\\u001b``): C0 and C1 controls (ESC, CR, LF, TAB, DEL, CSI …), format characters
    (bidi embeddings, overrides and isolates, zero-width characters, BOM, tags), U+2028 and
    U+2029, spaces other than U+0020, surrogates, private-use and unassigned code points.
    Clipping happens before escaping, so ``limit`` bounds the characters taken from
    ``text``, not the length of the result.
    """
    clipped = text if limit is None else text[:limit]
    if clipped.isprintable():  # the common case, checked at C speed
        shown = clipped
    else:
        shown = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in clipped)
    return shown + ("…" if limit is not None and len(text) > limit else "")


#: How a line-leading ``::`` and an embedded ``##[`` are written on a terminal or CI log:
#: the GitHub Actions runner reads ``::command::`` at the start of a line (after leading
#: whitespace) and the legacy ``##[command]`` anywhere in a line. The first ``:``/``#`` is
#: written as its JSON escape, so a person still reads what the text said, and text that is
#: JSON stays the same JSON value.
_LEADING_COLONS = ("::", "\\u003a")
_LEGACY_COMMAND = ("##[", "#\\u0023[")


def inert_line(line: str, limit: int | None = None) -> str:
    """One line as it may appear on a terminal or in a CI log: :func:`printable` (clipped to
    ``limit`` when given), and no GitHub workflow command (a leading ``::`` or an embedded
    ``##[`` is escaped)."""
    shown = printable(line, limit).replace(*_LEGACY_COMMAND)
    body = shown.lstrip(" ")
    if body.startswith(_LEADING_COLONS[0]):
        shown = shown[: len(shown) - len(body)] + _LEADING_COLONS[1] + body[1:]
    return shown


#: The color sequences the CLI's own renderers write (SGR: ``ESC [ n;… m``), and nothing else.
_COLONS_AT_LINE_START = re.compile(r"^ *::", re.MULTILINE)
_SGR = re.compile(r"\x1b\[[0-9;]{0,16}m")


def inert_text(text: str, *, colors: bool = False) -> str:
    """Text for stdout or stderr: its own line breaks (``\\n``) kept, every line
    :func:`inert_line`.

    Everything the CLI prints passes through this, so no line of its output can carry a
    control character, move the cursor, overwrite an earlier line (CR, ESC), or be read by
    the GitHub Actions runner as a workflow command (``::warning``, ``::add-mask::``,
    ``::stop-commands::``, ``##[error]``), whatever the text came from. JSON documents keep
    their value: the escapes only ever land inside JSON strings.

    ``colors`` keeps SGR color sequences (``ESC [ 31 m``) for a renderer that colors its own
    labels on a terminal; such a renderer escapes every untrusted field itself, so the only
    ESC left in its text is its own.
    """
    if not colors:
        if (text.replace("\n", "").isprintable() and "##[" not in text
                and ("::" not in text or _COLONS_AT_LINE_START.search(text) is None)):
            return text  # already inert: the common case, checked at C speed
        return "\n".join(inert_line(line) for line in text.split("\n"))
    return "\n".join(_inert_colored(line) for line in text.split("\n"))


def _inert_colored(line: str) -> str:
    pieces = _SGR.split(line)
    codes = _SGR.findall(line)
    shown = [printable(piece).replace(*_LEGACY_COMMAND) for piece in pieces]
    first = shown[0].lstrip(" ")
    if first.startswith(_LEADING_COLONS[0]):
        shown[0] = shown[0][: len(shown[0]) - len(first)] + _LEADING_COLONS[1] + first[1:]
    return "".join(s + c for s, c in zip(shown, [*codes, ""], strict=True))


def whole_lines(pieces: Iterable[str], size: int = 1 << 16) -> Iterator[str]:
    """``pieces`` of a text regrouped into runs of whole lines of at least ``size``
    characters (the last run holds the rest, and may not end in a newline).

    :func:`inert_text` reads lines, so a text that comes in pieces is made inert run by run
    — the same result as for the whole text, which is never held at once.
    """
    held: list[str] = []
    count = 0
    for piece in pieces:
        held.append(piece)
        count += len(piece)
        if count >= size and "\n" in piece:
            text = "".join(held)
            cut = text.rindex("\n") + 1
            yield text[:cut]
            held, count = ([text[cut:]], len(text) - cut) if cut < len(text) else ([], 0)
    if held:
        yield "".join(held)
