"""A record of signed revisions (and their attestations) that already verified, so a proxy
start need not redo the Sigstore verification (and import sigstore) for the very same inputs.

What is cached is one fact: *these exact inputs verified*. An entry is the SHA-256 of

* the envelope's canonical bytes (RFC 8785 of its JSON form; the envelope parser refuses
  unknown members, so this is every byte the verifier reads), and of the previous
  revision's and the signed tools' when the check includes them; for an attestation
  verified against that envelope, the canonical bytes of every part's bundle (the
  attestation is read from nothing else);
* the pin's complete identity policy (:class:`~histor_sign.verification.policy.Pins`) and
  the whole pin record it came from (repository, workflow, numeric ids, location, trust
  root, revision, yanks: everything the decision reads);
* the bytes of every trusted-root file the verifier could read (a trust config or trusted
  root file; offline production/staging: sigstore's TUF-cached root and the vendored one).
  An online production/staging trust refreshes its root through TUF: its inputs are not
  known before that refresh, so it is never cached;
* the verifying code: this package's version and the size and modification time of every
  module of ``histor_sign`` plus sigstore's version file, so an upgrade or a local edit
  starts afresh.

Sigstore verification is a pure function of those inputs: certificates, log proofs and
timestamps are checked at the log's integrated time, not the clock's. So a hit proves what
a new verification would. Freshness (rollback, fork, chain) is never cached: it is judged
on every use against the pin.

Only successes are recorded. A cache may skip work, never a check the pin file would make:
"whoever can write it can write the pin file anyway" does not hold (a forged line is one
the package's own code computes for an envelope another owner signed), so on every hit the
identity and signer checks are run again on the envelope's certificate, and on each
attestation part's (:func:`~histor_sign.verification.recheck_identity`: the pins, the
``io.github`` namespace owner, the signer named in the envelope, one signer across parts) —
only the signature, log-proof and chain-link cryptography is skipped. The file is consulted
only when it and its directory are owned by the user and writable by no one else (else it
is ignored and never written). Entries are bounded
(:data:`~histor_sign._limits.MAX_VERIFIED_CACHE_ENTRIES`, oldest dropped).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._limits import MAX_TRUST_FILE_BYTES, MAX_VERIFIED_CACHE_ENTRIES
from histor_sign.canonical import canonical_bytes

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.models import Catalog, SignedEnvelope
    from histor_sign.verification.policy import Pins

_FORMAT = "histor-sign verified-revisions v3"
_ACTIVE: ContextVar[VerifiedCache | None] = ContextVar("histor_sign_verified_cache",
                                                       default=None)


def cache_path_for(pin_file: Path) -> Path:
    """Where the cache of the pin file ``pin_file`` lives: beside it."""
    return pin_file.with_name(pin_file.name + ".verified")


class VerifiedCache:
    """The successful verifications recorded beside one pin file."""

    def __init__(self, pin_file: Path) -> None:
        self.pin_file = pin_file
        self.path = cache_path_for(pin_file)
        self._keys: list[str] | None = None

    # ------------------------------------------------------------------ trust in the file
    def _trusted(self) -> bool:
        """Only the user can have written it: the cache file (when present), the pin file
        and their directory are owned by the user and writable by no one else."""
        if not hasattr(os, "geteuid"):
            return False
        me = os.geteuid()

        def private(st: os.stat_result) -> bool:
            return st.st_uid == me and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)

        try:
            if not (private(self.pin_file.stat()) and private(self.path.parent.stat())):
                return False
            st = self.path.lstat()
        except FileNotFoundError:
            return True  # may be created: its directory is the user's alone
        except OSError:
            return False
        return stat.S_ISREG(st.st_mode) and private(st)

    def _load(self) -> list[str]:
        if self._keys is None:
            self._keys = []
            if self._trusted() and self.path.exists():
                with contextlib.suppress(OSError, ValueError, UnicodeDecodeError):
                    lines = self.path.read_bytes()[: 80 * MAX_VERIFIED_CACHE_ENTRIES + 80]
                    text = lines.decode("ascii").splitlines()
                    if text and text[0] == _FORMAT:
                        self._keys = [k for k in text[1:] if len(k) == 64
                                      and all(c in "0123456789abcdef" for c in k)]
        return self._keys

    def hit(self, key: str) -> bool:
        return key in self._load()

    def add(self, key: str) -> None:
        """Record a success (best effort: a cache that cannot be written is no error)."""
        from histor_sign._atomic import write_atomic

        keys = [k for k in self._load() if k != key] + [key]
        keys = keys[-MAX_VERIFIED_CACHE_ENTRIES:]
        self._keys = keys
        if not self._trusted():
            return
        with contextlib.suppress(Exception):
            write_atomic(self.path, ("\n".join([_FORMAT, *keys]) + "\n").encode("ascii"),
                         private=True)

    # ------------------------------------------------------------------ the key
    def key(self, env: SignedEnvelope, *, pins: Pins, trust: Trust,
            previous: SignedEnvelope | None, tools: Catalog | None,
            pin: Mapping[str, Any] | None = None,
            attestation: Sequence[Mapping[str, Any]] | None = None) -> str | None:
        """The entry for verifying ``env`` with these inputs (``pin``: the pin record's
        JSON form; ``attestation``: the bundles of an attestation verified against
        ``env``, a separate entry from the envelope's own); None when they cannot be known
        without verifying (an online trust root) — then nothing is cached."""
        roots = _root_bytes(trust)
        if roots is None:
            return None
        digest = hashlib.sha256()
        for part in (
            _FORMAT.encode(), _code_identity(), repr(pins).encode(), roots,
            canonical_bytes({"pin": dict(pin) if pin is not None else None,
                             "trust": trust.name()}),
            canonical_bytes(env.to_json()),
            canonical_bytes(previous.to_json()) if previous is not None else b"-",
            _catalog_bytes(tools) if tools is not None else b"-",
            canonical_bytes([dict(b) for b in attestation]) if attestation is not None
            else b"-",
        ):
            digest.update(hashlib.sha256(part).digest())
        return digest.hexdigest()


def _catalog_bytes(tools: Catalog) -> bytes:
    document: Mapping[str, Any] = {
        "shape": tools.shape, "capture": tools.capture,
        "tools": [dict(t.raw) for t in tools.tools],
    }
    return canonical_bytes(document)


def _root_bytes(trust: Trust) -> bytes | None:
    """Every trusted-root file the verifier could read for ``trust``, or None."""
    from histor_sign._sigstore_trust import (
        PRODUCTION,
        STAGING,
        tuf_cached_root_path,
        vendored_root_path,
    )

    paths: list[Path]
    if trust.path is not None:
        paths = [trust.path]
    elif trust.kind in (PRODUCTION, STAGING) and trust.offline:
        cached = tuf_cached_root_path(trust.kind)
        paths = ([cached] if cached is not None else []) + [vendored_root_path(trust.kind)]
    else:
        return None
    out = hashlib.sha256(trust.kind.encode())
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if len(data) > MAX_TRUST_FILE_BYTES:
            return None
        out.update(hashlib.sha256(data).digest())
    return out.digest()


_CODE: bytes | None = None


def _code_identity() -> bytes:
    """This package's version and every module's size and mtime, and sigstore's version
    file: a new or edited verifier never reuses an old verdict."""
    global _CODE
    if _CODE is None:
        import importlib.util

        from histor_sign._version import __version__

        out = hashlib.sha256(__version__.encode())
        root = Path(__file__).resolve().parent
        for dirpath, _dirs, filenames in sorted(os.walk(root)):
            for name in sorted(filenames):
                if name.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, name))
                    out.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
        spec = importlib.util.find_spec("sigstore")
        if spec is not None and spec.origin:
            with contextlib.suppress(OSError):
                out.update(Path(spec.origin).read_bytes())
        _CODE = out.digest()
    return _CODE


def active() -> VerifiedCache | None:
    """The cache the current context verifies with (see :func:`using`), if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def using(cache: VerifiedCache | None) -> Iterator[None]:
    """Verify with ``cache`` inside the block (callers opt in: the proxy does)."""
    token = _ACTIVE.set(cache)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
