"""``lock``: record a server's observed tool definitions in a lock file (trust on first use),
and promote a reviewed change with ``--update --accept``."""


from pathlib import Path
from typing import TYPE_CHECKING

import typer

from histor_sign.cli import target_options as t
from histor_sign.cli.app import OutputFormat, app, emit, json_document, warn
from histor_sign.mcp._target import FetchOptions, Target
from histor_sign.models import Risk

if TYPE_CHECKING:
    from histor_sign.artifacts import InstalledEvidence
    from histor_sign.models import Snapshot

LOCK_FILE_OPT = typer.Option(
    ..., "--output", "-o", "--lock", metavar="FILE",
    help="The lock file to write (created, or the server added to it; written atomically). "
    "With --update, the lock file to update.",
)
LOCK_SERVER_OPT = typer.Option(
    None, "--server", metavar="NAME",
    help="The name to lock the server under. Default: the name the server reports "
    "(serverInfo.name); with --update, the only entry or the one locked from the same "
    "command or URL.",
)
UPDATE_OPT = typer.Option(
    False, "--update",
    help="Compare what the server serves now with its locked definitions and show the "
    "triaged changes; exits 1 on a change and writes nothing unless --accept is given.",
)
ACCEPT_OPT = typer.Option(
    False, "--accept",
    help="With --update: write the changed definitions into the lock (after showing them).",
)
SNAPSHOT_ARG = typer.Argument(
    None, metavar="[SNAPSHOT]",
    help="A fetch snapshot ('histor-sign fetch -o FILE'; - for stdin) to lock instead of "
    "fetching live with --stdio/--url.",
)
FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human or json (the check --lock document)."
)


@app.command()
def lock(
    snapshot: str | None = SNAPSHOT_ARG,
    output: Path = LOCK_FILE_OPT,
    server: str | None = LOCK_SERVER_OPT,
    update: bool = UPDATE_OPT,
    accept: bool = ACCEPT_OPT,
    format: OutputFormat = FORMAT_OPT,
    stdio: str | None = t.STDIO_OPTION,
    url: str | None = t.URL_OPTION,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    server_is_trusted_code: bool = t.TRUSTED_CODE_OPTION,
    timeout: float = t.TIMEOUT_OPTION,
    protocol: t.ProtocolChoice = t.PROTOCOL_OPTION,
) -> None:
    """Lock the tool definitions a server serves now, for a server whose publisher does not
    sign: trust on first use, promoted on purpose.

    The lock file holds, per server, the fetched snapshot (tools, instructions, prompts,
    resource templates) and its digests; review it and commit it. 'check --lock FILE'
    then compares a server with it in CI, and 'proxy --lock FILE' serves it. A locked server
    is never treated as publisher-signed. Locking a server that is already locked is
    refused: use --update, which shows the triaged changes and promotes them only with
    --accept.
    Exit codes: 0 written (or, with --update, unchanged or accepted), 1 --update found
    changes and --accept was not given (nothing written), 2 bad input.
    """
    from histor_sign._escape import printable
    from histor_sign.errors import UsageError
    from histor_sign.lock import LockedServer, LockFile, add_locked

    if accept and not update:
        raise UsageError("--accept applies only with --update")
    target = t.target_from_flags(stdio, url, header, bearer_token_env, required=False,
                                 trusted_code=server_is_trusted_code)
    options = t.fetch_options_from_flags(timeout=timeout, protocol=protocol)
    if update:
        _update_lock(output, snapshot, target, options, server, accept, format)
        return
    current = LockFile.load_or_new(output)
    entry = LockedServer.observe(_observed(snapshot, target, options), server,
                                 _package(snapshot, target))
    if entry.name in current.servers:  # said before anything else; add_locked re-checks
        raise UsageError(f"{printable(entry.name, 200)} is already locked in {output}: use "
                         "--update to review what changed and --accept to promote it")
    add_locked(output, entry)
    if format is OutputFormat.json:
        emit(json_document({**entry.summary_json(), "file": str(output)}), None)
        return
    emit(f"locked {printable(entry.name)} in {printable(str(output))}: "
         f"{len(entry.tool_digests)} tools, manifest {entry.manifest_digest} · "
         "locked (trust on first use), not publisher-signed", None)


