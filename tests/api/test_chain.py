"""The whole chain through public names only: fetch → build → sign → verify → compare →
scan → guard, each step fed the previous step's return value, against the bundled example
server and the local Sigstore instance (stopped before anything is verified)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import histor_sign as hs
from histor_sign.collisions import ScanResult
from histor_sign.drift import ToolDrift
from histor_sign.sigstore_dev import LocalSigstore

SERVER = "io.github.example/notes-server"
WORKFLOW = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"
DRIFTED = ("search_notes", "Search every note, including private notebooks.")


def example_server(*extra: str) -> hs.Target:
    return hs.Target.stdio([sys.executable, "-m", "histor_sign.demo.example_server", *extra])


@pytest.mark.slow
def test_fetch_build_sign_verify_compare_guard(tmp_path: Path) -> None:
    v1 = hs.fetch(example_server())
    v2 = hs.fetch(example_server("--description", "=".join(DRIFTED)))
    assert isinstance(v1, hs.Snapshot) and v1.tools != v2.tools

    stmt1 = hs.build_statement(v1.tools, server=SERVER, server_version="1.0.0",
                               identity=WORKFLOW, previous=None)
    with LocalSigstore(directory=tmp_path / "sigstore") as sigstore:
        trust = hs.Trust.from_trust_config(sigstore.trust_config_path)
        env1 = hs.sign(stmt1, trust=trust, identity_token=sigstore.mint_token(WORKFLOW))
        stmt2 = hs.build_statement(v2.tools, server=SERVER, server_version="1.1.0",
                                   identity=WORKFLOW, previous=env1)
        env2 = hs.sign(stmt2, trust=trust, identity_token=sigstore.mint_token(WORKFLOW))
    assert isinstance(env2, hs.SignedEnvelope)
    assert (env2.revision, env2.statement.previous_manifest_digest) == (
        2, stmt1.manifest_digest)

    report = hs.verify(env2, pins=hs.Pins(cert_identity=WORKFLOW), trust=trust,
                       previous=env1, tools=v2.tools)
    report.raise_for_failure()
    assert isinstance(report, hs.VerificationReport)
    assert {a.axis: a.status for a in report.axes}["chain"] is hs.AxisStatus.PASS

    # A wrong pin, a wrong catalog and a broken chain each fail their own axis.
    assert hs.verify(env2, pins=hs.Pins(cert_identity=WORKFLOW + "x"),
                     trust=trust).failed[0].axis == "identity"
    assert hs.verify(env2, pins=hs.Pins(), trust=trust,
                     tools=v1.tools).failed[0].axis == "tools"
    assert hs.verify(env1, pins=hs.Pins(), trust=trust,
                     previous=env2).failed[0].axis == "chain"
    with pytest.raises(hs.VerificationFailed, match="identity"):
        hs.verify(env2, pins=hs.Pins(repository="example/other"),
                  trust=trust).raise_for_failure()

    assert hs.compare(report.envelope, v2.tools).status is hs.DriftStatus.MATCH
    drift = hs.compare(env1, v2, signed_tools=v1)
    assert isinstance(drift, hs.DriftResult) and drift.status is hs.DriftStatus.DIFFERENT
    [changed] = drift.tools
    assert isinstance(changed, ToolDrift)
    assert (changed.name, changed.change, changed.fields) == (
        DRIFTED[0], hs.ChangeKind.CHANGED, ("description",))

    scanned = hs.scan([v2.tools])
    assert isinstance(scanned, ScanResult) and scanned.stats["tools"] == len(v2.tools)

    guard = hs.Guard.from_envelope(report.envelope, v2.tools, hs.Policy())
    allowed = guard.check({"name": "delete_note",
                           "arguments": {"note_id": "note-7", "dry_run": True}})
    assert isinstance(allowed, hs.Decision) and allowed.allowed
    stale = hs.Guard.from_envelope(env1, v2.tools)
    denied = stale.check({"name": DRIFTED[0], "arguments": {"query": "x"}})
    assert not denied.allowed and denied.reasons[0].code == "not-signed"
