"""Certificate facts read from real public Sigstore bundles, and the strict UTF8String read.

Expected values are the ones documented for each bundle in tests/data/sigstore/README.md
(taken from the bundles' provenance, not from this code)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat import asn1
from hypothesis import given, settings
from hypothesis import strategies as st
from sigstore_testkit import DATA

from histor_sign.models import GITHUB_ACTIONS_ISSUER
from histor_sign.verification._certificate import FULCIO_OID, _der_utf8_string, certificate_facts


def _leaf(bundle: Path) -> x509.Certificate:
    material = json.loads(bundle.read_text())["verificationMaterial"]
    raw = (material.get("certificate") or material["x509CertificateChain"]["certificates"][0])
    return x509.load_der_x509_certificate(base64.b64decode(raw["rawBytes"]))


BUNDLES = {
    "prod-github-rfc8785/rfc8785-0.1.2-py3-none-any.whl.sigstore.json": (
        "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2",
        GITHUB_ACTIONS_ISSUER, "trailofbits/rfc8785.py", "refs/tags/v0.1.2", "trailofbits"),
    "bundles/pypi_attestations-0.0.19.tar.gz.sigstore.json": (
        "https://github.com/trailofbits/pypi-attestations/.github/workflows/release.yml@refs/tags/v0.0.19",
        GITHUB_ACTIONS_ISSUER, "trailofbits/pypi-attestations", "refs/tags/v0.0.19", "trailofbits"),
    "bundles/a.txt.dsse.sigstore.json": (
        "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/"
        "workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main",
        GITHUB_ACTIONS_ISSUER, "sigstore-conformance/extremely-dangerous-public-oidc-beacon",
        "refs/heads/main", "sigstore-conformance"),
    "bundles/staging-rekor-v2.txt.sigstore.json": (
        "jku@goto.fi", "https://github.com/login/oauth", None, None, None),
}


@pytest.mark.parametrize("name", sorted(BUNDLES))
def test_facts_of_real_bundles(name: str) -> None:
    identity, issuer, repository, ref, owner = BUNDLES[name]
    cert = _leaf(DATA / name)
    facts = certificate_facts(cert)
    assert facts.identity == identity
    assert facts.issuer == issuer
    assert facts.repository == repository
    assert facts.ref == ref
    assert facts.owners() == ([owner, owner] if owner else [])
    # every Fulcio extension in the certificate was read; none silently dropped
    fulcio = [e for e in cert.extensions if e.oid.dotted_string.startswith(FULCIO_OID)]
    assert len(facts.extensions) == len(fulcio) > 0
    if owner:  # legacy (.1, .5, .6) and current (.8, .12, .14) extensions agree
        assert facts.ext("1") == facts.ext("8") == issuer
        assert facts.ext("6") == facts.ext("14") == ref
        assert facts.ext("12") == f"https://github.com/{repository}"


def test_numeric_ids_of_the_production_bundle() -> None:
    facts = certificate_facts(_leaf(DATA / "prod-github-rfc8785/rfc8785-0.1.2-py3-none-any.whl.sigstore.json"))
    assert (facts.owner_id, facts.repository_id) == ("2314423", "768213997")


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_utf8_string_round_trip(text: str) -> None:
    try:
        der = asn1.encode_der(text)
    except (ValueError, UnicodeEncodeError):  # lone surrogates have no UTF-8 form
        return
    assert _der_utf8_string(der) == text


def test_long_form_lengths() -> None:
    for size in (127, 128, 255, 256, 70_000):
        text = "é" * size
        body = text.encode()
        n = len(body)
        length = bytes([n]) if n < 128 else bytes([0x80 | ((n.bit_length() + 7) // 8)]) + n.to_bytes((n.bit_length() + 7) // 8, "big")
        assert _der_utf8_string(b"\x0c" + length + body) == text


@pytest.mark.parametrize(
    "der",
    [
        b"",
        b"\x0c",
        b"\x13\x03abc",        # PrintableString, not UTF8String
        b"\x16\x03abc",        # IA5String
        b"\x0c\x04abc",        # length runs past the end
        b"\x0c\x03abcd",       # trailing byte
        b"\x0c\x81\x03abc",    # long form for a short length: BER, not DER
        b"\x0c\x02\xff\xfe",   # not UTF-8
        b"\x0c\x03\xed\xa0\x80",  # UTF-8-encoded surrogate
        b"\x2c\x05\x0c\x03abc",   # constructed string
    ],
)
def test_anything_but_one_der_utf8_string_is_absent(der: bytes) -> None:
    assert _der_utf8_string(der) is None
