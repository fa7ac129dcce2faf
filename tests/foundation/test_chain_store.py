"""The revision layout, publishing a chain, accepted locations, and every class of hostile
answer from a real loopback HTTP server through the one bounded fetch (each one clear
error, never a traceback or a hang)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from histor_sign import _chain_store as chain_store
from histor_sign._chain_store import NotPublished, ReleaseLocation
from histor_sign.errors import FetchError, InputError, LimitExceeded, UsageError

# --- publishing -----------------------------------------------------------------------


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


def test_a_published_chain_is_a_location(tmp_path: Path) -> None:
    """What a release publishes is exactly what a client's location reads."""
    server = "io.github.owner/name"
    chain_store.publish(tmp_path, server, 1, b'{"revision": 1}', b'{"tools": []}')
    chain_store.publish(tmp_path, server, 2, b'{"revision": 2}', b'{"tools": [1]}')
    loc = ReleaseLocation.parse(str(chain_store.chain_dir(tmp_path, server)))
    assert loc.fetch_json(loc.latest()) == {"revision": 2}
    assert loc.fetch_json(loc.envelope(1)) == {"revision": 1}
    assert loc.fetch_json(loc.snapshot(2)) == {"tools": [1]}


def test_the_attestation_and_its_parts_are_published_numbered_and_latest(tmp_path: Path) -> None:
    server = "io.github.owner/name"
    written = chain_store.publish(tmp_path, server, 3, b'{"r":3}', None, [b"p1", b"p2"])
    base = chain_store.chain_dir(tmp_path, server)
    assert written[:2] == [base / "3.envelope.json", base / "latest.envelope.json"]
    assert {p.name: p.read_bytes() for p in written[2:]} == {
        "3.intoto.sigstore.json": b"p1", "3.intoto.2.sigstore.json": b"p2",
        "latest.intoto.sigstore.json": b"p1", "latest.intoto.2.sigstore.json": b"p2"}
    loc = ReleaseLocation.parse(str(base) + "/latest.envelope.json")
    assert loc.attestation(3) == str(base / "3.intoto.sigstore.json")
    url = ReleaseLocation.parse("https://example.org/revisions/io.github.owner/name/")
    assert url.attestation(3) == ("https://example.org/revisions/io.github.owner/name/"
                                  "3.intoto.sigstore.json")
    # An old layout has none: a client reads that as "not published".
    chain_store.publish(tmp_path, "io.github.owner/old", 1, b'{"r":1}', None)
    old = ReleaseLocation.parse(str(chain_store.chain_dir(tmp_path, "io.github.owner/old")))
    with pytest.raises(NotPublished):
        old.fetch_json(old.attestation(1))


# --- locations ------------------------------------------------------------------------


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


@pytest.mark.parametrize("url", ["http://example.invalid/x", "ftp://127.0.0.1/x",
                                 "file:///etc/passwd", "http://10.0.0.1/x",
                                 "https://u:p@example.org/x.json"])
def test_fetch_envelope_requires_https_off_loopback(url: str) -> None:
    with pytest.raises(UsageError, match="`previous`") as info:
        chain_store.fetch_envelope(url, param="previous")
    assert info.value.param == "previous"


# --- the one bounded fetch, against a real loopback server ---------------------------


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
    # an envelope given by URL goes through the same fetch
    assert chain_store.fetch_envelope(loc.latest()) == b'{"revision": 7}'


HOSTILE = [
    ((404, {}, b""), NotPublished, "not published (HTTP 404)"),
    ((410, {}, b""), NotPublished, "HTTP 410"),
    ((500, {}, b"oops"), FetchError, "HTTP 500 (expected 200)"),
    ((200, {}, b"x" * 5000), LimitExceeded, "more than 4096 bytes"),
    ((302, {"Location": "http://example.org/x.json"}, b""), InputError,
     "neither https nor loopback"),
    ((302, {"Location": "/r/latest.envelope.json"}, b""), FetchError, "more than 5 redirects"),
]


@pytest.mark.parametrize(
    ("route", "error", "needle"),
    [*HOSTILE,
     ((200, {}, b"{not json"), InputError, "latest.envelope.json"),
     ((200, {}, b'{"a": 1, "a": 2}'), InputError, "duplicate")],
)
def test_hostile_answers_are_one_clear_error(
    base: str, route: tuple[int, dict[str, str], bytes], error: type[Exception], needle: str
) -> None:
    Handler.routes = {"/r/latest.envelope.json": route}
    loc = ReleaseLocation.parse(base)
    with pytest.raises(error) as info:
        loc.fetch_json(loc.latest(), max_bytes=4096)
    assert needle in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("route", "error", "needle"), HOSTILE)
