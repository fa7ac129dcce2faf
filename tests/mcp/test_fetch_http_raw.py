"""Byte-exact and hostile Streamable HTTP endpoints (a raw stdlib server in a thread)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli
from mcp_helpers import free_port
from raw_http_server import Reply, Seen, json_reply, serve, sse_reply

from histor_sign.errors import FetchError, HistorError, LimitExceeded
from histor_sign.mcp import FetchOptions, Target, fetch

TOOLS_P1 = '[{"name":"alpha","inputSchema":{"type":"object"},"x-extra":[1,2]}]'
TOOLS_P2 = '[{"name":"beta","inputSchema":{"type":"object"}}]'


def page(msg_id: int, tools: str, nxt: str | None = None) -> str:
    cursor = "" if nxt is None else f',"nextCursor":{json.dumps(nxt)}'
    return f'{{"jsonrpc":"2.0","id":{msg_id},"result":{{"tools":{tools}{cursor}}}}}'


def legacy(tools_list: Any, *, discover: Reply | None = None) -> Any:
    """A legacy endpoint: refuses server/discover, hands out a session, then tools_list."""

    def behaviour(req: Seen) -> Reply:
        if req.method == "DELETE":
            return Reply(404)
        msg = req.body
        method = msg.get("method")
        if method == "server/discover":
            return discover or json_reply(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32000,
                                                         "message": "Server not initialized"}},
                400,
            )
        if method == "initialize":
            version = msg["params"]["protocolVersion"]
            return json_reply(
                {"jsonrpc": "2.0", "id": msg["id"], "result": {
                    "protocolVersion": version, "capabilities": {"tools": {}},
                    "serverInfo": {"name": "raw-http", "version": "2"}}},
                **{"Mcp-Session-Id": "sess-42"},
            )
        if "id" not in msg or "method" not in msg:
            # Notifications and our replies: 202 with a body that must never be parsed.
            return Reply(202, b"not json at all {", {"Content-Type": "application/json"})
        return tools_list(req)  # type: ignore[no-any-return]

    return behaviour


def test_sse_framing_session_and_server_requests() -> None:
    def tools_list(req: Seen) -> Reply:
        msg = req.body
        cursor = (msg.get("params") or {}).get("cursor")
        if cursor is None:
            body = page(msg["id"], TOOLS_P1, "c2")
            half = body.index(',"result"')  # a multi-line data field joins with LF
            raw = (
                b": a comment\r"
                b"id: 7\rdata:\r\r"  # priming event with empty data
                b'event: message\rdata: {"jsonrpc":"2.0","method":"notifications/message",'
                b'"params":{"level":"info","data":"x"}}\r\r'
                b'data: {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage",'
                b'"params":{}}\r\r'
                b"data:" + body[:half].encode() + b"\rdata: " + body[half:].encode() + b"\r\r"
            )
            return sse_reply(raw)
        assert cursor == "c2"
        return sse_reply(b"event: message\r\ndata: " + page(msg["id"], TOOLS_P2).encode()
                         + b"\r\n\r\n")

    with serve(legacy(tools_list)) as (url, seen):
        snap = fetch(Target.http(url))
    assert [t["name"] for t in snap.tools] == ["alpha", "beta"]
    assert snap.tools[0]["x-extra"] == [1, 2]
    assert snap.capture["era"] == "legacy" and snap.capture["serverInfo"]["name"] == "raw-http"
    posts = [s for s in seen if s.method == "POST"]
    tools_calls = [s for s in posts if s.body.get("method") == "tools/list"]
    assert all(s.headers["mcp-session-id"] == "sess-42" for s in tools_calls)
    assert all(s.headers["mcp-protocol-version"] == "2025-11-25" for s in tools_calls)
    assert all("text/event-stream" in s.headers["accept"] for s in posts)
    refusal = [s.body for s in posts if s.body.get("id") == "s1"]
    assert refusal and refusal[0]["error"]["code"] == -1  # declined, not "not found"
    assert seen[-1].method == "DELETE" and seen[-1].headers["mcp-session-id"] == "sess-42"


def test_modern_http_headers_and_meta() -> None:
    def behaviour(req: Seen) -> Reply:
        msg = req.body
        assert req.method == "POST"
        assert "mcp-session-id" not in req.headers
        meta = msg["params"]["_meta"]
        assert req.headers["mcp-method"] == msg["method"]
        assert req.headers["mcp-protocol-version"] == meta[
            "io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        if msg["method"] == "server/discover":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "resultType": "complete", "ttlMs": 0, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "m", "version": "1"}}}})
        return json_reply(page(msg["id"], TOOLS_P1))

    with serve(behaviour) as (url, seen):
        snap = fetch(Target.http(url))
    assert snap.capture["era"] == "modern" and snap.capture["serverInfo"] == {"name": "m",
                                                                              "version": "1"}
    assert [s.method for s in seen] == ["POST", "POST"]  # no DELETE in the modern era


def test_unsupported_version_400_falls_back_to_listed_legacy_version() -> None:
    discover = json_reply({"jsonrpc": "2.0", "id": 1, "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": ["2025-06-18"], "requested": "2026-07-28"}}}, 400)

    def tools_list(req: Seen) -> Reply:
        return json_reply(page(req.body["id"], TOOLS_P2))

    with serve(legacy(tools_list, discover=discover)) as (url, seen):
        snap = fetch(Target.http(url))
    assert snap.capture["protocolVersion"] == "2025-06-18"
    init = [s for s in seen if s.method == "POST" and s.body.get("method") == "initialize"]
    assert init[0].body["params"]["protocolVersion"] == "2025-06-18"


def fails(behaviour: Any, match: str, exc: type[HistorError] = FetchError,
          **options: Any) -> None:
    with serve(behaviour) as (url, _seen), pytest.raises(exc, match=match):
        fetch(Target.http(url), FetchOptions(**options))


def test_404_405_redirect_and_other_statuses() -> None:
    fails(lambda r: Reply(404), r"HTTP 404 Not Found from .*: no MCP endpoint")
    fails(lambda r: Reply(405), r"HTTP 405 Method Not Allowed .* HTTP\+SSE transport")
    fails(lambda r: Reply(307, headers={"Location": "https://evil/x?token=abc"}),
          r"HTTP 307 redirect to https://evil/x\?token=\*\*\*; redirects are not followed")
    fails(lambda r: Reply(500, b"kaput"), r"HTTP 500 from .* for initialize: kaput")


def test_wrong_id_oversized_non_json_and_truncated_stream() -> None:
    fails(legacy(lambda r: json_reply(page(r.body["id"] + 5, TOOLS_P1))),
          r"response has id 8 but the pending tools/list request has id 3")
    big = page(3, '[{"name":"a","description":"' + "x" * 200_000 + '"}]')
    fails(legacy(lambda r: sse_reply(b"data: " + big.encode() + b"\n\n")),
          r"more than `max_bytes` 100000", LimitExceeded, max_bytes=100_000)
    fails(legacy(lambda r: Reply(200, b"<html>", {"Content-Type": "application/json"})),
          r"not valid JSON", HistorError)
    fails(legacy(lambda r: sse_reply(b": only a comment\n\n")),
          r"event stream for tools/list ended before its response")
    fails(legacy(lambda r: Reply(200, b"hi", {"Content-Type": "text/plain"})),
          r"content type 'text/plain'")
    fails(legacy(lambda r: json_reply({"jsonrpc": "2.0", "id": r.body["id"],
                                       "error": {"code": -32602, "message": "Invalid cursor"}})),
          r"tools/list with JSON-RPC error -32602: Invalid cursor")


def test_hang_past_timeout() -> None:
    def slow(req: Seen) -> Reply:
        time.sleep(1.5)
        return json_reply(page(req.body["id"], TOOLS_P1))

    fails(legacy(slow), r"no answer to tools/list from .* within 0.4 s", timeout=0.4)


def test_connection_refused_and_tls_errors() -> None:
    port = free_port()
    with pytest.raises(FetchError, match=r"cannot connect to http://127.0.0.1:\d+/mcp"):
        fetch(Target.http(f"http://127.0.0.1:{port}/mcp"))
    with serve(lambda r: Reply(404)) as (url, _), pytest.raises(FetchError, match=r"TLS|SSL"):
        fetch(Target.http(url.replace("http://", "https://")))


def test_401_shows_challenge_never_the_token(tmp_path: Path) -> None:
    challenge = 'Bearer resource_metadata="https://as.example/.well-known/oauth-protected-resource"'
    token = "s3cr3t-t0ken-value"

    def behaviour(req: Seen) -> Reply:
        assert req.headers["authorization"] == f"Bearer {token}"
        return Reply(401, token.encode(), {"WWW-Authenticate": challenge})

    out = tmp_path / "snap.json"
    with serve(behaviour) as (url, _):
        run = run_cli("fetch", "--url", url, "--bearer-token-env", "MCP_TOKEN", "-o", str(out),
                      env={"MCP_TOKEN": token})
    assert_clean_error(run, 2)
    assert "HTTP 401 Unauthorized" in run.stderr and challenge in run.stderr
    assert token not in run.stderr and not out.exists()


def test_403_and_header_values_are_scrubbed_from_messages(tmp_path: Path) -> None:
    secret = "hdr-secret-123"

    def behaviour(req: Seen) -> Reply:
        if req.body.get("method") == "server/discover":
            return Reply(400, f"bad key {req.headers['x-api-key']}".encode())
        return Reply(403, b"", {"WWW-Authenticate": 'Bearer error="insufficient_scope"'})

    out = tmp_path / "snap.json"
    with serve(behaviour) as (url, _):
        run = run_cli("fetch", "--url", url, "--header", f"X-Api-Key: {secret}",
                      "--protocol", "modern", "-o", str(out))
    assert_clean_error(run, 2)
    assert "bad key ***" in run.stderr and secret not in run.stderr
    with serve(behaviour) as (url, _):
        run = run_cli("fetch", "--url", url, "--header", f"X-Api-Key: {secret}", "-o", str(out))
    assert_clean_error(run, 2)
    assert 'HTTP 403 Forbidden' in run.stderr and "insufficient_scope" in run.stderr
    assert secret not in run.stderr and not out.exists()


def test_snapshot_records_no_secrets(tmp_path: Path) -> None:
    token, secret = "tok-abc-987", "hv-555"
    with serve(legacy(lambda r: json_reply(page(r.body["id"], TOOLS_P1)))) as (url, _):
        out = tmp_path / "snap.json"
        run = run_cli("fetch", "--url", url + "?k=qsecret", "--bearer-token-env", "T",
                      "--header", f"X-Api-Key:{secret}", "-o", str(out), env={"T": token})
    assert run.code == 0, run.stderr
    text = out.read_text()
    assert token not in text and secret not in text and "qsecret" not in text
    target = json.loads(text)["capture"]["target"]
    assert target == {"transport": "streamable-http", "url": url + "?k=***",
                      "headers": ["X-Api-Key"], "auth": "bearer"}
