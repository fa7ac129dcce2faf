"""Where a server's revision chain is kept, so the next release and every client find it.

The one documented layout, under a ``revisions`` directory (the action commits it to the
``histor-revisions`` branch, which anyone can read without credentials)::

    revisions/<server name>/latest.envelope.json     the newest signed revision
    revisions/<server name>/<n>.envelope.json        revision n, never overwritten
    revisions/<server name>/<n>.tools.snapshot.json  the tools revision n signed

``<server name>`` is the registry name as a path (``io.github.owner/name``); names that
could leave the directory are refused. A release finds its previous revision in
``latest.envelope.json`` (none: the first release) and publishes the fresh one there; a
client reads the same file, from a checkout or over HTTPS (:func:`fetch_envelope`). Nothing
here trusts what it finds: the envelope is verified by the release (chain) or the client.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from urllib.parse import urlsplit

from histor_sign._internal.atomic import write_all_atomic
from histor_sign._internal.limits import DEFAULT_MAX_RECEIVED_BYTES, DEFAULT_TIMEOUT
from histor_sign._internal.untrusted import printable
from histor_sign.errors import FetchError, InputError, LimitExceeded, UsageError

LATEST = "latest.envelope.json"
_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def chain_dir(root: str | Path, server: str) -> Path:
    """The directory of ``server``'s chain under ``root``; refuses names that are not a plain
    relative path (``..``, absolute, empty or odd segments)."""
    segments = server.split("/")
    if not all(_SEGMENT.fullmatch(s) and ".." not in s for s in segments):
        raise InputError(
            f"`server` {printable(server)!r} cannot name a revisions directory (letters, "
            "digits, '.', '_', '-' and '/' between segments only)",
            param="server",
        )
    return Path(root).joinpath(*segments)


def latest_envelope(root: str | Path, server: str) -> Path | None:
    """``latest.envelope.json`` of ``server`` under ``root``, or None before the first release."""
    path = chain_dir(root, server) / LATEST
    return path if path.is_file() else None


def refuse_published(root: str | Path, server: str, revision: int) -> None:
    """Raise if revision ``revision`` of ``server`` is already published under ``root``."""
    numbered = chain_dir(root, server) / f"{revision}.envelope.json"
    if numbered.exists():
        raise InputError(
            f"revision {revision} of {printable(server)} is already published at {numbered}; "
            "a published revision is never overwritten (chain to the latest: `previous` auto)",
            param="revisions",
        )


def publish(
    root: str | Path, server: str, revision: int, envelope: bytes, snapshot: bytes | None
) -> list[Path]:
    """Write revision ``revision`` of ``server``'s chain: ``<n>.envelope.json``, the snapshot
    it signed and ``latest.envelope.json``, all at once. A revision already published is never
    overwritten (two releases of the same number would fork the chain)."""
    refuse_published(root, server, revision)
    directory = chain_dir(root, server)
    numbered = directory / f"{revision}.envelope.json"
    files = {numbered: envelope, directory / LATEST: envelope}
    if snapshot is not None:
        files[directory / f"{revision}.tools.snapshot.json"] = snapshot
    write_all_atomic(files)
    return list(files)


def is_url(location: str) -> bool:
    """Whether ``location`` names a URL rather than a file."""
    return location.startswith(("https://", "http://"))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def fetch_envelope(
    url: str,
    *,
    max_bytes: int = DEFAULT_MAX_RECEIVED_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
) -> bytes:
    """GET a published envelope: HTTPS only (plain HTTP to loopback, for tests), no
    redirects, no credentials sent, at most ``max_bytes`` bytes and ``timeout`` seconds per
    read. Returns the raw bytes; the caller parses and verifies them."""
    import httpx

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(host)):
        raise UsageError(
            f"`envelope` URL {printable(url)!r} must use https (plain http only to loopback)",
            param="envelope",
        )
    shown = printable(url)
    try:
        with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
            with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
                if response.status_code != 200:
                    raise FetchError(f"{shown}: HTTP {response.status_code} (expected 200)")
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) > max_bytes:
                        raise LimitExceeded(
                            f"{shown}: more than `max_bytes` ({max_bytes}) bytes",
                            limit="max_bytes", value=max_bytes,
                        )
    except httpx.HTTPError as exc:
        raise FetchError(f"{shown}: {type(exc).__name__}: {printable(str(exc))}") from None
    return bytes(data)
