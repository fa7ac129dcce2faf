"""Local RFC 3161 timestamp authority: answers ``application/timestamp-query`` requests with
a time-stamp token (CMS SignedData over a TSTInfo), signed by a TSA certificate that chains to
the instance's own TSA root.

Sigstore uses it for *signed time*: sigstore-python asks every ``tsaUrls`` service of the
signing config to timestamp the artifact signature, and the Verifier accepts the token's
``genTime`` as the time the certificate must have been valid at, when a
``timestampAuthorities`` entry of the trusted root verifies it. Rekor v2 entries carry no
integrated time, so with Rekor v2 this is the only source of time.

The token is what RFC 3161 / RFC 5652 ask for and what sigstore's verifier (rfc3161-client on
OpenSSL) checks: status granted, TSTInfo echoing the request's message imprint and nonce, one
SignerInfo identified by issuer and serial, signed attributes content-type, message-digest and
ESS signing-certificate-v2, an ECDSA P-256 signature, and a leaf with a critical
``timeStamping`` extended key usage.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import threading

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from histor_sign.sigstore_dev.encoding import (
    der_children,
    der_generalized_time,
    der_integer,
    der_octet_string,
    der_oid,
    der_read,
    der_sequence,
    der_set_of,
    der_tlv,
)

OID_SIGNED_DATA = "1.2.840.113549.1.7.2"
OID_TST_INFO = "1.2.840.113549.1.9.16.1.4"
OID_CONTENT_TYPE = "1.2.840.113549.1.9.3"
OID_MESSAGE_DIGEST = "1.2.840.113549.1.9.4"
OID_SIGNING_CERTIFICATE_V2 = "1.2.840.113549.1.9.16.2.47"
OID_SHA256 = "2.16.840.1.101.3.4.2.1"
OID_ECDSA_SHA256 = "1.2.840.10045.4.3.2"
#: The policy this TSA stamps under: the one Sigstore's timestamp authority uses, which a
#: local stand-in for it may as well share. Every arc must fit in 31 bits: Go's encoding/asn1
#: (cosign, sigstore-go) reads OID arcs into an ``int`` and rejects a token with a larger one
#: ("base 128 integer too large") — as a 128-bit UUID arc (``2.25.<uuid>``) once did.
POLICY_OID = "1.3.6.1.4.1.57264.2"
#: Hash algorithms a request may use (OID → digest length).
REQUEST_DIGESTS = {
    OID_SHA256: 32,
    "2.16.840.1.101.3.4.2.2": 48,
    "2.16.840.1.101.3.4.2.3": 64,
}


class TimestampRequestError(ValueError):
    """The request is not a well-formed RFC 3161 TimeStampReq this TSA can answer."""


def _oid_text(content: bytes) -> str:
    if not content:
        raise TimestampRequestError("empty OID")
    arcs: list[int] = []
    value = 0
    for byte in content:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(str(a) for a in [first, arcs[0] - 40 * first, *arcs[1:]])


def parse_request(data: bytes) -> tuple[bytes, bytes, int | None]:
    """(hash AlgorithmIdentifier DER, hashed message, nonce) of a DER ``TimeStampReq``."""
    try:
        tag, content, end = der_read(data)
        if tag != 0x30 or end != len(data):
            raise TimestampRequestError("not a DER SEQUENCE")
        members = der_children(content)
        if len(members) < 2 or members[0][0] != 0x02 or members[0][1] != b"\x01":
            raise TimestampRequestError("version must be 1")
        algorithm_der, hashed = _message_imprint(members[1])
        nonce = next(
            (int.from_bytes(inner, "big", signed=True) for t, inner, _ in members[2:] if t == 0x02),
            None,
        )
    except TimestampRequestError:
        raise
    except ValueError as exc:
        raise TimestampRequestError(str(exc)) from None
    return algorithm_der, hashed, nonce


def _message_imprint(member: tuple[int, bytes, bytes]) -> tuple[bytes, bytes]:
    """Step: a ``MessageImprint``'s hash AlgorithmIdentifier DER and its hashed message
    (an algorithm this TSA stamps, with a digest of its size)."""
    imprint = der_children(member[1])
    if member[0] != 0x30 or len(imprint) != 2 or imprint[1][0] != 0x04:
        raise TimestampRequestError("bad messageImprint")
    algorithm_der, hashed = imprint[0][2], imprint[1][1]
    algorithm = der_children(imprint[0][1])
    if not algorithm or algorithm[0][0] != 0x06:
        raise TimestampRequestError("bad hash algorithm")
    oid = _oid_text(algorithm[0][1])
    if REQUEST_DIGESTS.get(oid) != len(hashed):
        raise TimestampRequestError(f"unsupported hash algorithm {oid} or wrong digest size")
    return algorithm_der, hashed


class TimestampAuthority:
    """A TSA root and a time-stamping leaf under it; :meth:`respond` answers requests."""

    def __init__(self, organization: str, not_before: dt.datetime) -> None:
        self.not_before = not_before
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.key = ec.generate_private_key(ec.SECP256R1())
        root_name = _name(organization, "dev-sigstore tsa root")
        self.root_cert = _cert(root_name, root_name, self.root_key.public_key(), self.root_key,
                               not_before, ca=True)
        self.cert = _cert(_name(organization, "dev-sigstore tsa"), root_name,
                          self.key.public_key(), self.root_key, not_before, ca=False)
        self._serials = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def chain(self) -> list[x509.Certificate]:
        """Leaf first, root last: the order a trusted root's ``certChain`` lists them."""
        return [self.cert, self.root_cert]

    def respond(self, request: bytes, *, now: dt.datetime | None = None) -> bytes:
        """A granted DER ``TimeStampResp`` for a DER ``TimeStampReq``."""
        algorithm_der, hashed, nonce = parse_request(request)
        when = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
        with self._lock:
            serial = next(self._serials)
        tst_info = der_sequence(
            der_integer(1),
            der_oid(POLICY_OID),
            der_sequence(algorithm_der, der_octet_string(hashed)),
            der_integer(serial),
            der_generalized_time(when),
            *([der_integer(nonce)] if nonce is not None else []),
            # tsa [0] GeneralName: directoryName [4] (explicit: Name is a CHOICE)
            der_tlv(0xA0, der_tlv(0xA4, self.cert.subject.public_bytes())),
        )
        cert_der = self.cert.public_bytes(serialization.Encoding.DER)
        sha256 = der_sequence(der_oid(OID_SHA256))
        attributes = [
            der_sequence(der_oid(OID_CONTENT_TYPE), der_set_of(der_oid(OID_TST_INFO))),
            der_sequence(
                der_oid(OID_MESSAGE_DIGEST),
                der_set_of(der_octet_string(hashlib.sha256(tst_info).digest())),
            ),
            der_sequence(
                der_oid(OID_SIGNING_CERTIFICATE_V2),
                # SigningCertificateV2 { certs: [ESSCertIDv2 { certHash }] } (sha256 default)
                der_set_of(der_sequence(der_sequence(der_sequence(
                    der_octet_string(hashlib.sha256(cert_der).digest())
                )))),
            ),
        ]
        signed_attributes = der_set_of(*attributes)  # signed as a SET OF (tag 0x31) ...
        signature = self.key.sign(signed_attributes, ec.ECDSA(hashes.SHA256()))
        signer_info = der_sequence(
            der_integer(1),
            der_sequence(self.cert.issuer.public_bytes(), der_integer(self.cert.serial_number)),
            sha256,
            b"\xa0" + signed_attributes[1:],  # ... and stored as [0] IMPLICIT
            der_sequence(der_oid(OID_ECDSA_SHA256)),
            der_octet_string(signature),
        )
        signed_data = der_sequence(
            der_integer(3),
            der_set_of(sha256),
            der_sequence(der_oid(OID_TST_INFO), der_tlv(0xA0, der_octet_string(tst_info))),
            der_tlv(0xA0, cert_der),  # certificates [0] IMPLICIT SET OF: the signing leaf
            der_set_of(signer_info),
        )
        token = der_sequence(der_oid(OID_SIGNED_DATA), der_tlv(0xA0, signed_data))
        return der_sequence(der_sequence(der_integer(0)), token)  # status: granted


def _name(organization: str, common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _cert(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    signer: ec.EllipticCurvePrivateKey,
    not_before: dt.datetime,
    *,
    ca: bool,
) -> x509.Certificate:
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_before + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=0 if ca else None), True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=ca,
                crl_sign=ca, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), False
        )
    )
    if not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True
        )
    return builder.sign(signer, hashes.SHA256())
