"""A Streamable HTTP front for a stdio MCP server: each HTTP session gets its own process.

``python http_front.py -- COMMAND...`` binds 127.0.0.1 on a free port, writes
``http://127.0.0.1:PORT/mcp`` on its stdout once it listens, and for every new session (a
POST without ``Mcp-Session-Id``) starts COMMAND and relays JSON-RPC messages both ways
unchanged: what the HTTP client sends goes to the process's stdin; what the process writes
goes back on the SSE stream of the request it belongs to (a response by its id, a progress
notification by its token, anything else sent while a request is in flight on that request's
stream, otherwise on the session's GET stream). The HTTP side is the official SDK's server
transport (with its DNS-rebinding protection for a loopback server), so an HTTP-only test
suite such as the MCP conformance suite can drive ``histor-sign proxy``, which faces its
host on stdio, and the same front without the proxy gives the baseline.
"""

from __future__ import annotations

import os
import socket
import sys
import uuid
from typing import Any


def main() -> None:
    import anyio
    import uvicorn
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp.server.transport_security import TransportSecuritySettings

    command = sys.argv[sys.argv.index("--") + 1:]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
    sessions: dict[str, Any] = {}

    async def serve() -> None:
        async with anyio.create_task_group() as group:

            async def app(scope: Any, receive: Any, send: Any) -> None:
                if scope["type"] != "http":
                    return
                headers = dict(scope.get("headers") or [])
                session = headers.get(b"mcp-session-id", b"").decode()
                transport = sessions.get(session)
                if transport is None and not session and scope["method"] == "POST":
                    transport = StreamableHTTPServerTransport(
                        mcp_session_id=uuid.uuid4().hex, security_settings=security)
                    sessions[transport.mcp_session_id] = transport
                    await group.start(relay, transport, command)
                if transport is None:
                    await send({"type": "http.response.start", "status": 404, "headers": []})
                    await send({"type": "http.response.body", "body": b""})
                    return
                await transport.handle_request(scope, receive, send)

            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sock.listen(64)
            sys.stdout.write(f"http://127.0.0.1:{sock.getsockname()[1]}/mcp\n")
            sys.stdout.flush()
            config = uvicorn.Config(app, log_level="warning", lifespan="off")
            await uvicorn.Server(config).serve(sockets=[sock])
            group.cancel_scope.cancel()

    anyio.run(serve)


async def relay(transport: Any, command: list[str], *, task_status: Any) -> None:
    """One session: the SDK transport on one side, ``command`` over stdio on the other."""
    import anyio
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.message import ServerMessageMetadata, SessionMessage
    from mcp.types import JSONRPCError, JSONRPCRequest, JSONRPCResponse

    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    in_flight: list[Any] = []  # request ids from the HTTP client not yet answered
    tokens: dict[Any, Any] = {}  # progress token -> request id

    def related(message: Any) -> Any:
        token = (getattr(message, "params", None) or {}).get("progressToken")
        if token is not None and token in tokens:
            return tokens[token]
        return in_flight[-1] if in_flight else None

    async with transport.connect() as (from_host, to_host), \
            stdio_client(params, errlog=sys.stderr) as (from_server, to_server):
        task_status.started()
        async with anyio.create_task_group() as pumps:

            async def upward() -> None:
                async for item in from_host:
                    if isinstance(item, Exception):
                        continue
                    message = item.message
                    if isinstance(message, JSONRPCRequest):
                        in_flight.append(message.id)
                        meta = (message.params or {}).get("_meta") or {}
                        if "progressToken" in meta:
                            tokens[meta["progressToken"]] = message.id
                    await to_server.send(SessionMessage(message))
                pumps.cancel_scope.cancel()

            async def downward() -> None:
                async for item in from_server:
                    if isinstance(item, Exception):
                        continue
                    message = item.message
                    metadata = None
                    if isinstance(message, JSONRPCResponse | JSONRPCError):
                        if message.id in in_flight:
                            in_flight.remove(message.id)
                    elif (request := related(message)) is not None:
                        metadata = ServerMessageMetadata(related_request_id=request)
                    await to_host.send(SessionMessage(message, metadata=metadata))
                pumps.cancel_scope.cancel()

            pumps.start_soon(upward)
            pumps.start_soon(downward)


if __name__ == "__main__":
    main()
