"""What to fetch from (a stdio command or an HTTP URL) and the bounds of one fetch.

Secrets (the bearer token, header values) live only in :class:`Target` fields that are
excluded from ``repr`` and from :meth:`Target.describe`; everything a snapshot or a message
says about the target comes from ``describe``/``safe_url`` so no secret can leak through it.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import SplitResult, urlsplit, urlunsplit

from histor_sign._escape import printable
from histor_sign._limits import (
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_RECEIVED_BYTES,
    DEFAULT_MAX_TOOLS,
    DEFAULT_TIMEOUT,
    DEFAULT_TOTAL_TIMEOUT,
)
from histor_sign.errors import UsageError

Protocol = Literal["auto", "modern", "legacy"]
PROTOCOLS: tuple[str, ...] = ("auto", "modern", "legacy")


# Headers the client owns: a user value would break the protocol or smuggle a session.
_RESERVED_HEADERS = frozenset(
    {
        "accept",
        "content-type",
        "content-length",
        "host",
        "transfer-encoding",
        "connection",
        "mcp-session-id",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "last-event-id",
    }
)
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # fullmatch (RFC 9110 token)
#: Authorization schemes a snapshot may name (IANA registry, lower case). Anything else is
#: recorded as "other": the first word of a header value could itself be the secret.
_AUTH_SCHEMES = frozenset(
    {"basic", "bearer", "digest", "dpop", "hoba", "mutual", "negotiate", "ntlm", "privatetoken",
     "scram-sha-1", "scram-sha-256", "vapid", "aws4-hmac-sha256"}
)


#: Credentials of a signing job that a server we start must never see: the Sigstore
#: token, GitHub Actions' OIDC request pair and runtime token, and GitHub API tokens. With
#: them a server could put the token into a tool description (signed and published) or
#: mint its own token and sign under the publisher's workflow identity.
CREDENTIAL_ENV = frozenset(
    {
        "SIGSTORE_IDENTITY_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_RUNTIME_URL",
        "ACTIONS_RESULTS_URL",
        "ACTIONS_CACHE_URL",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
    }
)
#: Whole families withheld as well (any ``SIGSTORE_*`` and ``ACTIONS_ID_TOKEN_*``).
CREDENTIAL_ENV_PREFIXES = ("SIGSTORE_", "ACTIONS_ID_TOKEN_")
#: What signs: a Sigstore token, or GitHub's pair to request one. A stdio server started
#: by a process that holds either can read it (same user: ``/proc/<ancestor>/environ`` and
#: ``cmdline``), whatever its own environment says, so such a server is not started at all
#: unless the caller says it is trusted code (:attr:`Target.trusted_code`).
SIGNING_CREDENTIAL_ENV = frozenset(
    {"SIGSTORE_IDENTITY_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}
)
#: GitHub Actions' file commands and shell start-up hooks: a server that can write them
#: sets environment variables, the PATH and outputs of later steps (the signing step).
WORKFLOW_FILE_ENV = frozenset(
    {"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
     "BASH_ENV", "ENV"}
)


def signing_credentials(environ: Mapping[str, str]) -> list[str]:
    """The names of signing credentials present (set and non-empty) in ``environ``."""
    return sorted(
        name for name, value in environ.items()
        if value and (name.upper() in SIGNING_CREDENTIAL_ENV
                      or name.upper().startswith(("SIGSTORE_", "ACTIONS_ID_TOKEN_")))
    )


def refuse_untrusted_server(target: Target, environ: Mapping[str, str]) -> None:
    """Raise :class:`UsageError` before a stdio server is started where a signing credential
    is within its reach — in ``environ`` or held by the caller (``guarded_secrets``) — unless
    ``target.trusted_code``. Scrubbing the child's environment is no boundary: in one job,
    as one user, it reads its ancestors'. Only a separate job is."""
    if target.command is None or target.trusted_code:
        return
    held = signing_credentials(environ)
    if target.guarded_secrets:
        held.append("the identity token given to this run")
    if held:
        raise UsageError(
            "refusing to start a stdio server where signing credentials are readable "
            f"({', '.join(held)}): as the same user it can read them from /proc whatever "
            "its own environment holds. Fetch it in a job without them (the two-job "
            "workflow: snapshot, then sign), or set `trusted_code` if the server is your own "
            "code and may see the token", param="trusted_code",
        )


