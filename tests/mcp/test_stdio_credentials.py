"""A stdio server runs in the job that holds the signing credentials: it must see none of
them, be unable to mint an OIDC token, and a snapshot that echoes a token we hold is
refused."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from mcp_helpers import HERE

from histor_sign.errors import FetchError
from histor_sign.mcp import FetchOptions, Target, fetch
from histor_sign.mcp._target import CREDENTIAL_ENV, child_environment

ENV_SERVER = shlex.join([sys.executable, str(HERE / "raw_env_server.py")])
OIDC_TOKEN = "eyJhbGciOiJFUzI1NiJ9.oidc-token-the-job-holds.signature"
MINTED = "minted-token-value-0123456789"
OPTIONS = FetchOptions(protocol="legacy", timeout=10)


class TokenEndpoint:
    """A loopback stand-in for GitHub's ACTIONS_ID_TOKEN_REQUEST_URL that records calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        calls = self.calls

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                calls.append(self.path)
                body = json.dumps({"value": MINTED}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/token?api-version=2.0"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[TokenEndpoint]:
    ep = TokenEndpoint()
    yield ep
    ep.close()


def job_credentials(endpoint: TokenEndpoint) -> dict[str, str]:
    return {
        "SIGSTORE_IDENTITY_TOKEN": OIDC_TOKEN,
        "SIGSTORE_OIDC_CLIENT_SECRET": "sigstore-family-secret-value",
        "ACTIONS_ID_TOKEN_REQUEST_URL": endpoint.url,
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token-value-abcdef",
        "ACTIONS_RUNTIME_TOKEN": "runtime-token-value-abcdef",
        "GITHUB_TOKEN": "ghs_github-token-value-abcdef",
        "GH_TOKEN": "gho_gh-token-value-abcdef",
        "MCP_BEARER": "bearer-token-value-abcdef",
        "COPY_OF_OIDC": f"prefix {OIDC_TOKEN} suffix",
    }


def reported(snapshot: Any) -> dict[str, Any]:
    loot: dict[str, Any] = json.loads(snapshot.tools[0]["description"])
    return loot


def test_control_a_server_given_the_credentials_mints_and_leaks(
    endpoint: TokenEndpoint,
) -> None:
    """The hostile server really does mint and report when it can (so the tests below
    could fail): explicitly given variables are passed as the caller gave them."""
    creds = job_credentials(endpoint)
    snapshot = fetch(Target.stdio(ENV_SERVER, env=creds), OPTIONS)
    loot = reported(snapshot)
    assert loot["minted"] == MINTED
    assert loot["environ"]["GITHUB_TOKEN"] == creds["GITHUB_TOKEN"]
    assert len(endpoint.calls) == 1


def test_no_credential_reaches_the_child_or_the_snapshot(
    endpoint: TokenEndpoint, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = job_credentials(endpoint)
    for name, value in creds.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HARMLESS_SETTING", "visible-to-the-server")
    # Trusted code only: an untrusted server is not started where these are (below).
    target = Target.stdio(ENV_SERVER, withhold_env=["MCP_BEARER"], guarded_secrets=[OIDC_TOKEN],
                          trusted_code=True)
    snapshot = fetch(target, OPTIONS)
    loot = reported(snapshot)
    # The environment did reach the server (minus the credentials) ...
    assert loot["environ"]["HARMLESS_SETTING"] == "visible-to-the-server"
    assert not set(creds) & set(loot["environ"])
    # ... no token could be minted from it ...
    assert loot["minted"] == "no ACTIONS_ID_TOKEN_REQUEST_URL"
    assert endpoint.calls == []
    # ... and no credential value is anywhere in what would be signed and published.
    published = json.dumps(snapshot.to_json())
    for value in creds.values():
        assert value not in published


def test_denylist_and_prefixes_without_guarded_values(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = {name: f"value-of-{name}" for name in CREDENTIAL_ENV}
    parent |= {"SIGSTORE_ANYTHING": "x" * 10, "ACTIONS_ID_TOKEN_FOO": "y" * 10,
               "PATH": "/usr/bin", "NODE_OPTIONS": "--max-old-space-size=64"}
    env = child_environment(parent, extra={"EXPLICIT": "1"}, withhold=["path"])
    assert env == {"NODE_OPTIONS": "--max-old-space-size=64", "EXPLICIT": "1"}


def test_a_server_echoing_a_guarded_token_is_refused(endpoint: TokenEndpoint) -> None:
    """Belt and braces: should the token reach a server anyway (here: explicitly given
    under another name), a snapshot that contains it is refused, and the error says so
    without the token."""
    target = Target.stdio(
        ENV_SERVER, env={"LEAKED": OIDC_TOKEN}, guarded_secrets=[OIDC_TOKEN], trusted_code=True
    )
    with pytest.raises(FetchError) as caught:
        fetch(target, OPTIONS)
    assert "echoed a credential" in str(caught.value)
    assert OIDC_TOKEN not in str(caught.value)


def test_guarded_secrets_stay_out_of_repr_and_description() -> None:
    target = Target.stdio(ENV_SERVER, withhold_env=["MCP_BEARER"], guarded_secrets=[OIDC_TOKEN])
    assert OIDC_TOKEN not in repr(target)
    assert OIDC_TOKEN not in json.dumps(target.describe())
    assert OIDC_TOKEN in target.secrets()


# --- a server in the signing job reads its ancestors' credentials (issue 23, hole 1) ---

PROC_READER = HERE / "raw_proc_reader_server.py"
REQUEST_TOKEN = "request-token-value-abcdef-0123456789"


def _fetch_cli(tmp_path: Any, *extra: str, env: dict[str, str]) -> Any:
    from cli_harness import run_cli

    marker = tmp_path / "started"
    command = shlex.join([sys.executable, str(PROC_READER), str(marker)])
    # In a process of its own: what /proc shows of an ancestor is its exec environment.
    run = run_cli("fetch", "--stdio", command, "--protocol", "legacy", "-o",
                  str(tmp_path / "snap.json"), *extra, env=env, subprocess=True)
    return run, marker


def test_control_a_trusted_server_reads_the_token_from_proc(tmp_path: Any) -> None:
    """Why scrubbing the child's environment is no boundary: started by a process that holds
    the token, a server of the same user reads it from /proc, and writes file commands."""
    env = {"ACTIONS_ID_TOKEN_REQUEST_TOKEN": REQUEST_TOKEN,
           "ACTIONS_ID_TOKEN_REQUEST_URL": "http://127.0.0.1:9/token",
           "GITHUB_ENV": str(tmp_path / "github_env"), "BASH_ENV": str(tmp_path / "bashrc")}
    run, marker = _fetch_cli(tmp_path, "--server-is-trusted-code", env=env)
    assert run.code == 0, run.stderr
    assert marker.exists()
    loot = json.loads(json.loads((tmp_path / "snap.json").read_text())["tools"][0]["description"])
    assert loot["from_proc"]["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] == REQUEST_TOKEN
    # the file commands and shell hooks of later steps are withheld even then
    assert loot["own_env"] == {}


@pytest.mark.parametrize("credential", ["ACTIONS_ID_TOKEN_REQUEST_TOKEN", "SIGSTORE_IDENTITY_TOKEN"])
def test_no_server_starts_where_signing_credentials_are_readable(
    tmp_path: Any, credential: str
) -> None:
    from cli_harness import assert_clean_error

    run, marker = _fetch_cli(tmp_path, env={credential: REQUEST_TOKEN})
    assert_clean_error(run)
    assert "--server-is-trusted-code" in run.stderr and credential in run.stderr
    assert REQUEST_TOKEN not in run.stderr
    assert not marker.exists()  # the server never ran


def test_the_library_refuses_too_and_a_held_token_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    from histor_sign.errors import UsageError

    monkeypatch.delenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", raising=False)
    with pytest.raises(UsageError) as caught:
        fetch(Target.stdio(ENV_SERVER, guarded_secrets=[OIDC_TOKEN]), OPTIONS)
    assert caught.value.param == "trusted_code" and OIDC_TOKEN not in str(caught.value)
