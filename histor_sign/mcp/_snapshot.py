"""The ``histor.snapshot/v1`` document ``fetch`` writes.

``{"type": "histor.snapshot/v1", "capture": {...}, "tools": [...]}``: the tools exactly as
served (every field, in served order) plus the context they were captured under, because
a server's list may legitimately depend on protocol version, declared client
capabilities and credentials.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from histor_sign.canonical import JsonValue
from histor_sign.catalog import SNAPSHOT_TYPE, Catalog, parse_catalog
from histor_sign.errors import InputError

#: Capture-context member a fetch sets once it has captured the whole server surface.
SURFACE_CAPTURED = "surfaceCaptured"


@dataclass(frozen=True)
class Snapshot:
    """What one fetch saw: the raw tool objects as served, and how they were captured.

    ``tools`` are the served JSON objects, untouched (what is signed must be what was
    served). A Snapshot is accepted wherever the library takes tools; ``source`` names
    it in messages (the fetched target, never a secret).
    """

    tools: list[dict[str, Any]]
    capture: dict[str, Any]
    source: str = field(default="<fetch>", compare=False)
    #: The rest of the surface that steers a model; ``None`` = not offered / not captured.
    instructions: str | None = None
    prompts: list[dict[str, Any]] | None = None
    resource_templates: list[dict[str, Any]] | None = None

    @property
    def surface_captured(self) -> bool:
        """True when this snapshot records the whole surface (absent parts = not offered).

        A fetch marks its capture context with ``surfaceCaptured``; a snapshot written before
        surface capture existed, or a hand-written one without any surface member, says
        nothing about the surface, so it cannot be compared for surface drift.
        """
        return self.capture.get(SURFACE_CAPTURED) is True or any(
            part is not None
            for part in (self.instructions, self.prompts, self.resource_templates)
        )

    def to_json(self) -> dict[str, Any]:
        """The snapshot document (a plain JSON value); surface members only when captured."""
        doc: dict[str, Any] = {"type": SNAPSHOT_TYPE, "capture": self.capture, "tools": self.tools}
        if self.instructions is not None:
            doc["instructions"] = self.instructions
        if self.prompts is not None:
            doc["prompts"] = self.prompts
        if self.resource_templates is not None:
            doc["resourceTemplates"] = self.resource_templates
        return doc

    def to_bytes(self) -> bytes:
        """Pretty, deterministic UTF-8 JSON with a trailing newline (what ``fetch`` writes)."""
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False)
        return (text + "\n").encode("utf-8")

    def to_catalog(self, source: str | None = None) -> Catalog:
        """The snapshot as a catalog, for digests, scans and checks."""
        return parse_catalog(self.to_json(), source or self.source)

    @classmethod
    def from_json(cls, value: Any, source: str = "snapshot") -> Snapshot:
        """Read a snapshot document; raises :class:`InputError` if it is not one."""
        if (
            not isinstance(value, Mapping)
            or value.get("type") != SNAPSHOT_TYPE
            or not isinstance(value.get("tools"), list)
            or not isinstance(value.get("capture"), dict)
        ):
            raise InputError(f"{source}: not a {SNAPSHOT_TYPE} document")
        parse_catalog(dict(value), source)  # every tool importable
        instructions = value.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise InputError(f"{source}: \"instructions\" must be a string")
        lists: dict[str, list[dict[str, Any]] | None] = {}
        for member, key in (("prompts", "name"), ("resourceTemplates", "uriTemplate")):
            items = value.get(member)
            if items is not None and (
                not isinstance(items, list)
                or not all(isinstance(i, dict) and isinstance(i.get(key), str) for i in items)
            ):
                raise InputError(
                    f"{source}: \"{member}\" must be an array of objects with a string \"{key}\""
                )
            lists[member] = None if items is None else list(items)
        return cls(
            tools=list(value["tools"]), capture=dict(value["capture"]), source=source,
            instructions=instructions, prompts=lists["prompts"],
            resource_templates=lists["resourceTemplates"],
        )


def snapshot_or_catalog(
    document: JsonValue, source: str, *, max_tools: int | None = None
) -> Snapshot | Catalog:
    """A catalog document as read: a fetch snapshot stays a :class:`Snapshot` (so its capture
    context and server surface are kept), any other shape becomes a :class:`Catalog`."""
    catalog = parse_catalog(document, source, max_tools=max_tools)
    return Snapshot.from_json(document, source) if catalog.shape == "snapshot" else catalog
