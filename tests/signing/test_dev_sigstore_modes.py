"""The local Sigstore instance's interop-relevant shapes: checkpoint signer name inside the
log's baseUrl, the first log index, the RFC 3161 timestamp authority, and Rekor v2 mode —
each signed through the real sigstore Signer and verified offline after the instance stopped,
by histor-sign and by the upstream sigstore CLI."""

from __future__ import annotations

import base64
import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from sigstore_testkit import (
    GH_ISSUER,
    TOOLS_V1,
    WF_ALICE,
    assert_bad_input,
    assert_failed_check,
    cli_env,
    run_main,
    statement,
    write_statement,
)

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
SIGSTORE_CLI = Path(sys.executable).with_name("sigstore")


def sign_with(tmp: Path, **options: Any) -> tuple[Path, Path, dict[str, Any]]:
    """Sign one statement against a fresh instance; return (envelope, trust config, bundle)."""
    tmp.mkdir(parents=True, exist_ok=True)
    stmt = write_statement(tmp / "stmt.json", statement("io.github.alice/docs", WF_ALICE,
                                                        TOOLS_V1))
    out = tmp / "release.envelope.json"
    with LocalSigstore(directory=tmp / "dev", **options) as inst:
        run = run_main("sign", str(stmt), "-o", str(out), "--identity-token",
                       inst.mint_token(WF_ALICE), "--trust-config", str(inst.trust_config_path))
        assert run.code == 0, run.stderr
        trust_config = inst.trust_config_path
    return out, trust_config, json.loads((tmp / "release.sigstore.json").read_text())


def verify(envelope: Path, trust: Path, flag: str = "--trust-config") -> Any:
    return run_main("verify", str(envelope), "--cert-identity", WF_ALICE, flag, str(trust))


def upstream_verify(tmp: Path, trust_config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SIGSTORE_CLI), "--trust-config", str(trust_config), "verify", "identity",
         "--offline", "--bundle", str(tmp / "release.sigstore.json"), "--cert-identity",
         WF_ALICE, "--cert-oidc-issuer", GH_ISSUER, str(tmp / "release.statement.json")],
        capture_output=True, text=True, env=cli_env(), timeout=120,
    )


def tlog_entry(bundle: dict[str, Any]) -> dict[str, Any]:
    entries = bundle["verificationMaterial"]["tlogEntries"]
    assert len(entries) == 1
    entry: dict[str, Any] = entries[0]
    return entry


def checkpoint_signer(entry: dict[str, Any]) -> str:
    note = entry["inclusionProof"]["checkpoint"]["envelope"]
    signature_lines = note.split("\n\n", 1)[1].strip().splitlines()
    assert len(signature_lines) == 1, note
    return str(signature_lines[0].split(" ")[1])


def rewrite_root(trust_config: Path, target: Path, **changes: Any) -> Path:
    doc = json.loads(trust_config.read_text())
    doc["trustedRoot"].update(changes)
    target.write_text(json.dumps(doc))
    return target


@pytest.mark.parametrize("rekor_version", [1, 2])
def test_checkpoint_signer_name_is_inside_the_log_base_url(tmp_path: Path,
                                                           rekor_version: int) -> None:
    """@sigstore/verify matches the checkpoint's signer name against the log's baseUrl."""
    envelope, trust_config, bundle = sign_with(tmp_path, rekor_version=rekor_version)
    (tlog,) = json.loads(trust_config.read_text())["trustedRoot"]["tlogs"]
    name = checkpoint_signer(tlog_entry(bundle))
    assert name in tlog["baseUrl"], (name, tlog["baseUrl"])
    # the host without the port, as production's (sigstore-go verifies with url.Hostname())
    assert urlsplit(tlog["baseUrl"]).hostname == name
    origin = tlog_entry(bundle)["inclusionProof"]["checkpoint"]["envelope"].splitlines()[0]
    assert origin == (f"{name} - 1" if rekor_version == 1 else name)
    # the key hint in the signature line is the log id's first 4 bytes (both log versions)
    note = tlog_entry(bundle)["inclusionProof"]["checkpoint"]["envelope"]
    hint = base64.b64decode(note.rstrip("\n").rsplit(" ", 1)[1])[:4]
    assert hint == base64.b64decode(tlog["logId"]["keyId"])[:4]
    assert verify(envelope, trust_config).code == 0


