"""What a release refuses before it signs (no Rekor entry is spent), and what the server it
runs can never reach: the signing job's credentials."""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import Run, assert_clean_error, run_cli

from histor_sign.sigstore_dev import LocalSigstore

REPO = Path(__file__).resolve().parents[2]
ENV_SERVER = shlex.join([sys.executable, str(REPO / "tests" / "mcp" / "raw_env_server.py")])
TAG = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/{}"
TOOLS = {"tools": [{"name": "search", "description": "Search the docs.",
                    "inputSchema": {"type": "object"}}]}


@pytest.fixture(scope="module")
def sigstore(local_sigstore: LocalSigstore) -> Iterator[LocalSigstore]:
    """The session's shared LocalSigstore (tests/conftest.py): this module counts its log
    entries by difference."""
    yield local_sigstore


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(TOOLS))
    return path


def release(sigstore: LocalSigstore, out: Path, server: str, *extra: str,
            env: dict[str, str] | None = None, version: str = "1.0.0",
            subprocess: bool = False) -> Run:
    return run_cli("release", "--server", server, "--server-version", version,
                   "--out-dir", str(out), "--trust-config", str(sigstore.trust_config_path),
                   *extra, env=env, subprocess=subprocess)


def logged(sigstore: LocalSigstore) -> int:
    return len(sigstore.log.tree)


def test_namespace_the_token_cannot_own_is_refused_before_signing(
    sigstore: LocalSigstore, tools: Path, tmp_path: Path
) -> None:
    before = logged(sigstore)
    token = sigstore.mint_token(TAG.format("v1.0.0"))
    run = release(sigstore, tmp_path / "out", "io.github.someoneelse/x", "--tools", str(tools),
                  "--identity-token", token)
    assert_clean_error(run, 2)
    assert "server 'io.github.someoneelse/x' cannot be signed by this signing identity" in run.stderr
    assert "nothing was signed" in run.stderr
    assert logged(sigstore) == before
    assert not (tmp_path / "out" / "envelope.json").exists()


def test_previous_must_be_a_signed_envelope_of_the_same_publisher(
    sigstore: LocalSigstore, tools: Path, tmp_path: Path
) -> None:
    first = release(sigstore, tmp_path / "v1", "io.github.alice/docs", "--tools", str(tools),
                    "--identity-token", sigstore.mint_token(TAG.format("v1.0.0")))
    assert first.code == 0, first.stderr
    envelope = tmp_path / "v1" / "envelope.json"
    before = logged(sigstore)
    # A bare statement (or the signed statement bytes): nothing vouches for it.
    doc = json.loads(envelope.read_text())
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({k: v for k, v in doc.items()
                                if k not in ("signer", "transparencyLog", "bundle")}))
    for unsigned in (bare, tmp_path / "v1" / "statement.json"):
        run = release(sigstore, tmp_path / "bare", "io.github.alice/docs", "--tools",
                      str(tools), "--previous", str(unsigned),
                      "--identity-token", sigstore.mint_token(TAG.format("v1.1.0")))
        assert_clean_error(run, 2)
        assert "--previous" in run.stderr and "not a signed envelope" in run.stderr
    # A re-registered account (same login and names, other numeric ids).
    squatter = sigstore.mint_token(TAG.format("v1.1.0"), owner_id="9999", repository_id="8888")
    run = release(sigstore, tmp_path / "squat", "io.github.alice/docs", "--tools", str(tools),
                  "--previous", str(envelope), "--identity-token", squatter)
    assert_clean_error(run, 1)
    assert "does not verify as a release of this publisher" in run.stderr
    assert logged(sigstore) == before
    # The real publisher's next tag chains on (a new ref is fine).
    second = release(sigstore, tmp_path / "v2", "io.github.alice/docs", "--tools", str(tools),
                     "--previous", str(envelope),
                     "--identity-token", sigstore.mint_token(TAG.format("v1.1.0")),
                     version="1.1.0")
    assert second.code == 0, second.stderr
    assert logged(sigstore) == before + 2  # the envelope's signature and the attestation
    stmt = json.loads((tmp_path / "v2" / "statement.json").read_text())
    assert stmt["revision"] == 2