#: GitHub tokens that can write the repository (push, tag, release). Withheld from a stdio
#: server's environment like every credential, but as the same user the server reads any
#: ancestor's environment (``/proc/<pid>/environ``): in reach is not in its environment.
PUSH_CREDENTIAL_ENV = ("GH_TOKEN", "GITHUB_TOKEN")
#: How many ancestors :func:`push_credentials_in_reach` reads at most (a deep process tree
#: is a few dozen; the walk stops at the first it cannot read).
_MAX_ANCESTORS = 64


def push_credentials_in_reach(environ: Mapping[str, str], *, proc: str = "/proc") -> list[str]:
    """The :data:`PUSH_CREDENTIAL_ENV` names set (non-empty) in ``environ`` or in the
    environment of any ancestor of this process that this user can read — what a stdio
    server started now could read, whatever its own environment holds. Sorted, each once;
    where ``/proc`` cannot be read (not Linux), only ``environ`` is looked at."""
    found = {name for name in PUSH_CREDENTIAL_ENV if environ.get(name)}
    for pid in _ancestors(proc):
        try:
            with open(f"{proc}/{pid}/environ", "rb") as file:
                data = file.read(4 << 20)
        except OSError:
            continue
        for item in data.split(b"\0"):
            name, _, value = item.partition(b"=")
            if value and name.decode("ascii", "replace") in PUSH_CREDENTIAL_ENV:
                found.add(name.decode("ascii"))
    return sorted(found)


def _ancestors(proc: str) -> list[int]:
    """This process's ancestors' ids, parent first (read from ``/proc/<pid>/stat``)."""
    pids: list[int] = []
    pid = os.getppid()
    while pid > 0 and len(pids) < _MAX_ANCESTORS and pid not in pids:
        pids.append(pid)
        try:
            with open(f"{proc}/{pid}/stat", "rb") as file:
                stat = file.read(4096)
            pid = int(stat.rpartition(b")")[2].split()[1])  # the field after state: ppid
        except (OSError, ValueError, IndexError):
            break
    return pids


def refuse_server_near_push_credentials(target: Target, environ: Mapping[str, str]) -> None:
    """For a release in GitHub Actions (``GITHUB_ACTIONS=true``): raise :class:`UsageError`
    before a stdio server is started while a push credential is in reach
    (:func:`push_credentials_in_reach`), unless ``target.trusted_code`` — the server would
    publish what it likes with the repository's token. Outside Actions it is the user's own
    machine and token, and :func:`push_credentials_warning` says it instead."""
    if target.command is None or target.trusted_code or environ.get("GITHUB_ACTIONS") != "true":
        return
    held = push_credentials_in_reach(environ)
    if held:
        raise UsageError(
            "refusing to start a stdio server in GitHub Actions while a push credential is "
            f"in reach ({', '.join(held)}, in this process's or an ancestor's environment): "
            "as the same user it can read /proc/<pid>/environ of every ancestor, whatever its "
            "own environment holds. Fetch it in a job without the token (the two-job "
            "workflow: snapshot, then sign), or set `trusted_code` if the server is your own "
            "code and may see the token", param="trusted_code",
        )


def push_credentials_warning(target: Target, environ: Mapping[str, str]) -> str | None:
    """One line saying which push credentials a stdio server started for ``target`` can
    read (None for a URL target or none in reach)."""
    if target.command is None:
        return None
    held = push_credentials_in_reach(environ)
    if not held:
        return None
    return (f"the stdio server can read {', '.join(held)} (in this process's or an "
            "ancestor's environment, via /proc/<pid>/environ): it is kept out of the "
            "server's environment, not out of its reach")


