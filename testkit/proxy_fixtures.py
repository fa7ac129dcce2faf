"""Releases of the example server, published and pinned; an SDK host talking to
``histor-sign proxy`` over stdio with the recording server as upstream."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_harness import REPO, cli_env, run_cli
from release_fixtures import IDENTITY, SERVER, Released, make_releases

HERE = REPO / "tests" / "proxy"  # its recording server
RECORDER = HERE / "recording_server.py"
__all__ = ["IDENTITY", "SERVER"]


def publish(release_dir: Path, location: Path, revision: int, *, latest: bool = True) -> None:
    location.mkdir(parents=True, exist_ok=True)
    shutil.copy(release_dir / "envelope.json", location / f"{revision}.envelope.json")
    shutil.copy(release_dir / "tools.snapshot.json", location / f"{revision}.tools.snapshot.json")
    shutil.copy(release_dir / "intoto.sigstore.json",
                location / f"{revision}.intoto.sigstore.json")
    if latest:
        shutil.copy(release_dir / "envelope.json", location / "latest.envelope.json")


@dataclass
class World:
    released: Released
    location: Path  # revision 1 published
    pins: Path  # pinned at revision 1
    rolled_location: Path  # revisions 1 and 2 published, latest rolled back to 1
    rolled_pins: Path  # pinned at revision 2

    def signed_tools(self, revision: int = 1) -> list[dict[str, Any]]:
        directory = self.released.rev1 if revision == 1 else self.released.rev2
        doc = json.loads((directory / "tools.snapshot.json").read_text())
        tools: list[dict[str, Any]] = doc["tools"]
        return tools


def make_world(base: Path) -> World:
    released = make_releases(base / "releases")
    trust = ["--trust-config", str(released.trust_config)]
    location = base / "published"
    publish(released.rev1, location, 1)
    pins = base / "pins.json"
    added = run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                    "--workflow", ".github/workflows/sign.yml", "--envelope", str(location),
                    "--pins", str(pins), *trust)
    assert added.code == 0, added.stderr
    rolled = base / "rolled"
    publish(released.rev1, rolled, 1)
    publish(released.rev2, rolled, 2)
    rolled_pins = base / "rolled-pins.json"
    added = run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                    "--workflow", ".github/workflows/sign.yml", "--envelope", str(rolled),
                    "--pins", str(rolled_pins), *trust)
    assert added.code == 0, added.stderr
    shutil.copy(rolled / "1.envelope.json", rolled / "latest.envelope.json")
    return World(released, location, pins, rolled, rolled_pins)


def proxy_argv(world: World, tmp: Path, *flags: str, pins: Path | None = None,
               upstream: list[str] | None = None, url: str | None = None,
               server: str = SERVER, trust_config: Path | None = None) -> list[str]:
    """``python -m histor_sign proxy …`` with a private copy of the pin file."""
    own = tmp / "pins.json"
    if not own.exists():
        shutil.copy(pins or world.pins, own)
    trust = trust_config or world.released.trust_config
    argv = [sys.executable, "-m", "histor_sign", "proxy", "--server", server,
            "--pins", str(own), "--trust-config", str(trust), *flags]
    if url is not None:
        return [*argv, "--url", url]
    return [*argv, "--", *(upstream or [])]


def recorder(log: Path, *options: str) -> list[str]:
    return [sys.executable, str(RECORDER), str(log), *options]


def received(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def received_calls(log: Path) -> list[dict[str, Any]]:
    return [m for m in received(log) if m.get("method") == "tools/call"]


@asynccontextmanager
async def sdk_host(
    argv: list[str], stderr: Path, *,
    elicitation: Callable[..., Any] | None = None,
    message_handler: Callable[..., Any] | None = None,
    initialize: bool = True,
    **callbacks: Any,
) -> AsyncIterator[Any]:
    """An official MCP SDK ClientSession talking to ``argv`` over stdio."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=cli_env())
    with stderr.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            kwargs: dict[str, Any] = dict(callbacks)  # sampling_callback, list_roots_…
            if elicitation is not None:
                kwargs["elicitation_callback"] = elicitation
            if message_handler is not None:
                kwargs["message_handler"] = message_handler
            async with ClientSession(read, write, **kwargs) as session:
                if initialize:
                    await session.initialize()
                yield session


def audit(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


class RawHost:
    """A host speaking raw JSON-RPC lines to the proxy (for byte-level checks)."""

    def __init__(self, argv: list[str]) -> None:
        import subprocess

        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=cli_env())

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any] | None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        return json.loads(line) if line else None

    def request(self, ident: int | str, method: str, params: dict[str, Any] | None = None
                ) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = self.receive()
            assert answer is not None, self.finish()[1]
            if answer.get("id") == ident and "method" not in answer:
                return answer

    def initialize(self) -> dict[str, Any]:
        answer = self.request(0, "initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw-host", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def finish(self) -> tuple[int, str]:
        """Close stdin, wait for the proxy to exit; (exit code, stderr)."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        err = self.proc.stderr.read().decode()
        code = self.proc.wait(timeout=60)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.proc.stderr.close()
        return code, err
