"""Where a server's signed revisions are kept, and reading them back with bounds.

One layout serves the publisher and every client. Beside the latest envelope::

    <base>/latest.envelope.json       the newest signed revision
    <base>/<n>.envelope.json          revision n, never overwritten (a client follows a
                                      chain across skipped revisions with it)
    <base>/<n>.tools.snapshot.json    the tools revision n signed (drift triage and the
                                      guard's contract; its digests are checked against the
                                      envelope of revision n). Its surface (instructions,
                                      prompts, resource templates) is NOT signed by the
                                      envelope, which signs tools only
    <base>/<n>.intoto.sigstore.json   the in-toto attestation of revision n (same signer):
                                      the only signature over the surface's digests; further
                                      parts <n>.intoto.<k>.sigstore.json beyond 1,023 tools
    <base>/latest.intoto.sigstore.json  the newest attestation (for cosign and other
                                      verifiers; histor-sign reads the numbered one)
    <base>/<n>.manifest.json          revision n's manifest as canonical bytes: the file
                                      the attestation's ``manifest`` subject names
    <base>/latest.manifest.json       the newest one
    <base>/<n>.yank.envelope.json     the publisher's signed withdrawal of revision n
                                      (:func:`publish_yank`; never overwritten)

Layouts from before attestations were published have no ``*.intoto.*`` files: the surface
of such a revision is unsigned, and clients must say so.

**Publishing** (:func:`publish`, the release action): ``<base>`` is
``revisions/<server name>`` under a directory the action commits to the
``histor-revisions`` branch, which anyone can read without credentials. ``<server name>``
is the registry name as a path (``io.github.owner/name``); names that could leave the
directory are refused. A release finds its previous revision in ``latest.envelope.json``
(none: the first release) and publishes the fresh one there.

**Reading** (:class:`ReleaseLocation`, :func:`fetch_envelope`): a *location* is a local path,
an ``https://`` URL, or an ``http://`` URL on a loopback host (tests and local mirrors). A
location ending in ``.json`` names the latest envelope itself and ``<base>`` is its
directory; any other location is ``<base>``. Every URL goes through one fetch
(:func:`fetch_bytes`): no credentials sent (none in the URL, no netrc; the proxy variables
are honoured as pip and cosign honour them), redirects followed only to https (or to
loopback http when the location itself was loopback http: never from https down to http),
at most ``max_bytes`` bytes, and ``timeout`` seconds per read *and* for the whole request (a
server answering a byte at a time is cut off too). Nothing here trusts what it finds: the
caller parses strictly and verifies before use.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from histor_sign._atomic import (
    AlreadyExists,
    create_exclusive,
    locked_beside,
    locked_directory,
    probe_room,
    write_all_atomic,
    write_atomic,
)
from histor_sign._escape import printable
from histor_sign._limits import DEFAULT_MAX_FILE_BYTES, DEFAULT_TIMEOUT
from histor_sign.canonical import JsonValue, parse_json, read_bytes
from histor_sign.errors import FetchError, InputError, LimitExceeded, UsageError
from histor_sign.layout import (
    ATTESTATION_NAME,
    ENVELOPE_NAME,
    LATEST_NAME,
    MANIFEST_NAME,
    SNAPSHOT_NAME,
    YANK_ATTESTATION_NAME,
    YANK_NAME,
    chain_dir,
    part_addresses,
)

if TYPE_CHECKING:
    import httpx

_MAX_REDIRECTS = 5


class NotPublished(InputError):
    """The location has no file by that name (HTTP 404/410, or no such local file)."""


# --- publishing: the chain directory of a server -------------------------------------


def is_published(path: str | Path) -> bool:
    """Whether a file of a local chain exists. Only a name that is not there is absent: one
    that cannot be looked up (a symbolic link loop, a name too long, no permission) is
    :class:`InputError` naming it, never taken for "not published" (which would start a
    new chain or overwrite a revision)."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return os.path.lexists(path) and _unreadable(path, "a dangling symbolic link")
    except NotADirectoryError:
        return False
    except OSError as exc:
        _unreadable(path, exc.strerror or type(exc).__name__)
    return True


def _unreadable(path: str | Path, reason: str) -> bool:
    raise InputError(f"cannot read {printable(str(path))} in the chain directory: {reason}")


def latest_envelope(root: str | Path, server: str) -> Path | None:
    """``latest.envelope.json`` of ``server`` under ``root``, or None before the first release."""
    path = chain_dir(root, server) / LATEST_NAME
    return path if is_published(path) else None


