"""Legacy session expiry (404 + Mcp-Session-Id → new session, walk restarted), the
deprecated HTTP+SSE transport (named in one clear error), and the auth context a snapshot
records (names and schemes only) — against the raw stdlib HTTP server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli
from mcp_helpers import raw_command
from raw_http_server import Reply, Seen, json_reply, serve, sse_reply

from histor_sign.errors import FetchError
from histor_sign.mcp import FetchOptions, Target, fetch

TOOLS_P1 = '[{"name":"alpha","inputSchema":{"type":"object"}}]'
TOOLS_P2 = '[{"name":"beta","inputSchema":{"type":"object"}}]'
SESSION_GONE = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32001, "message": "Session not found"}})


def page(msg_id: int, tools: str, nxt: str | None = None) -> str:
    cursor = "" if nxt is None else f',"nextCursor":{json.dumps(nxt)}'
    return f'{{"jsonrpc":"2.0","id":{msg_id},"result":{{"tools":{tools}{cursor}}}}}'


class ExpiringServer:
    """Legacy, two pages; session ``s1`` expires when page 2 is asked for, like the TS SDK
    (404 with a JSON-RPC body). ``expire_every`` expires every session that way."""

    def __init__(self, *, expire_every: bool = False, version: str = "2025-06-18") -> None:
        self.expire_every = expire_every
        self.version = version
        self.sessions = 0
        self.live: set[str] = set()

    def __call__(self, req: Seen) -> Reply:
        sid = req.headers.get("mcp-session-id")
        if req.method == "DELETE":
            return Reply(200 if sid in self.live else 404)
        msg = req.body
        method = msg.get("method")
        if method == "server/discover":
            return Reply(405)  # a legacy server that only knows initialize
        if method == "initialize":
            assert sid is None, "a new session must be requested without the old id"
            self.sessions += 1
            new = f"s{self.sessions}"
            self.live.add(new)
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": self.version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "expiring", "version": "1"}}},
                **{"Mcp-Session-Id": new})
        if sid not in self.live:
            return Reply(404, SESSION_GONE.encode(), {"Content-Type": "application/json"})
        if "id" not in msg:
            return Reply(202)
        cursor = (msg.get("params") or {}).get("cursor")
        if cursor is None:
            return json_reply(page(msg["id"], TOOLS_P1, "p2"))
        if sid == "s1" or self.expire_every:
            self.live.discard(sid)
            return Reply(404, SESSION_GONE.encode(), {"Content-Type": "application/json"})
        return sse_reply(b"event: message\ndata: " + page(msg["id"], TOOLS_P2).encode() + b"\n\n")


def test_expired_session_is_renewed_once_and_the_walk_restarts() -> None:
    server = ExpiringServer()
    with serve(server) as (url, seen):
        snap = fetch(Target.http(url))
    assert [t["name"] for t in snap.tools] == ["alpha", "beta"]
    assert snap.capture["sessionRenewals"] == 1 and snap.capture["pageSizes"] == [1, 1]
    assert snap.capture["protocolVersion"] == "2025-06-18"
    posts = [(s.headers.get("mcp-session-id"), s.body.get("method"),
              (s.body.get("params") or {}).get("cursor")) for s in seen if s.method == "POST"]
    assert posts == [
        (None, "server/discover", None), (None, "initialize", None),
        ("s1", "notifications/initialized", None),
        ("s1", "tools/list", None), ("s1", "tools/list", "p2"),  # → 404: session gone
        (None, "initialize", None), ("s2", "notifications/initialized", None),
        ("s2", "tools/list", None), ("s2", "tools/list", "p2"),  # from the first page again
    ]
    inits = [s.body for s in seen if s.method == "POST" and s.body.get("method") == "initialize"]
    assert inits[1]["params"]["protocolVersion"] == "2025-06-18"  # what s1 negotiated
    deletes = [s.headers.get("mcp-session-id") for s in seen if s.method == "DELETE"]
    assert deletes == ["s2"]


def test_a_second_expiry_is_one_clear_error(tmp_path: Path) -> None:
    server = ExpiringServer(expire_every=True)
    with serve(server) as (url, _seen):
        with pytest.raises(FetchError, match=r"ended the session .* expired the new session too"):
            fetch(Target.http(url))
        out = tmp_path / "snap.json"
        run = run_cli("fetch", "--url", url, "-o", str(out))
    assert_clean_error(run, 2)
    assert "HTTP 404 during tools/list: the server ended the session" in run.stderr
    assert not out.exists() and server.sessions == 4  # two per fetch, never more


def test_404_without_a_session_is_not_a_renewal() -> None:
    with serve(lambda r: Reply(404, SESSION_GONE.encode(), {"Content-Type": "application/json"})
               ) as (url, seen), pytest.raises(FetchError, match=r"-32001"):
        fetch(Target.http(url), FetchOptions(protocol="legacy"))
    assert [s.body["method"] for s in seen if s.method == "POST"] == ["initialize"]


def deprecated_sse(post_status: int, *, greeting: bytes = b"event: endpoint\r\n"
                   b"data: /messages?session_id=abc123\r\n\r\n") -> Any:
    def behaviour(req: Seen) -> Reply:
        if req.method == "GET":
            assert req.headers["accept"] == "text/event-stream"
            assert "mcp-session-id" not in req.headers
            return sse_reply(b": hello\n\n" + greeting)
        return Reply(post_status, b"Cannot POST /sse", {"Content-Type": "text/html"})

    return behaviour


@pytest.mark.parametrize("status", [400, 404, 405])
@pytest.mark.parametrize("protocol", ["auto", "modern", "legacy"])
def test_deprecated_http_sse_transport_is_named(status: int, protocol: str) -> None:
    with serve(deprecated_sse(status)) as (url, seen), pytest.raises(FetchError) as info:
        fetch(Target.http(url), FetchOptions(protocol=protocol))  # type: ignore[arg-type]
    message = info.value.message
    assert message.startswith(f"{url} only speaks the deprecated HTTP+SSE transport (2024-11-05")
    assert "abc123" not in message
    assert [s.method for s in seen].count("GET") == 1


def test_deprecated_sse_cli_error_is_one_line_and_sends_auth(tmp_path: Path) -> None:
    token = "sse-tok-31337"
    out = tmp_path / "snap.json"
    with serve(deprecated_sse(405)) as (url, seen):
        run = run_cli("fetch", "--url", url, "--bearer-token-env", "T", "-o", str(out),
                      env={"T": token})
    assert_clean_error(run, 2)
    assert "only speaks the deprecated HTTP+SSE transport" in run.stderr
    assert token not in run.stderr and not out.exists()
    get = [s for s in seen if s.method == "GET"]
    assert get[0].headers["authorization"] == f"Bearer {token}"


def test_not_deprecated_sse_keeps_the_original_error() -> None:
    # A GET stream whose first event is not `endpoint` is not the old transport.
    with serve(deprecated_sse(405, greeting=b'data: {"jsonrpc":"2.0","method":"x"}\n\n')) as (
        url, _seen), pytest.raises(FetchError, match=r"HTTP 405 Method Not Allowed"):
        fetch(Target.http(url))
    # 401 is an auth failure: no probing, no second request of any kind.
    with serve(lambda r: Reply(401)) as (url, seen), pytest.raises(FetchError, match="401"):
        fetch(Target.http(url))
    assert [s.method for s in seen] == ["POST"]


def legacy_ok(req: Seen) -> Reply:
    msg = req.body
    if req.method != "POST":
        return Reply(405)
    if msg.get("method") == "initialize":
        return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "x"}}})
    if "id" not in msg:
        return Reply(202)
    if msg["method"] == "server/discover":
        return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32601, "message": "Method not found"}})
    return json_reply(page(msg["id"], TOOLS_P1))


@pytest.mark.parametrize(("header", "auth"), [
    ("Authorization: Bearer hv-secret-1", "bearer"),
    ("Authorization: Basic hv-secret-1", "basic"),
    ("Authorization: hv-secret-1", "other"),  # no scheme: the first word IS the secret
    ("X-Api-Key: hv-secret-1", None),
])
def test_capture_records_auth_context_never_values(tmp_path: Path, header: str,
                                                   auth: str | None) -> None:
    out = tmp_path / "snap.json"
    with serve(legacy_ok) as (url, seen):
        run = run_cli("fetch", "--url", url, "--header", header, "--header", "X-Tenant: t-77",
                      "-o", str(out))
    assert run.code == 0, run.stderr
    name = header.split(":")[0]
    assert seen[0].headers[name.lower()] == header.split(": ", 1)[1]
    text = out.read_text()
    assert "hv-secret-1" not in text and "t-77" not in text
    expected: dict[str, Any] = {"transport": "streamable-http", "url": url,
                                "headers": sorted([name, "X-Tenant"], key=str.lower)}
    if auth is not None:
        expected["auth"] = auth
    assert json.loads(text)["capture"]["target"] == expected


def test_stdio_capture_names_the_extra_environment_only(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    target = Target.stdio(raw_command("legacy", pidfile), env={"HS_API_KEY": "env-secret-9"})
    snap = fetch(target)
    assert snap.capture["target"]["env"] == ["HS_API_KEY"]
    assert b"env-secret-9" not in snap.to_bytes()
