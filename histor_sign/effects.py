"""What a tool's MCP annotations state about its effect: the one reading the scan, replay,
the guard (and so the proxy), the release lint and drift triage share.

MCP ToolAnnotations are hints: untrusted metadata, never authority. Their semantics (MCP
2025-03-26 through 2026-07-28): ``readOnlyHint`` defaults to false; ``destructiveHint``
defaults to true and means something only when the tool is not read-only; so does
``idempotentHint`` (default false); ``openWorldHint`` defaults to true.

A tool's **stated effect** is what the booleans it writes say, read with those semantics. A
default is used only to give a written hint its meaning, never to invent a statement:

* ``readOnlyHint: true`` → ``read-only`` (the other hints then mean nothing);
* otherwise the tool is not read-only (``readOnlyHint: false`` written, or absent: false by
  default), so a written ``destructiveHint`` speaks: ``true`` → ``destructive`` (the official
  Python SDK writes ``ToolAnnotations(destructiveHint=True)`` as ``{"destructiveHint":
  true}``), ``false`` → ``write``;
* ``readOnlyHint: false`` without ``destructiveHint`` → ``write``: the tool says it changes
  data; that it destroys is MCP's default, not its statement;
* nothing else states an effect: ``idempotentHint`` and ``openWorldHint`` alone never decide,
  and a tool without annotations states none (MCP's defaults would call every unannotated
  tool destructive).

Two stated effects **contradict** when one tool is read-only and the other destructive
(grave) or writes (not grave), or both are not read-only and write different
``destructiveHint`` values (grave).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
READ_ONLY, WRITE, DESTRUCTIVE = "read-only", "write", "destructive"
#: Effect classes in increasing order of what a mistaken call can do to data.
EFFECT_RANK = {READ_ONLY: 0, WRITE: 1, DESTRUCTIVE: 2}
#: MCP's default of each hint (used to read a written hint, never to state an effect).
MCP_DEFAULTS: dict[str, bool] = {"readOnlyHint": False, "destructiveHint": True,
                                 "idempotentHint": False, "openWorldHint": True}


def written_hints(annotations: Any) -> dict[str, bool]:
    """The effect hints the annotations write as booleans (anything else is not a hint)."""
    if not isinstance(annotations, Mapping):
        return {}
    return {k: annotations[k] for k in HINTS if isinstance(annotations.get(k), bool)}


@dataclass(frozen=True)
class StatedEffect:
    """A tool's stated effect (``None``: it states none) and the hints it wrote."""

    effect: str | None
    written: Mapping[str, bool]

    @property
    def hints(self) -> dict[str, bool]:
        """The written hints that mean something under MCP's semantics: on a read-only tool
        ``destructiveHint`` and ``idempotentHint`` say nothing."""
        if self.effect == READ_ONLY:
            return {k: v for k, v in self.written.items()
                    if k not in ("destructiveHint", "idempotentHint")}
        return dict(self.written)

    def says(self) -> str:
        """Which hints were stated, for a message: ``states destructiveHint: true
        (readOnlyHint absent: false by MCP default)``, ``states no effect hints``."""
        if not self.written:
            return "states no effect hints"
        shown = ", ".join(f"{k}: {str(v).lower()}" for k, v in self.written.items())
        if self.effect in (DESTRUCTIVE, WRITE) and "readOnlyHint" not in self.written:
            shown += " (readOnlyHint absent: false by MCP default)"
        elif self.effect is None:
            shown += " (no effect: only readOnlyHint and destructiveHint state one)"
        return f"states {shown}"


def stated_effect(annotations: Any) -> StatedEffect:
    """The effect a tool's annotations state (module docstring), with the hints written."""
    written = written_hints(annotations)
    read_only = written.get("readOnlyHint")
    destructive = written.get("destructiveHint")
    if read_only is True:
        effect: str | None = READ_ONLY
    elif destructive is not None:
        effect = DESTRUCTIVE if destructive else WRITE
    elif read_only is False:
        effect = WRITE
    else:
        effect = None
    return StatedEffect(effect, written)


def is_destructive(annotations: Any) -> bool:
    """The annotations state a destructive tool: ``destructiveHint: true`` on a tool that does
    not say ``readOnlyHint: true``."""
    return stated_effect(annotations).effect == DESTRUCTIVE


@dataclass(frozen=True)
class Contradiction:
    """Two stated effects that contradict: the hints they differ on, and whether one of the
    two destroys what the other leaves (read-only or non-destructive vs destructive)."""

    hints: tuple[str, ...]
    grave: bool


def contradiction(a: StatedEffect, b: StatedEffect) -> Contradiction | None:
    """How two tools' stated effects contradict (module docstring), or None: an effect on one
    side only, equal effects, or a ``write`` whose destructiveness is unstated against a
    ``destructive`` do not."""
    ea, eb = a.effect, b.effect
    if ea is None or eb is None or ea == eb:
        return None
    if READ_ONLY in (ea, eb):
        hints = ("readOnlyHint", "destructiveHint") if DESTRUCTIVE in (ea, eb) \
            else ("readOnlyHint",)
        return Contradiction(hints, DESTRUCTIVE in (ea, eb))
    if "destructiveHint" in a.written and "destructiveHint" in b.written:
        return Contradiction(("destructiveHint",), True)
    return None


def effective_hints(annotations: Any) -> dict[str, bool | None]:
    """Every hint's value under MCP's semantics (written booleans, else the defaults), and
    ``None`` for ``destructiveHint`` and ``idempotentHint`` of a read-only tool, where they
    mean nothing — what a client applying the specification acts on."""
    written = written_hints(annotations)
    out: dict[str, bool | None] = {k: written.get(k, MCP_DEFAULTS[k]) for k in HINTS}
    if out["readOnlyHint"]:
        out["destructiveHint"] = out["idempotentHint"] = None
    return out
