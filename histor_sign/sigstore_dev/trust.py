"""The local instance's trust material as Sigstore documents (TrustedRoot, SigningConfig,
ClientTrustConfig), and how to recognise it again so it is never mistaken for production.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from histor_sign.sigstore_dev.encoding import b64, key_id, spki_der

TIMESTAMP_PATH = "/api/v1/timestamp"

if TYPE_CHECKING:  # only annotations: verify imports this module for is_dev_trusted_root
    from cryptography import x509

    from histor_sign.sigstore_dev.fulcio import CertificateAuthority
    from histor_sign.sigstore_dev.rekor import TransparencyLog
    from histor_sign.sigstore_dev.tsa import TimestampAuthority

#: Organization name on every local CA certificate; also how we recognise the instance.
DEV_ORGANIZATION = "histor-sign dev-sigstore (UNTRUSTED, local testing only)"
OPERATOR = "dev-sigstore.local"
CLIENT_TRUST_CONFIG_TYPE = "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json"


def _time(value: dt.datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _public_key(key: ec.EllipticCurvePublicKey, start: dt.datetime) -> dict[str, Any]:
    return {
        "rawBytes": b64(spki_der(key)),
        "keyDetails": "PKIX_ECDSA_P256_SHA_256",
        "validFor": {"start": _time(start)},
    }


def _chain(certificates: list[x509.Certificate]) -> dict[str, Any]:
    return {
        "certificates": [
            {"rawBytes": b64(c.public_bytes(serialization.Encoding.DER))} for c in certificates
        ]
    }


def trusted_root(
    url: str,
    ca: CertificateAuthority,
    log: TransparencyLog,
    tsa: TimestampAuthority | None = None,
) -> dict[str, Any]:
    """The TrustedRoot. The log's ``baseUrl`` is the instance URL, which contains the log's
    checkpoint signer name (the baseUrl's host, without the port), as @sigstore/verify requires."""
    start = ca.not_before
    if log.name not in url:
        raise ValueError(f"log name {log.name!r} does not occur in the log URL {url!r}")
    return {
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [
            {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": {
                    "rawBytes": b64(log.public_key_der),
                    "keyDetails": log.key_details,
                    "validFor": {"start": _time(start)},
                },
                "logId": {"keyId": b64(log.log_id)},
            }
        ],
        "certificateAuthorities": [
            {
                "subject": {"organization": ca.organization, "commonName": "dev-sigstore root"},
                "uri": url,
                "certChain": _chain([ca.intermediate_cert, ca.root_cert]),
                "validFor": {"start": _time(start)},
            }
        ],
        "ctlogs": [
            {
                "baseUrl": url,
                "hashAlgorithm": "SHA2_256",
                "publicKey": _public_key(ca.ct_key.public_key(), start),
                "logId": {"keyId": b64(key_id(ca.ct_key.public_key()))},
            }
        ],
        "timestampAuthorities": [] if tsa is None else [
            {
                "subject": {"organization": ca.organization, "commonName": "dev-sigstore tsa"},
                "uri": url + TIMESTAMP_PATH,
                "certChain": _chain(tsa.chain),
                "validFor": {"start": _time(start)},
            }
        ],
    }


def signing_config(
    url: str, start: dt.datetime, *, rekor_version: int = 1, tsa: bool = False
) -> dict[str, Any]:
    def service(endpoint: str, version: int = 1) -> list[dict[str, Any]]:
        return [
            {
                "url": endpoint,
                "majorApiVersion": version,
                "operator": OPERATOR,
                "validFor": {"start": _time(start)},
            }
        ]

    return {
        "mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json",
        "caUrls": service(url),
        "oidcUrls": service(url),
        "rekorTlogUrls": service(url, rekor_version),
        "tsaUrls": service(url + TIMESTAMP_PATH) if tsa else [],
        "rekorTlogConfig": {"selector": "ANY"},
        "tsaConfig": {"selector": "ANY"},
    }


def client_trust_config(
    url: str,
    ca: CertificateAuthority,
    log: TransparencyLog,
    tsa: TimestampAuthority | None = None,
) -> dict[str, Any]:
    return {
        "mediaType": CLIENT_TRUST_CONFIG_TYPE,
        "trustedRoot": trusted_root(url, ca, log, tsa),
        "signingConfig": signing_config(
            url, ca.not_before, rekor_version=log.version, tsa=tsa is not None
        ),
    }


def is_dev_trusted_root(document: Any) -> bool:
    """True if a TrustedRoot JSON document names the local instance's CA."""
    if not isinstance(document, dict):
        return False
    authorities = document.get("certificateAuthorities")
    if not isinstance(authorities, list):
        return False
    return any(
        isinstance(a, dict)
        and isinstance(a.get("subject"), dict)
        and a["subject"].get("organization") == DEV_ORGANIZATION
        for a in authorities
    )
