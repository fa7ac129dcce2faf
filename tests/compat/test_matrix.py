"""The compatibility matrix: every official host against every pinned real server, direct
and through ``histor-sign proxy``, outputs diffed.

Hosts: the Python SDK's ``ClientSession`` and ``mcp.Client`` (auto mode), the TypeScript
SDK's ``Client`` and the MCP Inspector CLI. Servers: server-everything 2026 and 2025 (stdio
and Streamable HTTP), server-filesystem and server-memory from npm; mcp-server-time,
mcp-server-fetch and mcp-server-git from PyPI. Each server is released once through a local
Sigstore instance and pinned (testkit/matrix_peers.py); each cell opens the same host session to the
server directly and through the proxy serving that signed revision, and the two answers must
be identical — tools/list, one tool call, resources/list and prompts/list where offered —
except that the proxy withholds a tool the revision does not sign. Run alone with
``pytest -m compat``.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from matrix_hosts import (
    Target,
    inspector_session,
    python_calls,
    python_session,
    typescript_session,
)
from matrix_peers import (
    BARE_TOOL_NAMES,
    SERVERS,
    Peer,
    Signed,
    loopback_page,
    missing,
    serve_http,
    sign_all,
)

pytestmark = [pytest.mark.slow, pytest.mark.compat]

HOSTS = ["sdk-session", "sdk-client-auto", "ts-sdk", "inspector"]


@dataclass(frozen=True)
class Cell:
    host: str
    peer: Peer
    http: bool

    @property
    def id(self) -> str:
        return f"{self.host}-{self.peer.slug}-{'http' if self.http else 'stdio'}"


def _cells() -> Iterator[Any]:
    for peer in SERVERS:
        for http in ([False, True] if peer.http else [False]):
            for host in HOSTS:
                cell = Cell(host, peer, http)
                yield pytest.param(cell, id=cell.id)


@pytest.fixture(scope="module")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        pytest.fail("node (>= 20) is required for the matrix's npm servers and hosts")
    return path


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    """Every installed server released and pinned once (a missing one fails its cells)."""
    with loopback_page() as page:
        installed = [peer for peer in SERVERS if missing(peer) is None]
        yield sign_all(tmp_path_factory.mktemp("matrix"), page, installed)


def _host(cell: Cell, node: str
          ) -> Callable[[Target, tuple[str, dict[str, Any]], Path], dict[str, Any]]:
    if cell.host == "sdk-session":
        return python_session
    if cell.host == "sdk-client-auto":
        return lambda t, c, e: python_session(t, c, e, auto=True)
    if cell.host == "ts-sdk":
        return lambda t, c, e: typescript_session(node, t, c, e)
    # The Inspector runs one session per method: resources and prompts on one server only.
    lists = cell.peer is SERVERS[0] and not cell.http
    return lambda t, c, e: inspector_session(node, t, c, e, lists=lists)


def differences(direct: dict[str, Any], proxied: dict[str, Any],
                signed_names: list[str]) -> list[str]:
    """What the proxied session showed that the direct one did not, beyond a withheld
    unsigned tool: the direct session must succeed, the proxied tools must be the direct
    ones that are signed (same objects, same order), everything else identical."""
    if "error" in direct:
        return [f"the direct session failed: {direct['error']}"]
    if "error" in proxied:
        return [f"the proxied session failed: {proxied['error']}"]
    found = []
    expected = [t for t in direct["tools"] if t.get("name") in signed_names]
    if proxied.get("tools") != expected:
        names = [t.get("name") for t in proxied.get("tools", [])]
        found.append(f"tools: proxied {names} != direct signed {[t['name'] for t in expected]}")
    for key in sorted((set(direct) | set(proxied)) - {"tools"}):
        if direct.get(key) != proxied.get(key):
            found.append(f"{key}: direct {str(direct.get(key))[:400]} != proxied "
                         f"{str(proxied.get(key))[:400]}")
    return found


def run_cell(cell: Cell, signed: Signed, node: str, tmp: Path
             ) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The cell's host session direct and proxied, both at once: (direct, proxied, the
    stderr of every process the cell started)."""
    run = _host(cell, node)
    call = signed.call(cell.peer)
    tmp.mkdir(parents=True, exist_ok=True)
    errors = tmp / "stderr.txt"
    with contextlib.ExitStack() as stack:
        if cell.http:
            url = stack.enter_context(serve_http(signed, cell.peer))
            targets = [Target(url=url), Target(stdio=signed.proxy(cell.peer, tmp, url=url))]
        else:
            targets = [Target(stdio=signed.stdio(cell.peer)),
                       Target(stdio=signed.proxy(cell.peer, tmp))]
        with ThreadPoolExecutor(max_workers=2) as pool:
            direct, proxied = pool.map(lambda target: run(target, call, errors), targets)
    return direct, proxied, errors.read_text(errors="replace") if errors.exists() else ""


