"""``trust add`` without ``--envelope`` reads where the histor-sign action publishes, and
names outside ``io.github.*`` (which no repository pin can hold) get one line saying what
to do instead — never a silent pin, never a hint to run a command that would refuse them."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import run_cli
from sigstore_testkit import assert_bad_input, error_lines

from histor_sign.pins import published_location


def test_published_location_is_the_action_default_layout() -> None:
    assert published_location("io.github.alice/docs", "alice/docs-mcp") == (
        "https://raw.githubusercontent.com/alice/docs-mcp/histor-revisions/revisions/"
        "io.github.alice/docs/latest.envelope.json"
    )


class _RefusingProxy:
    """A loopback HTTP proxy that records each request line and refuses it (403), so a
    default https location is asked for without anything leaving the machine."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                self.requests.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")


@pytest.fixture
def proxy() -> Iterator[_RefusingProxy]:
    p = _RefusingProxy()
    yield p
    p.sock.close()


def test_trust_add_defaults_to_the_published_location(
    tmp_path: Path, proxy: _RefusingProxy
) -> None:
    pins = tmp_path / "pins.json"
    run = run_cli("trust", "add", "io.github.alice/docs", "--repository", "alice/docs-mcp",
                  "--pins", str(pins), env={"HTTPS_PROXY": proxy.url, "https_proxy": proxy.url})
    expected = published_location("io.github.alice/docs", "alice/docs-mcp")
    assert f"verifying the latest envelope at {expected}" in run.stderr, run.stderr
    assert proxy.requests == ["CONNECT raw.githubusercontent.com:443 HTTP/1.1"]
    # Unreachable here, so it is one clean error (exit 2), and nothing is pinned.
    assert run.code == 2 and "Traceback" not in run.stderr, run.stderr
    assert len(error_lines(run.stderr)) == 1 and run.stdout == ""
    assert not pins.exists()


def test_trust_add_help_says_the_default() -> None:
    run = run_cli("trust", "add", "--help", env={"COLUMNS": "200"})
    assert run.code == 0
    text = "".join(run.stdout.split())  # help text is wrapped at spaces and hyphens
    for needle in ("Default:wherethehistor-signactionpublishesthemfor--repository",
                   "revisions/NAME/latest.envelope.jsononitshistor-revisionsbranch"):
        assert needle in text, text


OUTSIDE = ["io.gitlab.alice/docs", "com.example/docs", "example.com/docs", "io.github/docs"]


@pytest.mark.parametrize("server", OUTSIDE)
def test_trust_add_refuses_names_outside_io_github(tmp_path: Path, server: str) -> None:
    pins = tmp_path / "pins.json"
    run = run_cli("trust", "add", server, "--repository", "alice/docs", "--envelope",
                  str(tmp_path), "--pins", str(pins))
    assert_bad_input(run, "outside io.github.*", "can be pinned by repository",
                     "--cert-identity", "--cert-identity-regexp", "--workflow")
    assert not pins.exists()


@pytest.mark.parametrize("server", OUTSIDE)
@pytest.mark.parametrize("command", ["check", "guard"])
def test_check_and_guard_server_outside_io_github_say_what_works(
    tmp_path: Path, server: str, command: str
) -> None:
    served = tmp_path / "served.json"
    served.write_text('{"tools": []}')
    call = tmp_path / "call.json"
    call.write_text('{"name": "x", "arguments": {}}')
    arg = served if command == "check" else call
    run = run_cli(command, "--server", server, str(arg), "--pins", str(tmp_path / "pins.json"))
    assert_bad_input(run, "is not pinned", "outside io.github.*", "'trust add' cannot pin it",
                     "--envelope", "--cert-identity")
    assert "trust add " + server not in run.stderr


def test_an_unpinned_io_github_name_still_points_to_trust_add(tmp_path: Path) -> None:
    served = tmp_path / "served.json"
    served.write_text('{"tools": []}')
    run = run_cli("check", "--server", "io.github.alice/docs", str(served),
                  "--pins", str(tmp_path / "pins.json"))
    assert_bad_input(run, "is not pinned",
                     "'histor-sign trust add io.github.alice/docs --repository OWNER/REPO'")
