"""Era negotiation through the proxy mirrors the upstream (issue 37): the official Python
SDK's recommended client, ``mcp.Client`` in its default ``auto`` mode, probes
``server/discover``, gets the 2025-era server's error and falls back to ``initialize`` —
through the proxy exactly as it does directly, over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_env
from proxy_fixtures import World, proxy_argv, received, received_calls, recorder
from test_proxy_http import http_upstream
from test_proxy_http import received as http_received

pytestmark = pytest.mark.slow


async def auto_client(server: Any, *, call: bool = True) -> tuple[str, list[str], str]:
    """``mcp.Client`` (auto) against ``server``: the negotiated version, the tools it is
    offered, and the text of one call."""
    from mcp import Client

    async with Client(server, mode="auto") as client:
        names: list[str] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
        if not call:  # (the example server's modern answer lacks resultType)
            return client.protocol_version, names, ""
        result = await client.call_tool("get_note", {"note_id": "note-1"})
        assert not result.is_error
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        return client.protocol_version, names, text


def stdio(argv: list[str]) -> Any:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=argv[0], args=argv[1:], env=cli_env())


def test_sdk_auto_client_falls_back_to_initialize_through_the_proxy_stdio(
        world: World, tmp_path: Path) -> None:
    direct_log, proxied_log = tmp_path / "direct.jsonl", tmp_path / "proxied.jsonl"
    direct = asyncio.run(auto_client(stdio(recorder(direct_log, "--legacy-only"))))
    argv = proxy_argv(world, tmp_path, upstream=recorder(proxied_log, "--legacy-only"))
    proxied = asyncio.run(auto_client(stdio(argv)))
    assert direct[0] == "2025-11-25" and len(direct[1]) == 7
    assert proxied == direct
    # The upstream saw what it sees directly: the probe, then the handshake.
    methods = [m.get("method") for m in received(proxied_log)]
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    assert [c["params"]["name"] for c in received_calls(proxied_log)] == ["get_note"]


def test_sdk_auto_client_falls_back_to_initialize_through_the_proxy_http(
        world: World, tmp_path: Path) -> None:
    """A 2025-era HTTP server answers the probe with HTTP 400 and a JSON-RPC error (as the
    TS SDK's servers do): the proxy relays that error for that request; the session goes
    on to the handshake the host chooses."""
    signed = world.signed_tools()
    with http_upstream(tmp_path, signed, "--legacy-only") as url:
        direct = asyncio.run(auto_client(url))
        proxied = asyncio.run(auto_client(stdio(proxy_argv(world, tmp_path, url=url))))
    assert direct[0] == "2025-11-25" and direct[1] == [t["name"] for t in signed]
    assert proxied == direct
    methods = [m.get("method") for m in http_received(tmp_path) if "GET" not in m]
    assert methods.count("server/discover") == 2 and methods.count("initialize") == 2


def test_a_modern_upstream_is_still_opened_in_the_modern_era(world: World,
                                                             tmp_path: Path) -> None:
    """The example server speaks 2026-07-28: the host's probe succeeds through the proxy
    and the session is modern, never initialized."""
    log = tmp_path / "up.jsonl"
    version, names, _ = asyncio.run(auto_client(stdio(
        proxy_argv(world, tmp_path, upstream=recorder(log))), call=False))
    assert version == "2026-07-28" and len(names) == 7
    assert all(m.get("method") != "initialize" for m in received(log))


def test_a_modern_http_upstream_is_opened_in_the_modern_era(world: World,
                                                            tmp_path: Path) -> None:
    """The SDK's own 2026-era HTTP server: the probe succeeds through ``--url`` and the
    host gets what it gets directly."""
    signed = world.signed_tools()
    with http_upstream(tmp_path, signed) as url:
        direct = asyncio.run(auto_client(url))
        proxied = asyncio.run(auto_client(stdio(proxy_argv(world, tmp_path, url=url))))
    assert direct[0] == "2026-07-28" and direct[1] == [t["name"] for t in signed]
    assert proxied == direct
    methods = [m.get("method") for m in http_received(tmp_path) if "GET" not in m]
    assert "initialize" not in methods
