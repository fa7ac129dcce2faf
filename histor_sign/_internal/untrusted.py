"""Untrusted text (tool names, descriptions, model-chosen names) made inert for display.

Servers and models choose these strings. Printed raw they could move the cursor, rewrite a
terminal title, reorder a line with bidi overrides, or forge extra output lines; escaped,
they stay one visible line of plain characters.
"""

from __future__ import annotations

import json


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
    shown = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in clipped)
    return shown + ("…" if limit is not None and len(text) > limit else "")
