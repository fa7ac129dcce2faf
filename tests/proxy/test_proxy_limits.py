"""A message over the proxy's limit fails that one request and the session goes on
(issue 37): a 9.8 MB tool result (a 4.8 MB file read through server-filesystem is one)
used to end the session; ``--max-message-bytes`` raises the limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from proxy_fixtures import RawHost, World, proxy_argv, received_calls, recorder

pytestmark = pytest.mark.slow

BIG = 9_800_000  # over the default 8 MiB


def call(host: RawHost, ident: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
    return host.request(ident, "tools/call", {"name": name, "arguments": arguments})


def test_a_result_over_the_limit_fails_that_call_and_the_session_goes_on(
        world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log, "--big-result",
                                                                 str(BIG))))
    host.initialize()
    big = call(host, 1, "search_notes", {"query": "everything"})
    after = call(host, 2, "get_note", {"note_id": "note-1"})
    again = call(host, 3, "search_notes", {"query": "again"})
    code, err = host.finish()
    assert big["error"]["code"] == -32603 and "over the limit" in big["error"]["message"]
    assert after["result"]["isError"] is False  # the next call is answered as usual
    assert "error" in again
    assert code == 0, err
    assert err.count("over the limit of 8388608 bytes") == 2 and "Traceback" not in err
    assert [c["params"]["name"] for c in received_calls(log)] == [
        "search_notes", "get_note", "search_notes"]


def test_max_message_bytes_lets_a_larger_result_through(world: World, tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, "--max-message-bytes", str(16 << 20),
                              upstream=recorder(tmp_path / "up.jsonl", "--big-result",
                                                str(BIG))))
    host.initialize()
    big = call(host, 1, "search_notes", {"query": "everything"})
    code, err = host.finish()
    assert code == 0, err
    assert len(big["result"]["content"][0]["text"]) == BIG  # type: ignore[index]


def test_a_host_request_over_the_limit_is_refused_alone(world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log)))
    host.initialize()
    host.send(b'{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": '
              b'"get_note", "arguments": {"note_id": "' + b"x" * (9 << 20) + b'"}}}\n')
    refused = host.receive()
    after = call(host, 10, "get_note", {"note_id": "note-1"})
    code, err = host.finish()
    assert refused is not None and refused["id"] == 9 and refused["error"]["code"] == -32600
    assert after["result"]["isError"] is False
    assert code == 0 and "over the limit" in err and "Traceback" not in err
    assert [c["id"] for c in received_calls(log)] != [] and len(received_calls(log)) == 1


def test_over_http_an_answer_over_the_limit_fails_that_call_alone(world: World,
                                                                  tmp_path: Path) -> None:
    import json

    from raw_http_server import Reply, Seen, json_reply, serve

    tools = world.signed_tools()

    def behaviour(req: Seen) -> Reply:
        msg = req.body
        if req.method != "POST":
            return Reply(405)
        method = msg.get("method")
        if method == "initialize":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "1"}}}, **{"Mcp-Session-Id": "s"})
        if method == "tools/list":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})
        if method == "tools/call":
            size = BIG if msg["params"]["name"] == "search_notes" else 10
            return json_reply(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "content": [{"type": "text", "text": "x" * size}], "isError": False}}))
        return Reply(202)

    with serve(behaviour) as (url, _seen):
        host = RawHost(proxy_argv(world, tmp_path, url=url))
        host.initialize()
        big = call(host, 1, "search_notes", {"query": "everything"})
        after = call(host, 2, "get_note", {"note_id": "note-1"})
        code, err = host.finish()
    assert big["error"]["code"] == -32603 and "over the limit" in big["error"]["message"]
    assert after["result"]["isError"] is False
    assert code == 0, err
