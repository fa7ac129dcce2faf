"""The in-toto attestation written beside every signed envelope, and `verify --attestation`.

Signed against a real LocalSigstore (stopped before verification); every check is shown
to fail on its own negative control."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from sigstore_testkit import (
    TOOLS_V2,
    WF_ALICE,
    WF_ALICE_OTHER,
    SignedSet,
    assert_bad_input,
    assert_failed_check,
    run_main,
    statement,
)

from histor_sign.attestation import (
    ATTESTATION_PREDICATE_TYPE,
    INTOTO_PAYLOAD_TYPE,
    build_attestation,
    load_attestation,
    parse_attestation,
    verify_attestation,
)
from histor_sign.catalog import as_tools
from histor_sign.errors import InputError, VerificationFailed
from histor_sign.layout import MAX_SUBJECTS, attestation_path, part_paths
from histor_sign.models import load_envelope


def att(path: Path) -> Path:
    return attestation_path(path)


def trust_args(s: SignedSet) -> list[str]:
    return ["--trusted-root", str(s.trusted_root), "--repository", "alice/docs"]


def payload_of(path: Path) -> dict[str, Any]:
    bundle = json.loads(path.read_text())
    return json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))


def rewrite(src: Path, dst: Path, edit: Any, *, payload_type: str | None = None) -> Path:
    """Copy a bundle, editing its in-toto statement (the signature is left as it was)."""
    bundle = json.loads(src.read_text())
    doc = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    edit(doc)
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(doc).encode()).decode()
    if payload_type is not None:
        bundle["dsseEnvelope"]["payloadType"] = payload_type
    dst.write_text(json.dumps(bundle))
    return dst


# ---------------------------------------------------------------------- the document
def test_sign_writes_an_in_toto_statement_with_recomputable_subjects(signed_set: SignedSet) -> None:
    path = att(signed_set.rev2)
    assert path.name == "rev2.intoto.sigstore.json"
    bundle = json.loads(path.read_text())
    assert bundle["mediaType"] == "application/vnd.dev.sigstore.bundle.v0.3+json"
    assert bundle["dsseEnvelope"]["payloadType"] == INTOTO_PAYLOAD_TYPE
    doc = payload_of(path)
    assert doc["_type"] == "https://in-toto.io/Statement/v1"
    assert doc["predicateType"] == ATTESTATION_PREDICATE_TYPE
    # Recompute every subject independently: sha256 of the RFC 8785 bytes of the projected
    # tool, and of the manifest object {name: projected tool}.
    projected = {t.name: t.projected() for t in as_tools(TOOLS_V2)}
    expected = {"manifest": hashlib.sha256(rfc8785.dumps(projected)).hexdigest()}
    expected |= {f"tool:{n}": hashlib.sha256(rfc8785.dumps(p)).hexdigest()
                 for n, p in projected.items()}
    assert {s["name"]: s["digest"]["sha256"] for s in doc["subject"]} == expected
    envelope = load_envelope(signed_set.rev2).statement
    predicate = doc["predicate"]
    assert predicate["canonicalization"] == "rfc8785"
    assert predicate["revision"]["previousManifestDigest"] == envelope.previous_manifest_digest
    assert predicate["revision"]["revision"] == 2 and predicate["revision"]["toolCount"] == 2
    assert predicate["signer"] == {"issuer": envelope_issuer(signed_set), "identity": WF_ALICE}
    assert predicate["part"] == {"index": 1, "count": 1}


def envelope_issuer(s: SignedSet) -> str:
    return load_envelope(s.rev2).issuer


def test_more_than_the_subject_cap_is_split_into_parts_that_read_back() -> None:
    tools = [{"name": f"t{i:04d}", "description": "d", "inputSchema": {"type": "object"}}
             for i in range(2 * MAX_SUBJECTS + 5)]
    stmt = statement("io.github.alice/docs", WF_ALICE, tools)
    parts = build_attestation(stmt, issuer="iss", identity=WF_ALICE,
                              capture={"era": "cursor"}, surface={"instructions": "sha256:00"})
    docs = [json.loads(p) for p in parts]
    assert len(docs) == 3
    assert all(len(d["subject"]) <= MAX_SUBJECTS for d in docs)
    assert all(d["subject"][0]["name"] == "manifest" for d in docs)
    assert [d["predicate"]["part"] for d in docs] == [
        {"index": i, "count": 3} for i in (1, 2, 3)
    ]
    assert all(rfc8785.dumps(d) == p for d, p in zip(docs, parts, strict=True))
    bundles = [{"dsseEnvelope": {"payloadType": INTOTO_PAYLOAD_TYPE,
                                 "payload": base64.b64encode(p).decode()}} for p in parts]
    back = parse_attestation(bundles, "a")
    assert back.statement == stmt
    assert back.capture == {"era": "cursor"} and back.surface == {"instructions": "sha256:00"}
    with pytest.raises(VerificationFailed, match="part 1 of 2"):
        parse_attestation(bundles[1:], "a")  # a part missing: counts disagree
    with pytest.raises(VerificationFailed):
        parse_attestation([bundles[1], bundles[0], bundles[2]], "a")  # parts swapped
    with pytest.raises(InputError, match="named twice"):
        parse_attestation([bundles[0], bundles[0], bundles[2]], "a")
    assert [p.name for p in part_paths("x.intoto.sigstore.json", 3)] == [
        "x.intoto.sigstore.json", "x.intoto.2.sigstore.json", "x.intoto.3.sigstore.json"]


# ---------------------------------------------------------------------- verify: accepts
def test_cli_verifies_envelope_and_attestation_together(signed_set: SignedSet) -> None:
    run = run_main("verify", str(signed_set.rev2), "--attestation", str(att(signed_set.rev2)),
                   "--previous", str(signed_set.rev1), "--cert-identity", WF_ALICE,
                   *trust_args(signed_set), "--format", "json")
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["verified"] is True
    checks = {c["axis"]: c["status"] for c in doc["attestation"]["checks"]}
    assert checks == {"well-formed": "pass", "signature": "pass", "identity": "pass",
                      "log-entry": "pass", "chain": "pass", "tools": "pass",
                      "surface": "skipped"}
    assert "equal the envelope's" in doc["attestation"]["checks"][-2]["detail"]


def test_attestation_alone_against_tools(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.rev1)),
                   "--tools", str(signed_set.tools_v1), *trust_args(signed_set))
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("VERIFIED: io.github.alice/docs revision 1")


def test_library_reports_log_index_zero_attestation_too(signed_set: SignedSet) -> None:
    from histor_sign._sigstore_trust import Trust

    report = verify_attestation(att(signed_set.rev1),
                                trust=Trust.from_trust_config(signed_set.trust_config))
    assert report.ok, report.to_text()
    assert report.envelope.transparency_log.log_index >= 0


# ---------------------------------------------------------------------- verify: rejects
def test_subjects_must_equal_the_recomputed_tools(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.rev1)),
                   "--tools", str(signed_set.tools_v2), *trust_args(signed_set))
    assert_failed_check(run, "tools")


def test_other_revisions_attestation_does_not_match_the_envelope(signed_set: SignedSet) -> None:
    run = run_main("verify", str(signed_set.rev1), "--attestation", str(att(signed_set.rev2)),
                   *trust_args(signed_set))
    assert_failed_check(run, "tools")


def test_wrong_identity_pin_and_namespace_squat_fail_identity(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.rev1)),
                   "--cert-identity", WF_ALICE_OTHER, *trust_args(signed_set))
    assert_failed_check(run, "identity")
    run = run_main("verify", "--attestation", str(att(signed_set.squat)), *trust_args(signed_set))
    assert_failed_check(run, "identity")


def test_chain_axis_applies(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.rev2)),
                   "--previous", str(signed_set.other_rev1), *trust_args(signed_set))
    assert_failed_check(run, "chain")


def test_outside_github_namespace_needs_cert_identity(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.outside)),
                   *trust_args(signed_set))
    assert_bad_input(run, "--cert-identity")
    run = run_main("verify", "--attestation", str(att(signed_set.outside)),
                   "--cert-identity", WF_ALICE, *trust_args(signed_set))
    assert run.code == 0, run.stderr


def test_production_root_rejects_the_local_signature(signed_set: SignedSet) -> None:
    run = run_main("verify", "--attestation", str(att(signed_set.rev1)), "--offline",
                   "--repository", "alice/docs")
    assert_failed_check(run, "signature")


def test_tampered_subject_breaks_the_dsse_signature(signed_set: SignedSet,
                                                    tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["subject"][1]["digest"]["sha256"] = "0" * 64

    bad = rewrite(att(signed_set.rev1), tmp_path / "a.intoto.sigstore.json", edit)
    run = run_main("verify", "--attestation", str(bad), *trust_args(signed_set))
    assert_failed_check(run, "signature")


@pytest.mark.parametrize("case", ["payload-type", "predicate-type", "statement-type", "part"])
def test_foreign_types_are_failed_checks(signed_set: SignedSet, tmp_path: Path,
                                         case: str) -> None:
    edits = {
        "predicate-type": lambda d: d.update(predicateType="x\x1b[31m\n::error::forged\u202e"),
        "statement-type": lambda d: d.update(_type="https://in-toto.io/Statement/v0.1"),
        "part": lambda d: d["predicate"].update(part={"index": 2, "count": 1}),
        "payload-type": lambda d: None,
    }
    bad = rewrite(att(signed_set.rev1), tmp_path / "a.intoto.sigstore.json", edits[case],
                  payload_type="application/json" if case == "payload-type" else None)
    run = run_main("verify", "--attestation", str(bad), *trust_args(signed_set))
    assert run.code == 1, (run.code, run.stderr)
    assert "Traceback" not in run.stderr and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "\x1b" not in run.stderr
    assert "\u202e" not in run.stderr and not run.stderr.startswith("::")


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("case", [
    "not-json", "hashedrekord-bundle", "payload-not-base64", "payload-not-json",
    "predicate-missing", "subject-not-list", "missing-part-file", "unknown-subject",
])
def test_bad_attestation_input_is_one_line_exit_2(signed_set: SignedSet, tmp_path: Path,
                                                  case: str) -> None:
    src, path = att(signed_set.rev1), tmp_path / "a.intoto.sigstore.json"
    bundle = json.loads(src.read_text())
    dsse = bundle["dsseEnvelope"]
    if case == "not-json":
        path.write_text("{not json")
    elif case == "hashedrekord-bundle":
        path.write_bytes((signed_set.directory / "rev1.sigstore.json").read_bytes())
    elif case in ("payload-not-base64", "payload-not-json"):
        dsse["payload"] = "%%%" if case == "payload-not-base64" else \
            base64.b64encode(b"[1,").decode()
        path.write_text(json.dumps(bundle))
    else:
        def edit(doc: dict[str, Any]) -> None:
            if case == "predicate-missing":
                del doc["predicate"]["revision"]
            elif case == "subject-not-list":
                doc["subject"] = {"name": "manifest"}
            elif case == "missing-part-file":
                doc["predicate"]["part"]["count"] = 2
            else:
                doc["subject"].append({"name": "other", "digest": {"sha256": "00"}})
        rewrite(src, path, edit)
    run = run_main("verify", "--attestation", str(path), *trust_args(signed_set))
    assert_bad_input(run)
    with pytest.raises(InputError):
        load_attestation(path)


def test_verify_needs_an_envelope_or_an_attestation() -> None:
    run = run_main("verify")
    assert_bad_input(run, "--attestation")


@pytest.mark.slow
def test_a_large_server_is_signed_and_verified_in_parts(tmp_path: Path) -> None:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.signing import sign_statement
    from histor_sign.sigstore_dev import LocalSigstore

    tools = [{"name": f"t{i:04d}", "description": "d", "inputSchema": {"type": "object"}}
             for i in range(MAX_SUBJECTS + 10)]
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps({"tools": tools}))
    out = tmp_path / "big.envelope.json"
    with LocalSigstore(directory=tmp_path / "dev") as inst:
        sign_statement(statement("io.github.alice/docs", WF_ALICE, tools),
                       trust=Trust.from_trust_config(inst.trust_config_path),
                       identity_token=inst.mint_token(WF_ALICE)).write(out)
        root = inst.trusted_root_path
    first, second = part_paths(attestation_path(out), 2)
    assert second.name == "big.intoto.2.sigstore.json"
    assert not part_paths(attestation_path(out), 3)[2].exists()
    run = run_main("verify", str(out), "--attestation", str(first), "--tools", str(catalog),
                   "--trusted-root", str(root), "--repository", "alice/docs")
    assert run.code == 0, run.stderr
    assert "2 part(s) verified" in run.stdout
    # Part 1 cannot stand in for part 2 (its tools would be counted twice).
    second.write_text(first.read_text())
    run = run_main("verify", "--attestation", str(first), "--trusted-root", str(root))
    assert_bad_input(run, "named twice")
    second.unlink()  # a missing part is bad input
    assert_bad_input(run_main("verify", "--attestation", str(first), "--trusted-root", str(root)))


@pytest.mark.slow
def test_every_part_meets_the_whole_identity_policy(tmp_path: Path) -> None:
    """Issue 23, hole 6: a part signed under the same issuer and SAN but from another
    repository (another numeric id) used to pass, since parts after the first were held to
    issuer and SAN only."""
    from histor_sign._sigstore_trust import Trust
    from histor_sign.attestation import verify_attestation
    from histor_sign.signing import sign_statement
    from histor_sign.sigstore_dev import LocalSigstore
    from histor_sign.verification.policy import Pins

    tools = [{"name": f"t{i:04d}", "description": "d", "inputSchema": {"type": "object"}}
             for i in range(MAX_SUBJECTS + 10)]
    stmt = statement("io.github.alice/docs", WF_ALICE, tools)
    ours, theirs = tmp_path / "ours.envelope.json", tmp_path / "theirs.envelope.json"
    with LocalSigstore(directory=tmp_path / "dev") as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)
        sign_statement(stmt, trust=trust, identity_token=inst.mint_token(
            WF_ALICE, owner_id="100", repository_id="200")).write(ours)
        sign_statement(stmt, trust=trust, identity_token=inst.mint_token(
            WF_ALICE, owner_id="100", repository_id="666")).write(theirs)
    first, _ = part_paths(attestation_path(ours), 2)
    _, foreign = part_paths(attestation_path(theirs), 2)
    mixed = tmp_path / "mixed.intoto.sigstore.json"
    mixed.write_bytes(first.read_bytes())
    part_paths(mixed, 2)[1].write_bytes(foreign.read_bytes())
    pins = Pins(repository="alice/docs", owner_id="100", repository_id="200")
    clean = verify_attestation(first, pins=pins, trust=trust, envelope=load_envelope(ours))
    assert clean.ok, clean.to_text()
    report = verify_attestation(mixed, pins=pins, trust=trust, envelope=load_envelope(ours))
    assert report.axis("identity").status == "fail", report.to_text()
    assert "part 2: repository id is '666', expected '200'" in report.axis("identity").detail


def test_the_public_capture_keeps_paths_and_argument_values_out_of_the_log() -> None:
    """Issue 23, hole 5: the predicate is a public log entry, and a two-job release signs a
    capture another job made: it says so, and carries no local path or argument value."""
    from histor_sign.attestation import build_attestation, public_capture

    capture = {"target": {"transport": "stdio", "env": ["API_KEY"],
                          "command": ["/home/ci/work/node_modules/.bin/srv", "--key", "s3cr3t"]},
               "serverInfo": {"name": "srv", "version": "1"}, "fetchedAt": "2026-12-01T00:00:00Z"}
    claimed = public_capture(capture, observed=False)
    assert claimed["target"] == {"transport": "stdio", "env": ["API_KEY"], "command": ["srv"],
                                 "arguments": 2}
    assert claimed["observedBySigner"] is False and claimed["serverInfo"] == capture["serverInfo"]
    assert public_capture(capture, observed=True)["observedBySigner"] is True
    stmt = statement("io.github.alice/docs", WF_ALICE, [{"name": "t", "inputSchema": {}}])
    [payload] = build_attestation(stmt, issuer="iss", identity=WF_ALICE, capture=claimed)
    assert b"s3cr3t" not in payload and b"/home/ci" not in payload
    url = public_capture({"target": {"transport": "http", "url": "https://h/mcp"}}, observed=True)
    assert url["target"] == {"transport": "http", "url": "https://h/mcp"}