def test_default_first_index_is_not_zero_and_index_zero_still_verifies(tmp_path: Path) -> None:
    envelope, _trust_config, bundle = sign_with(tmp_path / "default")
    assert tlog_entry(bundle)["logIndex"] == "1"
    assert tlog_entry(bundle)["inclusionProof"]["treeSize"] == "2"
    assert json.loads(envelope.read_text())["transparencyLog"]["logIndex"] == 1

    zero, zero_trust, zero_bundle = sign_with(tmp_path / "zero", first_index=0)
    assert tlog_entry(zero_bundle)["logIndex"] == "0"
    assert json.loads(zero.read_text())["transparencyLog"]["logIndex"] == 0
    assert verify(zero, zero_trust).code == 0
    assert upstream_verify(tmp_path / "zero", zero_trust).returncode == 0


def test_tsa_round_trip_rekor_v1(tmp_path: Path) -> None:
    envelope, trust_config, bundle = sign_with(tmp_path, tsa=True)
    stamps = bundle["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"]
    assert len(stamps) == 1
    assert tlog_entry(bundle)["kindVersion"] == {"kind": "hashedrekord", "version": "0.0.1"}
    assert json.loads(envelope.read_text())["transparencyLog"]["integratedTime"] is not None
    assert verify(envelope, trust_config).code == 0
    assert upstream_verify(tmp_path, trust_config).returncode == 0
    # the timestamp is really checked: a root without the TSA refuses the bundle
    no_tsa = rewrite_root(trust_config, tmp_path / "no-tsa.json", timestampAuthorities=[])
    assert_failed_check(verify(envelope, no_tsa), "signature")


@pytest.fixture(scope="module")
def v2_signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    return sign_with(tmp_path_factory.mktemp("rekor-v2"), rekor_version=2)


def test_rekor_v2_round_trip_offline(v2_signed: tuple[Path, Path, dict[str, Any]]) -> None:
    envelope, trust_config, bundle = v2_signed
    entry = tlog_entry(bundle)
    assert entry["kindVersion"] == {"kind": "hashedrekord", "version": "0.0.2"}
    assert "integratedTime" not in entry and "inclusionPromise" not in entry
    body = json.loads(base64.b64decode(entry["canonicalizedBody"]))
    assert body["apiVersion"] == "0.0.2" and "hashedRekordV002" in body["spec"]
    assert len(bundle["verificationMaterial"]["timestampVerificationData"]
               ["rfc3161Timestamps"]) == 1
    assert json.loads(envelope.read_text())["transparencyLog"]["integratedTime"] is None
    (tlog,) = json.loads(trust_config.read_text())["trustedRoot"]["tlogs"]
    assert tlog["publicKey"]["keyDetails"] == "PKIX_ED25519"

    run = verify(envelope, trust_config)
    assert run.code == 0, run.stderr
    assert upstream_verify(envelope.parent, trust_config).returncode == 0
    # trusted-root-only verification (what a consumer gets) works the same way
    root = envelope.parent / "root.json"
    root.write_text(json.dumps(json.loads(trust_config.read_text())["trustedRoot"]))
    assert verify(envelope, root, "--trusted-root").code == 0


def test_rekor_v2_time_comes_only_from_the_tsa(
    v2_signed: tuple[Path, Path, dict[str, Any]], tmp_path: Path
) -> None:
    """No integrated time: with the TSA missing from, or replaced in, the root, no trusted
    time is left and the signature axis fails."""
    envelope, trust_config, _ = v2_signed
    no_tsa = rewrite_root(trust_config, tmp_path / "no-tsa.json", timestampAuthorities=[])
    assert_failed_check(verify(envelope, no_tsa), "signature")
    with LocalSigstore(tsa=True) as other:
        foreign = other.trust_config["trustedRoot"]["timestampAuthorities"]
    swapped = rewrite_root(trust_config, tmp_path / "swapped.json", timestampAuthorities=foreign)
    assert_failed_check(verify(envelope, swapped), "signature")


def test_rekor_v2_without_tsa_cannot_sign(tmp_path: Path) -> None:
    stmt = write_statement(tmp_path / "stmt.json", statement("io.github.alice/docs", WF_ALICE,
                                                             TOOLS_V1))
    with LocalSigstore(directory=tmp_path / "dev", rekor_version=2, tsa=False) as inst:
        run = run_main("sign", str(stmt), "-o", str(tmp_path / "r.envelope.json"),
                       "--identity-token", inst.mint_token(WF_ALICE), "--trust-config",
                       str(inst.trust_config_path))
    assert_bad_input(run, "signed timestamp")
    assert not list(tmp_path.glob("r.*"))