@pytest.fixture(scope="module")
def sessions(signed: Signed, node: str, request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, tuple[dict[str, Any], dict[str, Any], str]]:
    """Every selected cell run once, two cells at a time (a cell waits on its processes'
    start-up most of the time), keyed by cell id."""
    cells = [item.callspec.params["cell"] for item in request.session.items
             if hasattr(item, "callspec") and isinstance(item.callspec.params.get("cell"), Cell)
             and missing(item.callspec.params["cell"].peer) is None]
    base = tmp_path_factory.mktemp("cells")
    with ThreadPoolExecutor(max_workers=2) as pool:
        done = pool.map(lambda cell: run_cell(cell, signed, node, base / cell.id), cells)
        return {cell.id: result for cell, result in zip(cells, done, strict=True)}


@pytest.mark.parametrize("cell", list(_cells()))
def test_host_sees_the_same_session_direct_and_proxied(
        cell: Cell, signed: Signed,
        sessions: dict[str, tuple[dict[str, Any], dict[str, Any], str]]) -> None:
    problem = missing(cell.peer)
    assert problem is None, problem
    direct, proxied, stderr = sessions[cell.id]
    found = differences(direct, proxied, signed.signed_names[cell.peer.slug])
    assert not found, "\n".join([*found, "stderr (tail):", stderr[-1500:]])


def test_capable_host_is_offered_every_tool_the_server_offers_it(signed: Signed,
                                                                 tmp_path: Path) -> None:
    """A host declaring roots, sampling and elicitation (as Claude Desktop or VS Code do) is
    offered more tools by server-everything; signed by a release that declares what a capable
    host declares, the proxy must offer it all of them."""
    peer, errors = SERVERS[0], tmp_path / "stderr.txt"
    call = signed.call(peer)
    targets = [Target(stdio=signed.stdio(peer)), Target(stdio=signed.proxy(peer, tmp_path))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        direct, proxied = pool.map(
            lambda target: python_session(target, call, errors, capable=True), targets)
    assert "error" not in direct and "error" not in proxied, (direct, proxied)
    offered = {t["name"] for t in direct["tools"]}
    assert offered > set(BARE_TOOL_NAMES)  # more than it offers a host declaring nothing
    assert proxied["tools"] == direct["tools"]


def test_large_result_leaves_the_session_working(signed: Signed, tmp_path: Path) -> None:
    """server-filesystem reads a 4.8 MB text file: its answer (text and structured content)
    is a ~9.8 MB message. Proxied, that call is relayed as direct or fails alone: the next
    call of the same session is answered as direct."""
    peer = next(p for p in SERVERS if p.slug == "server-filesystem")
    big = signed.work(peer) / "big.txt"
    big.write_text(("x" * 99 + "\n") * 48_000)
    calls = [("read_text_file", {"path": str(big)}), signed.call(peer)]
    errors = tmp_path / "stderr.txt"
    direct = python_calls(Target(stdio=signed.stdio(peer)), calls, errors)
    proxied = python_calls(Target(stdio=signed.proxy(peer, tmp_path)), calls, errors)
    big.unlink()
    assert len(direct) == 2 and all("error" not in r for r in direct), direct[-1]
    assert len(proxied) == 2, proxied
    assert proxied[0] == direct[0] or "error" in proxied[0]
    assert proxied[1] == direct[1], proxied[1]


def test_differences_names_each_kind_of_divergence() -> None:
    """The matrix's comparison fails every difference but a withheld unsigned tool."""
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    extra = {"name": "b", "inputSchema": {"type": "object"}}
    direct = {"tools": [tool, extra], "call": {"content": [{"type": "text", "text": "x"}]}}
    assert differences(direct, {**direct, "tools": [tool]}, ["a"]) == []
    assert differences(direct, direct, ["a"])  # an unsigned tool leaked
    assert differences(direct, {**direct, "tools": []}, ["a", "b"])  # a signed tool dropped
    changed = {**direct, "tools": [{**tool, "description": "new"}]}
    assert differences(direct, changed, ["a"])  # a signed tool altered
    assert differences(direct, {**direct, "call": {"content": []}, "tools": [tool]}, ["a"])
    assert differences(direct, {"error": "closed"}, ["a"])
    assert differences({"error": "x"}, direct, ["a"])
