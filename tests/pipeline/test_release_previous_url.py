"""``release --previous URL`` end to end: a previous release's chain directory
(``latest.envelope.json``, ``<n>.envelope.json``, ``<n>.tools.snapshot.json``, as
``release --revisions`` writes it) served by a real loopback HTTP server; the new revision
chains to it, and every refusal is one clear line with no signature spent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Run, assert_clean_error, run_cli

from histor_sign._limits import DEFAULT_MAX_FILE_BYTES
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

SERVER = "io.github.alice/docs"
TAG = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/{}"
TOOLS = {"tools": [{"name": "search", "description": "Search the docs.",
                    "inputSchema": {"type": "object"}}]}
TOOLS_2 = {"tools": [*TOOLS["tools"], {"name": "fetch", "description": "Fetch one page.",
                                       "inputSchema": {"type": "object"}}]}
HUGE = "/huge/latest.envelope.json"


class _Handler(SimpleHTTPRequestHandler):
    """Files of the served directory, plus one endless-looking envelope past the bound."""

    def do_GET(self) -> None:
        if self.path == HUGE:
            size = DEFAULT_MAX_FILE_BYTES + 1024
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            block = b" " * 65536
            try:
                for _ in range(size // len(block) + 1):
                    self.wfile.write(block)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def sigstore(local_sigstore: LocalSigstore) -> Iterator[LocalSigstore]:
    """The session's shared LocalSigstore (tests/conftest.py): this module counts its log
    entries by difference."""
    yield local_sigstore


@pytest.fixture(scope="module")
def published(
    sigstore: LocalSigstore, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, str]]:
    """Revision 1 released into a chain directory, and the URL that directory is served at."""
    base = tmp_path_factory.mktemp("previous-url")
    tools = base / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    first = release(sigstore, base / "out1", SERVER, "--tools", str(tools),
                    "--revisions", str(base / "revisions"))
    assert first.code == 0, first.stderr
    chain = base / "revisions" / SERVER
    assert {p.name for p in chain.iterdir()} == {
        "latest.envelope.json", "1.envelope.json", "1.tools.snapshot.json",
        "latest.intoto.sigstore.json", "1.intoto.sigstore.json", "1.manifest.json",
        "latest.manifest.json"}
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(chain)))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield chain, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def release(sigstore: LocalSigstore, out: Path, server: str, *extra: str,
            tag: str = "v1.0.0", version: str = "1.0.0", **token: str) -> Run:
    return run_cli("release", "--server", server, "--server-version", version,
                   "--out-dir", str(out), "--trust-config", str(sigstore.trust_config_path),
                   "--identity-token", sigstore.mint_token(TAG.format(tag), **token),
                   *extra)


def logged(sigstore: LocalSigstore) -> int:
    return len(sigstore.log.tree)


def test_a_release_chains_to_the_previous_one_served_over_http(
    sigstore: LocalSigstore, published: tuple[Path, str], tmp_path: Path
) -> None:
    chain, base_url = published
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS_2))
    out = tmp_path / "out2"
    run = release(sigstore, out, SERVER, "--tools", str(tools), "--previous",
                  f"{base_url}/latest.envelope.json", tag="v1.1.0", version="1.1.0")
    assert run.code == 0, run.stderr
    previous = json.loads((chain / "1.envelope.json").read_text())
    fresh = json.loads((out / "envelope.json").read_text())
    assert fresh["revision"] == previous["revision"] + 1 == 2
    assert fresh["previousManifestDigest"] == previous["manifestDigest"]
    assert fresh["manifestDigest"] != previous["manifestDigest"]
    # A client verifies the link with the published file as the previous revision.
    check = run_cli("verify", str(out / "envelope.json"), "--previous",
                    str(chain / "1.envelope.json"), "--repository", "alice/docs",
                    "--trust-config", str(sigstore.trust_config_path))
    assert check.code == 0, check.stdout + check.stderr


def _refused(run: Run, code: int, *needles: str) -> None:
    assert_clean_error(run, code)
    for needle in needles:
        assert needle in run.stderr, run.stderr


@pytest.mark.parametrize(
    ("case", "code", "needles"),
    [
        ("missing", 2, ("error: --previous: ", "HTTP 404")),
        ("huge", 2, ("error: --previous: ", f"more than {DEFAULT_MAX_FILE_BYTES} bytes")),
        ("not json", 2, ("1.tools.snapshot.json: envelope: missing type",)),
        ("https only", 2, ("error: --previous must be a file path, an https:// URL",)),
        ("other server", 2, ("is a revision of 'io.github.alice/docs', not "
                             "'io.github.alice/other'",)),
        ("other publisher", 1, ("does not verify as a release of this publisher",)),
    ],
)
def test_refusals_are_one_line_and_sign_nothing(
    sigstore: LocalSigstore, published: tuple[Path, str], tmp_path: Path,
    case: str, code: int, needles: tuple[str, ...],
) -> None:
    _, base_url = published
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS_2))
    url = f"{base_url}/latest.envelope.json"
    server, token = SERVER, {}
    if case == "missing":
        url = f"{base_url}/7.envelope.json"
    elif case == "huge":
        url = base_url + HUGE
    elif case == "not json":
        url = f"{base_url}/1.tools.snapshot.json"
    elif case == "https only":
        url = "http://example.invalid/latest.envelope.json"
    elif case == "other server":
        server = "io.github.alice/other"
    elif case == "other publisher":  # the same login re-registered: other numeric ids
        token = {"owner_id": "9999", "repository_id": "8888"}
    before = logged(sigstore)
    out = tmp_path / "out"
    run = release(sigstore, out, server, "--tools", str(tools), "--previous", url,
                  tag="v1.1.0", version="1.1.0", **token)
    _refused(run, code, *needles)
    if case not in ("other server", "other publisher"):
        assert url in run.stderr and "--max-bytes" not in run.stderr
    assert logged(sigstore) == before
    assert not (out / "envelope.json").exists()
