"""``digest`` and ``build``: digests of a catalog and a chained revision statement."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from histor_sign.canonical import canonical_bytes, read_json_file
from histor_sign.catalog import Tool, load_catalog
from histor_sign.cli.app import OutputFormat, app, emit
from histor_sign.revision import build_statement, digests, statement_from

TOOLS_ARG = typer.Argument(
    ..., help="Tool catalog: MCP tools/list JSON, a fetch snapshot, or - for stdin."
)
OUTPUT_OPT = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")


def load_tools(path: str) -> list[Tool]:
    return load_catalog(path).tools


@app.command()
def digest(
    tools: str = TOOLS_ARG,
    format: OutputFormat = typer.Option(OutputFormat.human, "--format", "-f"),
    output: Path | None = OUTPUT_OPT,
) -> None:
    """Print the manifest digest and per-tool digests of an MCP catalog."""
    manifest, per_tool = digests(load_tools(tools))
    if format is OutputFormat.json:
        doc = {"manifestDigest": manifest, "toolDigests": dict(sorted(per_tool.items()))}
        emit(json.dumps(doc, indent=2, ensure_ascii=False), output)
        return
    width = max([len("manifest"), *(len(n) for n in per_tool)])
    lines = [f"{'manifest':<{width}}  {manifest}"]
    lines += [f"{name:<{width}}  {d}" for name, d in sorted(per_tool.items())]
    emit("\n".join(lines), output)


@app.command()
def build(
    tools: str = TOOLS_ARG,
    server: str = typer.Option(..., "--server", help="Registry name, e.g. io.github.OWNER/NAME."),
    server_version: str = typer.Option(..., "--server-version", help="The server's version."),
    identity: str = typer.Option(
        ..., "--identity", help="Signer workflow identity the revision claims."
    ),
    previous: str | None = typer.Option(
        None, "--previous", help="Previous statement or envelope to chain to."
    ),
    output: Path | None = OUTPUT_OPT,
) -> None:
    """Build a revision statement (canonical RFC 8785 bytes) chained to --previous."""
    prev = statement_from(read_json_file(previous), previous) if previous else None
    statement = build_statement(
        tools=load_tools(tools),
        server=server,
        identity=identity,
        server_version=server_version,
        previous=prev,
    )
    data = canonical_bytes(statement)
    emit(data.decode("utf-8"), output) if output is None else _write_exact(output, data)


def _write_exact(path: Path, data: bytes) -> None:
    from histor_sign.atomic import write_atomic

    write_atomic(path, data)
