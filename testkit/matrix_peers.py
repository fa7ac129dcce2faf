"""The servers of the compatibility matrix, each signed once through a local Sigstore.

Every server is a pinned third-party package: the npm ones come from ``tests/peers``
(``npm ci --prefix tests/peers``), the PyPI ones from the ``test`` extra. Each is released
with ``histor-sign release`` (the tools it lists to ``release`` are the signed revision) and
pinned with ``trust add`` into one pin file, so every proxied cell serves a revision the
local Sigstore instance signed. Nothing here reaches beyond 127.0.0.1: ``mcp-server-fetch``
only fetches a page served on loopback, ``mcp-server-git`` reads a temporary repository.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cli_harness import REPO, cli_env, run_cli
from everything_peer import BARE_TOOL_NAMES, BIND_LOOPBACK, serve_loopback

__all__ = ["BARE_TOOL_NAMES"]  # server-everything's list for a host declaring nothing
PEERS = REPO / "tests" / "peers"
MODULES = PEERS / "node_modules"
INSTALL = "npm ci --prefix tests/peers --no-audit --no-fund"
BIN = Path(sys.executable).parent
REPOSITORY = "modelcontextprotocol/servers"
WORKFLOW = ".github/workflows/sign.yml"
IDENTITY = f"https://github.com/{REPOSITORY}/{WORKFLOW}@refs/heads/main"
#: The environment of every process the matrix starts (set by sign_all): cli_env's, with
#: bytecode cached in the run's own directory, as an installed package has it (without it
#: each proxy start compiles the package again).
ENV: dict[str, str] = {}
PAGE = "<html><body><h1>Loopback page</h1><p>Served to mcp-server-fetch on 127.0.0.1.</p></body></html>"


@dataclass(frozen=True)
class Peer:
    """One server of the matrix: how to start it and which tool call every host makes.

    ``command`` and ``call`` may name ``{work}`` (a directory made once per server) and
    ``{page}`` (the loopback page's URL). ``http`` names the argument that starts the same
    command on Streamable HTTP instead of stdio (server-everything only)."""

    slug: str
    command: tuple[str, ...]
    call: tuple[str, dict[str, Any]]
    env: dict[str, str] = field(default_factory=dict)
    http: str | None = None

    @property
    def name(self) -> str:
        return f"io.github.modelcontextprotocol/{self.slug}"

    @property
    def installed(self) -> Path:
        """The installed file it runs (a Node entry point or a console script)."""
        return Path(next((a for a in self.command if a.endswith(".js")), self.command[0]))


def _node() -> str:
    return shutil.which("node") or "node"


def _everything(slug: str, package: str) -> Peer:
    entry = MODULES / package / "dist" / "index.js"
    return Peer(slug, (_node(), "--require", str(BIND_LOOPBACK), str(entry)),
                ("echo", {"message": "compat matrix"}), http="streamableHttp")


PEERS_2026 = _everything("server-everything", "@modelcontextprotocol/server-everything")
PEERS_2025 = _everything("server-everything-2025", "server-everything-2025")
SERVERS: list[Peer] = [
    PEERS_2026,
    PEERS_2025,
    Peer("server-filesystem",
         (_node(), str(MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"),
          "{work}"),
         ("read_text_file", {"path": "{work}/hello.txt"})),
    Peer("server-memory",
         (_node(), str(MODULES / "@modelcontextprotocol/server-memory/dist/index.js")),
         ("read_graph", {}), env={"MEMORY_FILE_PATH": "{work}/memory.jsonl"}),
    Peer("mcp-server-time", (str(BIN / "mcp-server-time"), "--local-timezone", "UTC"),
         ("convert_time", {"source_timezone": "UTC", "time": "12:00",
                           "target_timezone": "Asia/Tokyo"})),
    Peer("mcp-server-fetch", (str(BIN / "mcp-server-fetch"), "--ignore-robots-txt", "--allow-private-ips"),
         # raw: no readability pass (it starts Node.js per call); the fetch itself is the same
         ("fetch", {"url": "{page}", "raw": True})),
    Peer("mcp-server-git", (str(BIN / "mcp-server-git"), "--repository", "{work}"),
         ("git_log", {"repo_path": "{work}", "max_count": 5})),
]


def matrix_env() -> dict[str, str]:
    return dict(ENV) if ENV else cli_env()


def missing(peer: Peer) -> str | None:
    """Why ``peer`` cannot start here (not installed), or None."""
    if not peer.installed.exists():
        source = INSTALL if str(MODULES) in str(peer.installed) else 'pip install -e ".[test]"'
        return f"{peer.slug} is not installed (run: {source})"
    return None


@dataclass
class Signed:
    """Every server of the matrix released and pinned; the proxy's arguments for each."""

    base: Path
    trust_config: Path
    pins: Path
    page: str
    signed_names: dict[str, list[str]]

    def work(self, peer: Peer) -> Path:
        return self.base / "work" / peer.slug

    def fill(self, value: Any, peer: Peer) -> Any:
        """``value`` with ``{work}`` and ``{page}`` filled in (strings, lists and dicts)."""
        if isinstance(value, str):
            return value.replace("{work}", str(self.work(peer))).replace("{page}", self.page)
        if isinstance(value, dict):
            return {k: self.fill(v, peer) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.fill(v, peer) for v in value]
        return value

    def stdio(self, peer: Peer) -> list[str]:
        """The server's stdio command; its environment rides on ``env`` (the proxy and every
        host pass their own environment on)."""
        command: list[str] = self.fill(list(peer.command), peer)
        if peer.http:
            command.append("stdio")
        env = [f"{k}={v}" for k, v in self.fill(peer.env, peer).items()]
        return ["env", *env, *command] if env else command

    def call(self, peer: Peer) -> tuple[str, dict[str, Any]]:
        name, arguments = peer.call
        return name, self.fill(arguments, peer)

    def proxy(self, peer: Peer, tmp: Path, *, url: str | None = None) -> list[str]:
        """``histor-sign proxy`` in front of ``peer`` (stdio, or ``url``), with its own copy
        of the pin file."""
        pins = tmp / f"pins-{peer.slug}.json"
        shutil.copy(self.pins, pins)
        argv = [sys.executable, "-m", "histor_sign", "proxy", "--server", peer.name,
                "--pins", str(pins), "--trust-config", str(self.trust_config),
                "--server-is-trusted-code"]
        return [*argv, "--url", url] if url else [*argv, "--", *self.stdio(peer)]


def _prepare(work: Path, peer: Peer) -> None:
    """The fixed inputs each server's call reads: a file, an empty graph, a git history."""
    work.mkdir(parents=True, exist_ok=True)
    if peer.slug == "server-filesystem":
        (work / "hello.txt").write_text("hello from the compatibility matrix\n")
    if peer.slug == "mcp-server-git":
        stamp = "2026-01-01T00:00:00+00:00"
        env = {**os.environ, "GIT_AUTHOR_NAME": "Compat", "GIT_AUTHOR_EMAIL": "c@example.com",
               "GIT_COMMITTER_NAME": "Compat", "GIT_COMMITTER_EMAIL": "c@example.com",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        (work / "README").write_text("a repository for mcp-server-git\n")
        for argv in (["init", "-q", "-b", "main"], ["add", "README"],
                     ["commit", "-q", "-m", "first commit"]):
            subprocess.run(["git", "-C", str(work), *argv], env=env, check=True)


def _release(signed: Signed, peer: Peer, token: str) -> None:
    """Release ``peer`` (its own process, so several run at once) and pin it."""
    out = signed.base / "releases" / peer.slug
    done = run_cli("release", "--server", peer.name, "--server-version", "1.0.0",
                   "--out-dir", str(out), "--trust-config", str(signed.trust_config),
                   "--stdio", shlex.join(signed.stdio(peer)), "--server-is-trusted-code",
                   "--identity-token", token, env=matrix_env(), subprocess=True)
    assert done.code == 0, (peer.slug, done.stderr)
    location = signed.base / "published" / peer.slug
    location.mkdir(parents=True)
    for part in ("envelope.json", "tools.snapshot.json", "intoto.sigstore.json"):
        shutil.copy(out / part, location / f"1.{part}")
    shutil.copy(out / "envelope.json", location / "latest.envelope.json")
    tools = json.loads((out / "tools.snapshot.json").read_text())["tools"]
    signed.signed_names[peer.slug] = [t["name"] for t in tools]


def sign_all(base: Path, page: str, peers: list[Peer]) -> Signed:
    """Release every installed peer through one local Sigstore (three at a time) and pin
    each into one pin file."""
    from histor_sign.sigstore_dev import LocalSigstore

    ENV.clear()
    ENV.update(cli_env({"PYTHONPYCACHEPREFIX": str(base / "pycache"),
                        "PYTHONDONTWRITEBYTECODE": ""}))  # empty: bytecode is written
    signed = Signed(base, base / "none", base / "pins.json", page, {})
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        signed.trust_config = sigstore.trust_config_path
        token = sigstore.mint_token(IDENTITY)
        for peer in peers:
            _prepare(signed.work(peer), peer)
        with ThreadPoolExecutor(max_workers=3) as pool:
            list(pool.map(lambda peer: _release(signed, peer, token), peers))
    for peer in peers:  # one pin file, so one writer at a time
        added = run_cli("trust", "add", peer.name, "--repository", REPOSITORY,
                        "--workflow", WORKFLOW, "--envelope",
                        str(base / "published" / peer.slug), "--pins", str(signed.pins),
                        "--trust-config", str(signed.trust_config))
        assert added.code == 0, (peer.slug, added.stderr)
    return signed


@contextmanager
def loopback_page() -> Iterator[str]:
    """A fixed HTML page on 127.0.0.1 (the only URL mcp-server-fetch is given)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = PAGE.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page.html"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def serve_http(signed: Signed, peer: Peer) -> Iterator[str]:
    """``peer`` on Streamable HTTP on a free loopback port (checked loopback-only); its URL."""
    assert peer.http is not None
    with serve_loopback([*signed.fill(list(peer.command), peer), peer.http], matrix_env(),
                        "/mcp", f"{peer.slug} HTTP") as url:
        yield url
