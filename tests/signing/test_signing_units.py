"""Small pure pieces of signing: output names, the Merkle tree, token identities, the local
TSA and Rekor v2 log ids."""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

import pytest

from histor_sign.layout import companion_paths
from histor_sign.sigstore_dev.merkle import MerkleTree, root_from_path
from histor_sign.sigstore_dev.oidc import WorkflowIdentity
from histor_sign.sigstore_dev.tsa import TimestampAuthority


@pytest.mark.parametrize(
    ("output", "statement", "bundle"),
    [
        ("release.envelope.json", "release.statement.json", "release.sigstore.json"),
        ("out/x.envelope.json", "out/x.statement.json", "out/x.sigstore.json"),
        ("signed.json", "signed.statement.json", "signed.sigstore.json"),
        ("signed", "signed.statement.json", "signed.sigstore.json"),
    ],
)
def test_companion_paths(output: str, statement: str, bundle: str) -> None:
    assert companion_paths(output) == (Path(statement), Path(bundle))


def test_merkle_proofs_verify_for_every_size() -> None:
    tree = MerkleTree()
    leaves = [f"entry {i}".encode() for i in range(17)]
    for i, leaf in enumerate(leaves):
        index, size, root, path = tree.append(leaf)
        assert (index, size) == (i, i + 1)
        assert root_from_path(leaf, index, size, path) == root
    assert root_from_path(leaves[0], 0, 1, []) == hashlib.sha256(b"\0" + leaves[0]).digest()


def test_workflow_identity_parsing() -> None:
    who = WorkflowIdentity.parse(
        "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/v1",
        repository="bob/app",
    )
    assert (who.repository, who.owner, who.ref) == ("bob/app", "bob", "refs/tags/v1")
    assert who.job_workflow_ref == "alice/docs/.github/workflows/sign.yml@refs/tags/v1"
    with pytest.raises(ValueError, match="not a GitHub workflow identity"):
        WorkflowIdentity.parse("alice@example.com")


def test_obtain_identity_then_sign(tmp_path: Path) -> None:
    """Release flow: learn the workflow identity from the token, build, then sign."""
    from sigstore_testkit import TOOLS_V1, WF_ALICE, statement

    from histor_sign._sigstore_trust import Trust
    from histor_sign.signing import obtain_identity, sign_statement
    from histor_sign.sigstore_dev import LocalSigstore

    with LocalSigstore(directory=tmp_path) as inst:
        who = obtain_identity(inst.mint_token(WF_ALICE))
        assert who.identity == WF_ALICE
        stmt = statement("io.github.alice/docs", who.identity, TOOLS_V1)
        signed = sign_statement(
            stmt, trust=Trust.from_trust_config(inst.trust_config_path), token_identity=who
        )
    assert signed.envelope.identity == WF_ALICE
    assert signed.envelope.transparency_log.log_index == 1  # the default first index
    assert signed.statement_bytes == signed.envelope.signed_bytes()


def _tsa() -> TimestampAuthority:
    return TimestampAuthority("test org", dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))


@pytest.mark.parametrize("algorithm", ["SHA256", "SHA512"])
def test_tsa_token_verifies_with_rfc3161_client(algorithm: str) -> None:
    from rfc3161_client import (
        TimestampRequestBuilder,
        VerificationError,
        VerifierBuilder,
        decode_timestamp_response,
    )
    from rfc3161_client.base import HashAlgorithm

    tsa = _tsa()
    request = (TimestampRequestBuilder().hash_algorithm(HashAlgorithm[algorithm])
               .data(b"signature bytes").nonce(nonce=True).build())
    response = decode_timestamp_response(tsa.respond(request.as_bytes()))
    verifier = (VerifierBuilder().tsa_certificate(tsa.cert)
                .add_root_certificate(tsa.root_cert).nonce(request.nonce).build())
    assert verifier.verify_message(response, b"signature bytes")
    with pytest.raises(VerificationError, match="Mismatch"):
        verifier.verify_message(response, b"other bytes")
    other = _tsa()  # same token, another TSA's root: the chain must not verify
    with pytest.raises(VerificationError):
        (VerifierBuilder().tsa_certificate(other.cert)
         .add_root_certificate(other.root_cert).build()
         .verify_message(response, b"signature bytes"))


@pytest.mark.parametrize(
    ("request_der", "needle"),
    [
        (b"", "truncated"),
        (b"\x30\x05\x02\x01\x01", "truncated"),
        (b"\x04\x00", "SEQUENCE"),
        (b"\x30\x03\x02\x01\x02", "version"),
        (b"\x30\x03\x02\x01\x01", "version"),  # no messageImprint
        # sha1 imprint: not offered
        (bytes.fromhex("3021020101301c300706052b0e03021a" "0411" + "00" * 17), "hash"),
        # sha256 OID with a 20-byte digest
        (bytes.fromhex("3027020101302230" "0b0609608648016503040201" "0413" + "00" * 19),
         "digest size"),
    ],
    ids=["empty", "truncated", "not-sequence", "version-2", "no-imprint", "sha1", "short-digest"],
)
def test_tsa_rejects_malformed_requests(request_der: bytes, needle: str) -> None:
    from histor_sign.sigstore_dev.tsa import TimestampRequestError

    with pytest.raises(TimestampRequestError, match=needle):
        _tsa().respond(request_der)


def test_rekor_v2_log_id_is_the_c2sp_key_id() -> None:
    from cryptography.hazmat.primitives import serialization

    from histor_sign.sigstore_dev.rekor import TransparencyLog

    log = TransparencyLog(version=2, first_index=0, name="127.0.0.1:1")
    raw = log.key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
    assert log.log_id == hashlib.sha256(b"127.0.0.1:1\n\x01" + raw).digest()
    assert log.origin == "127.0.0.1:1"
    assert TransparencyLog(version=1, name="h:1").origin == "h:1 - 1"
    with pytest.raises(ValueError, match="1 or 2"):
        TransparencyLog(version=3)
    with pytest.raises(ValueError, match="first_index"):
        TransparencyLog(first_index=-1)
