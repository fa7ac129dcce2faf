"""An upstream on Streamable HTTP built on the official ``mcp`` SDK (low-level server),
recording every request body that reaches it.

``python sdk_http_server.py DEFS LOG [--page N] [--json-response]``: serves the tool
definitions in DEFS (a JSON array) in pages of N, answers ``tools/call`` as the bundled
example server would, and appends the body of every HTTP request it receives to LOG (one line, flushed)
before the SDK sees it. It binds 127.0.0.1 on a free port, listens, and only then writes
``http://127.0.0.1:PORT/mcp`` on its stdout: a test reads that line and connects.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("defs")
    parser.add_argument("log")
    parser.add_argument("--page", type=int, default=3)
    parser.add_argument("--json-response", action="store_true")
    args = parser.parse_args()

    import mcp.types as types
    import uvicorn
    from mcp.server.lowlevel import Server

    with open(args.defs, encoding="utf-8") as fh:
        tools = [types.Tool.model_validate(d) for d in json.load(fh)]
    page = args.page

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        off = int(params.cursor) if params and params.cursor is not None else 0
        nxt = str(off + page) if off + page < len(tools) else None
        return types.ListToolsResult(tools=tools[off:off + page], next_cursor=nxt)

    from histor_sign.demo.example_server import ExampleServer, build_tools

    example = ExampleServer(build_tools())
    example.handle_line(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                    "params": {"protocolVersion": "2025-11-25",
                                               "capabilities": {},
                                               "clientInfo": {"name": "sdk", "version": "0"}}}))

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        # The bundled example server's own answer, so structured content fits its schema.
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": params.name, "arguments": params.arguments or {}}}
        answer = example.handle_line(json.dumps(request))
        assert answer is not None
        return types.CallToolResult.model_validate(answer["result"])

    server = Server("proxy-http-peer", version="0.1.0", on_list_tools=list_tools,
                    on_call_tool=call_tool)
    app = server.streamable_http_app(json_response=args.json_response, host="127.0.0.1")
    log = open(args.log, "a", encoding="utf-8")

    async def recording(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        log.write(body.decode("utf-8").strip() + "\n")
        log.flush()
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await app(scope, replay, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    sys.stdout.write(f"http://127.0.0.1:{port}/mcp\n")
    sys.stdout.flush()
    config = uvicorn.Config(recording, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
