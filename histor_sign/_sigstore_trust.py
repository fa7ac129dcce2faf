"""Which Sigstore instance to trust: production (default), staging, a TrustedRoot file, or
a ClientTrustConfig file (how tests and the offline demo use the local instance).

Production and staging verification with ``offline`` use the trusted roots vendored in
``histor_sign/trust_roots/`` (copies of the roots embedded in sigstore 4.5.1) through
``TrustedRoot.from_file`` — no TUF, no cache directories, no network. Without ``offline``
the root is refreshed through TUF, which picks up key rotations but needs network.

sigstore is imported lazily so the CLI starts fast.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._limits import MAX_TRUST_FILE_BYTES
from histor_sign.canonical import parse_json, read_bytes
from histor_sign.errors import InputError, OperationalError, UsageError

if TYPE_CHECKING:
    from sigstore.models import ClientTrustConfig, TrustedRoot

#: The OIDC issuer of GitHub Actions workflow identities.

PRODUCTION = "production"
STAGING = "staging"
TRUSTED_ROOT = "trusted-root"
TRUST_CONFIG = "trust-config"


def vendored_root_path(name: str) -> Path:
    """Path of a vendored trusted root (``production`` or ``staging``)."""
    return Path(str(resources.files("histor_sign.trust_roots") / f"{name}.trusted_root.json"))


def _ca_certificates(root: Any) -> set[str]:
    if not isinstance(root, dict):
        return set()
    out: set[str] = set()
    for authority in root.get("certificateAuthorities") or []:
        chain = authority.get("certChain", {}) if isinstance(authority, dict) else {}
        for cert in chain.get("certificates", []) if isinstance(chain, dict) else []:
            if isinstance(cert, dict) and isinstance(cert.get("rawBytes"), str):
                out.add(cert["rawBytes"])
    return out


@dataclass(frozen=True)
class LogKey:
    """One transparency log of a trusted root: where it is served, its log id and the key
    that signs its checkpoints (DER SubjectPublicKeyInfo; ``key_details`` as the root names
    it, e.g. ``PKIX_ECDSA_P256_SHA_256`` for Rekor v1, ``PKIX_ED25519`` for v2)."""

    base_url: str
    log_id: bytes
    key_details: str
    public_key: bytes
    #: ``publicKey.validFor.end`` as the root states it (RFC 3339), None while open-ended:
    #: a log whose key validity ended takes no new entries (it is no longer active).
    valid_until: str | None = None

    @property
    def active(self) -> bool:
        """Whether the log still takes entries: its key's validity has not ended."""
        import datetime as dt

        if self.valid_until is None:
            return True
        try:
            end = dt.datetime.fromisoformat(self.valid_until.replace("Z", "+00:00"))
        except ValueError:
            return True  # an unreadable end: watch it rather than pass it over
        if end.tzinfo is None:
            end = end.replace(tzinfo=dt.UTC)
        return end > dt.datetime.now(dt.UTC)

    @property
    def tiled(self) -> bool:
        """Rekor v2 (a tiled log, C2SP tlog-tiles) rather than the v1 API."""
        return self.key_details == "PKIX_ED25519"


def _log_keys(root: Any, source: str) -> list[LogKey]:
    import base64
    import binascii

    logs = root.get("tlogs") if isinstance(root, dict) else None
    if not isinstance(logs, list):
        raise InputError(f"{source}: the trusted root lists no transparency logs (tlogs)")
    out: list[LogKey] = []
    for entry in logs:
        try:
            key = entry["publicKey"]
            valid = key.get("validFor")
            end = valid.get("end") if isinstance(valid, dict) else None
            out.append(LogKey(str(entry["baseUrl"]).rstrip("/"),
                              base64.b64decode(entry["logId"]["keyId"], validate=True),
                              str(key["keyDetails"]),
                              base64.b64decode(key["rawBytes"], validate=True),
                              end if isinstance(end, str) else None))
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise InputError(f"{source}: a transparency log entry of the trusted root is "
                             "malformed") from None
    return out


