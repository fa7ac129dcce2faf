"""Where a publisher's signed revisions live, and fetching them with bounds.

A *location* is the address of the latest envelope or of the directory holding it: a local
path, an ``https://`` URL, or an ``http://`` URL on a loopback host (tests and local
mirrors). The layout beside the latest envelope is fixed, so a client that pinned the
location can find any revision without asking the publisher anything::

    <base>/latest.envelope.json       the newest signed revision
    <base>/<n>.envelope.json          revision n (needed to follow a chain across skipped
                                      revisions)
    <base>/<n>.tools.snapshot.json    the tools that revision n signed (for drift triage and
                                      guard's contract; its digests are checked against the
                                      envelope of revision n)

A location ending in ``.json`` names the latest envelope itself and ``<base>`` is its
directory; any other location is ``<base>``. Everything fetched is untrusted: bounded in
bytes and time, parsed strictly, and verified by the caller before it is used.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from histor_sign._internal.limits import DEFAULT_MAX_FILE_BYTES, DEFAULT_TIMEOUT
from histor_sign._internal.untrusted import printable
from histor_sign.canonical import JsonValue, parse_json, read_bytes
from histor_sign.errors import InputError, LimitExceeded, OperationalError, UsageError

LATEST_NAME = "latest.envelope.json"
ENVELOPE_NAME = "{n}.envelope.json"
SNAPSHOT_NAME = "{n}.tools.snapshot.json"
_MAX_REDIRECTS = 5


class NotPublished(InputError):
    """The location has no file by that name (HTTP 404/410, or no such local file)."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _checked_url(url: str, param: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme == "https" and host:
        pass
    elif parts.scheme == "http" and _is_loopback(host):
        pass
    else:
        raise UsageError(
            f"`{param}` must be a file path, an https:// URL, or an http:// URL on a loopback "
            f"host; got {printable(url, 200)!r}",
            param=param,
        )
    if parts.username or parts.password:
        raise UsageError(f"`{param}` must not carry credentials in the URL", param=param)
    if parts.query or parts.fragment:
        raise UsageError(f"`{param}` must not have a query or fragment", param=param)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


@dataclass(frozen=True)
class ReleaseLocation:
    """A normalised location: ``base`` (directory path or URL prefix ending in ``/``) and
    the name of the latest envelope inside it."""

    base: str
    latest_name: str = LATEST_NAME

    @property
    def is_url(self) -> bool:
        return self.base.startswith(("https://", "http://"))

    @classmethod
    def parse(cls, location: str, *, param: str = "location") -> ReleaseLocation:
        """Check and normalise a location string (a path, or an https/loopback URL)."""
        if not isinstance(location, str) or not location.strip():
            raise UsageError(f"`{param}` must be a path or URL", param=param)
        if "://" in location:
            url = _checked_url(location, param)
            if url.endswith(".json"):
                base, _, name = url.rpartition("/")
                return cls(base + "/", name)
            return cls(url if url.endswith("/") else url + "/")
        path = Path(location)
        if location.endswith(".json"):
            return cls(str(path.parent), path.name)
        return cls(str(path))

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

    def fetch_json(
        self,
        address: str,
        *,
        max_bytes: int = DEFAULT_MAX_FILE_BYTES,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> JsonValue:
        """Read ``address`` (one of this location's) and parse it strictly.

        Raises :class:`NotPublished` when it does not exist, :class:`LimitExceeded` past
        ``max_bytes``, :class:`OperationalError` when the network fails.
        """
        data = (
            _fetch_url(address, max_bytes=max_bytes, timeout=timeout)
            if self.is_url else _read_file(address, max_bytes)
        )
        return parse_json(data, address, max_bytes=max_bytes)


def _read_file(path: str, max_bytes: int) -> bytes:
    if not Path(path).exists():
        raise NotPublished(f"{path}: no such file")
    return read_bytes(path, max_bytes=max_bytes)


def _fetch_url(url: str, *, max_bytes: int, timeout: float) -> bytes:
    """GET with a byte bound and a timeout; redirects followed only to https or loopback."""
    import httpx

    current = url
    try:
        with httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False) as client:
            for _ in range(_MAX_REDIRECTS + 1):
                with client.stream("GET", current, headers={"Accept": "application/json"}) as r:
                    if r.is_redirect and "location" in r.headers:
                        target = str(r.url.join(r.headers["location"]))
                        try:
                            current = _checked_url(target, "location")
                        except UsageError:
                            raise InputError(
                                f"{url}: redirects to {printable(target, 200)!r}, which is "
                                "neither https nor loopback"
                            ) from None
                        continue
                    if r.status_code in (404, 410):
                        raise NotPublished(f"{url}: not published (HTTP {r.status_code})")
                    if r.status_code != 200:
                        raise OperationalError(f"{url}: HTTP {r.status_code}")
                    chunks: list[bytes] = []
                    size = 0
                    for chunk in r.iter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            raise LimitExceeded(
                                f"{url}: larger than the limit of {max_bytes} bytes",
                                limit="max_bytes", value=max_bytes,
                            )
                        chunks.append(chunk)
                    return b"".join(chunks)
    except httpx.HTTPError as exc:
        raise OperationalError(f"{url}: {type(exc).__name__}: {printable(str(exc), 200)}") from None
    raise OperationalError(f"{url}: more than {_MAX_REDIRECTS} redirects")
