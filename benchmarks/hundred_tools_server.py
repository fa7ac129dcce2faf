"""A stdio MCP server with N realistic tools (default 100), standard library only.

For ``bench_proxy.py``'s start-up run: it starts in tens of milliseconds, so what the proxy
adds (verification, the walk, the comparison, the guard) is not hidden behind a slow
server. Each tool has a sentence of description, three typed arguments (one required,
one enum, one bounded integer) and annotations, like a real server's. ``tools/call``
echoes the tool name. Run: ``python hundred_tools_server.py [N]``.
"""

from __future__ import annotations

import json
import sys

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 100


def tools() -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for n in range(COUNT):
        out.append({
            "name": f"tool_{n:03d}",
            "title": f"Tool {n}",
            "description": f"Look up record kind {n} in the catalogue and return the matching "
                           "entries, newest first; read-only.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 200},
                    "order": {"type": "string", "enum": ["newest", "oldest", "relevance"]},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": n % 3 != 0, "openWorldHint": False},
        })
    return out


def main() -> None:
    listed = tools()
    write = sys.stdout.write
    for raw in sys.stdin:
        msg = json.loads(raw)
        method, ident = msg.get("method"), msg.get("id")
        if ident is None or method is None:
            continue
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "hundred", "version": "1.0.0"}}
        elif method == "tools/list":
            result = {"tools": listed}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": msg["params"]["name"]}]}
        elif method == "ping":
            result = {}
        else:
            write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32601, "message": "Method not found"}}) + "\n")
            sys.stdout.flush()
            continue
        write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
