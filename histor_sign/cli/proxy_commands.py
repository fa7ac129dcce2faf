"""``proxy``: serve a pinned server to an MCP host, offering only signed tools and deciding
every tools/call first. stdout is the MCP stream: everything else goes to stderr."""


import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from histor_sign.cli import target_options as t
from histor_sign.cli.app import PROG, app
from histor_sign.cli.signing_commands import (
    OfflineOpt,
    TrustedRootOpt,
    VerifyFlags,
    VerifyStagingOpt,
    VerifyTrustConfigOpt,
)
from histor_sign.cli.trust_commands import PinsOpt
from histor_sign.errors import UsageError
from histor_sign.models import GITHUB_ACTIONS_ISSUER, Risk

if TYPE_CHECKING:
    from collections.abc import Sequence

    from histor_sign.guard import Policy
    from histor_sign.lock import LockedRevision
    from histor_sign.mcp._target import Target
    from histor_sign.proxy import OnDrift

_COMMAND_ARG = typer.Argument(
    None, metavar="-- COMMAND...",
    help="The stdio server to run behind the proxy (after --), e.g. -- npx -y @scope/server.",
)
_SERVER_OPT = typer.Option(
    None, "--server", metavar="NAME",
    help="The pinned MCP server name ('trust add'): its latest signed revision is the "
    "contract. With --lock: the entry of the lock file (default: the only one, or the one "
    "locked from the same command or URL).",
)
_LOCK_OPT = typer.Option(
    None, "--lock", metavar="FILE",
    help="Serve a server locked in this lock file ('histor-sign lock'; trust on first use, "
    "not publisher-signed) instead of a pinned one: its locked definitions are the "
    "contract, enforced the same way.",
)
_AUDIT_OPT = typer.Option(
    None, "--audit", metavar="FILE",
    help="Append one JSON line per decision (session start, withheld tool, denied call) "
    "to FILE, fsynced; never argument values.",
)
_ON_DRIFT_OPT = typer.Option(
    "withhold", "--on-drift", metavar="withhold|block|warn",
    help="A served tool that is not the signed one: withhold it (default), block the whole "
    "session, or warn and pass it.",
)
_FAIL_ON_OPT = typer.Option(
    None, "--fail-on", case_sensitive=False,
    help="With --on-drift block: refuse only on a change of at least this risk (low, "
    "medium, high). Default: any change.",
)
_POLICY_OPT = typer.Option(
    None, "--policy", metavar="FILE",
    help="TOML guard policy (dry-run requirements, effect budgets, secret arguments; "
    "docs/guard.md).",
)
_TIMEOUT_OPT = typer.Option(
    30.0, "--timeout", metavar="SECONDS",
    help="How long the proxy waits for the server's answers to its own requests "
    "(initialize, tools/list).",
)

_MAX_MESSAGE_OPT = typer.Option(
    8 * 1024 * 1024, "--max-message-bytes", metavar="BYTES", min=1024,
    help="The largest JSON-RPC message relayed either way (default 8 MiB). A larger one "
    "fails only the request it answers (or is) with a JSON-RPC error; the session goes on.",
)


@app.command(context_settings={"allow_interspersed_args": False})
def proxy(
    command: list[str] | None = _COMMAND_ARG,
    server: str | None = _SERVER_OPT,
    url: str | None = t.URL_OPTION,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    pins: PinsOpt = None,
    audit: Path | None = _AUDIT_OPT,
    on_drift: str = _ON_DRIFT_OPT,
    fail_on: Risk | None = _FAIL_ON_OPT,
    policy: str | None = _POLICY_OPT,
    timeout: float = _TIMEOUT_OPT,
    max_message_bytes: int = _MAX_MESSAGE_OPT,
    server_is_trusted_code: bool = t.TRUSTED_CODE_OPTION,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
    lock: Path | None = _LOCK_OPT,
) -> None:
    """Serve a pinned MCP server to a host over stdio, enforcing its signed contract.

    Before serving, the latest revision at the pinned location is verified as 'check
    --server' does (identity, chain, no rollback or fork); then the server's complete
    tools/list is compared with the signed definitions. The host is offered only tools
    served exactly as signed (as the signed objects); each tools/call is checked by the
    guard before it reaches the server. A refused session answers the host's initialize
    with an error. The server runs as a stdio child (-- COMMAND...) or at --url.
    With --lock FILE the contract is a lock file's entry instead (trust on first use, not
    publisher-signed; nothing is verified), served the same way.
    Exit codes: 0 the host ended the session, 1 refused (not pinned, verification,
    freshness, --on-drift block), 2 bad input or a fault.
    """
    from histor_sign.mcp._target import FetchOptions
    from histor_sign.proxy import Proxy

    mode = _drift_mode(on_drift, fail_on)
    target = _upstream_target(command, url, header, bearer_token_env, server_is_trusted_code)
    FetchOptions(timeout=timeout)  # the same bounds check as fetch
    t.warn_push_credentials(target)
    flags = VerifyFlags(None, GITHUB_ACTIONS_ISSUER, None, None, None, None, trusted_root,
                        trust_config, staging, offline)
    locked = _locked(lock, server, target, flags.any_given() or pins is not None)
    if locked is None and server is None:
        raise UsageError("give the server to serve: --server NAME (pinned) or --lock FILE")
    # The pin's recorded trust root applies; a trust flag must name that same root.
    trust = flags.given_trust()
    if trust is not None:
        trust.warning()  # reads the trust files: bad ones are bad input before anything
        # starts; the proxy says the pin's root's warning itself, once
    rules = _policy(policy)

    proxy = Proxy(server=locked.server if locked else str(server), upstream=target,
                  trust=trust, offline=offline, store=pins, on_drift=mode, fail_on=fail_on,
                  policy=rules, audit=audit, notice=_stderr_line, timeout=timeout,
                  locked=locked, max_message_bytes=max_message_bytes)
    outcome = proxy.run_stdio()
    if outcome.status == "ended":
        return
    # Through the proxy's notices too: a stderr nobody reads cannot keep the process alive.
    proxy.notice(f"{PROG}: error: {outcome.message}" if outcome.status == "failed"
                 else f"{PROG}: {outcome.message}")
    proxy.notice.flush(proxy.shutdown_grace)
    raise typer.Exit(1 if outcome.status == "refused" else 2)


