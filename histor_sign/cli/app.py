"""The typer application object and the error boundary shared by every command."""


import sys
from enum import StrEnum
from pathlib import Path
from typing import NoReturn

import typer

from histor_sign import __version__
from histor_sign._internal.atomic import write_atomic
from histor_sign.errors import HistorError

PROG = "histor-sign"

app = typer.Typer(
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


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"{PROG} {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version_callback,
        is_eager=True,
    ),
) -> None:
    """histor-sign."""


def fail(message: str, exit_code: int = 2) -> NoReturn:
    """Print one error line and exit (for the CLI layer only)."""
    sys.stderr.write(f"{PROG}: error: {message}\n")
    sys.stderr.flush()
    raise SystemExit(exit_code)


def warn(message: str | None) -> None:
    """One ``histor-sign: warning: ...`` line on stderr (nothing for None)."""
    if message:
        sys.stderr.write(f"{PROG}: warning: {message}\n")
        sys.stderr.flush()


def emit(text: str, output: Path | None) -> None:
    """Write a command's main output to stdout, or atomically to ``--output``."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        sys.stdout.flush()
    else:
        write_atomic(output, text.encode("utf-8"))


#: How the CLI spells each library parameter an error may name (``HistorError.param``).
FLAGS: dict[str, str] = {
    # fetching (histor_sign.mcp: Target and FetchOptions)
    "command": "--stdio",
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
    "threshold": "--threshold",
    "strict": "--strict",
    "fail_on": "--fail-on",
    "max_calls": "--max-calls",
    "max_trace_bytes": "--max-trace-bytes",
    "max_validations": "--max-validations",
    # statements, signing and verification
    "identity": "--identity",
    "identity_token": "--identity-token",
    "cert_identity": "--cert-identity",
    "previous": "--previous",
    "revisions": "--revisions",
    "envelope": "--envelope",
    "server": "--server",
    "tools": "--tools",
    "signed_tools": "--signed-tools",
    "trust_config": "--trust-config",
    "trusted_root": "--trusted-root",
    "staging": "--staging",
    "offline": "--offline",
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
    """Console entry point: run the app with one error boundary."""
    from histor_sign.canonical import reset_stdin

    reset_stdin()
    try:
        # Not standalone: click hands back exit codes and raises errors to us.
        result = app(args=argv, prog_name=PROG, standalone_mode=False)
    except HistorError as exc:
        fail(cli_message(exc), exc.exit_code)
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        fail("interrupted", 130)
    except typer.TyperException as exc:  # click's usage errors (typer vendors click)
        if type(exc).__name__ == "NoArgsIsHelpError":
            sys.stderr.write(exc.format_message() + "\n")
            raise SystemExit(2) from None
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        fail(message.replace("\n", " ") + hint, 2)
    except KeyboardInterrupt:
        fail("interrupted", 130)
    except BrokenPipeError:
        raise SystemExit(1) from None
    if result == 130:  # click turned Ctrl-C into an exit code
        fail("interrupted", 130)
    raise SystemExit(result if isinstance(result, int) else 0)
