"""``histor-sign attest-github``: the attestation stored in GitHub's attestations store — the
request shape (``POST /repos/O/R/attestations`` with ``{"bundle": …}``, token, API version)
against a local fake of the REST endpoint, every part, refusals as one error line; and
``digest --manifest-out``: the file whose SHA-256 is the attestation's manifest subject, which
``gh attestation verify`` checks."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli
from sigstore_testkit import TOOLS_V1, WF_ALICE, statement, write_json

from histor_sign._sigstore_trust import Trust
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
TOKEN = "ghs_test-token-never-printed-0123456789"


class FakeGitHub:
    """A loopback stand-in for ``api.github.com``: records each request, answers 201 with
    an id (or ``status`` with a message)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.status = 201
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                fake.requests.append({"method": "POST", "path": self.path,
                                      "headers": dict(self.headers), "body": json.loads(body)})
                answer: dict[str, Any] = ({"id": 1000 + len(fake.requests)}
                                          if fake.status == 201 else
                                          {"message": "Resource not accessible by integration"})
                data = json.dumps(answer).encode()
                self.send_response(fake.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_attestation_is_posted_in_githubs_shape(
    local_sigstore: LocalSigstore, github: FakeGitHub, tmp_path: Path
) -> None:
    stmt = statement("io.github.alice/docs", WF_ALICE, TOOLS_V1)
    signed = sign_statement(stmt, trust=Trust.from_trust_config(local_sigstore.trust_config_path),
                            identity_token=local_sigstore.mint_token(WF_ALICE),
                            require_owned_namespace=False)
    signed.write(tmp_path / "release.envelope.json")
    attestation = tmp_path / "release.intoto.sigstore.json"
    env = {"GITHUB_TOKEN": TOKEN, "GITHUB_API_URL": github.url,
           "GITHUB_REPOSITORY": "alice/docs"}
    run = run_cli("attest-github", str(attestation), env=env)
    assert run.code == 0, run.stderr
    assert run.stdout == f"published {attestation} to alice/docs as attestation 1001\n"
    [request] = github.requests
    assert request["path"] == "/repos/alice/docs/attestations"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert request["body"] == {"bundle": json.loads(attestation.read_text())}
    assert TOKEN not in run.stdout + run.stderr

    # The file gh attestation verify checks: its SHA-256 is the manifest subject.
    catalog = write_json(tmp_path / "tools.json", {"tools": TOOLS_V1})
    manifest = tmp_path / "manifest.json"
    assert run_cli("digest", str(catalog), "--manifest-out", str(manifest)).code == 0
    payload = json.loads(base64.b64decode(
        request["body"]["bundle"]["dsseEnvelope"]["payload"]))
    subjects = {s["name"]: s["digest"]["sha256"] for s in payload["subject"]}
    assert hashlib.sha256(manifest.read_bytes()).hexdigest() in subjects.values()
    assert f"sha256:{hashlib.sha256(manifest.read_bytes()).hexdigest()}" == stmt.manifest_digest

    github.status = 403  # a token without attestations: write
    refused = run_cli("attest-github", str(attestation), env=env)
    assert_clean_error(refused)
    assert "HTTP 403: Resource not accessible by integration" in refused.stderr
    assert TOKEN not in refused.stdout + refused.stderr
    missing = run_cli("attest-github", str(attestation), env={**env, "GITHUB_TOKEN": ""})
    assert_clean_error(missing)
    assert "GITHUB_TOKEN is not set" in missing.stderr
    http = run_cli("attest-github", str(attestation),
                   env={**env, "GITHUB_API_URL": "http://example.com"})
    assert_clean_error(http)