@dataclass(frozen=True)
class Trust:
    """Which Sigstore instance to sign with and verify against.

    Build it with :meth:`production` (the public-good instance, the default),
    :meth:`staging`, :meth:`from_trusted_root` (verify only) or :meth:`from_trust_config`
    (a private or local instance). ``offline`` production/staging use the trusted roots
    vendored in the package instead of a TUF refresh, so verification needs no network.
    """

    kind: str = PRODUCTION
    path: Path | None = None
    offline: bool = False

    @classmethod
    def production(cls, *, offline: bool = False) -> Trust:
        """The public-good Sigstore instance (root refreshed via TUF unless ``offline``)."""
        return cls(PRODUCTION, None, offline)

    @classmethod
    def staging(cls, *, offline: bool = False) -> Trust:
        """Sigstore's staging instance: for testing, never for releases."""
        return cls(STAGING, None, offline)

    @classmethod
    def from_trusted_root(cls, path: str | Path) -> Trust:
        """A Sigstore TrustedRoot file: enough to verify, not to sign."""
        return cls(TRUSTED_ROOT, Path(path), True)

    @classmethod
    def from_trust_config(cls, path: str | Path) -> Trust:
        """A Sigstore ClientTrustConfig file (trusted root plus signing services)."""
        return cls(TRUST_CONFIG, Path(path), True)

    def with_offline(self) -> Trust:
        """The same instance, verified with the vendored root (no network)."""
        return self if self.offline else replace(self, offline=True)

    # ------------------------------------------------------------------ recorded name
    def name(self) -> str:
        """The instance as one recordable string: ``production``, ``staging``, or
        ``trusted-root:PATH`` / ``trust-config:PATH`` with an absolute path
        (:meth:`from_name` reads it back; ``offline`` is not part of it)."""
        if self.path is None:
            return self.kind
        return f"{self.kind}:{self.path.absolute()}"

    @classmethod
    def from_name(cls, name: str) -> Trust:
        """The instance a :meth:`name` string records; :class:`InputError` otherwise."""
        if name == PRODUCTION:
            return cls.production()
        if name == STAGING:
            return cls.staging()
        kind, _, path = name.partition(":")
        if kind in (TRUSTED_ROOT, TRUST_CONFIG) and path.startswith("/"):
            return (cls.from_trusted_root if kind == TRUSTED_ROOT
                    else cls.from_trust_config)(path)
        raise InputError(f"not a trust root: {name!r} (expected production, staging, "
                         "trusted-root:/PATH or trust-config:/PATH)")

    # ------------------------------------------------------------------ description
    def describe(self) -> str:
        """One line naming the instance, as reports print it."""
        if self.path is not None:
            suffix = " (dev-sigstore, UNTRUSTED)" if self.is_dev_instance() else ""
            return f"{self.kind} {self.path}{suffix}"
        if not self.offline:
            return self.kind
        cached = tuf_cached_root_path(self.kind)
        source = f"sigstore's TUF cache {cached}" if cached else "vendored root"
        return f"{self.kind} (offline, {source})"

    def _root_document(self) -> Any:
        if self.path is None:
            return None
        doc = parse_json(read_bytes(str(self.path), max_bytes=MAX_TRUST_FILE_BYTES), str(self.path))
        if self.kind == TRUST_CONFIG:
            return doc.get("trustedRoot") if isinstance(doc, dict) else None
        return doc

    def transparency_logs(self) -> list[LogKey]:
        """The transparency logs this root trusts (read from the root file, or for
        production/staging from sigstore's TUF cache or the vendored copy)."""
        doc = self._root_document()
        source = str(self.path)
        if doc is None:
            path = tuf_cached_root_path(self.kind) or vendored_root_path(self.kind)
            source = str(path)
            doc = parse_json(read_bytes(source, max_bytes=MAX_TRUST_FILE_BYTES), source)
        return _log_keys(doc, source)

    def is_dev_instance(self) -> bool:
        from histor_sign.sigstore_dev.trust import is_dev_trusted_root

        return is_dev_trusted_root(self._root_document())

    def warning(self) -> str | None:
        """A loud warning when this is not the public-good production instance."""
        if self.kind == PRODUCTION:
            return None
        if self.kind == STAGING:
            return "using Sigstore STAGING: signatures are for testing, not for release"
        doc = self._root_document()
        from histor_sign.sigstore_dev.trust import is_dev_trusted_root

        if is_dev_trusted_root(doc):
            return (
                f"using the LOCAL dev-sigstore instance from {self.path}: UNTRUSTED, for "
                "tests and demos only; anyone can mint identities there"
            )
        production = json.loads(vendored_root_path(PRODUCTION).read_text())
        cas = _ca_certificates(doc)
        if cas and cas <= _ca_certificates(production):
            return None
        return (
            f"using a NON-PRODUCTION Sigstore trust root from {self.path}: signatures are only "
            "as trustworthy as that file"
        )

    # ------------------------------------------------------------------ sigstore objects
    def trusted_root(self) -> TrustedRoot:
        """The TrustedRoot to verify against (no network unless online production/staging).

        A root read from a file is reused while the file is unchanged (same path, size and
        modification time), so a process verifying many documents loads it once."""
        if self.kind in (PRODUCTION, STAGING):
            if self.offline:
                return offline_trusted_root(self.kind)
            return self._tuf_config().trusted_root
        key = self._file_key()
        cached = _ROOTS.get(key) if key is not None else None
        if cached is not None:
            return cached
        root = self._load_trusted_root()
        if key is not None:
            if len(_ROOTS) >= _MAX_CACHED_ROOTS:
                _ROOTS.pop(next(iter(_ROOTS)))
            _ROOTS[key] = root
        return root

    def _file_key(self) -> tuple[str, str, int, int] | None:
        if self.path is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None  # loading reports the problem
        return (self.kind, str(self.path.absolute()), st.st_mtime_ns, st.st_size)

    def _load_trusted_root(self) -> TrustedRoot:
        from sigstore.models import TrustedRoot

        if self.kind == TRUST_CONFIG:
            return self.client_trust_config().trusted_root
        assert self.path is not None
        self._root_document()  # strict JSON + size bound first, for a clear message
        try:
            return TrustedRoot.from_file(str(self.path))
        except Exception as exc:  # pydantic/protobuf/sigstore errors
            raise InputError(f"{self.path}: not a Sigstore trusted root ({_first_line(exc)})") \
                from None

    def client_trust_config(self) -> ClientTrustConfig:
        """The ClientTrustConfig to sign with (signing config + trusted root)."""
        from sigstore.models import ClientTrustConfig

        if self.kind in (PRODUCTION, STAGING):
            return self._tuf_config()
        if self.kind == TRUSTED_ROOT:
            raise UsageError(
                "a trusted root has no signing services; sign with a Sigstore "
                "ClientTrustConfig, staging, or production"
            )
        assert self.path is not None
        document = self._root_document()
        if not isinstance(document, dict):
            raise InputError(f"{self.path}: not a Sigstore ClientTrustConfig (no trustedRoot)")
        try:
            return ClientTrustConfig.from_json(self.path.read_text("utf-8"))
        except Exception as exc:
            raise InputError(
                f"{self.path}: not a Sigstore ClientTrustConfig ({_first_line(exc)})"
            ) from None

    def _tuf_config(self) -> ClientTrustConfig:
        from sigstore.models import ClientTrustConfig

        try:
            if self.kind == STAGING:
                return ClientTrustConfig.staging(offline=self.offline)
            return ClientTrustConfig.production(offline=self.offline)
        except Exception as exc:
            hint = "" if self.offline else "; verify offline to use the vendored root"
            raise OperationalError(
                f"cannot load the Sigstore {self.kind} trust root via TUF "
                f"({_first_line(exc)}){hint}"
            ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


# ---------------------------------------------------------------------- offline roots, staleness
#: Where the vendored roots were copied from, and when: the age check in
#: tests/verification/test_trust_root_staleness.py counts from this date. Refresh both together.
VENDORED_FROM = "sigstore 4.5.1"
VENDORED_ON = "2026-11-29"
#: The TUF repositories whose roots sigstore-python caches (its cache directory names).
TUF_URLS = {
    PRODUCTION: "https://tuf-repo-cdn.sigstore.dev",
    STAGING: "https://tuf-repo-cdn.sigstage.dev",
}
#: Verifier failures caused by trust material the root lacks (a CA, CT log, Rekor or TSA key),
#: as opposed to a bad signature or a mismatched log entry.
_TRUST_MATERIAL_FAILURES = (
    "certificate chain",
    "SCT",
    "checkpoint: invalid signature",
    "checkpoint: Signature not found",
    "keyring",
    "SET: invalid inclusion promise",
    "not enough sources of verified time",
    "no Timestamp Authorities",
)


def tuf_cached_root_path(name: str) -> Path | None:
    """sigstore-python's cached ``trusted_root.json`` for ``production``/``staging``, if any.

    An online ``sigstore`` run (or ``sigstore plumbing update-trust-root``) refreshes it
    through TUF, so after a key rotation it is newer than the root vendored here. Like
    sigstore-python's own offline mode it is read without re-checking TUF signatures: it is
    exactly as trustworthy as the user's cache directory.
    """
    from urllib.parse import quote

    import platformdirs

    base = Path(platformdirs.user_cache_dir("sigstore-python", "sigstore"))
    path = base / "tuf" / quote(TUF_URLS[name], safe="") / "trusted_root.json"
    try:
        if not path.is_file() or path.stat().st_size > MAX_TRUST_FILE_BYTES:
            return None
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return path if isinstance(document, dict) and "tlogs" in document else None


#: Trusted roots read from files, by :meth:`Trust._file_key` (a few at most).
_ROOTS: dict[tuple[str, str, int, int], TrustedRoot] = {}
_MAX_CACHED_ROOTS = 8


def offline_trusted_root(name: str) -> TrustedRoot:
    """The offline root for ``production``/``staging``: sigstore's TUF cache when it holds a
    readable one, else the vendored copy."""
    from sigstore.models import TrustedRoot

    cached = tuf_cached_root_path(name)
    if cached is not None:
        try:
            return TrustedRoot.from_file(str(cached))
        except Exception:  # unreadable cache: the vendored root is known good
            pass
    return TrustedRoot.from_file(str(vendored_root_path(name)))


def stale_root_hint(trust: Trust, failure: str) -> str | None:
    """Why an offline production/staging verification may have failed for want of newer keys.

    Only for the built-in offline roots (a root the caller passed is theirs to refresh), and
    only for failures about trust material, not a signature that does not match.
    """
    if trust.kind not in (PRODUCTION, STAGING) or not trust.offline:
        return None
    if not any(marker in failure for marker in _TRUST_MATERIAL_FAILURES):
        return None
    which = "cached" if tuf_cached_root_path(trust.kind) else "vendored"
    return (
        f"the {which} {trust.kind} trusted root may be out of date: Sigstore may have rotated "
        "keys since; retry online or pass a current trusted root with `trusted_root`"
    )
