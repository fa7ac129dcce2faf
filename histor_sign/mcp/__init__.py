"""MCP client that fetches a server's *complete* tools/list as raw JSON.

Both protocol eras (modern 2026-07-28 and the legacy handshake), over stdio and Streamable
HTTP. Tool objects are kept exactly as parsed (strict I-JSON), never passed through an SDK
model: SDK types drop unknown fields and reorder keys, and what we sign must be what was
served.
"""

from __future__ import annotations

from histor_sign.mcp.client import fetch_tools, fetch_tools_async
from histor_sign.mcp.snapshot import Snapshot
from histor_sign.mcp.target import FetchOptions, Target

__all__ = ["FetchOptions", "Snapshot", "Target", "fetch_tools", "fetch_tools_async"]
