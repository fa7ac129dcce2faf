"""The ``histor.snapshot/v1`` document ``fetch`` writes.

``{"type": "histor.snapshot/v1", "capture": {...}, "tools": [...]}``: the tools exactly as
served (every field, in served order) plus the context they were captured under, because
a server's list may legitimately depend on protocol version, declared client
capabilities and credentials.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from histor_sign.catalog import SNAPSHOT_TYPE, Catalog, parse_catalog


@dataclass(frozen=True)
class Snapshot:
    tools: list[dict[str, Any]]
    capture: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The snapshot document (a plain JSON value)."""
        return {"type": SNAPSHOT_TYPE, "capture": self.capture, "tools": self.tools}

    def to_bytes(self) -> bytes:
        """Pretty, deterministic UTF-8 JSON with a trailing newline (what ``fetch`` writes)."""
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False)
        return (text + "\n").encode("utf-8")

    def to_catalog(self, source: str = "<fetch>") -> Catalog:
        """The snapshot as a catalog, for digests, scans and checks."""
        return parse_catalog(self.to_json(), source)
