"""Which signers the monitor reads from a log entry, on entry bodies recorded from the
public logs (the ``canonicalizedBody`` of real bundles in tests/data/sigstore): Rekor v1
``hashedrekord`` and ``dsse``, Rekor v2 ``hashedrekord`` 0.0.2, and the shapes built from
them that the public Rekor v1 also logs — a DSSE entry with two signatures, an ``intoto``
entry (0.0.1 and 0.0.2). Every signature is read, not only the first."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from sigstore_testkit import DATA

from histor_sign.canonical import canonical_bytes
from histor_sign.monitor import entry_signers

RFC8785 = DATA / "prod-github-rfc8785" / "rfc8785-0.1.2-py3-none-any.whl.sigstore.json"
PYPI = DATA / "bundles" / "pypi_attestations-0.0.19.tar.gz.sigstore.json"
BEACON = DATA / "bundles" / "a.txt.dsse.sigstore.json"
RFC8785_ID = ("https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml"
              "@refs/tags/v0.1.2")
PYPI_ID = ("https://github.com/trailofbits/pypi-attestations/.github/workflows/release.yml"
           "@refs/tags/v0.0.19")


def body(path: Path) -> dict[str, Any]:
    bundle = json.loads(path.read_text())
    encoded = bundle["verificationMaterial"]["tlogEntries"][0]["canonicalizedBody"]
    return dict(json.loads(base64.b64decode(encoded)))


def identities(doc: dict[str, Any]) -> list[str | None]:
    return [f.identity for f in entry_signers(canonical_bytes(doc))]


def pem_of(path: Path) -> str:
    """The base64 PEM signing certificate a v1 hashedrekord body carries."""
    return str(body(path)["spec"]["signature"]["publicKey"]["content"])


@pytest.mark.parametrize(("path", "identity"), [(RFC8785, RFC8785_ID), (PYPI, PYPI_ID)])
def test_recorded_v1_entries_name_their_signer(path: Path, identity: str) -> None:
    assert identities(body(path)) == [identity]


def test_a_recorded_v2_entry_names_its_signer() -> None:
    (signer,) = identities(body(BEACON))
    assert signer is not None and "sigstore-conformance" in signer


def test_every_signature_of_a_dsse_entry_is_read() -> None:
    doc = body(PYPI)
    first = doc["spec"]["signatures"][0]
    doc["spec"]["signatures"] = [{"signature": first["signature"], "verifier": pem_of(RFC8785)},
                                 first]
    assert identities(doc) == [RFC8785_ID, PYPI_ID]


def test_intoto_entries_are_read() -> None:
    bundle = json.loads(PYPI.read_text())
    envelope = bundle["dsseEnvelope"]
    pem = body(PYPI)["spec"]["signatures"][0]["verifier"]
    v2 = {"apiVersion": "0.0.2", "kind": "intoto", "spec": {"content": {
        "envelope": {"payloadType": envelope["payloadType"],
                     "signatures": [{"sig": s["sig"], "publicKey": pem}
                                    for s in envelope["signatures"]]},
        "hash": {"algorithm": "sha256", "value": "00" * 32},
        "payloadHash": {"algorithm": "sha256", "value": "00" * 32}}}}
    assert identities(v2) == [PYPI_ID]
    v1 = {"apiVersion": "0.0.1", "kind": "intoto", "spec": {
        "content": {"hash": {"algorithm": "sha256", "value": "00" * 32}},
        "publicKey": pem}}
    assert identities(v1) == [PYPI_ID]


def test_entries_without_a_certificate_name_no_signer() -> None:
    doc = body(RFC8785)
    doc["spec"]["signature"]["publicKey"]["content"] = base64.b64encode(
        b"-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n").decode()
    assert identities(doc) == []
    assert identities({"kind": "rpm", "apiVersion": "0.0.1", "spec": {}}) == []
    assert entry_signers(b"not json") == []
