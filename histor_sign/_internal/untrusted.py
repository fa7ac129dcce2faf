"""Untrusted text (tool names, descriptions, model-chosen names) made inert for display.

Servers and models choose these strings. Printed raw they could move the cursor, rewrite a
terminal title, reorder a line with bidi overrides, or forge extra output lines; escaped,
they stay one visible line of plain characters.
"""

from __future__ import annotations

import json


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with every non-printable character (controls, bidi overrides, line
    separators) JSON-escaped, clipped to ``limit`` characters when given."""
    clipped = text if limit is None else text[:limit]
    shown = "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in clipped)
    return shown + ("…" if limit is not None and len(text) > limit else "")