class ChainReservation:
    """The chain directory of one server, held by this process (:func:`reserve_chain`)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def reserve(self, room: int) -> None:
        """Check that ``room`` bytes can be written into the chain directory (before
        signing): a read-only or full file system is an error naming it."""
        probe_room(self.directory / LATEST_NAME, room, shown=self.directory)


@contextlib.contextmanager
def reserve_chain(root: str | Path, server: str) -> Iterator[ChainReservation]:
    """Hold ``server``'s chain directory under ``root`` for one release or yank, from before
    anything is signed until what was signed is published (the lock discipline of
    :func:`~histor_sign._atomic.locked_directory`, not waited on: a second release or yank
    of the chain fails at once, naming the process that holds it, before it signs). The
    directory is created if needed (and removed again if this run leaves it empty); one
    that cannot be is an error naming it. Inside, a revision number checked free with
    :func:`refuse_published` stays free until this run publishes it."""
    directory = chain_dir(root, server)
    created = [d for d in (directory, *directory.parents) if not os.path.lexists(d)]
    busy = ("the chain directory {shown} is in use by another release or yank ({holder}); "
            "nothing was signed: run again when it is done")
    try:
        with locked_directory(directory, wait=0, busy=busy):
            yield ChainReservation(directory)
    finally:
        for made in created:  # innermost first; only while still empty: nothing published
            try:
                os.rmdir(made)
            except OSError:
                break


def refuse_published(root: str | Path, server: str, revision: int) -> None:
    """Raise if revision ``revision`` of ``server`` is already published under ``root``."""
    numbered = chain_dir(root, server) / ENVELOPE_NAME.format(n=revision)
    if is_published(numbered):
        raise InputError(
            f"revision {revision} of {printable(server)} is already published at {numbered}; "
            "a published revision is never overwritten (chain to the latest: `previous` auto)",
            param="revisions",
        )


def publish(
    root: str | Path,
    server: str,
    revision: int,
    envelope: bytes,
    snapshot: bytes | None,
    attestation: Sequence[bytes] = (),
    manifest: bytes | None = None,
) -> list[Path]:
    """Write revision ``revision`` of ``server``'s chain: ``<n>.envelope.json``,
    ``latest.envelope.json``, the snapshot it signed, the parts of its attestation and the
    manifest's canonical bytes (both as ``<n>.`` and ``latest.``), all at once; the first
    two paths returned are the numbered and the latest envelope. A revision already
    published is never overwritten (two releases of the same number would fork the
    chain)."""

    directory = chain_dir(root, server)
    with locked_directory(directory):  # nested in :func:`reserve_chain` when a release holds it
        refuse_published(root, server, revision)
        return _publish_files(directory, revision, envelope, snapshot, attestation, manifest)


def _publish_files(
    directory: Path, revision: int, envelope: bytes, snapshot: bytes | None,
    attestation: Sequence[bytes], manifest: bytes | None,
) -> list[Path]:
    numbered = directory / ENVELOPE_NAME.format(n=revision)
    files = {numbered: envelope, directory / LATEST_NAME: envelope}
    if snapshot is not None:
        files[directory / SNAPSHOT_NAME.format(n=revision)] = snapshot
    for prefix in (str(revision), "latest"):
        first = ATTESTATION_NAME.format(n=prefix)
        names = part_addresses(first, len(attestation)) if attestation else []
        files.update((directory / name, data) for name, data in zip(names, attestation,
                                                                     strict=True))
        if manifest is not None:
            files[directory / MANIFEST_NAME.format(n=prefix)] = manifest
    write_all_atomic(files)
    return list(files)


def publish_yank(
    root: str | Path, server: str, revision: int, yank: bytes, attestation: bytes
) -> Path:
    """Write the signed yank of revision ``revision`` and its in-toto attestation beside it
    (both or neither); the revision must be published, and a yank already published is
    never overwritten (it cannot be taken back: a client that saw it keeps refusing the
    revision). Returns the yank's path."""
    directory = chain_dir(root, server)
    if not is_published(directory / ENVELOPE_NAME.format(n=revision)):
        raise InputError(
            f"revision {revision} of {printable(server)} is not published in {directory}",
            param="revision",
        )
    path = directory / YANK_NAME.format(n=revision)
    taken = InputError(f"revision {revision} of {printable(server)} is already yanked "
                       f"({path}); a yank is never overwritten", param="revision")
    # Serialised with any other yank of this chain on this machine (so a loser never
    # replaces the winner's attestation); the yank itself is then created exclusively, so
    # even a writer that ignores the lock can never replace a published yank.
    with locked_beside(path):
        if os.path.lexists(path):
            raise taken
        # The attestation first: without its yank it means nothing (a crash leaves an
        # orphan the next yank replaces); the yank's exclusive creation publishes both.
        write_atomic(directory / YANK_ATTESTATION_NAME.format(n=revision), attestation)
        try:
            create_exclusive(path, yank)
        except AlreadyExists:
            raise taken from None
    return path