def test_fetch_envelope_gives_the_same_errors(
    base: str, route: tuple[int, dict[str, str], bytes], error: type[Exception], needle: str
) -> None:
    Handler.routes = {"/r/latest.envelope.json": route}
    with pytest.raises(error) as info:
        chain_store.fetch_envelope(f"{base}latest.envelope.json", max_bytes=4096)
    assert needle in str(info.value) and "\n" not in str(info.value)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unreachable_is_a_fetch_error() -> None:
    loc = ReleaseLocation.parse(f"http://127.0.0.1:{_closed_port()}/r/")
    with pytest.raises(FetchError, match="ConnectError"):
        loc.fetch_json(loc.latest(), timeout=2)
    with pytest.raises(FetchError, match="ConnectError"):
        chain_store.fetch_envelope(loc.latest(), timeout=2)


def test_missing_local_file_is_not_published(tmp_path: Path) -> None:
    loc = ReleaseLocation.parse(str(tmp_path))
    with pytest.raises(NotPublished, match="no such file"):
        loc.fetch_json(loc.envelope(2))


# --- https never redirects down to http (issue 23, hole 4) ----------------------------


@pytest.fixture(scope="module")
def tls_base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A real https server on 127.0.0.1 with a self-signed certificate, and the CA file that
    trusts it (httpx reads SSL_CERT_FILE: the fetch honours the environment as pip does)."""
    import datetime
    import ipaddress
    import ssl

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    directory = tmp_path_factory.mktemp("tls")
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/r/", cert_file
    finally:
        server.shutdown()
        server.server_close()


def test_an_https_location_is_never_followed_down_to_plain_http(
    tls_base: tuple[str, Path], base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    https, ca = tls_base
    monkeypatch.setenv("SSL_CERT_FILE", str(ca))
    plain = base + "7.envelope.json"  # a loopback http server that would answer
    Handler.routes = {
        "/r/latest.envelope.json": (302, {"Location": plain}, b""),
        "/r/6.envelope.json": (302, {"Location": "/r/8.envelope.json"}, b""),
        "/r/7.envelope.json": (200, {}, b'{"revision": 7}'),
        "/r/8.envelope.json": (200, {}, b'{"revision": 8}'),
    }
    with pytest.raises(InputError) as info:
        chain_store.fetch_envelope(https + "latest.envelope.json")
    assert "from https to plain http" in str(info.value) and "\n" not in str(info.value)
    # https to https (same server) is followed; loopback http to loopback http still is
    assert chain_store.fetch_envelope(https + "6.envelope.json") == b'{"revision": 8}'
    Handler.routes["/r/latest.envelope.json"] = (302, {"Location": plain}, b"")
    assert chain_store.fetch_envelope(base + "latest.envelope.json") == b'{"revision": 7}'


def test_a_server_dripping_its_headers_is_cut_off_at_the_timeout() -> None:
    """httpx bounds each read, not a request: a server sending its status line and then a
    header byte every half second never trips a read timeout. The fetch still ends, with
    one clear error, once ``timeout`` has passed for the whole request."""
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))
    hung_up = threading.Event()

    def drip() -> None:
        conn, _ = listener.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            while not stop.wait(0.5):
                try:
                    conn.sendall(b"X")
                except OSError:
                    hung_up.set()  # the client closed its end: its reader is gone
                    return

    server = threading.Thread(target=drip, daemon=True)
    server.start()
    outcome: list[BaseException] = []

    def fetch() -> None:
        try:
            chain_store.fetch_bytes(f"http://127.0.0.1:{listener.getsockname()[1]}/x.json",
                                    param="location", timeout=1)
        except BaseException as exc:
            outcome.append(exc)

    client = threading.Thread(target=fetch, daemon=True)
    client.start()
    client.join(30)  # a bound for the test itself, far above the fetch's own deadline
    hung_up.wait(30)  # the abandoned request's socket is shut, not left reading
    stop.set()
    server.join(5)
    listener.close()
    assert not client.is_alive(), "the fetch outlived its timeout"
    assert hung_up.is_set(), "the request was left reading after its deadline"
    (error,) = outcome
    assert isinstance(error, FetchError) and "no complete answer within 1 s" in str(error)
    assert "\n" not in str(error)
