"""The typer application object and the error boundary shared by every command."""


import atexit
import gc
import os
import sys
import traceback
from collections.abc import Iterable, Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from histor_sign._escape import inert_line, inert_text, printable, whole_lines
from histor_sign._version import JSON_SCHEMA_VERSION, __version__
from histor_sign.errors import HistorError

PROG = "histor-sign"

#: Every top-level command, in the order ``--help`` lists them, and the module under
#: ``histor_sign.cli`` that registers it. A command line imports only its command's module
#: (:func:`load_commands`): the others, and what they import, cost start-up for nothing.
COMMANDS: dict[str, str] = {
    "digest": "catalog_commands",
    "build": "catalog_commands",
    "sign": "signing_commands",
    "verify": "signing_commands",
    "dev-sigstore": "signing_commands",
    "attest-github": "signing_commands",
    "guard": "guard_commands",
    "check": "check_commands",
    "fetch": "fetch_commands",
    "release": "release_commands",
    "demo": "release_commands",
    "scan": "scan_commands",
    "replay": "scan_commands",
    "init": "init_commands",
    "proxy": "proxy_commands",
    "wrap": "wrap_commands",
    "unwrap": "wrap_commands",
    "lock": "lock_commands",
    "yank": "yank_commands",
    "monitor": "monitor_commands",
    "trust": "trust_commands",
}
#: The root options, none of which takes a value (what :func:`load_commands` skips).
_ROOT_OPTIONS = frozenset({"--version", "--debug", "-h", "--help"})

#: Commands that are one bounded batch — they read a few size-bounded files, write their
#: report and return — and that import sigstore's or jsonschema's module graph to do it:
#: as the process's command (:func:`entry_point`) one runs with the cyclic collector off.
ONE_SHOT = frozenset({"verify", "guard"})


def command_name(argv: list[str] | None) -> str | None:
    """The command a command line names: its first word that is not a root option."""
    return next((a for a in argv or () if a not in _ROOT_OPTIONS), None)


class _Group(TyperGroup):
    """The root group: lists its commands in :data:`COMMANDS` order, whichever order
    their modules happened to be imported in."""

    def list_commands(self, ctx: Any) -> list[str]:
        rank = {name: i for i, name in enumerate(COMMANDS)}
        return sorted(super().list_commands(ctx), key=lambda n: rank.get(n, len(rank)))


def load_commands(argv: list[str] | None = None) -> None:
    """Register the commands this command line needs: only the named command's module
    when ``argv`` names a known command, else (help, an unknown or no command) all."""
    import importlib

    name = command_name(argv)
    if name in COMMANDS:
        modules = [COMMANDS[name]]
    elif name is None and argv and "--version" in argv and not {"-h", "--help"} & set(argv):
        modules = []
    else:
        modules = list(dict.fromkeys(COMMANDS.values()))
    for module in modules:
        importlib.import_module(f"histor_sign.cli.{module}")