# --- reading: locations and the one bounded fetch ------------------------------------


def is_url(location: str) -> bool:
    """Whether ``location`` names a URL rather than a file."""
    return location.startswith(("https://", "http://"))


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _checked_url(url: str, param: str) -> str:
    """``url`` if it is https with a host (or http to loopback) and carries no credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if not ((parts.scheme == "https" and host)
            or (parts.scheme == "http" and _is_loopback(host))):
        raise UsageError(
            f"`{param}` must be a file path, an https:// URL, or an http:// URL on a loopback "
            f"host; got {printable(url, 200)!r}",
            param=param,
        )
    if parts.username or parts.password:
        raise UsageError(f"`{param}` must not carry credentials in the URL", param=param)
    return url


def _checked_redirect(origin: str, target: str, shown: str, param: str) -> str:
    """Where a redirect may lead: https anywhere, or plain http to loopback only when the
    location the user gave was itself http on loopback — never from https down to http (a
    TLS downgrade, and a request to local services on behalf of a remote server)."""
    try:
        checked = _checked_url(target, param)
    except UsageError:
        raise InputError(
            f"{shown}: redirects to {printable(target, 200)!r}, which is neither https nor "
            "loopback", param=param,
        ) from None
    if urlsplit(checked).scheme == "http" and urlsplit(origin).scheme != "http":
        raise InputError(
            f"{shown}: redirects from https to plain http ({printable(target, 200)!r}); "
            "a location given as https is only followed over https", param=param,
        )
    return checked


def fetch_bytes(
    url: str,
    *,
    param: str,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
) -> bytes:
    """GET ``url`` (checked as parameter ``param``) with the bounds of the module doc.

    ``timeout`` bounds each read *and* the whole request (connecting, redirects, headers and
    body together): a server that answers a few bytes at a time cannot keep the caller
    waiting longer than ``timeout`` seconds (plus scheduling noise).

    Raises :class:`UsageError` for a URL that is not https/loopback or carries credentials,
    :class:`NotPublished` on HTTP 404/410, :class:`LimitExceeded` past ``max_bytes``,
    :class:`InputError` for a redirect elsewhere, :class:`FetchError` when the network or
    the server fails or the request outlasts ``timeout``. Returns the raw bytes; the caller
    parses and verifies them.
    """
    checked = _checked_url(url, param)
    shown = printable(url, 200)
    outcome: list[bytes | BaseException] = []
    cancel = _Cancel()

    def work() -> None:
        try:
            outcome.append(_fetch(url, checked, shown, param, max_bytes, timeout, cancel))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append(exc)

    # The request runs in a worker so the caller waits at most ``timeout`` in total: httpx
    # bounds each read, not a request (a server dripping header bytes never times out).
    # At the deadline the worker's sockets are shut down, so its blocked read ends too.
    worker = threading.Thread(target=work, name="histor-fetch", daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        cancel.now()
        raise FetchError(f"{shown}: no complete answer within {timeout:g} s (the whole "
                         "request is bounded by the timeout)", param=param)
    result = outcome[0]
    if isinstance(result, BaseException):
        raise result
    return result


class _Cancel:
    """The sockets a fetch opened (seen through httpcore's trace hook), and shutting them
    down from another thread: a read blocked on one of them then returns at once."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._sockets: list[Any] = []
        self._lock = threading.Lock()

    def trace(self, name: str, info: dict[str, Any]) -> None:
        if name.endswith(("connect_tcp.complete", "start_tls.complete")):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                if sock is not None:
                    self._sockets.append(sock)
                cancelled = self.event.is_set()
            if cancelled:
                self.now()

    def now(self) -> None:
        import socket

        with self._lock:
            self.event.set()
            sockets = list(self._sockets)
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed


def _body_of(r: httpx.Response, shown: str, param: str, max_bytes: int,
             cancel: _Cancel) -> bytes:
    """Step: a 200 answer's body, bounded by ``max_bytes`` (404/410: not published)."""
    if r.status_code in (404, 410):
        raise NotPublished(f"{shown}: not published (HTTP {r.status_code})",
                           param=param)
    if r.status_code != 200:
        raise FetchError(f"{shown}: HTTP {r.status_code} (expected 200)",
                         param=param)
    data = bytearray()
    for chunk in r.iter_bytes():
        if cancel.event.is_set():
            raise FetchError(f"{shown}: cancelled at the deadline", param=param)
        data += chunk
        if len(data) > max_bytes:
            raise LimitExceeded(
                f"{shown}: more than {max_bytes} bytes",
                limit="max_bytes", value=max_bytes, param=param,
            )
    return bytes(data)


def _fetch(url: str, current: str, shown: str, param: str, max_bytes: int, timeout: float,
           cancel: _Cancel) -> bytes:
    """One GET with redirects (see :func:`fetch_bytes`); stops once ``cancel`` is set."""
    import httpx

    cancelled = cancel.event
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False,
                          trust_env=True) as client:
            for _ in range(_MAX_REDIRECTS + 1):
                if cancelled.is_set():
                    raise FetchError(f"{shown}: cancelled at the deadline", param=param)
                with client.stream("GET", current, headers={"Accept": "application/json"},
                                   extensions={"trace": cancel.trace}) as r:
                    if r.is_redirect and "location" in r.headers:
                        target = str(r.url.join(r.headers["location"]))
                        current = _checked_redirect(url, target, shown, param)
                        continue
                    return _body_of(r, shown, param, max_bytes, cancel)
    except httpx.HTTPError as exc:
        raise FetchError(f"{shown}: {type(exc).__name__}: {printable(str(exc), 200)}",
                         param=param) from None
    raise FetchError(f"{shown}: more than {_MAX_REDIRECTS} redirects", param=param)


