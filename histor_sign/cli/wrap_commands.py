"""``wrap`` and ``unwrap``: put an MCP host's stdio servers behind ``histor-sign proxy`` in its
configuration file, and take them out again (:mod:`histor_sign.hostconfig`).

The unified diff goes to stdout; what happened to each server, the backup and the file
written go to stderr as ``histor-sign: …`` lines. Exit codes: 0 done (or nothing to do),
1 a requested server was left as it was (not pinned, an HTTP server, wrapped for another
name, malformed), 2 bad input (the file cannot be read, is not JSON, has an unknown shape,
is too large, cannot be written; a server name the file does not have).
"""


import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from histor_sign._escape import inert_line, printable
from histor_sign.cli.app import PROG, app, emit, fail, warn
from histor_sign.cli.trust_commands import PinsOpt
from histor_sign.errors import UsageError
from histor_sign.hostconfig import MAX_HOST_CONFIG_BYTES

if TYPE_CHECKING:
    from histor_sign.hostconfig import EntryOutcome, HostConfigChange

_File = Annotated[
    Path,
    typer.Argument(
        metavar="FILE",
        help="The host's config file: claude_desktop_config.json (Claude Desktop), "
        ".vscode/mcp.json or the user mcp.json (VS Code), ~/.cursor/mcp.json or "
        ".cursor/mcp.json (Cursor), .mcp.json or ~/.claude.json (Claude Code), "
        ".gemini/settings.json (Gemini CLI), ~/.codeium/windsurf/mcp_config.json "
        "(Windsurf), cline_mcp_settings.json (Cline), mcp_settings.json or .roo/mcp.json "
        "(Roo Code), Zed's settings.json, opencode.json(c) (OpenCode), "
        ".codex/config.toml (Codex), ~/.continue/config.yaml or "
        ".continue/mcpServers/*.yaml (Continue).",
    ),
]
_DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Show the diff and what would happen; write nothing.")
]
_MaxBytes = Annotated[
    int,
    typer.Option("--max-bytes", metavar="N", min=1,
                 help=f"Refuse a config file larger than this (default {MAX_HOST_CONFIG_BYTES})."),
]


def _note(message: str) -> None:
    sys.stderr.write(inert_line(f"{PROG}: {message}") + "\n")
    sys.stderr.flush()


def _trust_hint(outcome: "EntryOutcome", pins: Path | None) -> str:
    from histor_sign.models import namespace_owner

    server = outcome.server or ""
    if namespace_owner(server) is None:
        return ("; it is outside io.github.*, so 'trust add' cannot pin it and the proxy "
                "cannot use it")
    extra = f" --pins {printable(str(pins), 300)}" if pins is not None else ""
    return (f"; pin it with '{PROG} trust add {printable(server, 200)} --repository "
            f"OWNER/REPO{extra}', then run wrap again")


def _report(change: "HostConfigChange", pins: Path | None = None) -> None:
    """Diff on stdout, the rest on stderr; exit 1 when a requested server was skipped."""
    from histor_sign.hostconfig import EntryStatus

    _note(f"{printable(str(change.path), 300)}: {change.format.label}"
          + (" (JSON with comments)" if change.jsonc else ""))
    diff = change.diff()
    if diff:
        emit(diff, None)
    for outcome in change.entries:
        hint = _trust_hint(outcome, pins) if outcome.status is EntryStatus.NOT_PINNED else ""
        _note(outcome.line() + hint)
    if not change.exact_unwrap:
        warn("unwrap will not give this file back byte for byte (its layout is unusual); the "
             "backup keeps the original bytes")
    _note_written(change)
    skipped = change.skipped
    if skipped:
        names = ", ".join(f"{printable(e.name, 80)} ({e.status.value})" for e in skipped)
        fail(f"{len(skipped)} requested server entr{'y was' if len(skipped) == 1 else 'ies were'}"
             f" not {change.action}ped: {names}", 1)


