"""Flags that name an MCP server to fetch from, shared by every command that fetches.

``fetch``, ``digest``/``build``, ``scan``, ``check`` and ``release`` declare their
parameters with the ``*_OPTION`` objects below and call :func:`target_from_flags` and
:func:`fetch_options_from_flags`, so flag names, help and validation are the same
everywhere. Importing this module does not import httpx.
"""


import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

from histor_sign._limits import (
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_RECEIVED_BYTES,
    DEFAULT_MAX_TOOLS,
    DEFAULT_TIMEOUT,
    DEFAULT_TOTAL_TIMEOUT,
)
from histor_sign.cli.app import note, warn
from histor_sign.errors import UsageError
from histor_sign.mcp._target import (
    FetchOptions,
    Target,
    parse_header,
    push_credentials_warning,
)
from histor_sign.models import SERVER_LOCATION_PREFIX, Catalog, Tool

if TYPE_CHECKING:
    from histor_sign.models import Snapshot


class ProtocolChoice(StrEnum):
    auto = "auto"
    modern = "modern"
    legacy = "legacy"


STDIO_OPTION = typer.Option(
    None, "--stdio", metavar="COMMAND",
    help="Start this MCP server command and fetch over stdio (split like a shell, run "
    "without one), e.g. \"python server.py\".",
)
URL_OPTION = typer.Option(
    None, "--url", metavar="URL",
    help="Fetch from this Streamable HTTP MCP endpoint, e.g. https://host/mcp.",
)
HEADER_OPTION = typer.Option(
    None, "--header", metavar="NAME:VALUE",
    help="Extra HTTP header for --url (repeatable). The value is never printed or recorded; "
    "prefer --bearer-token-env for tokens (command lines are visible to other users).",
)
TRUSTED_CODE_OPTION = typer.Option(
    False, "--server-is-trusted-code",
    help="Start the --stdio server even where signing credentials are readable "
    "(SIGSTORE_IDENTITY_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*, --identity-token): it runs as "
    "you, so it can read them. Only for your own server code; otherwise fetch in a job "
    "without credentials.",
)
BEARER_OPTION = typer.Option(
    None, "--bearer-token-env", metavar="VAR",
    help="Send 'Authorization: Bearer <value of environment variable VAR>' with --url.",
)
TIMEOUT_OPTION = typer.Option(
    DEFAULT_TIMEOUT, "--timeout", metavar="SECONDS", help="Per-request timeout."
)
TOTAL_TIMEOUT_OPTION = typer.Option(
    DEFAULT_TOTAL_TIMEOUT, "--total-timeout", metavar="SECONDS",
    help="Timeout for the whole fetch, including starting the server.",
)
MAX_PAGES_OPTION = typer.Option(
    DEFAULT_MAX_PAGES, "--max-pages", metavar="N", help="Fail if tools/list has more pages."
)
MAX_TOOLS_OPTION = typer.Option(
    DEFAULT_MAX_TOOLS, "--max-tools", metavar="N", help="Fail if the server lists more tools."
)
MAX_BYTES_OPTION = typer.Option(
    DEFAULT_MAX_RECEIVED_BYTES, "--max-bytes", metavar="N",
    help="Fail if the server sends more bytes in total (default 32 MiB).",
)
PROTOCOL_OPTION = typer.Option(
    ProtocolChoice.auto, "--protocol",
    help="MCP protocol era: auto (try modern 2026-07-28, fall back to the initialize "
    "handshake), modern, or legacy.",
)
ALLOW_DUPLICATES_OPTION = typer.Option(
    False, "--allow-duplicates",
    help="Keep tools with duplicate names as evidence (recorded in the snapshot) instead of "
    "failing.",
)


def warn_push_credentials(target: Target) -> None:
    """Say once on stderr which push credentials a stdio server started for ``target``
    can read (``fetch``, ``proxy``; ``release`` in GitHub Actions refuses instead)."""
    warn(push_credentials_warning(target, os.environ))


def target_from_flags(
    stdio: str | None,
    url: str | None,
    header: list[str] | None = None,
    bearer_token_env: str | None = None,
    *,
    required: bool = True,
    trusted_code: bool = False,
) -> Target | None:
    """Build the :class:`Target` named by ``--stdio``/``--url`` (exactly one of them)."""
    if stdio is not None and url is not None:
        raise UsageError("give --stdio or --url, not both")
    if stdio is None and url is None:
        _check_no_target(header, bearer_token_env, required)
        return None
    if stdio is not None:
        if header or bearer_token_env:
            raise UsageError("--header and --bearer-token-env apply only to --url")
        return Target.stdio(stdio, trusted_code=trusted_code)
    assert url is not None
    return _http_target(url, header, bearer_token_env)


def _check_no_target(header: list[str] | None, bearer_token_env: str | None,
                     required: bool) -> None:
    """Step: no server named: fine only when none is required and no HTTP flag is given."""
    if header or bearer_token_env:
        raise UsageError("--header and --bearer-token-env need --url")
    if required:
        raise UsageError("give the MCP server to fetch from: --stdio COMMAND or --url URL")


