"""The local TSA's time-stamp token is read by every parser a Sigstore verifier uses.

OpenSSL (``openssl ts``, rfc3161-client) accepts any valid DER, but Go's ``encoding/asn1`` —
what cosign and sigstore-go parse tokens with — is narrower: an OID arc must fit in 31 bits
and INTEGERs and lengths must be minimal. A token outside that profile is valid DER that the
Go verifiers refuse ("base 128 integer too large"), so these tests check the profile byte by
byte with a walker of their own, and check the token with OpenSSL's strict ``ts -verify``.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from rfc3161_client import TimestampRequestBuilder, decode_timestamp_response

from histor_sign.sigstore_dev.encoding import der_integer, der_oid, der_sequence
from histor_sign.sigstore_dev.tsa import POLICY_OID, TimestampAuthority

GO_INT_MAX = 2**31 - 1  # encoding/asn1 reads OID arcs into an int and caps them here


def _tlv(data: bytes, pos: int) -> tuple[int, bytes, int]:
    """(tag, content, end) with Go's length rules: definite, minimal, no long form < 128."""
    tag, first = data[pos], data[pos + 1]
    assert tag & 0x1F != 0x1F, f"high tag number at {pos}"
    pos += 2
    length = first
    if first & 0x80:
        count = first & 0x7F
        assert 0 < count <= 4, f"indefinite or huge length at {pos}"
        raw = data[pos:pos + count]
        assert raw[0] != 0, f"non-minimal length at {pos}"
        length = int.from_bytes(raw, "big")
        assert length >= 0x80, f"long-form length under 128 at {pos}"
        pos += count
    assert pos + length <= len(data), f"truncated at {pos}"
    return tag, data[pos:pos + length], pos + length


def _oid_arcs(content: bytes) -> list[int]:
    arcs, value, start = [], 0, True
    assert content and not content[-1] & 0x80, "truncated OID"
    for byte in content:
        assert not (start and byte == 0x80), "non-minimal OID arc"
        value = (value << 7) | (byte & 0x7F)
        start = not byte & 0x80
        if start:
            assert value <= GO_INT_MAX, f"OID arc {value} does not fit Go's int"
            arcs.append(value)
            value = 0
    return arcs


def go_profile_violations(der: bytes) -> list[str]:
    """Every place ``der`` leaves the DER subset Go's ``encoding/asn1`` parses (none: [])."""
    problems: list[str] = []

    def walk(data: bytes) -> None:
        pos = 0
        while pos < len(data):
            try:
                tag, content, pos = _tlv(data, pos)
                if tag == 0x06:
                    _oid_arcs(content)
                elif tag == 0x02:
                    assert content, "empty INTEGER"
                    assert not (len(content) > 1 and (
                        (content[0] == 0 and not content[1] & 0x80)
                        or (content[0] == 0xFF and content[1] & 0x80)
                    )), f"non-minimal INTEGER {content.hex()}"
                if tag & 0x20:
                    walk(content)
            except (AssertionError, IndexError) as exc:
                problems.append(str(exc) or "truncated")
                return

    walk(der)
    return problems


def _members(content: bytes) -> list[tuple[int, bytes]]:
    out, pos = [], 0
    while pos < len(content):
        tag, inner, pos = _tlv(content, pos)
        out.append((tag, inner))
    return out


def tst_info_der(response: bytes) -> bytes:
    """The TSTInfo: DER inside the token's eContent OCTET STRING, which a walk of the
    response alone does not enter."""
    token = _members(_tlv(response, 0)[1])[1][1]  # TimeStampResp.timeStampToken
    signed_data = _members(_members(token)[1][1])[0][1]  # ContentInfo.content [0]
    encap = _members(signed_data)[2][1]  # SignedData.encapContentInfo
    return _members(_members(encap)[1][1])[0][1]  # eContent [0] OCTET STRING


def _respond(nonce: bool = True) -> tuple[TimestampAuthority, bytes, bytes]:
    tsa = TimestampAuthority("test org", dt.datetime.now(dt.UTC) - dt.timedelta(hours=1))
    request = TimestampRequestBuilder().data(b"signature bytes").nonce(nonce=nonce).build()
    return tsa, request.as_bytes(), tsa.respond(request.as_bytes())


@pytest.mark.parametrize("nonce", [True, False], ids=["nonce", "no-nonce"])
def test_token_stays_inside_what_go_asn1_parses(nonce: bool) -> None:
    _, _, response = _respond(nonce)
    assert go_profile_violations(response) == []
    assert go_profile_violations(tst_info_der(response)) == []
    tst_info = decode_timestamp_response(response).tst_info
    assert tst_info.policy.dotted_string == POLICY_OID
    assert max(_oid_arcs(der_oid(POLICY_OID)[2:])) <= GO_INT_MAX


@pytest.mark.parametrize(
    ("der", "needle"),
    [
        (der_sequence(der_oid("2.25.230180458384318155446012419616328302651")), "int"),
        (der_sequence(b"\x02\x02\x00\x01"), "non-minimal INTEGER"),
        (der_sequence(b"\x02\x02\xff\x80"), "non-minimal INTEGER"),
        (b"\x30\x81\x03" + der_integer(1), "under 128"),
        (b"\x30\x80" + der_integer(1) + b"\x00\x00", "indefinite"),
        (der_sequence(b"\x06\x03\x2b\x80\x01"), "non-minimal OID"),
        (b"\x30\x05\x02\x01\x01", "truncated"),
    ],
    ids=["uuid-oid-arc", "integer-leading-zero", "integer-leading-ff", "long-form-length",
         "indefinite-length", "oid-arc-0x80", "truncated"],
)
def test_the_profile_check_names_each_class_it_guards(der: bytes, needle: str) -> None:
    problems = go_profile_violations(der)
    assert problems and needle in problems[0]


def test_negative_integers_are_minimal() -> None:
    for value in (-1, -128, -129, -32768, -32769, 0, 127, 128, 2**64):
        encoded = der_integer(value)
        assert go_profile_violations(encoded) == []
        assert int.from_bytes(encoded[2:], "big", signed=True) == value


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_openssl_ts_verify_accepts_the_token(tmp_path: Path) -> None:
    tsa, request, response = _respond()
    files = {"req.der": request, "resp.der": response,
             "root.pem": tsa.root_cert.public_bytes(serialization.Encoding.PEM),
             "leaf.pem": tsa.cert.public_bytes(serialization.Encoding.PEM)}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)

    def verify(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["openssl", "ts", "-verify", "-in", "resp.der", "-CAfile", "root.pem",
             "-untrusted", "leaf.pem", *extra],
            cwd=tmp_path, capture_output=True, text=True, timeout=60,
        )

    done = verify("-queryfile", "req.der")
    assert done.returncode == 0 and "Verification: OK" in done.stdout, done.stderr
    (tmp_path / "other").write_bytes(b"other bytes")  # a token over other data must fail
    assert verify("-data", "other").returncode != 0