@pytest.mark.slow  # histor-sign and the server each in a process of their own
def test_a_previous_that_is_no_envelope_is_refused_before_the_gate(
    sigstore: LocalSigstore, tmp_path: Path
) -> None:
    """``--previous`` is read once, strictly, before anything else: the revision number
    checked against the chain directory is the one the statement would chain to, and bad
    input is reported as such (exit 2) even when the gate would also fail."""
    clash = tmp_path / "clash.json"
    clash.write_text(json.dumps({"tools": [  # explicit hints that contradict: TC004
        {"name": "delete_page", "description": "Delete a page.", "inputSchema": {"type": "object"},
         "annotations": {"destructiveHint": True}},
        {"name": "remove_page", "description": "Remove a page.",
         "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]}))
    token = sigstore.mint_token(TAG.format("v1.0.0"))
    gate = release(sigstore, tmp_path / "gate", "io.github.alice/docs", "--tools", str(clash),
                   "--identity-token", token)
    assert gate.code == 1 and "release gate failed" in gate.stderr
    bogus = tmp_path / "bogus.json"
    bogus.write_text(json.dumps({"revision": 7}))
    for extra in ((), ("--revisions", str(tmp_path / "chain"))):
        run = release(sigstore, tmp_path / "out", "io.github.alice/docs", "--tools", str(clash),
                      "--previous", str(bogus), *extra, "--identity-token", token)
        assert_clean_error(run, 2)
        assert "not a signed envelope" in run.stderr
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_stdio_server_gets_no_credential_and_publishes_none(
    sigstore: LocalSigstore, tmp_path: Path
) -> None:
    """The server runs inside the job holding the token and the ambient OIDC pair: it
    sees neither, mints nothing, and nothing of them is signed or written."""
    token = sigstore.mint_token(TAG.format("v1.0.0"))
    ambient = sigstore.github_env(TAG.format("v1.0.0"))
    env = {**ambient, "SIGSTORE_IDENTITY_TOKEN": token, "GITHUB_TOKEN": "ghs_secret-value-123",
           "ACTIONS_RUNTIME_TOKEN": "runtime-secret-value-123"}
    out = tmp_path / "out"
    # Untrusted, it is not even started where it could read them from /proc (issue 23) ...
    refused = release(sigstore, out, "io.github.alice/docs", "--stdio", ENV_SERVER, env=env,
                      subprocess=True)
    assert refused.code == 2 and "--server-is-trusted-code" in refused.stderr, refused.stderr
    assert not out.exists()
    # ... and vouched for as trusted code, its own environment still holds none of them (in
    # a process of its own: what the server inherits is the environment of that process).
    run = release(sigstore, out, "io.github.alice/docs", "--stdio", ENV_SERVER,
                  "--server-is-trusted-code", env=env, subprocess=True)
    assert run.code == 0, run.stderr
    snapshot = json.loads((out / "tools.snapshot.json").read_text())
    loot = json.loads(snapshot["tools"][0]["description"])
    assert loot["minted"] == "no ACTIONS_ID_TOKEN_REQUEST_URL"
    assert set(env) & set(loot["environ"]) == {"GITHUB_ACTIONS"}  # not a credential
    written = "".join(p.read_text() for p in out.iterdir())
    for value in env.values():
        if value != "true":  # GITHUB_ACTIONS
            assert value not in written


def test_sign_refuses_a_namespace_the_token_cannot_own_before_signing(
    sigstore: LocalSigstore, tools: Path, tmp_path: Path
) -> None:
    """build has no token, so the namespace is checked where the token is: sign, before any
    signature (a squatting statement would never verify; no Rekor entry is spent on it)."""
    identity = TAG.format("v1.0.0")
    for server, expect_ok in (("io.github.someoneelse/x", False), ("io.github.alice/docs", True)):
        statement = tmp_path / f"{server.replace('/', '_')}.json"
        built = run_cli("build", str(tools), "--server", server, "--server-version", "1.0.0",
                        "--identity", identity, "-o", str(statement))
        assert built.code == 0, built.stderr
        before = logged(sigstore)
        out = tmp_path / f"{server.replace('/', '_')}.envelope.json"
        run = run_cli("sign", str(statement), "-o", str(out), "--trust-config",
                      str(sigstore.trust_config_path), "--identity-token",
                      sigstore.mint_token(identity))
        if expect_ok:
            assert run.code == 0, run.stderr
            assert logged(sigstore) > before
        else:
            assert_clean_error(run, 2)
            assert "cannot be signed by this signing identity" in run.stderr
            assert logged(sigstore) == before
            assert not out.exists()
