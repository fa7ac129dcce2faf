"""``dev-sigstore --state DIR``: keep the instance's keys, certificates and log across
restarts, so a chain of releases (tag to tag) can be rehearsed on one trust root.

``DIR/dev-sigstore.state.json`` (``0600``: it holds private keys, of an UNTRUSTED test
instance) records the CA, CT, log, timestamp-authority and token-issuer keys (PKCS#8 PEM),
the CA and TSA certificates (PEM) and the log's leaf hashes. It is written when the instance
starts and after every log entry, through the one checked writer.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from histor_sign._atomic import write_atomic

if TYPE_CHECKING:
    from histor_sign.sigstore_dev.fulcio import CertificateAuthority
    from histor_sign.sigstore_dev.oidc import TokenIssuer
    from histor_sign.sigstore_dev.rekor import TransparencyLog
    from histor_sign.sigstore_dev.tsa import TimestampAuthority

STATE_FILE = "dev-sigstore.state.json"
STATE_TYPE = "histor.dev-sigstore-state/v1"


class KeptParts(Protocol):
    """What a state file keeps: the parts of a running instance (``LocalSigstore`` has
    them), named structurally so this module need not know the instance that uses it."""

    ca: CertificateAuthority
    log: TransparencyLog
    tokens: TokenIssuer
    tsa: TimestampAuthority | None


def _key_pem(key: Any) -> str:
    data: bytes = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
    return data.decode()


def _key(pem: str) -> Any:
    return serialization.load_pem_private_key(pem.encode(), password=None)


def _cert_pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _cert(pem: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(pem.encode())


def save(instance: KeptParts, directory: Path) -> None:
    """Write the state of ``instance`` into ``directory`` (atomically, ``0600``)."""
    ca, log, tsa = instance.ca, instance.log, instance.tsa
    doc: dict[str, Any] = {
        "type": STATE_TYPE,
        "notBefore": ca.not_before.isoformat(),
        "ca": {"root": _key_pem(ca.root_key), "intermediate": _key_pem(ca.intermediate_key),
               "ct": _key_pem(ca.ct_key), "rootCert": _cert_pem(ca.root_cert),
               "intermediateCert": _cert_pem(ca.intermediate_cert)},
        "log": {"version": log.version, "key": _key_pem(log.key),
                "leaves": [leaf.hex() for leaf in log.tree.snapshot()]},
        "tokens": _key_pem(instance.tokens.key),
        "tsa": None if tsa is None else {
            "root": _key_pem(tsa.root_key), "key": _key_pem(tsa.key),
            "rootCert": _cert_pem(tsa.root_cert), "cert": _cert_pem(tsa.cert)},
    }
    write_atomic(directory / STATE_FILE, (json.dumps(doc, indent=1) + "\n").encode(),
                 private=True)


def load(instance: KeptParts, directory: Path) -> bool:
    """Restore ``instance`` from ``directory`` when it holds a state file (True), else leave
    it as created (False). A state of another Rekor version or with/without a timestamp
    authority than asked for is :class:`ValueError`."""
    path = directory / STATE_FILE
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_STATE_BYTES:
            raise ValueError("not a regular file of at most "
                             f"{MAX_STATE_BYTES // (1024 * 1024)} MiB")
        with open(path, "rb") as fh:
            doc = json.loads(fh.read(MAX_STATE_BYTES + 1))
        _restore(instance, path, doc)
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        # a hand-edited or foreign file: one line naming it, never an internal error
        raise ValueError(f"{path} is not a usable dev-sigstore state file "
                         f"({type(exc).__name__}: {str(exc)[:200]})") from None
    return True


#: A state file larger than this is not one ``dev-sigstore`` wrote (its log is bounded).
MAX_STATE_BYTES = 256 * 1024 * 1024


def _restore(instance: KeptParts, path: Path, doc: Any) -> None:
    """Set the parts of ``instance`` from a parsed state document (raises ``ValueError``,
    ``KeyError`` or ``TypeError`` for a document that is not one)."""
    if doc.get("type") != STATE_TYPE:
        raise ValueError(f"{path} is not a dev-sigstore state file")
    ca, log = instance.ca, instance.log
    if doc["log"]["version"] != log.version:
        raise ValueError(f"{path} holds a Rekor v{doc['log']['version']} log, not v{log.version}")
    if (doc["tsa"] is None) != (instance.tsa is None):
        raise ValueError(f"{path} was made {'without' if doc['tsa'] is None else 'with'} a "
                         "timestamp authority: start it with the same timestamp authority "
                         "setting as then")
    ca.not_before = dt.datetime.fromisoformat(doc["notBefore"])
    ca.root_key, ca.intermediate_key = _key(doc["ca"]["root"]), _key(doc["ca"]["intermediate"])
    ca.ct_key = _key(doc["ca"]["ct"])
    ca.root_cert, ca.intermediate_cert = (_cert(doc["ca"]["rootCert"]),
                                          _cert(doc["ca"]["intermediateCert"]))
    log.key = _key(doc["log"]["key"])
    log.tree.restore([bytes.fromhex(h) for h in doc["log"]["leaves"]])
    instance.tokens.key = _key(doc["tokens"])
    if instance.tsa is not None:
        tsa = instance.tsa
        tsa.root_key, tsa.key = _key(doc["tsa"]["root"]), _key(doc["tsa"]["key"])
        tsa.root_cert, tsa.cert = _cert(doc["tsa"]["rootCert"]), _cert(doc["tsa"]["cert"])
        tsa.not_before = ca.not_before
        tsa._serials = itertools.count(int(time.time() * 1000))  # never a serial reused
