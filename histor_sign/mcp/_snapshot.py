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

from histor_sign.catalog import SNAPSHOT_TYPE, Catalog, parse_catalog
from histor_sign.errors import InputError


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

    def to_json(self) -> dict[str, Any]:
        """The snapshot document (a plain JSON value)."""
        return {"type": SNAPSHOT_TYPE, "capture": self.capture, "tools": self.tools}

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
        return cls(tools=list(value["tools"]), capture=dict(value["capture"]), source=source)
