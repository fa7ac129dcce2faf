"""A tiny raw HTTP MCP endpoint (stdlib only) for byte-exact and hostile HTTP cases.

Runs in a thread of the test process on 127.0.0.1; ``behaviour(request) -> Reply`` decides
each answer, and every request is recorded for assertions.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Seen:
    method: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


Behaviour = Callable[[Seen], Reply]


def json_reply(message: dict[str, Any] | str, status: int = 200, **headers: str) -> Reply:
    body = message if isinstance(message, str) else json.dumps(message)
    return Reply(status, body.encode(), {"Content-Type": "application/json", **headers})


def sse_reply(raw: bytes, **headers: str) -> Reply:
    return Reply(200, raw, {"Content-Type": "text/event-stream", **headers})


@contextmanager
def serve(behaviour: Behaviour) -> Iterator[tuple[str, list[Seen]]]:
    seen: list[Seen] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = Seen(self.command, {k.lower(): v for k, v in self.headers.items()},
                           json.loads(raw) if raw else None)
            seen.append(request)
            reply = behaviour(request)
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)

        do_POST = do_GET = do_DELETE = _handle

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
