"""The chain directory layout and the bounded envelope fetch (loopback HTTP only)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from histor_sign._internal import chain_store
from histor_sign.errors import FetchError, InputError, LimitExceeded, UsageError


@pytest.mark.parametrize("server", ["../x", "io.github.o/..", "/abs/x", "a//b", "", "a/.hidden",
                                    "a/b\nc", "a/b c", "a\\b"])
def test_server_names_that_could_leave_the_directory_are_refused(server: str, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="`server`"):
        chain_store.chain_dir(tmp_path, server)


def test_publish_then_find_latest_and_never_overwrite(tmp_path: Path) -> None:
    server = "io.github.owner/name"
    assert chain_store.latest_envelope(tmp_path, server) is None
    chain_store.publish(tmp_path, server, 1, b'{"r":1}', b'{"tools":[]}')
    chain_store.publish(tmp_path, server, 2, b'{"r":2}', None)
    latest = chain_store.latest_envelope(tmp_path, server)
    assert latest == tmp_path / "io.github.owner" / "name" / "latest.envelope.json"
    assert latest.read_bytes() == b'{"r":2}'
    assert (latest.parent / "1.envelope.json").read_bytes() == b'{"r":1}'
    assert (latest.parent / "1.tools.snapshot.json").exists()
    with pytest.raises(InputError, match="never overwritten"):
        chain_store.publish(tmp_path, server, 2, b'{"r":"other"}', None)
    assert latest.read_bytes() == b'{"r":2}'


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/big":
            body = b"x" * 5000
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.end_headers()
            return
        elif self.path == "/ok":
            body = b'{"ok": true}'
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def base_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def test_fetch_envelope_reads_a_loopback_url(base_url: str) -> None:
    assert chain_store.fetch_envelope(f"{base_url}/ok") == b'{"ok": true}'


@pytest.mark.parametrize(("path", "error", "match"), [
    ("/big", LimitExceeded, "`max_bytes`"),
    ("/missing", FetchError, "HTTP 404"),
    ("/redirect", FetchError, "HTTP 302"),
])
def test_fetch_envelope_refuses_bad_answers(
    base_url: str, path: str, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        chain_store.fetch_envelope(f"{base_url}{path}", max_bytes=1000)


@pytest.mark.parametrize("url", ["http://example.invalid/x", "ftp://127.0.0.1/x",
                                 "file:///etc/passwd", "http://10.0.0.1/x"])
def test_fetch_envelope_requires_https_off_loopback(url: str) -> None:
    with pytest.raises(UsageError, match="must use https"):
        chain_store.fetch_envelope(url)


def test_fetch_envelope_reports_an_unreachable_host() -> None:
    with pytest.raises(FetchError):
        chain_store.fetch_envelope("http://127.0.0.1:1/x", timeout=2)
