"""sign: real sigstore Signer against a real LocalSigstore; verification after it stopped;
ambient GitHub credentials; upstream sigstore CLI agreement; every failure exit 2."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sigstore_testkit import (
    GH_ISSUER,
    REPO,
    TOOLS_V1,
    WF_ALICE,
    WF_ALICE_OTHER,
    assert_bad_input,
    cli_env,
    run_cli,
    run_main,
    statement,
    write_statement,
)

from histor_sign.canonical import canonical_bytes
from histor_sign.models import load_envelope
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
SIGSTORE_CLI = Path(sys.executable).with_name("sigstore")


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("dev-sigstore")) as running:
        yield running


@pytest.fixture
def stmt_file(tmp_path: Path) -> Path:
    return write_statement(tmp_path / "stmt.json", statement("io.github.alice/docs", WF_ALICE,
                                                             TOOLS_V1))


def outputs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("release."))


def test_round_trip_instance_stopped_and_upstream_cli_agrees(tmp_path: Path) -> None:
    stmt = write_statement(tmp_path / "stmt.json",
                           statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
    with LocalSigstore(directory=tmp_path / "dev") as local:
        token = local.mint_token(WF_ALICE)
        run = run_cli("sign", str(stmt), "--output", str(tmp_path / "release.envelope.json"),
                      "--identity-token", token, "--trust-config", str(local.trust_config_path))
        assert run.code == 0, run.stderr
        trust_config = local.trust_config_path
    assert "UNTRUSTED" in run.stderr and token not in run.stdout + run.stderr
    assert outputs(tmp_path) == [
        "release.envelope.json", "release.intoto.sigstore.json", "release.sigstore.json",
        "release.statement.json",
    ]
    # the statement file holds exactly the signed bytes: JCS(envelope - signature - log)
    env_doc = json.loads((tmp_path / "release.envelope.json").read_text())
    del env_doc["transparencyLog"], env_doc["signer"]["signature"]
    assert (tmp_path / "release.statement.json").read_bytes() == canonical_bytes(env_doc)
    # the bundle file is the envelope's bundle
    assert json.loads((tmp_path / "release.sigstore.json").read_text()) == json.loads(
        (tmp_path / "release.envelope.json").read_text())["signer"]["signature"]

    verified = run_cli("verify", str(tmp_path / "release.envelope.json"), "--cert-identity",
                       WF_ALICE, "--trust-config", str(trust_config), "--format", "json")
    assert verified.code == 0, verified.stderr
    assert json.loads(verified.stdout)["verified"] is True

    upstream = subprocess.run(
        [str(SIGSTORE_CLI), "--trust-config", str(trust_config), "verify", "identity",
         "--bundle", str(tmp_path / "release.sigstore.json"), "--cert-identity", WF_ALICE,
         "--cert-oidc-issuer", GH_ISSUER, str(tmp_path / "release.statement.json")],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )
    assert upstream.returncode == 0, upstream.stderr
    assert "OK" in upstream.stdout + upstream.stderr
    wrong = subprocess.run(
        [str(SIGSTORE_CLI), "--trust-config", str(trust_config), "verify", "identity",
         "--bundle", str(tmp_path / "release.sigstore.json"), "--cert-identity", WF_ALICE_OTHER,
         "--cert-oidc-issuer", GH_ISSUER, str(tmp_path / "release.statement.json")],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )
    assert wrong.returncode == 1


def test_ambient_github_actions_credentials(inst: LocalSigstore, stmt_file: Path,
                                            tmp_path: Path) -> None:
    env = inst.github_env(WF_ALICE)
    out = tmp_path / "release.envelope.json"
    run = run_cli("sign", str(stmt_file), "-o", str(out), "--trust-config",
                  str(inst.trust_config_path), env=env)
    assert run.code == 0, run.stderr
    envelope = load_envelope(out)
    assert (envelope.identity, envelope.issuer) == (WF_ALICE, GH_ISSUER)
    assert env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] not in run.stdout + run.stderr


def test_missing_id_token_permission(inst: LocalSigstore, stmt_file: Path,
                                     tmp_path: Path) -> None:
    run = run_cli("sign", str(stmt_file), "-o", str(tmp_path / "release.envelope.json"),
                  "--trust-config", str(inst.trust_config_path), env={"GITHUB_ACTIONS": "true"})
    assert_bad_input(run, "id-token: write")
    assert outputs(tmp_path) == []


def test_no_token_outside_ci(inst: LocalSigstore, stmt_file: Path, tmp_path: Path) -> None:
    run = run_cli("sign", str(stmt_file), "-o", str(tmp_path / "release.envelope.json"),
                  "--trust-config", str(inst.trust_config_path))
    assert_bad_input(run, "no identity token")


def sign_main(inst: LocalSigstore, stmt: Path, out: Path, token: str) -> object:
    return run_main("sign", str(stmt), "-o", str(out), "--identity-token", token,
                    "--trust-config", str(inst.trust_config_path))


@pytest.mark.parametrize(
    ("token_args", "needle"),
    [
        ({"lifetime": 60, "issued_at": int(time.time()) - 3600}, "expired"),
        ({"audience": "not-sigstore"}, "audience"),
    ],
    ids=["expired", "wrong-audience"],
)
def test_bad_token_rejected(inst: LocalSigstore, stmt_file: Path, tmp_path: Path,
                            token_args: dict[str, object], needle: str) -> None:
    token = inst.mint_token(WF_ALICE, **token_args)  # type: ignore[arg-type]
    run = sign_main(inst, stmt_file, tmp_path / "release.envelope.json", token)
    assert_bad_input(run, needle)
    assert token not in run.stderr
    assert outputs(tmp_path) == []


def test_token_from_foreign_issuer_refused_by_fulcio(inst: LocalSigstore, stmt_file: Path,
                                                     tmp_path: Path) -> None:
    with LocalSigstore() as other:
        token = other.mint_token(WF_ALICE)
    run = sign_main(inst, stmt_file, tmp_path / "release.envelope.json", token)
    assert_bad_input(run, "Fulcio refused")
    assert outputs(tmp_path) == []


def test_statement_identity_must_match_token(inst: LocalSigstore, stmt_file: Path,
                                             tmp_path: Path) -> None:
    run = sign_main(inst, stmt_file, tmp_path / "release.envelope.json",
                    inst.mint_token(WF_ALICE_OTHER))
    assert_bad_input(run, "not the signing identity")


@pytest.mark.parametrize("fault", ["corrupt-set", "corrupt-inclusion-proof"])
def test_lying_rekor_caught_by_post_sign_verification(
    inst: LocalSigstore, stmt_file: Path, tmp_path: Path, fault: str
) -> None:
    inst.faults.add(fault)
    try:
        run = sign_main(inst, stmt_file, tmp_path / "release.envelope.json",
                        inst.mint_token(WF_ALICE))
    finally:
        inst.faults.discard(fault)
    assert_bad_input(run, "fresh bundle does not verify", "nothing was written")
    assert outputs(tmp_path) == []


def test_bad_statement_and_flags(inst: LocalSigstore, tmp_path: Path) -> None:
    bad = tmp_path / "stmt.json"
    bad.write_text('{"type": "histor.revision/v1"}')
    out = str(tmp_path / "release.envelope.json")
    token = inst.mint_token(WF_ALICE)
    cfg = str(inst.trust_config_path)
    assert_bad_input(run_main("sign", str(bad), "-o", out, "--identity-token", token,
                              "--trust-config", cfg), "missing")
    good = write_statement(tmp_path / "good.json",
                           statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
    assert_bad_input(run_main("sign", str(good), "-o", out, "--identity-token", token,
                              "--trust-config", cfg, "--staging"), "cannot be used together")
    assert_bad_input(run_main("sign", str(good), "-o", out, "--identity-token", token,
                              "--trust-config", str(inst.trusted_root_path)),
                     "ClientTrustConfig")
    assert_bad_input(run_main("sign", str(good), "-o", out, "--identity-token", "not-a-jwt",
                              "--trust-config", cfg), "not a JWT")
    assert outputs(tmp_path) == []


def test_dev_sigstore_command_foreground(tmp_path: Path) -> None:
    trust = tmp_path / "local.trust.json"
    token_file = tmp_path / "token.txt"
    env_file = tmp_path / "github.env"
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign", "dev-sigstore", "--trust-config-out", str(trust),
         "--token-for", WF_ALICE, "--token-out", str(token_file), "--github-env-out",
         str(env_file)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(), cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 30
        while not trust.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert trust.exists(), proc.stderr.read() if proc.poll() is not None else "timeout"
        stmt = write_statement(tmp_path / "stmt.json",
                               statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
        run = run_main("sign", str(stmt), "-o", str(tmp_path / "release.envelope.json"),
                       "--identity-token", token_file.read_text(), "--trust-config", str(trust))
        assert run.code == 0, run.stderr
        env_lines = dict(line.split("=", 1) for line in env_file.read_text().splitlines())
        assert env_lines["GITHUB_ACTIONS"] == "true"
        assert env_lines["ACTIONS_ID_TOKEN_REQUEST_URL"].startswith("http://127.0.0.1:")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=15)
    assert proc.returncode == 0, stderr
    assert b"UNTRUSTED" in stderr
    verified = run_main("verify", str(tmp_path / "release.envelope.json"), "--cert-identity",
                        WF_ALICE, "--trust-config", str(trust))
    assert verified.code == 0, verified.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--token-for", WF_ALICE],
        ["--token-out", "x"],
        ["--host", "0.0.0.0"],
        ["--token-for", "https://example.com/not-a-workflow", "--token-out", "t"],
    ],
    ids=["token-without-out", "out-without-token", "non-loopback", "bad-identity"],
)
def test_dev_sigstore_usage_errors(tmp_path: Path, args: list[str]) -> None:
    run = run_main("dev-sigstore", "--trust-config-out", str(tmp_path / "t.json"), *args)
    assert_bad_input(run)
    assert not (tmp_path / "t.json").exists()


def test_help_lists_commands() -> None:
    run = run_cli("--help")
    assert run.code == 0
    for command in ("sign", "verify", "dev-sigstore"):
        assert command in run.stdout
