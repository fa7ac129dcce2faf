"""Artifacts as attestation subjects: names that say what each is, the digests its ecosystem
uses, built from real artifacts (an ``npm pack`` tarball, a wheel built by pip), and the
attestation's bytes unchanged when no artifact is bound."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
import rfc8785
from artifact_kit import Unavailable, npm_tarball, wheel
from sigstore_testkit import TOOLS_V1, WF_ALICE, statement

from histor_sign._limits import MAX_ARTIFACTS
from histor_sign.artifacts import artifact_subject, artifact_subjects
from histor_sign.attestation import build_attestation, parse_attestation
from histor_sign.canonical import parse_json
from histor_sign.errors import InputError, LimitExceeded, VerificationFailed
from histor_sign.layout import MAX_SUBJECTS
from histor_sign.models import ArtifactSubject

ISSUER = "https://token.actions.githubusercontent.com"
IMAGE = "ghcr.io/acme/search:2.3.0@sha256:" + "ab" * 32


def unsigned_bundle(statement_bytes: bytes) -> dict[str, object]:
    """A bundle shape holding the statement (parsing reads it; nothing here verifies)."""
    return {"dsseEnvelope": {"payloadType": "application/vnd.in-toto+json",
                             "payload": base64.b64encode(statement_bytes).decode()}}


def test_npm_tarball_is_named_by_package_url_with_npm_integrity(tmp_path: Path) -> None:
    try:
        tarball = npm_tarball(tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    subject = artifact_subject(tarball)
    data = tarball.read_bytes()
    assert subject.name == "pkg:npm/%40acme/search@2.3.0"
    assert subject.digest == {"sha256": hashlib.sha256(data).hexdigest(),
                              "sha512": hashlib.sha512(data).hexdigest()}
    assert subject.label == tarball.name


def test_wheel_is_named_by_project_version_and_file(tmp_path: Path) -> None:
    built = wheel(tmp_path)
    subject = artifact_subject(built)
    assert subject.name == f"pkg:pypi/acme-search@2.3.0?file_name={built.name}"
    assert subject.digest == {"sha256": hashlib.sha256(built.read_bytes()).hexdigest()}


def test_oci_image_by_digest_and_plain_file(tmp_path: Path) -> None:
    image = artifact_subject("oci:" + IMAGE)
    assert image.name == ("pkg:oci/search@sha256%3A" + "ab" * 32
                          + "?repository_url=ghcr.io/acme/search")
    assert image.digest == {"sha256": "ab" * 32}
    other = tmp_path / "server.tar.zst"
    other.write_bytes(b"binary")
    assert artifact_subject(other).name == "pkg:generic/server.tar.zst"
    with pytest.raises(InputError, match="a tag alone names no content"):
        artifact_subject("oci:ghcr.io/acme/search:2.3.0")
    with pytest.raises(InputError, match="not a regular file"):
        artifact_subject(tmp_path / "missing.whl")


def test_duplicates_and_too_many_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="given twice"):
        artifact_subjects(["oci:" + IMAGE, "oci:" + IMAGE])
    many = [ArtifactSubject(f"pkg:generic/f{i}", {"sha256": f"{i:064x}"})
            for i in range(MAX_ARTIFACTS + 1)]
    with pytest.raises(LimitExceeded):
        artifact_subjects(many)
    with pytest.raises(InputError, match="sha256"):
        ArtifactSubject("pkg:generic/x", {"sha512": "00" * 64})
    with pytest.raises(InputError, match="package URL"):
        ArtifactSubject("tool:x", {"sha256": "00" * 32})


def test_attestation_bytes_are_unchanged_without_artifacts_and_carry_them_with() -> None:
    stmt = statement("io.github.alice/docs", WF_ALICE, TOOLS_V1)
    plain = build_attestation(stmt, issuer=ISSUER, identity=WF_ALICE)
    assert build_attestation(stmt, issuer=ISSUER, identity=WF_ALICE, artifacts=()) == plain
    image = artifact_subject("oci:" + IMAGE)
    (bound,) = build_attestation(stmt, issuer=ISSUER, identity=WF_ALICE, artifacts=[image])
    document = parse_json(bound, "statement")
    assert isinstance(document, dict)
    assert document["subject"][1] == image.to_json()  # right after the manifest
    parsed = parse_attestation([unsigned_bundle(bound)], "att")
    assert parsed.artifacts == (image,)
    assert parsed.statement == stmt
    assert parse_attestation([unsigned_bundle(plain[0])], "att").artifacts == ()


def test_every_part_names_the_artifacts_and_parts_must_agree() -> None:
    tools = [{"name": f"t{i:04d}", "description": "d", "inputSchema": {"type": "object"}}
             for i in range(MAX_SUBJECTS)]
    stmt = statement("io.github.alice/docs", WF_ALICE, tools)
    image = artifact_subject("oci:" + IMAGE)
    parts = build_attestation(stmt, issuer=ISSUER, identity=WF_ALICE, artifacts=[image])
    assert len(parts) == 2
    for part in parts:
        document = parse_json(part, "part")
        assert isinstance(document, dict)
        assert len(document["subject"]) <= MAX_SUBJECTS
        assert image.to_json() in document["subject"]
    parsed = parse_attestation([unsigned_bundle(p) for p in parts], "att")
    assert parsed.artifacts == (image,) and len(parsed.statement.tool_digests) == MAX_SUBJECTS
    mixed = [unsigned_bundle(parts[0]), unsigned_bundle(parts[1])]
    doc = parse_json(parts[1], "part")
    assert isinstance(doc, dict)
    doc["subject"] = [s for s in doc["subject"] if s != image.to_json()]
    mixed[1] = unsigned_bundle(rfc8785.dumps(doc))
    with pytest.raises(VerificationFailed, match="different artifacts"):
        parse_attestation(mixed, "att")