def child_environment(
    parent: Mapping[str, str],
    *,
    extra: Mapping[str, str] | None = None,
    withhold: Sequence[str] = (),
    guarded: Sequence[str] = (),
) -> dict[str, str]:
    """The environment a stdio server starts with: ``parent`` without credentials.

    Removed: :data:`CREDENTIAL_ENV`, the :data:`CREDENTIAL_ENV_PREFIXES` families, the
    workflow file commands and shell hooks (:data:`WORKFLOW_FILE_ENV`), the names in
    ``withhold``, and any variable whose value contains a ``guarded`` secret
    (whatever it is called). ``extra`` is added afterwards, as the caller gave it.
    """
    dropped = {name.upper() for name in withhold}
    needles = [g for g in guarded if len(g) >= 8]
    env = {
        name: value for name, value in parent.items()
        if _env_kept(name, value, dropped, needles)
    }
    if extra:
        env.update(extra)
    return env


def _check_target_url(url: str) -> None:
    """Step: a target URL is http(s) with a host and no credentials in it."""
    parts = _split_url(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(
            f"`url`: expected an http:// or https:// URL, got {safe_url(url)!r}",
            param="url",
        )
    if parts.username or parts.password:
        raise UsageError(
            "`url`: credentials in the URL are not allowed; use `bearer_token` or "
            "`headers`",
            param="url", alternatives=("bearer_token", "headers"),
        )


def _env_kept(name: str, value: str, dropped: set[str], needles: list[str]) -> bool:
    """Step: a parent variable passes to the server (no credential, no guarded secret)."""
    upper = name.upper()
    return (upper not in CREDENTIAL_ENV
            and upper not in WORKFLOW_FILE_ENV
            and not upper.startswith(CREDENTIAL_ENV_PREFIXES)
            and upper not in dropped
            and not any(n in value for n in needles))


def safe_url(url: str) -> str:
    """The URL without userinfo and with query values masked (they may carry tokens)."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        masked = []
        for item in query.split("&"):
            key, sep, _value = item.partition("=")
            masked.append(f"{key}=***" if sep else key)
        query = "&".join(masked)
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


@dataclass(frozen=True)
class Target:
    """An MCP server: ``command`` (stdio) or ``url`` (Streamable HTTP), never both."""

    command: tuple[str, ...] | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    bearer_token: str | None = field(default=None, repr=False)
    cwd: str | None = None
    env: Mapping[str, str] | None = field(default=None, repr=False)
    #: Environment variables (beyond the built-in credential denylist) kept from a stdio
    #: server, e.g. the variable a bearer token is read from.
    withhold_env: tuple[str, ...] = field(default=(), repr=False)
    #: Credentials we hold but never send (e.g. the OIDC identity token of a release): the
    #: server gets no variable holding them, and a snapshot that contains one is refused.
    guarded_secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)
    #: The caller vouches that the stdio server is trusted code: it may be started where
    #: signing credentials are within its reach (see :func:`refuse_untrusted_server`).
    trusted_code: bool = False

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise UsageError("give exactly one of a stdio command or a URL")
        if self.command is not None and not self.command:
            raise UsageError("`command`: the command is empty", param="command")
        if self.url is not None:
            _check_target_url(self.url)
        if self.command is not None and (self.headers or self.bearer_token):
            raise UsageError(
                "`headers` and `bearer_token` apply only to `url` targets",
                param="headers", alternatives=("bearer_token", "url"),
            )
        self._check_credentials()

    def _check_credentials(self) -> None:
        """Step: every header is well-formed and the Authorization header is given once."""
        for name, value in self.headers:
            check_header(name, value)
        if self.bearer_token is not None:
            _check_header_value("bearer_token", "`bearer_token`", self.bearer_token)
        if self.bearer_token is not None and any(
            n.lower() == "authorization" for n, _ in self.headers
        ):
            raise UsageError(
                "give the Authorization header once: `bearer_token` or `headers`",
                param="bearer_token", alternatives=("headers",),
            )

    @classmethod
    def stdio(
        cls,
        command: str | Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        withhold_env: Sequence[str] = (),
        guarded_secrets: Sequence[str] = (),
        trusted_code: bool = False,
    ) -> Target:
        """A server started as a subprocess; a string is split like a POSIX shell would.

        It is not started at all where a signing credential is within its reach, unless
        ``trusted_code`` (:func:`refuse_untrusted_server`).

        The server runs with our environment minus every credential variable
        (:data:`CREDENTIAL_ENV`, :data:`CREDENTIAL_ENV_PREFIXES`), minus ``withhold_env``,
        minus any variable whose value holds one of ``guarded_secrets``; ``env`` is added
        on top (explicitly given, so passed as is).
        """
        if isinstance(command, str):
            try:
                argv = tuple(shlex.split(command))
            except ValueError as exc:
                raise UsageError(
                    f"`command`: cannot split the command: {exc}", param="command"
                ) from None
        else:
            argv = tuple(command)
        return cls(
            command=argv, cwd=cwd, env=env, withhold_env=tuple(withhold_env),
            guarded_secrets=tuple(guarded_secrets), trusted_code=trusted_code,
        )

    @classmethod
    def http(
        cls,
        url: str,
        *,
        headers: Sequence[tuple[str, str]] = (),
        bearer_token: str | None = None,
        guarded_secrets: Sequence[str] = (),
    ) -> Target:
        """A Streamable HTTP endpoint, e.g. ``https://host/mcp``.

        ``guarded_secrets`` are credentials we hold but never send (see :class:`Target`).
        """
        return cls(
            url=url, headers=tuple(headers), bearer_token=bearer_token,
            guarded_secrets=tuple(guarded_secrets),
        )

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "streamable-http"

    def secrets(self) -> list[str]:
        """Every secret value, for scrubbing messages (longest first)."""
        values = [v for _, v in self.headers if v]
        if self.bearer_token:
            values.append(self.bearer_token)
        values += [v for v in self.guarded_secrets if v]
        return sorted(set(values), key=len, reverse=True)

    def describe(self) -> dict[str, Any]:
        """The target as recorded in a snapshot: the auth *context*, never a secret.

        A server's list may depend on who asks, so the snapshot says how we asked: header
        names (never values, nor hashes of values — a hash of a low-entropy key is a
        guessing oracle), the scheme of the ``Authorization`` header (``bearer`` whether it
        came from ``bearer_token`` or a ``headers`` entry), and for stdio the names of the
        extra environment variables.
        """
        if self.command is not None:
            out: dict[str, Any] = {"transport": "stdio", "command": list(self.command)}
            if self.env:
                out["env"] = sorted(self.env)
            return out
        assert self.url is not None
        out = {"transport": "streamable-http", "url": safe_url(self.url)}
        names = sorted({n for n, _ in self.headers}, key=str.lower)
        if names:
            out["headers"] = names
        scheme = self.auth_scheme()
        if scheme is not None:
            out["auth"] = scheme
        return out

    def auth_scheme(self) -> str | None:
        """``bearer``, another registered scheme, ``other``, or None (no Authorization)."""
        if self.bearer_token is not None:
            return "bearer"
        for name, value in self.headers:
            if name.lower() == "authorization":
                scheme, sep, _credentials = value.partition(" ")
                scheme = scheme.lower()
                return scheme if sep and scheme in _AUTH_SCHEMES else "other"
        return None

    def label(self) -> str:
        """Short human name for messages."""
        if self.command is not None:
            return shlex.join(self.command)
        assert self.url is not None
        return safe_url(self.url)


def check_header(name: str, value: str) -> None:
    """Reject header names/values that are invalid or that the client must own."""
    if not _TOKEN.fullmatch(name):
        raise UsageError(f"`headers`: {name!r} is not a valid header name", param="headers")
    if name.lower() in _RESERVED_HEADERS:
        raise UsageError(
            f"`headers`: {name} is set by histor-sign itself and cannot be given", param="headers"
        )
    _check_header_value("headers", f"`headers` {name}", value)


def _check_header_value(param: str, label: str, value: str) -> None:
    """A header value HTTP can carry: visible ASCII and spaces (RFC 9110 field-value, without
    the obsolete non-ASCII octets). The value is a secret: never echoed."""
    if any(c in value for c in "\r\n\0"):
        raise UsageError(
            f"{label}: the value must not contain line breaks or NUL", param=param
        )
    if not all(c == "\t" or " " <= c <= "~" for c in value):
        raise UsageError(
            f"{label}: the value must be ASCII text (no control or non-ASCII "
            "characters)",
            param=param,
        )


def _split_url(url: str) -> SplitResult:
    """``url`` split, or a usage error saying what is wrong with it (never a traceback).

    Refused: characters that are not printable or are spaces (HTTP clients refuse or
    re-encode them, and they would show up raw in messages), a port outside 0–65535, and
    an IP literal in brackets that is not an IPv6 address. The URL is not echoed: its query
    may carry a token.
    """
    bad = next((c for c in url if not c.isprintable() or c.isspace()), None)
    if bad is not None:
        raise UsageError(
            f"`url`: the URL contains a control character, space or other non-printable "
            f"character ({printable(bad)})",
            param="url",
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError as exc:
        raise UsageError(f"`url`: not a valid URL: {printable(str(exc), limit=200)}",
                         param="url") from None
    if parts.scheme in ("http", "https"):
        import httpx  # the HTTP client's own parser: what it refuses, refuse here

        try:
            httpx.URL(url)
        except httpx.InvalidURL as exc:
            raise UsageError(f"`url`: not a valid URL: {printable(str(exc), limit=200)}",
                             param="url") from None
    return parts


def parse_header(text: str) -> tuple[str, str]:
    """``NAME:VALUE`` → (name, value); the value is never echoed in errors."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name:
        # No echo: without the ':' there is no telling name from (secret) value.
        raise UsageError(
            "`headers`: expected NAME:VALUE (no ':' or no name before it)", param="headers"
        )
    value = value.strip()
    check_header(name, value)
    return name, value


ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class FetchOptions:
    """Bounds and behaviour of one fetch; every bound is enforced."""

    timeout: float = DEFAULT_TIMEOUT
    total_timeout: float | None = DEFAULT_TOTAL_TIMEOUT
    max_pages: int = DEFAULT_MAX_PAGES
    max_tools: int = DEFAULT_MAX_TOOLS
    max_bytes: int = DEFAULT_MAX_RECEIVED_BYTES
    protocol: Protocol = "auto"
    allow_duplicates: bool = False
    #: Called after every page with (pages so far, tools so far).
    progress: ProgressFn | None = field(default=None, compare=False, repr=False)
    #: Seconds to wait after closing a stdio server's stdin, and again after SIGTERM.
    shutdown_grace: float = 2.0

    def __post_init__(self) -> None:
        # Bounds on time are bounds: inf (or nan) would silently remove them.
        if not 0 < self.timeout < math.inf:
            raise UsageError(
                "`timeout` must be greater than 0 seconds and finite", param="timeout"
            )
        if self.total_timeout is not None and not 0 < self.total_timeout < math.inf:
            raise UsageError(
                "`total_timeout` must be greater than 0 seconds and finite", param="total_timeout"
            )
        for param, value in (
            ("max_pages", self.max_pages),
            ("max_tools", self.max_tools),
            ("max_bytes", self.max_bytes),
        ):
            if value < 1:
                raise UsageError(f"`{param}` must be at least 1", param=param)
        if self.protocol not in PROTOCOLS:
            raise UsageError(
                f"`protocol` must be one of {', '.join(PROTOCOLS)}", param="protocol"
            )