app = typer.Typer(
    cls=_Group,
    name=PROG,
    help=(
        "Sign the complete tools/list of an MCP server with Sigstore, gate releases on "
        "tool collisions, and detect drift.\n\n"
        "Exit codes: 0 success; 1 verification failed, drift or findings at the threshold; "
        "2 usage error, bad input or operational error."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class OutputFormat(StrEnum):
    human = "human"
    json = "json"


#: Set to a non-empty value other than 0 for a full traceback on an internal error.
DEBUG_ENV = "HISTOR_SIGN_DEBUG"
_debug = False


def _version_callback(value: bool) -> None:
    if value:
        say(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version_callback,
        is_eager=True,
    ),
    debug: bool = typer.Option(
        False, "--debug",
        help=f"On an internal error print the full traceback (also: {DEBUG_ENV}=1).",
    ),
) -> None:
    """histor-sign."""
    global _debug
    _debug = _debug or debug


def fail(message: str, exit_code: int = 2) -> NoReturn:
    """Print one error line and exit (for the CLI layer only).

    The message is made one inert line (:func:`inert_line`): whatever a server or file put
    into it, it cannot break the line, move the cursor or issue a workflow command.
    """
    sys.stderr.write(inert_line(f"{PROG}: error: {message}") + "\n")
    sys.stderr.flush()
    raise SystemExit(exit_code)


def warn(message: str | None) -> None:
    """One ``histor-sign: warning: ...`` line on stderr (nothing for None), made inert."""
    if message:
        sys.stderr.write(inert_line(f"{PROG}: warning: {message}") + "\n")
        sys.stderr.flush()


def note(message: str) -> None:
    """One ``histor-sign: ...`` line of information on stderr (a summary, never a report),
    made inert; commands offer ``--quiet`` to leave it out."""
    sys.stderr.write(inert_line(f"{PROG}: {message}") + "\n")
    sys.stderr.flush()


def json_document(document: Mapping[str, object]) -> str:
    """A JSON document the CLI prints: ``schemaVersion`` first, then the members (see
    :data:`histor_sign._version.JSON_SCHEMA_VERSION` for what stays stable)."""
    import json

    return json.dumps({"schemaVersion": JSON_SCHEMA_VERSION, **document}, indent=2,
                      ensure_ascii=False)


def say(text: str, *, colors: bool = False) -> None:
    """Print text on stdout, every line made inert (:func:`inert_text`).

    The only way the CLI writes to stdout: a command's report or a line of progress.
    ``colors`` keeps the renderer's own SGR color codes (on a terminal only).
    """
    text = text if text.endswith("\n") or not text else text + "\n"
    sys.stdout.write(inert_text(text, colors=colors))
    sys.stdout.flush()


def emit(text: str | Iterable[str], output: Path | None, *, colors: bool = False) -> None:
    """Write a command's main output to stdout (via :func:`say`, so every line is inert;
    a JSON document keeps its value), or these exact bytes atomically to ``--output``.

    ``text`` may come in consecutive pieces (a large report): it is written as it comes, in
    runs of whole lines, never held whole.
    """
    runs = whole_lines([text] if isinstance(text, str) else text)
    if output is None:
        for run in runs:
            say(run, colors=colors)
    else:
        from histor_sign._atomic import write_atomic  # only a command writing a file needs it

        write_atomic(output, (run.encode("utf-8") for run in runs))


#: How the CLI spells each library parameter an error may name (``HistorError.param``).
FLAGS: dict[str, str] = {
    # fetching (histor_sign.mcp: Target and FetchOptions)
    "command": "--stdio",
    "trusted_code": "--server-is-trusted-code",
    "url": "--url",
    "headers": "--header",
    "bearer_token": "--bearer-token-env",
    "timeout": "--timeout",
    "total_timeout": "--total-timeout",
    "max_pages": "--max-pages",
    "max_tools": "--max-tools",
    "max_bytes": "--max-bytes",
    "protocol": "--protocol",
    "allow_duplicates": "--allow-duplicates",
    # scan, replay, release gate
    "max_candidates": "--max-candidates",
    "max_partners": "--max-partners",
    "budget_seconds": "--budget-seconds",
    "threshold": "--threshold",
    "strict": "--strict",
    "fail_on": "--fail-on",
    "max_calls": "--max-calls",
    "max_trace_bytes": "--max-trace-bytes",
    "max_validations": "--max-validations",
    # statements, signing and verification
    "identity": "--identity",
    "server": "--server",
    "identity_token": "--identity-token",
    "cert_identity": "--cert-identity",
    "identity_regexp": "--cert-identity-regexp",
    "workflow": "--workflow",
    "any_workflow_of_owner": "--any-workflow-of-owner",
    "repository": "--repository",
    "ref_pattern": "--ref-pattern",
    "previous": "--previous",
    "revisions": "--revisions",
    "envelope": "--envelope",
    "tools": "--tools",
    "signed_tools": "--signed-tools",
    "attestation": "--attestation",
    "trust_config": "--trust-config",
    "trusted_root": "--trusted-root",
    "staging": "--staging",
    "offline": "--offline",
    # client pins (trust add, check/guard --server)
    "location": "--envelope",
    # a pin's location: the user named no flag ('trust show NAME' shows it)
    "pinned_location": "the pinned envelope location",
    "owner_id": "--owner-id",
    "repository_id": "--repository-id",
    "replace_existing": "--replace",
    # the log monitor and yank
    "rekor_url": "--rekor-url",
    "start_index": "--start-index",
    "max_entries": "--max-entries",
    "revision": "--revision",
    "reason": "--reason",
    "acknowledge": "--acknowledge",
    # outputs
    "out_dir": "--out-dir",
    # lock files
    "update": "--update",
    "accept": "--accept",
}


def cli_message(exc: HistorError) -> str:
    """The error's message with the parameters it names spelled as this CLI's flags.

    The library writes a parameter as `name` (backquoted); each mention of the error's own
    parameter or of its alternatives becomes the flag. A message that does not mention its
    own parameter gets the flag as a prefix, so the line always says which flag to fix.
    """
    message = exc.message
    names = (exc.param, *exc.alternatives) if exc.param is not None else exc.alternatives
    for name in names:
        flag = FLAGS.get(name)
        if flag is None:
            continue
        mention = f"`{name}`"
        if mention in message:
            message = message.replace(mention, flag)
        elif name == exc.param:
            message = f"{flag}: {message}"
    return message


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the app with one error boundary (:func:`entry_point` is the process's entry;
    tests and scripts call this in-process)."""
    from histor_sign.canonical import reset_stdin

    global _debug
    reset_stdin()
    _debug = os.environ.get(DEBUG_ENV, "") not in ("", "0")
    try:
        load_commands(sys.argv[1:] if argv is None else argv)
        # Not standalone: click hands back exit codes and raises errors to us.
        result = app(args=argv, prog_name=PROG, standalone_mode=False)
    except HistorError as exc:
        fail(cli_message(exc), exc.exit_code)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        fail("interrupted", 130)
    except typer.TyperException as exc:  # click's usage errors (typer vendors click)
        _usage_error(exc)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        raise SystemExit(1) from None
    except Exception as exc:  # a bug: one line, exit 2 (exit 1 means "a check said no")
        internal_error(exc)
    _exit_with(result)


def _exit_with(result: object) -> NoReturn:
    """Step: leave with the command's exit code (click's 130 for Ctrl-C: interrupted)."""
    if result == 130:  # click turned Ctrl-C into an exit code
        fail("interrupted", 130)
    raise SystemExit(result if isinstance(result, int) else 0)


def _usage_error(exc: typer.TyperException) -> NoReturn:
    """Step: click's usage error as one line and exit 2 (bare help as click prints it)."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stderr.write(exc.format_message() + "\n")
        raise SystemExit(2) from None
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    fail(message.replace("\n", " ") + hint, 2)


