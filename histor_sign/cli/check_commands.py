"""``check``: compare the tools a server serves now with a signed revision (SPEC §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from histor_sign.catalog import Tool
from histor_sign.cli.app import OutputFormat, app, emit

if TYPE_CHECKING:
    from histor_sign.drift import DriftResult

FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human (summary and per-tool lines) or json."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the result to this file (atomically)."
)
ENVELOPE_OPT = typer.Option(
    ..., "--envelope", metavar="FILE",
    help="Signed revision envelope (or bare statement) to compare against. Checks digests "
    "only: run 'histor-sign verify' on it to check signature and identity.",
)
SIGNED_TOOLS_OPT = typer.Option(
    None, "--signed-tools", metavar="FILE",
    help="The catalog that was signed (e.g. the release snapshot); lets check name the "
    "changed fields and diff descriptions. Must match the envelope's digests.",
)
TOOLS_ARG = typer.Argument(
    ..., metavar="TOOLS_FILE",
    help="What the server serves now: tools/list JSON or a fetch snapshot; - for stdin.",
)


def current_tools_from_file(path: str) -> list[Tool]:
    """The source of current tools. (Live --stdio/--url fetch plugs in beside this.)"""
    from histor_sign.catalog import load_catalog

    return load_catalog(path).tools


@app.command()
def check(
    tools: str = TOOLS_ARG,
    envelope: str = ENVELOPE_OPT,
    signed_tools: str | None = SIGNED_TOOLS_OPT,
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
) -> None:
    """Detect drift between served tool definitions and a signed revision.

    Exit codes: 0 match, 1 different, 2 bad input.
    """
    from histor_sign.canonical import read_json_file
    from histor_sign.catalog import load_catalog
    from histor_sign.drift import compare

    signed_statement = read_json_file(envelope)
    signed_catalog = load_catalog(signed_tools).tools if signed_tools else None
    result = compare(current_tools_from_file(tools), signed_statement, signed_catalog)
    if format is OutputFormat.json:
        emit(json.dumps(result.to_json(), indent=2, ensure_ascii=False), output)
    else:
        emit(render_human(result), output)
    if not result.matches:
        raise typer.Exit(1)


def render_human(result: DriftResult) -> str:
    from histor_sign.drift import CHANGED

    head = (
        f"{result.status}: {result.server} revision {result.revision}"
        f" ({result.count('changed')} changed, {result.count('added')} added, "
        f"{result.count('removed')} removed)"
    )
    lines = [head]
    for item in result.tools:
        line = f"  {item.change:<8} {_printable(item.name)}"
        if item.change == CHANGED:
            line += ": " + (", ".join(item.fields) if item.fields is not None
                            else "fields unknown (pass --signed-tools to name them)")
        lines.append(line)
        if item.description_diff:
            lines += ["      " + _printable(d) for d in item.description_diff.splitlines()]
    return "\n".join(lines)


def _printable(text: str) -> str:
    """Tool text is untrusted: escape control characters before printing to a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