def _update_lock(output: Path, snapshot: str | None, target: Target | None,
                 options: FetchOptions, server: str | None, accept: bool,
                 format: OutputFormat) -> None:
    """Step (``--update``): compare with the lock; with ``--accept`` promote the changes,
    else exit 1 when there are any."""
    from histor_sign._escape import printable
    from histor_sign.lock import LockFile, check_locked, promote_locked

    current = LockFile.load(output)
    served = _observed(snapshot, target, options)
    evidence = _package(snapshot, target)
    result = check_locked(current, served, server,
                          ran_command=_ran_command(snapshot, target), package=evidence)
    if format is OutputFormat.json:
        emit(json_document({**result.to_json(),
                            "accepted": accept and not result.matches}), None)
    else:
        emit(result.to_text(), None)
    if result.matches:
        return
    if not accept:
        warn(f"nothing written: review the changes above, then run again with --accept "
             f"to promote them into {printable(str(output))}")
        raise typer.Exit(1)
    promote_locked(output, result, evidence)
    if format is OutputFormat.human:
        emit(f"accepted: {printable(result.entry.name)} updated in "
             f"{printable(str(output))}", None)


def _ran_command(path: str | None, target: Target | None) -> bool:
    """Whether the served tools come from a stdio command run now (package evidence can
    then be compared), not from a file or a URL."""
    return path is None and target is not None and target.command is not None


def _package(path: str | None, target: Target | None) -> "InstalledEvidence | None":
    """Evidence of the npm package a live stdio command ran (none for a snapshot file, a
    URL, or a command whose package cannot be established)."""
    from histor_sign.artifacts import npm_package_run_by

    if path is not None or target is None or target.command is None:
        return None
    return npm_package_run_by(target.command, target.cwd)


def _observed(path: str | None, target: Target | None, options: FetchOptions) -> "Snapshot":
    """The snapshot to lock: fetched live, or a fetch snapshot file (not a bare tool list,
    which holds no surface and no target)."""
    from histor_sign.errors import UsageError
    from histor_sign.models import Snapshot

    served = t.served_from_file_or_target(path, target, options,
                                          what="a fetch snapshot (SNAPSHOT)")
    if not isinstance(served, Snapshot):
        raise UsageError(f"{path} is not a fetch snapshot: lock what 'histor-sign fetch' "
                         "writes, or fetch live with --stdio/--url")
    return served


def check_lock(
    lock_file: Path, server: str | None, tools: str | None, target: Target | None,
    options: FetchOptions, format: OutputFormat, output: Path | None,
    fail_on: Risk | None, *, signed_flags: bool = False,
) -> None:
    """``check --lock FILE``: what is served (a file or a live fetch) against its locked
    entry, printed like ``check --server``; exit 1 on a change at or above ``fail_on``
    (any change without it). ``signed_flags``: a flag about signed revisions was given."""
    from histor_sign.errors import UsageError
    from histor_sign.lock import LockFile, check_locked

    if signed_flags:
        raise UsageError("--lock compares with a lock file, not a signed revision: drop "
                         "--envelope, --attestation, --signed-tools, --verify and the "
                         "identity and trust flags")

    current = LockFile.load(lock_file)
    served = t.served_from_file_or_target(
        tools, target, options, what="the served tools (TOOLS_FILE)"
    )
    result = check_locked(current, served, server, ran_command=_ran_command(tools, target),
                          package=_package(tools, target))
    if format is OutputFormat.json:
        emit(json_document(result.to_json()), output)
    else:
        emit(result.to_text(), output)
    if not result.matches if fail_on is None else result.reaches(fail_on):
        raise typer.Exit(1)