def entry_point() -> NoReturn:
    """The process's entry point (the ``histor-sign`` script and ``python -m histor_sign``):
    :func:`main`; a :data:`ONE_SHOT` command runs with the cyclic collector off and, at exit,
    every object frozen (:func:`gc.freeze`) before the interpreter's teardown.

    Why: such a command imports sigstore's (or jsonschema's) module graph and keeps it until
    the process ends, so the collections its imports trigger free nothing, and the
    interpreter's last collection at shutdown walks all of it for nothing; frozen objects
    are left out of that walk. What changes: only that cyclic garbage still alive at exit
    is not collected then (Python does not promise that anyway); the exit, its ``atexit``
    handlers, flushing and exit status are Python's own. Public ``gc`` APIs only; the gain
    is measured in docs/benchmarks.md (``benchmarks/compare_startup.py``). In-process
    callers (tests, scripts) call :func:`main`, which leaves their collector alone."""
    if command_name(sys.argv[1:]) in ONE_SHOT:
        gc.disable()
        atexit.register(gc.freeze)  # handlers run last-in first-out: the command's first
    main()


def internal_error(exc: BaseException) -> NoReturn:
    """An unexpected exception: one error line and exit 2; the traceback only on request."""
    if _debug:
        traceback.print_exception(exc, file=sys.stderr)
    detail = printable(str(exc), limit=300)
    fail(
        f"internal error: {type(exc).__name__}{': ' + detail if detail else ''} (please report "
        f"this; set {DEBUG_ENV}=1 or pass --debug for the traceback)",
        2,
    )
