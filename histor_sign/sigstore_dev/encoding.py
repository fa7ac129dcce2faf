"""Byte-level encodings the fake services need: DER snippets, key ids, base64."""

from __future__ import annotations

import base64
import datetime as dt
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


# ---------------------------------------------------------------------- minimal DER
# Enough DER to read an RFC 3161 request and write a time-stamp token; cryptography has no
# CMS SignedData builder for arbitrary content types (id-ct-TSTInfo).


def der_tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + der_length(len(content)) + content


def der_sequence(*items: bytes) -> bytes:
    return der_tlv(0x30, b"".join(items))


def der_set_of(*items: bytes) -> bytes:
    """A DER SET OF: members sorted by their encodings (X.690 §11.6)."""
    return der_tlv(0x31, b"".join(sorted(items)))


def der_integer(value: int) -> bytes:
    """Minimal two's-complement INTEGER (negative values too: -128 is one byte)."""
    bits = value.bit_length() if value >= 0 else (~value).bit_length()
    raw = value.to_bytes(bits // 8 + 1, "big", signed=True)
    return der_tlv(0x02, raw)


def der_oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    out = bytearray()
    for arc in [arcs[0] * 40 + arcs[1], *arcs[2:]]:
        chunk = [arc & 0x7F]
        arc >>= 7
        while arc:
            chunk.append(0x80 | (arc & 0x7F))
            arc >>= 7
        out += bytes(reversed(chunk))
    return der_tlv(0x06, bytes(out))


def der_generalized_time(when: dt.datetime) -> bytes:
    return der_tlv(0x18, when.astimezone(dt.UTC).strftime("%Y%m%d%H%M%SZ").encode())


def der_read(data: bytes, pos: int = 0) -> tuple[int, bytes, int]:
    """One TLV at ``pos``: (tag, content, position after it); ``ValueError`` if malformed."""
    if pos + 2 > len(data):
        raise ValueError("truncated DER")
    tag, first = data[pos], data[pos + 1]
    pos += 2
    if first & 0x80:
        count = first & 0x7F
        if count == 0 or count > 4 or pos + count > len(data):
            raise ValueError("bad DER length")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    else:
        length = first
    if pos + length > len(data):
        raise ValueError("truncated DER")
    return tag, data[pos:pos + length], pos + length


def der_children(content: bytes) -> list[tuple[int, bytes, bytes]]:
    """The (tag, content, full encoding) members of a constructed value's content."""
    out, pos = [], 0
    while pos < len(content):
        tag, inner, end = der_read(content, pos)
        out.append((tag, inner, content[pos:end]))
        pos = end
    return out
