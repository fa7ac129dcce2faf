"""Byte-level encodings the fake services need: DER snippets, key ids, base64."""

from __future__ import annotations

import base64
import hashlib

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def spki_der(key: ec.EllipticCurvePublicKey) -> bytes:
    """SubjectPublicKeyInfo DER: what Sigstore key ids and trusted roots are built from."""
    return key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def key_id(key: ec.EllipticCurvePublicKey) -> bytes:
    """SHA-256 of the SPKI: the log id of a Rekor v1 / CT log key."""
    return hashlib.sha256(spki_der(key)).digest()


def der_length(n: int) -> bytes:
    """DER length (long form past 127 bytes, which long workflow URLs need)."""
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def der_utf8_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"\x0c" + der_length(len(raw)) + raw


def der_octet_string(raw: bytes) -> bytes:
    return b"\x04" + der_length(len(raw)) + raw