def _http_target(url: str, header: list[str] | None, bearer_token_env: str | None) -> Target:
    """Step: the ``--url`` target with its ``--header`` and ``--bearer-token-env``."""
    headers = [parse_header(h) for h in header or []]
    token = _bearer_token(bearer_token_env) if bearer_token_env is not None else None
    return Target.http(url, headers=headers, bearer_token=token)


def _bearer_token(name: str) -> str:
    """Step: the bearer token in environment variable ``name`` (set, one line)."""
    token = os.environ.get(name)
    if not token:
        raise UsageError(
            f"--bearer-token-env: environment variable {name} is not set or empty"
        )
    if any(c in token for c in "\r\n\0"):
        raise UsageError(
            f"--bearer-token-env: {name} contains a line break or NUL"
        )
    return token


def fetch_options_from_flags(
    *,
    timeout: float = DEFAULT_TIMEOUT,
    total_timeout: float | None = DEFAULT_TOTAL_TIMEOUT,
    max_pages: int = DEFAULT_MAX_PAGES,
    max_tools: int = DEFAULT_MAX_TOOLS,
    max_bytes: int = DEFAULT_MAX_RECEIVED_BYTES,
    protocol: ProtocolChoice | str = ProtocolChoice.auto,
    allow_duplicates: bool = False,
    quiet: bool = False,
) -> FetchOptions:
    """Build :class:`FetchOptions`, with a progress line when stderr is a terminal (never
    with ``quiet``)."""
    return FetchOptions(
        timeout=timeout,
        total_timeout=total_timeout,
        max_pages=max_pages,
        max_tools=max_tools,
        max_bytes=max_bytes,
        protocol=ProtocolChoice(protocol).value,
        allow_duplicates=allow_duplicates,
        progress=_print_progress if sys.stderr.isatty() and not quiet else None,
    )


def _print_progress(pages: int, tools: int) -> None:
    sys.stderr.write(f"\rhistor-sign: fetching tools/list: {pages} pages, {tools} tools\x1b[K")
    sys.stderr.flush()


@contextmanager
def _progress_line(options: FetchOptions) -> Iterator[None]:
    try:
        yield
    finally:
        if options.progress is not None:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def fetch_snapshot(target: Target, options: FetchOptions, *, summary: bool = False) -> "Snapshot":
    """Fetch, keeping the terminal progress line tidy on success and on error, then print
    the fetch's warnings (skipped banner lines, lists the server did not serve) and, with
    ``summary``, one line saying what was fetched (on stderr, terminal or not)."""
    from histor_sign.mcp._client import fetch

    with _progress_line(options):
        snapshot = fetch(target, options)
    for warning in snapshot.warnings:
        warn(warning)
    if summary:
        note(fetch_summary(snapshot))
    return snapshot


def fetch_summary(snapshot: "Snapshot") -> str:
    """``fetched 8 tools in 3 pages from example-notes (stdio)``: the server by its own
    name (escaped when printed), never the command line."""
    n, pages = len(snapshot.tools), snapshot.capture.get("pages", 1)
    name = snapshot.server_location().removeprefix(SERVER_LOCATION_PREFIX)
    return (f"fetched {n} tool{'s' if n != 1 else ''} in {pages} page"
            f"{'s' if pages != 1 else ''} from {name} ({snapshot.capture.get('transport')})")


QUIET_OPTION = typer.Option(
    False, "--quiet", "-q",
    help="No progress or summary line on stderr (warnings and errors still show).",
)


def tools_from_file_or_target(
    path: str | None,
    target: Target | None,
    options: FetchOptions,
    *,
    what: str = "a catalog file",
) -> list[Tool]:
    """Tools from a catalog file, or fetched live (every page) from ``--stdio``/``--url``."""
    if target is not None:
        if path is not None:
            raise UsageError(f"give {what} or --stdio/--url, not both")
        return list(fetch_catalog(target, options).tools)
    if path is None:
        raise UsageError(f"give {what}, or fetch live with --stdio or --url")
    from histor_sign.catalog import load_catalog

    return list(load_catalog(path).tools)


def served_from_file_or_target(
    path: str | None,
    target: Target | None,
    options: FetchOptions,
    *,
    what: str = "a catalog file",
) -> "Snapshot | Catalog":
    """Like :func:`tools_from_file_or_target`, but a live fetch or a snapshot file stays a
    :class:`Snapshot`, so the server surface (instructions, prompts, templates) is kept."""
    if target is not None:
        if path is not None:
            raise UsageError(f"give {what} or --stdio/--url, not both")
        return fetch_snapshot(target, options)
    if path is None:
        raise UsageError(f"give {what}, or fetch live with --stdio or --url")
    return snapshot_or_catalog_file(path)


def snapshot_or_catalog_file(path: str, *, max_tools: int | None = None) -> "Snapshot | Catalog":
    """A catalog file (``-`` for stdin); a fetch snapshot stays a :class:`Snapshot`."""
    from histor_sign.canonical import read_json_file
    from histor_sign.catalog import snapshot_or_catalog

    return snapshot_or_catalog(read_json_file(path), path, max_tools=max_tools)


def fetch_catalog(target: Target, options: FetchOptions) -> Catalog:
    """Fetch and import as a catalog whose findings name the server (``mcp-server:NAME``),
    never the command line or URL it was reached by."""
    snapshot = fetch_snapshot(target, options)
    return snapshot.to_catalog(snapshot.server_location())
