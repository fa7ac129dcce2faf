"""The npm reference server ``@modelcontextprotocol/server-everything``, pinned in tests/peers.

CI installs it with ``npm ci --prefix tests/peers``; a missing install is a test FAILURE
(with the command to run), never a skip. Its HTTP modes call ``app.listen(PORT)`` on all
interfaces, so it is started with ``tests/peers/bind_loopback.cjs`` preloaded, which makes
every host-less ``listen()`` bind 127.0.0.1; :func:`serve` also checks the socket really is
loopback-only and always stops the process.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_helpers import free_port

PEERS = Path(__file__).resolve().parent.parent / "tests" / "peers"
PACKAGE = PEERS / "node_modules" / "@modelcontextprotocol" / "server-everything"
ENTRY = PACKAGE / "dist" / "index.js"
BIND_LOOPBACK = PEERS / "bind_loopback.cjs"
INSTALL = "npm ci --prefix tests/peers --no-audit --no-fund"

#: What a client declaring no capabilities is served, in served order.
BARE_TOOL_NAMES = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
]
#: What a fully capable client (roots, sampling, elicitation: what ``fetch`` declares) is
#: served besides, and where (the list grows to 19 with the experimental ``tasks`` too).
CAPABLE_TOOL_NAMES = ["get-roots-list", "trigger-elicitation-request",
                      "trigger-url-elicitation", "trigger-sampling-request"]
#: What ``fetch`` lists, in served order: the list a fully capable host is offered.
TOOL_NAMES = [*BARE_TOOL_NAMES[:-1], *CAPABLE_TOOL_NAMES, BARE_TOOL_NAMES[-1]]


def node() -> str:
    path = shutil.which("node")
    assert path, "node (>= 20) is required for the server-everything peer"
    return path


def require_installed() -> None:
    assert ENTRY.is_file(), f"the server-everything test peer is not installed; run: {INSTALL}"


def argv(mode: str) -> list[str]:
    require_installed()
    return [node(), "--require", str(BIND_LOOPBACK), str(ENTRY), mode]


def stdio_command() -> str:
    return shlex.join(argv("stdio"))


def _listeners(port: int) -> set[str]:
    """Local addresses (hex, as in /proc/net/tcp*) of sockets listening on ``port``."""
    found: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].rpartition(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                found.add(address)
    return found


LOOPBACK_V4 = "0100007F"


@contextmanager
def serve(mode: str, path: str) -> Iterator[str]:
    """Run the peer's HTTP ``mode`` (``streamableHttp`` or ``sse``); yield ``http://127.0.0.1:P{path}``."""
    with serve_loopback(argv(mode), dict(os.environ), path, f"server-everything {mode}") as url:
        yield url


@contextmanager
def serve_loopback(command: list[str], env: dict[str, str], path: str,
                   what: str) -> Iterator[str]:
    """Start ``command`` with ``PORT`` set to a free loopback port, wait until it listens
    (on 127.0.0.1 only: checked), yield ``http://127.0.0.1:P{path}``, and stop it."""
    port = free_port()
    proc = subprocess.Popen(
        command, env={**env, "PORT": str(port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                assert proc.poll() is None, f"{what} exited ({proc.returncode})"
                assert time.monotonic() < deadline, f"{what} did not start"
                time.sleep(0.1)
        assert _listeners(port) == {LOOPBACK_V4}, "the peer must listen on 127.0.0.1 only"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
