"""release twice from a real server built on the official ``mcp`` SDK, over Streamable HTTP.

The SDK peer (tests/mcp/sdk_peer.py) paginates the example tool set in pages of 2; the two
releases go through a local Sigstore instance that is stopped before verification.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import run_cli

from histor_sign.demo.example_server import build_tools
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
SERVER = "io.github.example/sdk-notes"
IDENTITY = "https://github.com/example/sdk-notes/.github/workflows/release.yml@refs/tags/v2"


def test_two_releases_from_the_sdk_server_chain_and_verify(tmp_path: Path) -> None:
    import mcp_helpers as helpers
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps(build_tools()))
    v2 = tmp_path / "v2.json"
    v2.write_text(json.dumps(build_tools(description="get_note=Get any note, even private ones.")))
    with LocalSigstore(directory=tmp_path / "sigstore") as sigstore:
        token = sigstore.mint_token(IDENTITY)
        for n, defs in ((1, v1), (2, v2)):
            proc, url = helpers.start_sdk_http(defs, 2)
            try:
                extra = ["--previous", str(tmp_path / "r1" / "envelope.json")] if n == 2 else []
                run = run_cli(
                    "release", "--server", SERVER, "--server-version", f"{n}.0.0", "--url", url,
                    "--out-dir", str(tmp_path / f"r{n}"), "--identity-token", token,
                    "--trust-config", str(sigstore.trust_config_path), *extra,
                )
            finally:
                helpers.stop(proc)
            assert run.code == 0, run.stdout + run.stderr
        trust = str(sigstore.trust_config_path)
    snapshot = json.loads((tmp_path / "r1" / "tools.snapshot.json").read_text())
    assert snapshot["capture"]["transport"] == "streamable-http" and snapshot["capture"]["pages"] == 4
    verified = run_cli("verify", str(tmp_path / "r2" / "envelope.json"), "--trust-config", trust,
                       "--previous", str(tmp_path / "r1" / "envelope.json"),
                       "--tools", str(v2), "--repository", "example/sdk-notes",
                       "--ref", "refs/tags/v2", "--format", "json")
    assert verified.code == 0, verified.stdout + verified.stderr
    assert json.loads(verified.stdout)["verified"] is True
    drift = run_cli("check", "--envelope", str(tmp_path / "r1" / "envelope.json"),
                    "--signed-tools", str(tmp_path / "r1" / "tools.snapshot.json"), str(v2))
    assert drift.code == 1 and "get_note: description" in drift.stdout
