"""``histor-sign proxy --url``: a Streamable HTTP upstream built on the official MCP SDK
(low-level server on uvicorn, 127.0.0.1), serving the tools the example server's release
signed, between the SDK client as host and a server that records every request body."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import HERE, RawHost, World, audit, proxy_argv, sdk_host

pytestmark = pytest.mark.slow

HTTP_SERVER = HERE / "sdk_http_server.py"
SECRET_VALUE = "value-that-must-never-be-logged-2c9e"


@contextmanager
def http_upstream(tmp: Path, tools: list[dict[str, Any]], *extra: str) -> Iterator[str]:
    """The SDK server on a free loopback port, serving ``tools``; yields its URL."""
    defs = tmp / "defs.json"
    defs.write_text(json.dumps(tools), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, str(HTTP_SERVER), str(defs),
                             str(tmp / "up.jsonl"), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().decode().strip()  # written once it listens
        assert url.startswith("http://127.0.0.1:"), "the SDK HTTP peer did not start"
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def received(tmp: Path) -> list[dict[str, Any]]:
    log = tmp / "up.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def received_calls(tmp: Path) -> list[dict[str, Any]]:
    return [m for m in received(tmp) if m.get("method") == "tools/call"]


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content)


@pytest.mark.parametrize("mode", [(), ("--json-response",)], ids=["sse", "json"])
def test_signed_tools_offered_byte_for_byte_over_http(world: World, tmp_path: Path,
                                                      mode: tuple[str, ...]) -> None:
    signed = world.signed_tools()
    with http_upstream(tmp_path, signed, *mode) as url:
        host = RawHost(proxy_argv(world, tmp_path, url=url))
        host.initialize()
        answer = host.request(1, "tools/list")
        code, err = host.finish()
    offered = answer["result"]["tools"]
    assert [json.dumps(t) for t in offered] == [json.dumps(t) for t in signed]
    assert "nextCursor" not in answer["result"]
    assert code == 0, err
    assert f"{len(signed)} tool(s) offered" in err and "withheld" not in err
    # The proxy walked every page of the upstream's list itself, over HTTP.
    pages = [m for m in received(tmp_path) if m.get("method") == "tools/list"]
    assert len(pages) == 3


def test_drifted_tool_withheld_and_invalid_calls_never_reach_the_server(
        world: World, tmp_path: Path) -> None:
    served = [dict(t) for t in world.signed_tools()]
    [search] = [t for t in served if t["name"] == "search_notes"]
    search["description"] = "Search every note, even private ones."
    trail = tmp_path / "audit.jsonl"
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("search_notes", {"query": "x"}, "not-offered"),
        ("get_note", {"note_id": 42}, "type-mismatch"),
        ("get_note", {"note_id": "n", "exfil": SECRET_VALUE}, "unknown-argument"),
        ("get_note", {}, "missing-required"),
    ]

    async def go(url: str) -> tuple[list[str], list[Any]]:
        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail), url=url),
                            tmp_path / "err") as host:
            names = [t.name for t in (await host.list_tools()).tools]
            out = [await host.call_tool(name, args) for name, args, _ in bad]
            out.append(await host.call_tool("get_note", {"note_id": "note-1"}))
            return names, out

    with http_upstream(tmp_path, served) as url:
        names, results = asyncio.run(go(url))
    assert "search_notes" not in names
    assert len(names) == len(served) - 1
    for (_, _, code), result in zip(bad, results[:-1], strict=True):
        assert result.is_error and code in texts(result), texts(result)
        assert SECRET_VALUE not in texts(result)
    assert not results[-1].is_error and results[-1].structured_content is not None
    # Only the valid call reached the server (its log has every POST body it received).
    assert [c["params"] for c in received_calls(tmp_path)] == [
        {"name": "get_note", "arguments": {"note_id": "note-1"}}]
    assert SECRET_VALUE not in trail.read_text()
    records = audit(trail)
    [withheld] = [r for r in records if r["event"] == "tool-withheld"]
    assert withheld["tool"] == "search_notes" and withheld["fields"] == ["description"]
    denied = [r for r in records if r["event"] == "call-denied"]
    assert [r["reasons"][0]["code"] for r in denied] == [b[2] for b in bad]
    start = next(r for r in records if r["event"] == "session-start")
    assert start["upstream"] == {"transport": "streamable-http", "url": url}
    assert start["era"] == "legacy"
    assert "withheld:" in (tmp_path / "err").read_text()


def test_modern_era_session_over_http(world: World, tmp_path: Path) -> None:
    """A host that opens with a modern request (no initialize): the proxy walks the SDK
    server's list in that era, with the era's headers, and decides calls the same way."""
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    signed = world.signed_tools()
    with http_upstream(tmp_path, signed) as url:
        host = RawHost(proxy_argv(world, tmp_path, url=url))
        listed = host.request(1, "tools/list", dict(meta))
        bad = host.request(2, "tools/call", {**meta, "name": "get_note",
                                             "arguments": {"note_id": 7}})
        call = {**meta, "name": "get_note", "arguments": {"note_id": "note-1"}}
        good = host.request("x-3", "tools/call", call)
        code, err = host.finish()
    assert code == 0, err
    assert listed["result"]["resultType"] == "complete"
    assert [json.dumps(t) for t in listed["result"]["tools"]] == [json.dumps(t) for t in signed]
    assert bad["result"]["isError"] is True and "type-mismatch" in json.dumps(bad)
    assert good["id"] == "x-3" and good["result"]["isError"] is False, good
    assert all(m.get("method") != "initialize" for m in received(tmp_path))
    assert [c["params"] for c in received_calls(tmp_path)] == [call]


def test_list_changed_sent_only_on_the_get_stream_is_heard(world: World,
                                                           tmp_path: Path) -> None:
    """The SDK server announces its changed tools on the session's standalone GET stream
    only (a connection-scoped notification, between requests): the proxy listens there,
    walks and compares again, withholds the drifted tool, then tells the host."""
    trail = tmp_path / "audit.jsonl"

    async def go(url: str) -> tuple[list[str], list[str], Any]:
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                changed.set()

        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail), url=url),
                            tmp_path / "err", message_handler=on_message) as host:
            before = [t.name for t in (await host.list_tools()).tools]
            assert not (await host.call_tool("list_notebooks", {})).is_error
            async with asyncio.timeout(60):  # a bound for failure, not a measurement
                await changed.wait()
            after = [t.name for t in (await host.list_tools()).tools]
            return before, after, await host.call_tool("get_note", {"note_id": "note-1"})

    with http_upstream(tmp_path, world.signed_tools(), "--change-on-call",
                       "list_notebooks") as url:
        before, after, denied = asyncio.run(go(url))
    assert "get_note" in before and "get_note" not in after
    assert denied.is_error and "not-offered" in texts(denied)
    assert {"GET": True} in received(tmp_path)
    assert [c["params"]["name"] for c in received_calls(tmp_path)] == ["list_notebooks"]
    events = [r["event"] for r in audit(trail)]
    assert "tools-changed" in events
    [withheld] = [r for r in audit(trail) if r["event"] == "tool-withheld"]
    assert withheld["tool"] == "get_note" and withheld["fields"] == ["description"]
