"""release, verify --previous and check, end to end through real parts (SPEC §4, §7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, read_github_output, run_cli
from release_fixtures import (
    DRIFT,
    IDENTITY,
    SERVER,
    Released,
    make_releases,
    release_args,
    server_command,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Released:
    return make_releases(tmp_path_factory.mktemp("release"))


def test_release_writes_every_output(released: Released) -> None:
    for out in (released.rev1, released.rev2):
        names = sorted(p.name for p in out.iterdir())
        assert names == [
            "envelope.json", "intoto.sigstore.json", "manifest.json", "registry-meta.json",
            "scan.sarif", "sigstore.json", "statement.json", "summary.md", "tools.snapshot.json",
        ]
    env1 = json.loads((released.rev1 / "envelope.json").read_text())
    env2 = json.loads((released.rev2 / "envelope.json").read_text())
    assert (env1["revision"], env2["revision"]) == (1, 2)
    assert env2["previousManifestDigest"] == env1["manifestDigest"]
    assert env1["identity"] == env2["signer"]["identity"] == IDENTITY
    assert env2["serverVersion"] == "1.1.0" and env2["server"] == SERVER
    assert env1["toolDigests"]["search_notes"] != env2["toolDigests"]["search_notes"]
    snapshot = json.loads((released.rev1 / "tools.snapshot.json").read_text())
    assert snapshot["type"] == "histor.snapshot/v1"
    assert snapshot["capture"]["pages"] == 3  # 7 tools in pages of 3: every page was signed
    assert len(snapshot["tools"]) == len(env1["toolDigests"]) == 7


def test_release_reports_to_github_actions(released: Released) -> None:
    outputs = read_github_output(released.github_output.read_text())
    env2 = json.loads((released.rev2 / "envelope.json").read_text())
    assert outputs["revision"] == "2"
    assert outputs["manifest-digest"] == env2["manifestDigest"]
    assert outputs["log-index"] == str(env2["transparencyLog"]["logIndex"])
    assert outputs["envelope"] == str(released.rev2 / "envelope.json")
    summary = released.step_summary.read_text()
    assert "revision | 2" in summary and env2["manifestDigest"] in summary


def test_verify_accepts_the_chain_and_rejects_it_reversed(released: Released) -> None:
    common = ["--trust-config", str(released.trust_config), "--cert-identity", IDENTITY]
    ok = run_cli("verify", str(released.rev2 / "envelope.json"),
                 "--previous", str(released.rev1 / "envelope.json"),
                 "--tools", str(released.rev2 / "tools.snapshot.json"), *common)
    assert ok.code == 0, ok.stdout + ok.stderr
    reversed_chain = run_cli("verify", str(released.rev1 / "envelope.json"),
                             "--previous", str(released.rev2 / "envelope.json"), *common)
    assert reversed_chain.code == 1
    assert "chain" in reversed_chain.stdout + reversed_chain.stderr


def test_upstream_sigstore_verifies_the_release_files(released: Released) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "sigstore", "--trust-config", str(released.trust_config),
         "verify", "identity", "--bundle", str(released.rev2 / "sigstore.json"),
         "--cert-identity", IDENTITY,
         "--cert-oidc-issuer", "https://token.actions.githubusercontent.com",
         str(released.rev2 / "statement.json")],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr


def test_check_unchanged_server_matches(released: Released) -> None:
    run = run_cli("check", "--envelope", str(released.rev2 / "envelope.json"),
                  "--stdio", server_command("--description", DRIFT))
    assert run.code == 0, run.stdout + run.stderr
    assert run.stdout.startswith("match")


def test_check_drifted_description_names_tool_and_field(released: Released) -> None:
    run = run_cli(
        "check", "--envelope", str(released.rev1 / "envelope.json"),
        "--signed-tools", str(released.rev1 / "tools.snapshot.json"),
        "--stdio", server_command("--description", DRIFT), "--format", "json",
    )
    assert run.code == 1, run.stderr
    result = json.loads(run.stdout)
    assert result["status"] == "different"
    [tool] = result["tools"]
    assert (tool["name"], tool["change"], tool["fields"]) == ("search_notes", "changed", ["description"])
    assert "+Search every note, including private notebooks." in tool["descriptionDiff"]


def test_check_with_verify_pins_the_publisher(released: Released) -> None:
    envelope = str(released.rev2 / "envelope.json")
    served = ["--stdio", server_command("--description", DRIFT)]
    trust = ["--trust-config", str(released.trust_config)]
    ok = run_cli("check", "--envelope", envelope, *served, "--verify", *trust,
                 "--cert-identity", IDENTITY)
    assert ok.code == 0, ok.stdout + ok.stderr
    wrong = run_cli("check", "--envelope", envelope, *served, "--verify", *trust,
                    "--cert-identity", IDENTITY.replace("main", "dev"))
    assert_clean_error(wrong, 1)
    assert "identity" in wrong.stderr
    needs_verify = run_cli("check", "--envelope", envelope, *served, "--cert-identity", IDENTITY)
    assert_clean_error(needs_verify)


def test_gate_failure_writes_no_envelope(released: Released, tmp_path: Path) -> None:
    out = tmp_path / "gated"
    run = run_cli(*release_args(out, released.trust_config,
                                "--stdio", server_command("--collision"),
                                "--server-is-trusted-code",
                                "--identity-token", "not-needed-gate-fails-first"))
    assert run.code == 1, run.stdout + run.stderr
    assert "release gate failed" in run.stderr and "TC004" in run.stdout
    assert sorted(p.name for p in out.iterdir()) == ["scan.sarif", "summary.md"]
    sarif = json.loads((out / "scan.sarif").read_text())
    assert any(r["ruleId"] == "TC004" for r in sarif["runs"][0]["results"])


def test_identity_must_match_the_token(released: Released, tmp_path: Path) -> None:
    from histor_sign.sigstore_dev import LocalSigstore

    with LocalSigstore(directory=tmp_path / "s") as sigstore:
        token = sigstore.mint_token(IDENTITY)
        run = run_cli(*release_args(
            tmp_path / "out", sigstore.trust_config_path, "--stdio", server_command(),
            "--server-is-trusted-code", "--identity-token", token,
            "--identity", "https://github.com/example/other/.github/workflows/x.yml@refs/heads/main",
        ))
    assert_clean_error(run)
    assert "is not the identity in the OIDC token" in run.stderr
    assert not (tmp_path / "out" / "envelope.json").exists()


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        ([], "give the MCP server to fetch from"),
        (["--stdio", "x", "--url", "https://h/mcp"], "not both"),
        (["--tools", "a.json", "--stdio", "x"], "not both"),
    ],
)
def test_release_usage_errors(extra: list[str], fragment: str, tmp_path: Path) -> None:
    run = run_cli("release", "--server", SERVER, "--server-version", "1", "--out-dir",
                  str(tmp_path / "o"), *extra)
    assert_clean_error(run)
    assert fragment in run.stderr
    assert not (tmp_path / "o").exists()


def test_scan_a_live_server_over_stdio() -> None:
    clean = run_cli("scan", "--stdio", server_command(), "--format", "json")
    assert clean.code == 0, clean.stderr
    assert json.loads(clean.stdout)["summary"]["tools"] == 7
    clash = run_cli("scan", "--stdio", server_command("--collision"), "--format", "json")
    assert clash.code == 1
    rules = {f["rule"] for f in json.loads(clash.stdout)["findings"]}
    assert {"TC002", "TC004"} <= rules


def test_release_of_a_snapshot_file_keeps_its_capture(released: Released, tmp_path: Path) -> None:
    from histor_sign.sigstore_dev import LocalSigstore

    snapshot = released.rev1 / "tools.snapshot.json"
    with LocalSigstore(directory=tmp_path / "s") as sigstore:
        run = run_cli(*release_args(tmp_path / "out", sigstore.trust_config_path,
                                    "--tools", str(snapshot),
                                    "--identity-token", sigstore.mint_token(IDENTITY)))
    assert run.code == 0, run.stderr
    assert json.loads((tmp_path / "out" / "tools.snapshot.json").read_text()) == json.loads(
        snapshot.read_text())
    env = json.loads((tmp_path / "out" / "envelope.json").read_text())
    assert env["manifestDigest"] == json.loads((released.rev1 / "envelope.json").read_text())[
        "manifestDigest"]


def test_release_attestation_carries_the_capture_and_matches_the_envelope(
    released: Released,
) -> None:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.attestation import load_attestation, verify_attestation
    from histor_sign.models import load_envelope
    from histor_sign.verification.policy import Pins

    envelope = load_envelope(released.rev2 / "envelope.json")
    attestation = load_attestation(released.rev2 / "intoto.sigstore.json")
    snapshot = json.loads((released.rev2 / "tools.snapshot.json").read_text())
    # The attestation (a public log entry) carries the capture as observed by this signer,
    # with the command reduced to its program and argument count (issue 23, hole 5).
    from histor_sign.attestation import public_capture

    assert attestation.capture == public_capture(snapshot["capture"], observed=True)
    assert attestation.capture["target"]["arguments"] == 4
    assert "private notebooks" not in json.dumps(attestation.capture)
    assert attestation.statement == envelope.statement
    report = verify_attestation(
        attestation, pins=Pins(cert_identity=IDENTITY), envelope=envelope,
        previous=released.rev1 / "envelope.json",
        trust=Trust.from_trust_config(released.trust_config),
    )
    assert report.ok, report.to_text()