def _drift_mode(on_drift: str, fail_on: Risk | None) -> "OnDrift":
    """Step: ``--on-drift`` as a mode; ``--fail-on`` only with ``block``."""
    from histor_sign.proxy import OnDrift

    try:
        mode = OnDrift(on_drift)
    except ValueError:
        raise UsageError("--on-drift must be withhold, block or warn") from None
    if fail_on is not None and mode is not OnDrift.BLOCK:
        raise UsageError("--fail-on applies only with --on-drift block")
    return mode


def _policy(path: str | None) -> "Policy | None":
    """Step: ``--policy`` read (bad input before anything starts); without one the guard is
    imported only once the server is starting (the proxy does)."""
    if path is None:
        return None
    from histor_sign.guard import Policy

    return Policy.load(path)


def _upstream_target(command: list[str] | None, url: str | None, header: list[str] | None,
                     bearer_token_env: str | None, trusted_code: bool) -> "Target":
    """Step: the server behind the proxy: ``-- COMMAND...`` or ``--url``."""
    stdio = None
    if command:
        import shlex

        stdio = shlex.join(command)
    if stdio is None and url is None:
        raise UsageError("give the server behind the proxy: -- COMMAND... or --url URL")
    target = t.target_from_flags(stdio, url, header, bearer_token_env,
                                 trusted_code=trusted_code)
    assert target is not None
    return target


def _stderr_line(line: str) -> None:
    """One inert line on stderr, for the proxy's notice writer thread: written to the file
    descriptor directly, so a write blocked on a full pipe holds no lock of ``sys.stderr``
    (which the interpreter's exit would wait for)."""
    from histor_sign._escape import inert_line

    text = inert_line(line) + "\n"
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (an in-process test run)
        sys.stderr.write(text)
        sys.stderr.flush()
        return
    view = memoryview(text.encode(getattr(sys.stderr, "encoding", None) or "utf-8",
                                  "backslashreplace"))
    while view:
        view = view[os.write(fd, view):]


def _locked(lock: Path | None, server: str | None, target: "Target",
            trust_flags: bool) -> "LockedRevision | None":
    """The lock file's entry to serve (``--lock``), read and checked before anything starts."""
    if lock is None:
        return None
    if trust_flags:
        raise UsageError("--lock serves a locked server: nothing is verified, so --pins and "
                         "the trust flags do not apply")
    from histor_sign.lock import locked_revision

    return locked_revision(lock, server, target.describe())


def proxy_parameters(args: "Sequence[str]") -> dict[str, Any]:
    """What ``histor-sign proxy ARGS`` runs with: ``args`` parsed by this command's own
    option definitions (the very parser a host's start of the proxy goes through), as the
    proxy function's parameters (``server``, ``pins``, ``lock``, ``on_drift``,
    ``trust_config``, ``command`` …, each default filled in). Nothing runs. A command line
    the proxy's parser refuses raises :class:`UsageError` with the parser's message."""
    import contextlib
    import inspect
    import io

    import typer.main

    root = typer.main.get_command(app)
    commands = getattr(root, "commands", None)  # a group, unless proxy is the only command
    command = commands["proxy"] if isinstance(commands, dict) else root
    try:  # the parser's own output (--help) is not this command's: it is dropped
        with contextlib.redirect_stdout(io.StringIO()), \
                command.make_context("proxy", list(args)) as ctx:
            parameters = inspect.signature(proxy).parameters
            return {name: _as_annotated(parameters[name].annotation, value)
                    for name, value in ctx.params.items()}
    except typer.Exit:  # --help: the proxy would print its help and serve nothing
        raise UsageError("it asks the proxy for its help, not to serve") from None
    except typer.TyperException as exc:  # click's usage errors (typer vendors click)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        raise UsageError(message.replace("\n", " ")) from None


def _as_annotated(annotation: Any, value: Any) -> Any:
    """Step: a parsed value as the proxy function's parameter of type ``annotation``
    receives it (click's parser gives a path as text, a repeated value as a tuple, a choice
    as its text; typer converts them when it calls the command, and
    :func:`proxy_parameters` calls nothing)."""
    import enum
    import typing

    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    kinds = [k for k in typing.get_args(annotation) or (annotation,) if k is not type(None)]
    kind = kinds[0] if len(kinds) == 1 else None
    if value is None or kind is None:
        return value
    if kind is Path and isinstance(value, str):
        return Path(value)
    if typing.get_origin(kind) is list and isinstance(value, tuple):
        return list(value)
    if isinstance(kind, type) and issubclass(kind, enum.Enum) and not isinstance(value, kind):
        return kind(value)
    return value
