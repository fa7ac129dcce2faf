"""``auto`` follows the official SDK clients' fallback rules, and an SSE answer is resumed
as the server asks (issue 37): a catch-all ``server/discover`` answer listing no version
we speak falls back to ``initialize``; a -32022 naming our own version is asked again; the
server's ``retry`` is honoured; a stream that keeps making progress is followed however
often it closes."""

from __future__ import annotations

import json
import time
from typing import Any

from raw_http_server import Reply, Seen, json_reply, serve, sse_reply

from histor_sign.mcp import Target, fetch

MODERN = "2026-07-28"
TOOLS = '[{"name":"alpha","inputSchema":{"type":"object"}}]'


def tools_page(msg_id: Any) -> str:
    return f'{{"jsonrpc":"2.0","id":{json.dumps(msg_id)},"result":{{"tools":{TOOLS}}}}}'


def handshake(msg: dict[str, Any]) -> Reply:
    return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
        "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
        "serverInfo": {"name": "raw", "version": "1"}}}, **{"Mcp-Session-Id": "s-1"})


def modern_discover(msg: dict[str, Any]) -> Reply:
    return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
        "supportedVersions": [MODERN], "capabilities": {"tools": {}},
        "resultType": "complete", "ttlMs": 0, "cacheScope": "public"}})


def test_a_catch_all_discover_answer_falls_back_to_initialize() -> None:
    """A server that answers every method with ``{}`` (the SDK's source names Go SDK
    servers) has not said it speaks 2026-07-28: the handshake is used."""
    def behaviour(req: Seen) -> Reply:
        msg = req.body
        if req.method != "POST":
            return Reply(405)
        if msg.get("method") == "initialize":
            return handshake(msg)
        if msg.get("method") == "tools/list":
            return json_reply(tools_page(msg["id"]))
        if "id" in msg and "method" in msg:
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        return Reply(202)

    with serve(behaviour) as (url, seen):
        snap = fetch(Target.http(url))
    assert snap.capture["era"] == "legacy" and [t["name"] for t in snap.tools] == ["alpha"]
    methods = [s.body.get("method") for s in seen if s.method == "POST"]
    assert methods[:2] == ["server/discover", "initialize"]


def test_unsupported_version_naming_our_version_is_asked_again() -> None:
    """-32022 listing 2026-07-28 (a server that was not ready to settle the era) is not a
    contradiction: the probe is sent once more, and the session is modern."""
    probes = 0

    def behaviour(req: Seen) -> Reply:
        nonlocal probes
        msg = req.body
        if msg.get("method") == "server/discover":
            probes += 1
            if probes == 1:
                return json_reply({"jsonrpc": "2.0", "id": msg["id"], "error": {
                    "code": -32022, "message": "Unsupported protocol version",
                    "data": {"supported": [MODERN], "requested": MODERN}}}, 400)
            return modern_discover(msg)
        return json_reply(tools_page(msg["id"]))

    with serve(behaviour) as (url, _seen):
        snap = fetch(Target.http(url))
    assert probes == 2 and snap.capture["era"] == "modern"


def resumable(events_before_answer: int, retry_ms: int | None) -> tuple[Any, list[float]]:
    """A modern server whose tools/list SSE answer closes after each event: the POST
    stream and each resumed GET deliver one notification; the last GET the answer."""
    gets: list[float] = []
    state: dict[str, Any] = {}

    def event(n: int, data: str) -> bytes:
        retry = f"retry: {retry_ms}\n" if retry_ms is not None else ""
        return f"id: {n}\n{retry}data: {data}\n\n".encode()

    note = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",' \
           '"data":"working"}}'

    def behaviour(req: Seen) -> Reply:
        if req.method == "GET":
            gets.append(time.monotonic())
            last = int(req.headers["last-event-id"])
            if last + 1 >= events_before_answer:
                return sse_reply(event(last + 1, tools_page(state["id"])))
            return sse_reply(event(last + 1, note))
        msg = req.body
        if msg.get("method") == "server/discover":
            return modern_discover(msg)
        state["id"] = msg["id"]
        gets.append(time.monotonic())
        return sse_reply(event(0, note))

    return behaviour, gets


def test_a_stream_making_progress_is_resumed_however_often_it_closes() -> None:
    behaviour, gets = resumable(6, None)
    with serve(behaviour) as (url, _seen):
        snap = fetch(Target.http(url))
    assert [t["name"] for t in snap.tools] == ["alpha"]
    assert len(gets) == 7  # the POST and six resumptions, more than the 3 idle ones allowed


def test_the_servers_retry_is_honoured_above_one_second() -> None:
    behaviour, gets = resumable(1, 1500)
    with serve(behaviour) as (url, _seen):
        fetch(Target.http(url))
    assert len(gets) == 2 and gets[1] - gets[0] >= 1.4  # the asked 1.5 s, not 1 s
