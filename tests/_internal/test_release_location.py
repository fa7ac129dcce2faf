"""The publication location: layout, accepted addresses, and every class of hostile answer
from a real loopback HTTP server (each one clear error, never a traceback or a hang)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from histor_sign._internal.release_location import NotPublished, ReleaseLocation
from histor_sign.errors import InputError, LimitExceeded, OperationalError, UsageError


def test_layout_for_paths_and_urls(tmp_path: Path) -> None:
    d = ReleaseLocation.parse(str(tmp_path))
    assert d.latest() == str(tmp_path / "latest.envelope.json")
    assert d.envelope(4) == str(tmp_path / "4.envelope.json")
    assert d.snapshot(4) == str(tmp_path / "4.tools.snapshot.json")
    f = ReleaseLocation.parse(str(tmp_path / "current.envelope.json"))
    assert f.latest() == str(tmp_path / "current.envelope.json")
    assert f.envelope(2) == str(tmp_path / "2.envelope.json")
    u = ReleaseLocation.parse("https://example.org/r/latest.envelope.json")
    assert (u.latest(), u.envelope(3)) == (
        "https://example.org/r/latest.envelope.json", "https://example.org/r/3.envelope.json")
    assert ReleaseLocation.parse("https://example.org/r").snapshot(1) == \
        "https://example.org/r/1.tools.snapshot.json"
    assert ReleaseLocation.parse("http://[::1]:8080/r/").is_url


@pytest.mark.parametrize(
    ("location", "needle"),
    [
        ("http://example.org/r/", "loopback"),
        ("ftp://127.0.0.1/r/", "loopback"),
        ("https:///nohost", "loopback"),
        ("https://u:p@example.org/r/", "credentials"),
        ("https://example.org/r/?sig=1", "query or fragment"),
        ("https://example.org/r/#x", "query or fragment"),
        ("", "path or URL"),
    ],
)
def test_refused_addresses(location: str, needle: str) -> None:
    with pytest.raises(UsageError, match=needle) as info:
        ReleaseLocation.parse(location)
    assert info.value.param == "location"


class Handler(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, dict[str, str], bytes]]] = {}

    def do_GET(self) -> None:
        status, headers, body = self.routes.get(self.path, (404, {}, b""))
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/r/"
    finally:
        server.shutdown()
        server.server_close()


def test_fetches_follow_loopback_redirects(base: str) -> None:
    Handler.routes = {
        "/r/latest.envelope.json": (302, {"Location": "/r/7.envelope.json"}, b""),
        "/r/7.envelope.json": (200, {}, b'{"revision": 7}'),
    }
    loc = ReleaseLocation.parse(base)
    assert loc.fetch_json(loc.latest()) == {"revision": 7}


@pytest.mark.parametrize(
    ("route", "error", "needle"),
    [
        ((404, {}, b""), NotPublished, "not published (HTTP 404)"),
        ((410, {}, b""), NotPublished, "HTTP 410"),
        ((500, {}, b"oops"), OperationalError, "HTTP 500"),
        ((200, {}, b"{not json"), InputError, "latest.envelope.json"),
        ((200, {}, b'{"a": 1, "a": 2}'), InputError, "duplicate"),
        ((200, {}, b"x" * 5000), LimitExceeded, "larger than the limit of 4096 bytes"),
        ((302, {"Location": "http://example.org/x.json"}, b""), InputError,
         "neither https nor loopback"),
        ((302, {"Location": "/r/latest.envelope.json"}, b""), OperationalError,
         "more than 5 redirects"),
    ],
)
def test_hostile_answers_are_one_clear_error(
    base: str, route: tuple[int, dict[str, str], bytes], error: type[Exception], needle: str
) -> None:
    Handler.routes = {"/r/latest.envelope.json": route}
    loc = ReleaseLocation.parse(base)
    with pytest.raises(error) as info:
        loc.fetch_json(loc.latest(), max_bytes=4096)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_unreachable_is_operational(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    loc = ReleaseLocation.parse(f"http://127.0.0.1:{port}/r/")
    with pytest.raises(OperationalError, match="ConnectError"):
        loc.fetch_json(loc.latest(), timeout=2)


def test_missing_local_file_is_not_published(tmp_path: Path) -> None:
    loc = ReleaseLocation.parse(str(tmp_path))
    with pytest.raises(NotPublished, match="no such file"):
        loc.fetch_json(loc.envelope(2))
