"""``guard --envelope --verify``: the contract bound to a verified, publisher-pinned revision.

The envelope is signed by a real LocalSigstore that is stopped before anything verifies it,
as a client verifies long after the publisher's release job ended.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from guard_fixtures import SEED_TOOLS
from sigstore_testkit import assert_bad_input, assert_failed_check, run_cli, run_main

from histor_sign._sigstore_trust import Trust
from histor_sign.guard import Guard
from histor_sign.revision import build_statement
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore
from histor_sign.verification import verify
from histor_sign.verification.policy import Pins

pytestmark = pytest.mark.slow

SERVER = "io.github.example/users"
WORKFLOW = "https://github.com/example/users/.github/workflows/sign.yml@refs/heads/main"
OTHER_WORKFLOW = "https://github.com/example/other/.github/workflows/sign.yml@refs/heads/main"
GOOD = {"name": "update_user_email",
        "arguments": {"user_id": 42, "email": "ada@example.com", "dry_run": True}}


@dataclass
class Signed:
    directory: Path
    trust_config: Path
    envelope: Path
    statement: Path  # the bare statement: no signature to verify
    tools: Path
    drifted: Path
    call: Path


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Signed:
    base = tmp_path_factory.mktemp("guard-verify")
    statement = build_statement(tools=SEED_TOOLS, server=SERVER, identity=WORKFLOW,
                                server_version="1.0.0")
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        trust = Trust.from_trust_config(sigstore.trust_config_path)
        token = sigstore.mint_token(WORKFLOW)
        sign_statement(statement, trust=trust, identity_token=token,
                           require_owned_namespace=False).write(
            base / "release.envelope.json")
        trust_config = sigstore.trust_config_path
    drifted = [dict(SEED_TOOLS[0], description="Change any email, no questions asked."),
               *SEED_TOOLS[1:]]
    files = {
        "statement.json": statement.to_json(),
        "tools.json": {"tools": SEED_TOOLS},
        "drifted.json": {"tools": drifted},
        "call.json": GOOD,
    }
    for name, value in files.items():
        (base / name).write_text(json.dumps(value))
    return Signed(base, trust_config, base / "release.envelope.json", base / "statement.json",
                  base / "tools.json", base / "drifted.json", base / "call.json")


def guard(s: Signed, *extra: str, envelope: Path | None = None, tools: Path | None = None,
          subprocess: bool = False) -> Any:
    args = ["guard", "--envelope", str(envelope or s.envelope), "--tools", str(tools or s.tools),
            *extra, str(s.call)]
    return (run_cli if subprocess else run_main)(*args)


def pinned(s: Signed, *extra: str) -> list[str]:
    return ["--verify", "--trust-config", str(s.trust_config), *extra]


def test_verified_and_pinned_contract_allows(signed: Signed) -> None:
    run = guard(signed, *pinned(signed, "--cert-identity", WORKFLOW, "--repository",
                                "example/users", "--ref", "refs/heads/main"), subprocess=True)
    assert run.code == 0, run
    assert run.stdout.startswith("ALLOW update_user_email")
    assert f"contract: {SERVER} revision 1 · signed by {WORKFLOW}" in run.stdout
    # --server pins the name, and with it the io.github.example namespace owner.
    run = guard(signed, *pinned(signed, "--server", SERVER, "--format", "json"))
    assert run.code == 0 and json.loads(run.stdout)["decision"] == "allow"
    verified = json.loads(run.stdout)["verified"]
    assert verified["server"] == SERVER and verified["signer"]["identity"] == WORKFLOW


def test_verify_without_any_pin_is_refused(signed: Signed) -> None:
    """Any validly signed io.github.* envelope of any owner would pass: refused, exit 2."""
    run = guard(signed, *pinned(signed))
    assert_bad_input(run, "only from a pinned publisher", "trust add io.github.example/users")
    assert run.stdout == ""
    # --server naming another server than the envelope's is a failed check.
    run = guard(signed, *pinned(signed, "--server", "io.github.example/other"))
    assert_failed_check(run, "identity")


def test_verified_contract_still_denies_a_drifted_tool(signed: Signed) -> None:
    run = guard(signed, *pinned(signed, "--server", SERVER), tools=signed.drifted)
    assert run.code == 1 and "not-signed" in run.stdout, run
    assert "not the signed definition" in run.stdout


@pytest.mark.parametrize(
    ("pins", "axis"),
    [
        (["--cert-identity", OTHER_WORKFLOW], "identity"),
        (["--repository", "example/other"], "identity"),
        (["--ref", "refs/heads/release", "--server", SERVER], "identity"),
        (["--cert-oidc-issuer", "https://accounts.example.com", "--server", SERVER],
         "identity"),
    ],
)
def test_failed_pin_exits_1_naming_the_axis_and_decides_nothing(
    signed: Signed, pins: list[str], axis: str
) -> None:
    run = guard(signed, *pinned(signed, *pins))
    assert_failed_check(run, axis)
    assert run.stdout == "", run


def test_tampered_envelope_fails_signature_and_decides_nothing(signed: Signed) -> None:
    doc = json.loads(signed.envelope.read_text())
    doc["serverVersion"] = "9.9.9"  # the statement no longer matches the signed bytes
    tampered = signed.directory / "tampered.envelope.json"
    tampered.write_text(json.dumps(doc))
    run = guard(signed, *pinned(signed, "--server", SERVER), envelope=tampered, subprocess=True)
    assert_failed_check(run, "signature")
    assert run.stdout == "", run
    # Without --verify the same envelope binds digests only, and the call is decided.
    assert guard(signed, envelope=tampered).code == 0


def test_verify_flag_misuse_is_bad_input(signed: Signed) -> None:
    cases = [
        (["--cert-identity", WORKFLOW], "identity and trust flags need --verify"),
        (["--offline"], "identity and trust flags need --verify"),
        (pinned(signed), "not a signed envelope"),  # with envelope=statement below
        (["--verify", "--trust-config", str(signed.directory / "missing.json")], "missing.json"),
    ]
    for extra, needle in cases:
        envelope = signed.statement if needle == "not a signed envelope" else None
        run = guard(signed, *extra, envelope=envelope)
        assert_bad_input(run)
        assert needle in run.stderr and run.stdout == "", run
    run = run_main("guard", "--catalog", str(signed.tools), "--verify", str(signed.call))
    assert_bad_input(run)
    assert "--verify needs --envelope" in run.stderr


def test_python_api_verify_then_bind(signed: Signed) -> None:
    """The documented two-step API: verify, then Guard.from_envelope with the report's
    envelope (the object one returns is accepted by the next)."""
    trust = Trust.from_trust_config(signed.trust_config)
    report = verify(signed.envelope, pins=Pins(cert_identity=WORKFLOW), trust=trust)
    report.raise_for_failure()
    g = Guard.from_envelope(report.envelope, SEED_TOOLS)
    assert g.check(GOOD).allowed
    assert Guard.from_envelope(report.envelope.to_json(), SEED_TOOLS).check(GOOD).allowed
    wrong = verify(signed.envelope, pins=Pins(cert_identity=OTHER_WORKFLOW), trust=trust)
    assert not wrong.ok and wrong.failed[0].axis == "identity"