def _note_written(change: "HostConfigChange") -> None:
    """Step: say what was written (and where the backup is), would be, or that nothing was."""
    from histor_sign.hostconfig import EntryStatus

    done = [e for e in change.entries
            if e.status in (EntryStatus.WRAPPED, EntryStatus.UNWRAPPED)]
    if not change.changed:
        _note(f"nothing to {change.action}; {printable(str(change.path), 300)} left as it is")
    elif change.dry_run:
        _note(f"dry run: would {change.action} {len(done)} server(s); nothing written")
    else:
        if change.backup is not None:
            _note(f"backup: {printable(str(change.backup), 300)}")
        _note(f"wrote {printable(str(change.path), 300)} ({len(done)} server(s) "
              f"{change.action}ped); restart the host to use it")


def _server_names(values: list[str]) -> dict[str, str]:
    """``NAME=REGISTRY_NAME`` (or a bare ``NAME`` that is its own registry name)."""
    servers: dict[str, str] = {}
    for value in values:
        name, sep, server = value.rpartition("=")
        if not sep:
            name = server = value
        if not name:
            raise UsageError(f"--server-name {printable(value, 200)!r}: expected "
                             "NAME=REGISTRY_NAME, e.g. search=io.github.acme/search")
        if servers.get(name, server) != server:
            raise UsageError(f"--server-name: {printable(name, 80)} is given twice, as "
                             f"{printable(servers[name], 200)} and {printable(server, 200)}")
        servers[name] = server
    return servers


@app.command()
def wrap(
    file: _File,
    server_name: Annotated[
        list[str],
        typer.Option(
            "--server-name", metavar="NAME=REGISTRY_NAME",
            help="A server entry of the file and its MCP registry name, e.g. "
            "search=io.github.acme/search (repeat for more). A bare NAME is its own "
            "registry name. Only servers pinned with 'trust add' are wrapped.",
        ),
    ],
    pins: PinsOpt = None,
    lock: Annotated[
        Path | None,
        typer.Option(
            "--lock", metavar="FILE",
            help="Wrap servers locked in this lock file ('histor-sign lock'; trust on first "
            "use, not publisher-signed) instead of pinned ones: --server-name "
            "ENTRY=LOCKED_NAME names the lock entry. Not with --pins.",
        ),
    ] = None,
    dry_run: _DryRun = False,
    max_bytes: _MaxBytes = MAX_HOST_CONFIG_BYTES,
) -> None:
    """Run the named stdio servers of an MCP host's config file through 'histor-sign proxy'.

    Each entry becomes: command /ABSOLUTE/PATH/histor-sign (this installation's: a desktop
    host starts servers with a minimal PATH), args proxy --server NAME [--pins FILE]
    [--lock FILE] -- ORIGINAL_COMMAND ORIGINAL_ARGS; env and every other member stay as
    they are. The host is told from the file's name and shape (docs/wrap.md lists each
    one's documented paths). The file is edited in place, only inside the wrapped entries,
    so 'unwrap' gives it back byte for byte; a backup is kept beside it
    (FILE.histor-backup). An entry whose registry name is not pinned (or, with --lock, not
    locked) is named and left as it is.
    Exit codes: 0 done, 1 a requested server was not wrapped, 2 bad input.
    """
    from histor_sign.hostconfig import proxy_executable, wrap_config

    if lock is not None and pins is not None:
        raise UsageError("--lock wraps locked servers, served from the lock file: --pins "
                         "does not apply")
    servers = _server_names(server_name)
    change = wrap_config(file, servers, pins=pins, lock=lock, command=proxy_executable(),
                         dry_run=dry_run, max_bytes=max_bytes)
    _report(change, pins)


@app.command()
def unwrap(
    file: _File,
    server_name: Annotated[
        list[str] | None,
        typer.Option(
            "--server-name", metavar="NAME",
            help="Unwrap only this server entry (repeat for more). Default: every wrapped one.",
        ),
    ] = None,
    dry_run: _DryRun = False,
    max_bytes: _MaxBytes = MAX_HOST_CONFIG_BYTES,
) -> None:
    """Restore the original command and args of entries 'wrap' put behind the proxy.

    The original command and args are the wrapped args after '--'; a file 'wrap' wrote comes
    back byte for byte. A backup of the file is kept beside it (FILE.histor-backup).
    Exit codes: 0 done (or nothing to unwrap), 1 a named entry could not be unwrapped,
    2 bad input.
    """
    from histor_sign.hostconfig import unwrap_config

    change = unwrap_config(file, server_name or None, dry_run=dry_run, max_bytes=max_bytes)
    _report(change)
