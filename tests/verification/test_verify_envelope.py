"""verify: round trip and every tamper/mismatch case against envelopes signed by a real
(and by now stopped) LocalSigstore, through the real CLI entry point (in-process via
``run_main`` for the big tables, as a subprocess via ``run_cli`` for the round trip)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sigstore_testkit import (
    ALICE_OWNER_ID,
    ALICE_REPO_ID,
    WF_ALICE,
    WF_ALICE_OTHER,
    SignedSet,
    assert_bad_input,
    assert_failed_check,
    run_cli,
    run_main,
)

pytestmark = pytest.mark.slow


def verify(
    s: SignedSet, envelope: Path, *extra: str, pin: bool = True, subprocess: bool = False
) -> Any:
    args = ["verify", str(envelope), "--trust-config", str(s.trust_config), *extra]
    if pin and "--cert-identity" not in extra:
        args += ["--cert-identity", WF_ALICE]
    return (run_cli if subprocess else run_main)(*args)


def tampered(s: SignedSet, source: Path, name: str, edit: Callable[[dict[str, Any]], None]) -> Path:
    doc = json.loads(source.read_text())
    edit(doc)
    out = s.directory / f"tampered-{name}.envelope.json"
    out.write_text(json.dumps(doc, indent=2))
    return out


def test_round_trip_all_pins_json(signed_set: SignedSet) -> None:
    run = verify(
        signed_set, signed_set.rev2,
        "--repository", "alice/docs", "--ref", "refs/heads/main",
        "--owner-id", ALICE_OWNER_ID, "--repository-id", ALICE_REPO_ID,
        "--previous", str(signed_set.rev1), "--tools", str(signed_set.tools_v2),
        "--format", "json", subprocess=True,
    )
    assert run.code == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["verified"] is True
    assert report["revision"] == 2 and report["server"] == "io.github.alice/docs"
    status = {c["axis"]: c["status"] for c in report["checks"]}
    assert status == {
        "well-formed": "pass", "signature": "pass", "identity": "pass",
        "log-entry": "pass", "chain": "pass", "tools": "pass",
    }
    assert "dev-sigstore" in run.stderr and "UNTRUSTED" in run.stderr  # loud warning


def test_verify_without_signer_pin_is_refused(signed_set: SignedSet) -> None:
    # Like cosign, verify needs the signer named: with no pin at all it refuses (exit 2,
    # one line) instead of passing any workflow of the namespace owner.
    run = verify(signed_set, signed_set.rev1, pin=False)
    assert_bad_input(run, "--repository", "--any-workflow-of-owner")
    assert "VERIFIED" not in run.stdout
    # A repository (+ workflow) pin is enough.
    ok = verify(signed_set, signed_set.rev1, "--repository", "alice/docs", "--workflow",
                ".github/workflows/sign.yml", pin=False)
    assert ok.code == 0, ok.stderr


def test_human_report_and_namespace_only(signed_set: SignedSet) -> None:
    # io.github.* servers may be verified by namespace owner alone, opted into loudly
    run = verify(signed_set, signed_set.rev1, "--any-workflow-of-owner", pin=False)
    assert run.code == 0, run.stderr
    assert "warning: no signer pinned: ANY workflow" in run.stderr
    assert run.stdout.startswith("VERIFIED: io.github.alice/docs revision 1")
    assert "identity not pinned" in run.stdout
    assert "skipped chain" in run.stdout


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        target = doc
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value

    return edit


def _flip_bundle_signature(doc: dict[str, Any]) -> None:
    sig = doc["signer"]["signature"]["messageSignature"]
    raw = bytearray(base64.b64decode(sig["signature"]))
    raw[-1] ^= 1
    sig["signature"] = base64.b64encode(bytes(raw)).decode()


def _break_inclusion_proof(doc: dict[str, Any]) -> None:
    proof = doc["signer"]["signature"]["verificationMaterial"]["tlogEntries"][0]["inclusionProof"]
    proof["rootHash"] = base64.b64encode(b"\x00" * 32).decode()


OTHER_DIGEST = "sha256:" + "ab" * 32

# (case name, which envelope, edit, axis that must fail)
TAMPERS: list[tuple[str, str, Callable[[dict[str, Any]], None], str]] = [
    ("server", "rev1", _set("server", "io.github.alice/docs2"), "signature"),
    ("serverVersion", "rev1", _set("serverVersion", "9.9.9"), "signature"),
    ("revision", "rev2", _set("revision", 3), "signature"),
    ("identity", "rev1", _set("identity", WF_ALICE_OTHER), "signature"),
    ("manifestDigest", "rev1", _set("manifestDigest", OTHER_DIGEST), "signature"),
    ("toolDigests-entry", "rev1", _set("toolDigests.search", OTHER_DIGEST), "signature"),
    ("toolDigests-added", "rev1", _set("toolDigests.extra", OTHER_DIGEST), "signature"),
    ("previousManifestDigest", "rev2", _set("previousManifestDigest", OTHER_DIGEST),
     "signature"),
    ("signer.identity", "rev1", _set("signer.identity", WF_ALICE_OTHER), "signature"),
    ("signer.issuer", "rev1", _set("signer.issuer", "https://accounts.example.com"),
     "signature"),
    ("logIndex", "rev1", _set("transparencyLog.logIndex", 7), "log-entry"),
    ("logId", "rev1", _set("transparencyLog.logId", "ab" * 32), "log-entry"),
    ("integratedTime", "rev1", _set("transparencyLog.integratedTime", 1), "log-entry"),
    ("bundle-signature", "rev1", _flip_bundle_signature, "signature"),
    ("inclusion-proof", "rev1", _break_inclusion_proof, "signature"),
]


@pytest.mark.parametrize(("name", "which", "edit", "axis"), TAMPERS, ids=[t[0] for t in TAMPERS])
def test_tampered_envelope_rejected(
    signed_set: SignedSet, name: str, which: str, edit: Callable[[dict[str, Any]], None],
    axis: str,
) -> None:
    source = getattr(signed_set, which)
    run = verify(signed_set, tampered(signed_set, source, name, edit))
    assert_failed_check(run, axis)
    assert "FAILED:" in run.stdout


def test_bundle_swapped_from_another_envelope(signed_set: SignedSet) -> None:
    rev1 = json.loads(signed_set.rev1.read_text())

    def swap(doc: dict[str, Any]) -> None:
        doc["signer"]["signature"] = copy.deepcopy(rev1["signer"]["signature"])
        doc["transparencyLog"] = rev1["transparencyLog"]  # even with a consistent log copy

    run = verify(signed_set, tampered(signed_set, signed_set.rev2, "swapped", swap),
                 "--format", "json")
    assert_failed_check(run, "signature")
    checks = {c["axis"]: c for c in json.loads(run.stdout)["checks"]}
    assert checks["signature"]["status"] == "fail"
    assert "digest" in checks["signature"]["detail"].lower()


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (["--cert-identity", WF_ALICE_OTHER], "certificate identity is"),
        (["--repository", "alice/other"], "repository is"),
        (["--ref", "refs/heads/release"], "ref is"),
        (["--owner-id", "999"], "owner id is"),
        (["--repository-id", "999"], "repository id is"),
        (["--cert-oidc-issuer", "https://accounts.google.com"], "issuer is"),
    ],
    ids=["identity", "repository", "ref", "owner-id", "repository-id", "issuer"],
)
def test_identity_pin_mismatch(signed_set: SignedSet, flags: list[str], needle: str) -> None:
    run = verify(signed_set, signed_set.rev1, *flags)
    assert_failed_check(run, "identity")
    assert needle in run.stderr


def test_namespace_squatting_rejected(signed_set: SignedSet) -> None:
    # io.github.mallory/docs, validly signed — but by alice's workflow: the pin matches,
    # the namespace owner does not.
    run = verify(signed_set, signed_set.squat)
    assert_failed_check(run, "identity")
    assert "io.github.mallory" in run.stderr and "'alice'" in run.stderr


def test_reversed_chain_rejected(signed_set: SignedSet) -> None:
    run = verify(signed_set, signed_set.rev1, "--previous", str(signed_set.rev2))
    assert_failed_check(run, "chain")
    assert "does not follow" in run.stderr


def test_chain_to_other_server_rejected(signed_set: SignedSet) -> None:
    run = verify(signed_set, signed_set.rev2, "--previous", str(signed_set.other_rev1))
    assert_failed_check(run, "chain")
    assert "io.github.alice/other" in run.stderr


def test_chain_digest_broken(signed_set: SignedSet) -> None:
    # previous with the right server and revision but a different manifest
    fake_prev = tampered(signed_set, signed_set.rev1, "prev-digest",
                         _set("manifestDigest", OTHER_DIGEST))
    run = verify(signed_set, signed_set.rev2, "--previous", str(fake_prev))
    assert_failed_check(run, "chain")
    assert "previousManifestDigest" in run.stderr


def test_forged_previous_envelope_rejected(signed_set: SignedSet) -> None:
    # The link fields still match, but the previous revision itself was edited after signing.
    forged_prev = tampered(signed_set, signed_set.rev1, "prev-forged",
                           _set("serverVersion", "0.9.9-forged"))
    run = verify(signed_set, signed_set.rev2, "--previous", str(forged_prev))
    assert_failed_check(run, "chain")
    assert "previous envelope's signature does not verify" in run.stderr
    genuine = verify(signed_set, signed_set.rev2, "--previous", str(signed_set.rev1))
    assert genuine.code == 0, genuine.stdout + genuine.stderr
    assert "whose signature verifies" in genuine.stdout


def test_tools_drift_named(signed_set: SignedSet) -> None:
    run = verify(signed_set, signed_set.rev1, "--tools", str(signed_set.tools_v2),
                 "--format", "json")
    assert_failed_check(run, "tools")
    detail = {c["axis"]: c for c in json.loads(run.stdout)["checks"]}["tools"]["detail"]
    assert "added: fetch" in detail and "changed: search" in detail


def test_production_root_rejects_local_envelope(signed_set: SignedSet) -> None:
    run = run_main("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE, "--offline")
    assert_failed_check(run, "signature")
    assert "warning" not in run.stderr  # production trust: nothing to warn about


def test_trusted_root_flag_works_like_trust_config(signed_set: SignedSet) -> None:
    run = run_main("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE,
                   "--trusted-root", str(signed_set.trusted_root))
    assert run.code == 0, run.stderr


def test_outside_github_namespace_requires_pin(signed_set: SignedSet) -> None:
    run = verify(signed_set, signed_set.outside, "--any-workflow-of-owner", pin=False)
    assert_bad_input(run, "--cert-identity", "outside io.github")
    ok = verify(signed_set, signed_set.outside)
    assert ok.code == 0, ok.stderr


# ----------------------------------------------------------------------------- bad input
def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        target = doc
        keys = path.split(".")
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]

    return edit


BAD: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("missing-signer", _drop("signer"), "missing signer"),
    ("missing-transparencyLog", _drop("transparencyLog"), "missing transparencyLog"),
    ("missing-signature", _drop("signer.signature"), "missing signature"),
    ("missing-manifestDigest", _drop("manifestDigest"), "manifestDigest"),
    ("unknown-member", _set("extra", 1), "unknown member(s) extra"),
    ("wrong-type", _set("type", "histor.revision/v9"), "type is"),
    ("revision-string", _set("revision", "2"), "revision must be"),
    ("logIndex-string", _set("transparencyLog.logIndex", "7"), "logIndex"),
    ("logId-not-hex", _set("transparencyLog.logId", "xyz"), "logId"),
    ("signature-not-object", _set("signer.signature", "abc"), "signer.signature"),
]


@pytest.mark.parametrize(("name", "edit", "needle"), BAD, ids=[b[0] for b in BAD])
def test_malformed_envelope_is_bad_input(
    signed_set: SignedSet, name: str, edit: Callable[[dict[str, Any]], None], needle: str
) -> None:
    run = verify(signed_set, tampered(signed_set, signed_set.rev1, f"bad-{name}", edit))
    assert_bad_input(run, needle)
    assert run.stdout == ""
    assert "warning" not in run.stderr  # input rejected before any trust is used


def test_not_json_and_duplicate_keys(signed_set: SignedSet, tmp_path: Path) -> None:
    broken = tmp_path / "broken.envelope.json"
    broken.write_text('{"type": ')
    assert_bad_input(verify(signed_set, broken))
    dup = tmp_path / "dup.envelope.json"
    text = signed_set.rev1.read_text()
    dup.write_text(text.replace('"revision": 1,', '"revision": 1, "revision": 1,'))
    assert_bad_input(verify(signed_set, dup), "duplicate")
    assert_bad_input(verify(signed_set, tmp_path / "absent.json"))


def test_bare_statement_is_bad_input(signed_set: SignedSet) -> None:
    statement = signed_set.directory / "rev1.statement.json"
    assert_bad_input(verify(signed_set, statement), "not a signed envelope")
    # and as a subprocess: exactly one clean stderr line
    assert_clean_error_run = verify(signed_set, statement, subprocess=True)
    assert_bad_input(assert_clean_error_run, "not a signed envelope")
    assert len(assert_clean_error_run.stderr.splitlines()) == 1


def test_bad_trust_files(signed_set: SignedSet, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"mediaType": "nope"}')
    assert_bad_input(run_main("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE,
                             "--trust-config", str(garbage)), "ClientTrustConfig")
    assert_bad_input(run_main("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE,
                             "--trusted-root", str(garbage)), "trusted root")
    assert_bad_input(run_main("verify", str(signed_set.rev1), "--staging", "--trust-config",
                             str(signed_set.trust_config)), "cannot be used together")