def test_rekor_v2_lying_log_caught(tmp_path: Path) -> None:
    stmt = write_statement(tmp_path / "stmt.json", statement("io.github.alice/docs", WF_ALICE,
                                                             TOOLS_V1))
    with LocalSigstore(directory=tmp_path / "dev", rekor_version=2) as inst:
        inst.faults.add("corrupt-inclusion-proof")
        run = run_main("sign", str(stmt), "-o", str(tmp_path / "r.envelope.json"),
                       "--identity-token", inst.mint_token(WF_ALICE), "--trust-config",
                       str(inst.trust_config_path))
    assert_bad_input(run, "fresh bundle does not verify")


def _post(url: str, data: bytes, content_type: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # loopback only
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_services_refuse_bad_requests_and_wrong_endpoints() -> None:
    with LocalSigstore(rekor_version=2) as v2, LocalSigstore() as v1:
        assert _post(v2.url + "/api/v1/timestamp", b"\x30\x00", "application/timestamp-query"
                     )[0] == 400
        assert _post(v1.url + "/api/v1/timestamp", b"\x30\x00", "application/timestamp-query"
                     )[0] == 404  # v1 runs no TSA by default
        assert _post(v2.url + "/api/v1/log/entries", b"{}", "application/json")[0] == 404
        assert _post(v1.url + "/api/v2/log/entries", b"{}", "application/json")[0] == 404
        assert _post(v2.url + "/api/v2/log/entries", b'{"dsseRequestV002": {}}',
                     "application/json")[0] == 400


# ---------------------------------------------------------------------- the dev-sigstore command
@pytest.mark.parametrize(
    ("flags", "rekor_version", "tsa", "first_index"),
    [
        (["--rekor-version", "2"], 2, True, 1),  # v2 brings its TSA along
        (["--tsa", "--first-index", "0"], 1, True, 0),
        (["--rekor-version", "1", "--no-tsa", "--first-index", "5"], 1, False, 5),
    ],
    ids=["rekor-v2", "v1-tsa-index-0", "v1-no-tsa-index-5"],
)
def test_dev_sigstore_command_modes_sign_and_verify_offline(
    tmp_path: Path, flags: list[str], rekor_version: int, tsa: bool, first_index: int,
) -> None:
    """The command's mode flags shape the trust config it writes and the bundles it signs;
    each verifies after the instance has stopped."""
    trust, token_file = tmp_path / "local.trust.json", tmp_path / "token.txt"
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign", "dev-sigstore", "--trust-config-out", str(trust),
         "--token-for", WF_ALICE, "--token-out", str(token_file), *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(),
    )
    out = tmp_path / "release.envelope.json"
    try:
        deadline = time.monotonic() + 60
        while not trust.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert trust.exists(), proc.stderr.read() if proc.poll() is not None else "timeout"  # type: ignore[union-attr]
        stmt = write_statement(tmp_path / "stmt.json",
                               statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
        run = run_main("sign", str(stmt), "-o", str(out), "--identity-token",
                       token_file.read_text(), "--trust-config", str(trust))
        assert run.code == 0, run.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert f"Rekor v{rekor_version}".encode() in stderr

    config = json.loads(trust.read_text())
    signing, root = config["signingConfig"], config["trustedRoot"]
    assert [url["majorApiVersion"] for url in signing["rekorTlogUrls"]] == [rekor_version]
    assert bool(signing.get("tsaUrls")) is tsa
    assert bool(root.get("timestampAuthorities")) is tsa
    bundle = json.loads((tmp_path / "release.sigstore.json").read_text())
    entry = tlog_entry(bundle)
    assert entry["logIndex"] == str(first_index)
    assert entry["kindVersion"]["version"] == ("0.0.2" if rekor_version == 2 else "0.0.1")
    assert ("integratedTime" in entry) is (rekor_version == 1)
    stamps = bundle["verificationMaterial"].get("timestampVerificationData", {})
    assert bool(stamps.get("rfc3161Timestamps")) is tsa

    verified = verify(out, trust)  # the instance is gone: offline
    assert verified.code == 0, verified.stderr


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--rekor-version", "2", "--no-tsa"], "needs --tsa"),
        (["--rekor-version", "3"], "--rekor-version"),
        (["--rekor-version", "0"], "--rekor-version"),
        (["--first-index", "-1"], "--first-index"),
        (["--first-index", "100001"], "--first-index"),
        (["--first-index", "x"], "--first-index"),
    ],
    ids=["v2-without-tsa", "version-3", "version-0", "index-negative", "index-too-large",
         "index-not-a-number"],
)
def test_dev_sigstore_command_refuses_bad_modes(
    tmp_path: Path, flags: list[str], needle: str
) -> None:
    run = run_main("dev-sigstore", "--trust-config-out", str(tmp_path / "t.json"), *flags)
    assert_bad_input(run, needle)
    assert not (tmp_path / "t.json").exists()
