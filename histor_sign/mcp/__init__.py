"""MCP client that fetches a server's *complete* tools/list as raw JSON.

Both protocol eras (modern 2026-07-28 and the legacy handshake), over stdio and Streamable
HTTP. Tool objects are kept exactly as parsed (strict I-JSON), never passed through an SDK
model: SDK types drop unknown fields and reorder keys, and what we sign must be what was
served.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from histor_sign.mcp._target import FetchOptions, Target

if TYPE_CHECKING:
    from histor_sign.mcp._client import fetch, fetch_async

__all__ = ["FetchOptions", "Target", "fetch", "fetch_async"]


def __getattr__(name: str) -> Any:
    # The client pulls in asyncio, ssl and httpx machinery; load it on first use so that
    # importing the flag definitions (and the CLI's help) stays fast.
    if name in ("fetch", "fetch_async"):
        from histor_sign.mcp import _client as client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
