"""Local Fulcio: a two-level CA that issues short-lived code-signing certificates with an
embedded precertificate SCT, mapping GitHub token claims onto Fulcio's OID extensions.

The SCT matters: the sigstore Verifier requires exactly one, signed by a CT log key from
the trusted root. cryptography cannot build SCT objects, so the certificate is built twice
— once as the precertificate the SCT signs, once with the SCT list as a raw extension —
and the two TBS encodings are checked to agree.
"""

from __future__ import annotations

import datetime as dt
import struct
import time
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

from histor_sign.sigstore_dev.encoding import der_octet_string, der_utf8_string, key_id

SCT_LIST_OID = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
FULCIO_OID_PREFIX = "1.3.6.1.4.1.57264.1."
CERT_LIFETIME = dt.timedelta(minutes=10)


def _gh(path: str) -> str:
    return f"https://github.com/{path}"


def github_extensions(claims: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Fulcio's GitHub Actions claim mapping: legacy raw values (.1–.6), DER UTF8 (.8–.22)."""
    legacy = [
        ("1", claims["iss"]),
        ("2", claims["event_name"]),
        ("3", claims["sha"]),
        ("4", claims["workflow"]),
        ("5", claims["repository"]),
        ("6", claims["ref"]),
    ]
    v2 = [
        ("8", claims["iss"]),
        ("9", _gh(claims["job_workflow_ref"])),
        ("10", claims["job_workflow_sha"]),
        ("11", claims["runner_environment"]),
        ("12", _gh(claims["repository"])),
        ("13", claims["sha"]),
        ("14", claims["ref"]),
        ("15", claims["repository_id"]),
        ("16", _gh(claims["repository_owner"])),
        ("17", claims["repository_owner_id"]),
        ("18", _gh(claims["workflow_ref"])),
        ("19", claims["workflow_sha"]),
        ("20", claims["event_name"]),
        ("21", _gh(f"{claims['repository']}/actions/runs/{claims['run_id']}"
                   f"/attempts/{claims['run_attempt']}")),
        ("22", claims["repository_visibility"]),
    ]
    return [(n, str(v).encode()) for n, v in legacy] + [
        (n, der_utf8_string(str(v))) for n, v in v2
    ]


class CertificateAuthority:
    """Root + intermediate CA and the CT log key that signs SCTs."""

    def __init__(self, organization: str, not_before: dt.datetime) -> None:
        self.organization = organization
        self.not_before = not_before
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        self.intermediate_key = ec.generate_private_key(ec.SECP256R1())
        self.ct_key = ec.generate_private_key(ec.SECP256R1())
        self.root_cert = self._ca_cert("root", self.root_key, self.root_key, None)
        self.intermediate_cert = self._ca_cert(
            "intermediate", self.intermediate_key, self.root_key, self.root_cert
        )

    def _ca_cert(
        self,
        role: str,
        key: ec.EllipticCurvePrivateKey,
        signer_key: ec.EllipticCurvePrivateKey,
        signer_cert: x509.Certificate | None,
    ) -> x509.Certificate:
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, self.organization),
                x509.NameAttribute(NameOID.COMMON_NAME, f"dev-sigstore {role}"),
            ]
        )
        return (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(signer_cert.subject if signer_cert else name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(self.not_before)
            .not_valid_after(self.not_before + dt.timedelta(days=3650))
            .add_extension(
                x509.BasicConstraints(ca=True, path_length=None if signer_cert is None else 0),
                critical=True,
            )
            .add_extension(
                x509.KeyUsage(
                    digital_signature=False, content_commitment=False, key_encipherment=False,
                    data_encipherment=False, key_agreement=False, key_cert_sign=True,
                    crl_sign=True, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(signer_key.public_key()), False
            )
            .sign(signer_key, hashes.SHA256())
        )

    def issue(self, csr_pem: bytes, claims: dict[str, Any]) -> list[str]:
        """Certificate chain (PEM leaf, intermediate, root) for a verified token's claims."""
        csr = x509.load_pem_x509_csr(csr_pem)
        if not csr.is_signature_valid:
            raise ValueError("CSR proof of possession failed")
        public_key = csr.public_key()
        if not isinstance(public_key, ec.EllipticCurvePublicKey):
            raise ValueError("only ECDSA keys are supported")
        now = dt.datetime.now(dt.UTC)
        serial = x509.random_serial_number()

        def builder() -> x509.CertificateBuilder:
            b = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([]))
                .issuer_name(self.intermediate_cert.subject)
                .public_key(public_key)
                .serial_number(serial)
                .not_valid_before(now - dt.timedelta(seconds=5))
                .not_valid_after(now + CERT_LIFETIME)
                .add_extension(
                    x509.KeyUsage(True, False, False, False, False, False, False, False, False),
                    critical=True,
                )
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), False)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), False)
                .add_extension(
                    x509.AuthorityKeyIdentifier.from_issuer_public_key(
                        self.intermediate_key.public_key()
                    ),
                    False,
                )
                .add_extension(
                    x509.SubjectAlternativeName(
                        [x509.UniformResourceIdentifier(_gh(claims["job_workflow_ref"]))]
                    ),
                    critical=True,
                )
            )
            for number, value in github_extensions(claims):
                oid = ObjectIdentifier(FULCIO_OID_PREFIX + number)
                b = b.add_extension(x509.UnrecognizedExtension(oid, value), critical=False)
            return b

        precert = builder().sign(self.intermediate_key, hashes.SHA256())
        tbs = precert.tbs_certificate_bytes
        sct_list = self._sct_list(tbs)
        cert = (
            builder()
            .add_extension(
                x509.UnrecognizedExtension(SCT_LIST_OID, der_octet_string(sct_list)), False
            )
            .sign(self.intermediate_key, hashes.SHA256())
        )
        if cert.tbs_precertificate_bytes != tbs:
            raise RuntimeError("precertificate TBS mismatch")
        return [
            c.public_bytes(serialization.Encoding.PEM).decode()
            for c in (cert, self.intermediate_cert, self.root_cert)
        ]

    def _sct_list(self, precert_tbs: bytes) -> bytes:
        """A one-entry SignedCertificateTimestampList over the precertificate (RFC 6962 §3.2)."""
        timestamp_ms = int(time.time() * 1000)
        issuer_key_hash = key_id(self.intermediate_key.public_key())
        signed = (
            struct.pack("!BBQH", 0, 0, timestamp_ms, 1)
            + issuer_key_hash
            + len(precert_tbs).to_bytes(3, "big")
            + precert_tbs
            + struct.pack("!H", 0)
        )
        signature = self.ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
        sct = (
            b"\x00"
            + key_id(self.ct_key.public_key())
            + struct.pack("!QH", timestamp_ms, 0)
            + b"\x04\x03"  # sha256 / ecdsa
            + struct.pack("!H", len(signature))
            + signature
        )
        return struct.pack("!HH", len(sct) + 2, len(sct)) + sct
