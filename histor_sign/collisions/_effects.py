"""Explicit MCP effect hints and their contradictions (untrusted metadata, never authority).

Only hints a tool states explicitly count; omitted values are *not* replaced by the MCP
defaults. ``destructiveHint`` and ``idempotentHint`` only mean something when the same tool
says ``readOnlyHint: false`` (MCP semantics), so they are ignored otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def explicit_hints(annotations: Mapping[str, Any]) -> dict[str, bool]:
    """The hints that count for comparison, as stated by the tool."""
    out: dict[str, bool] = {}
    read_only = annotations.get("readOnlyHint")
    if isinstance(read_only, bool):
        out["readOnlyHint"] = read_only
    if read_only is False:
        for key in ("destructiveHint", "idempotentHint"):
            if isinstance(annotations.get(key), bool):
                out[key] = annotations[key]
    if isinstance(annotations.get("openWorldHint"), bool):
        out["openWorldHint"] = annotations["openWorldHint"]
    return out


def contradictions(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """Hint names both tools state explicitly with different values (sorted)."""
    ha, hb = explicit_hints(a), explicit_hints(b)
    return [k for k in HINTS if k in ha and k in hb and ha[k] != hb[k]]


def describe(hints: Mapping[str, bool]) -> str:
    """Short words for a hint set, e.g. ``read-only`` or ``destructive``."""
    if hints.get("readOnlyHint") is True:
        return "read-only"
    words = []
    if hints.get("readOnlyHint") is False:
        if hints.get("destructiveHint") is True:
            words.append("destructive")
        elif hints.get("destructiveHint") is False:
            words.append("non-destructive write")
        else:
            words.append("writes")
        if "idempotentHint" in hints:
            words.append("idempotent" if hints["idempotentHint"] else "non-idempotent")
    if "openWorldHint" in hints:
        words.append("open-world" if hints["openWorldHint"] else "closed-world")
    return ", ".join(words) or "no explicit hints"


#: Effect classes in increasing order of what a mistaken call can do to data.
EFFECT_RANK = {"read-only": 0, "write": 1, "destructive": 2}


def stated_effect(annotations: Mapping[str, Any]) -> str | None:
    """The effect class a tool's explicit hints state, or None when they state none.

    ``readOnlyHint: false`` without ``destructiveHint: true`` is ``write``: omitted values
    are never replaced by the MCP defaults.
    """
    hints = explicit_hints(annotations)
    if "readOnlyHint" not in hints:
        return None
    if hints["readOnlyHint"]:
        return "read-only"
    return "destructive" if hints.get("destructiveHint") is True else "write"