def fetch_envelope(
    url: str,
    *,
    param: str = "envelope",
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    timeout: float = DEFAULT_TIMEOUT,
) -> bytes:
    """GET a published envelope given by URL as parameter ``param`` (the envelope a check
    compares against, or the previous revision a release chains to): :func:`fetch_bytes`."""
    return fetch_bytes(url, param=param, max_bytes=max_bytes, timeout=timeout)


@dataclass(frozen=True)
class ReleaseLocation:
    """A normalised location: ``base`` (directory path or URL prefix ending in ``/``) and
    the name of the latest envelope inside it."""

    base: str
    latest_name: str = LATEST_NAME
    #: The parameter errors name: ``location`` where the caller gave it (``trust add
    #: --envelope``), ``pinned_location`` where it comes from a pin (the user gave none).
    param: str = field(default="location", compare=False)

    @property
    def is_url(self) -> bool:
        return is_url(self.base)

    @classmethod
    def parse(cls, location: str, *, param: str = "location") -> ReleaseLocation:
        """Check and normalise a location string (a path, or an https/loopback URL without
        a query or fragment: the names of the layout are appended to it)."""
        if not isinstance(location, str) or not location.strip():
            raise UsageError(f"`{param}` must be a path or URL", param=param)
        if "://" in location:
            parts = urlsplit(_checked_url(location, param))
            if parts.query or parts.fragment:
                raise UsageError(f"`{param}` must not have a query or fragment", param=param)
            url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
            if url.endswith(".json"):
                base, _, name = url.rpartition("/")
                return cls(base + "/", name, param)
            return cls(url if url.endswith("/") else url + "/", param=param)
        path = Path(location)
        if location.endswith(".json"):
            return cls(str(path.parent), path.name, param)
        return cls(str(path), param=param)

    def __str__(self) -> str:
        return self.address(self.latest_name)

    def address(self, name: str) -> str:
        """The path or URL of ``name`` in this location."""
        if self.is_url:
            return self.base + name
        return str(Path(self.base) / name)

    def latest(self) -> str:
        return self.address(self.latest_name)

    def envelope(self, revision: int) -> str:
        return self.address(ENVELOPE_NAME.format(n=revision))

    def snapshot(self, revision: int) -> str:
        return self.address(SNAPSHOT_NAME.format(n=revision))

    def yank(self, revision: int) -> str:
        """The signed yank of revision ``revision`` (published only when it is withdrawn)."""
        return self.address(YANK_NAME.format(n=revision))

    def yank_attestation(self, revision: int) -> str:
        """The in-toto form of revision ``revision``'s yank (for other verifiers)."""
        return self.address(YANK_ATTESTATION_NAME.format(n=revision))

    def attestation(self, revision: int) -> str:
        """Part 1 of revision ``revision``'s attestation (further parts beside it)."""
        return self.address(ATTESTATION_NAME.format(n=revision))

    def fetch_json(
        self,
        address: str,
        *,
        max_bytes: int = DEFAULT_MAX_FILE_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> JsonValue:
        """Read ``address`` (one of this location's) and parse it strictly.

        Raises :class:`NotPublished` when it does not exist, :class:`LimitExceeded` past
        ``max_bytes``, :class:`FetchError` when the network fails.
        """
        if self.is_url:
            data = fetch_bytes(address, param=self.param, max_bytes=max_bytes, timeout=timeout)
        else:
            try:
                os.stat(address)
            except FileNotFoundError:
                raise NotPublished(f"{address}: no such file") from None
            except OSError:
                pass  # unreadable (a name too long, a symlink loop): read_bytes says so
            data = read_bytes(address, max_bytes=max_bytes)
        return parse_json(data, address, max_bytes=max_bytes)
