"""``guard``: decide whether one tool call may be dispatched (SPEC §6)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from histor_sign.cli.app import OutputFormat, app, emit
from histor_sign.errors import UsageError

FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human (ALLOW/DENY and reasons) or json."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the decision to this file (atomically)."
)


@app.command()
def guard(
    call: str = typer.Argument(
        ...,
        metavar="CALL",
        help="The call: {\"name\", \"arguments\"} or a provider call shape (OpenAI, "
        "Anthropic, MCP tools/call); - reads stdin. Content that is not a decidable call "
        "is a DENY (exit 1), not an error.",
    ),
    catalog: str | None = typer.Option(
        None, "--catalog", "--tools", metavar="FILE",
        help="Tool catalog holding the contract (each tool's inputSchema and annotations).",
    ),
    envelope: str | None = typer.Option(
        None, "--envelope", metavar="FILE",
        help="Bind the contract to this signed revision: tools whose digest differs from "
        "its toolDigests are denied. Checks digests only — run 'histor-sign verify' on the "
        "envelope to check its signature and identity.",
    ),
    policy: str | None = typer.Option(
        None, "--policy", metavar="FILE",
        help="TOML policy: dry-run requirements, effect budgets, secret arguments "
        "(see docs/guard.md).",
    ),
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
) -> None:
    """Allow or deny one tool call against its argument contract; never runs the tool.

    Exit codes: 0 allow, 1 deny, 2 bad input (unreadable files, malformed catalog,
    envelope or policy).
    """
    from histor_sign.canonical import read_bytes, read_json_file
    from histor_sign.catalog import load_catalog
    from histor_sign.guard import Guard, Policy

    if catalog is None:
        raise UsageError(
            "guard needs the contract: --catalog TOOLS, or --envelope E --tools TOOLS"
        )
    tools = load_catalog(catalog).tools
    rules = Policy.load(policy) if policy else None
    if envelope is not None:
        g = Guard.from_envelope(read_json_file(envelope), tools, rules)
    else:
        g = Guard.from_catalog(tools, rules)
    decision = g.check_document(read_bytes(call), call)
    if format is OutputFormat.json:
        emit(json.dumps(decision.to_json(), indent=2, ensure_ascii=False), output)
    else:
        lines = [f"{decision.verdict.upper()} {decision.tool or '(no tool)'}"]
        for reason in decision.reasons:
            lines.append(f"  {reason.pointer or '-'}  {reason.code}: {reason.message}")
        emit("\n".join(lines), output)
    if not decision.allowed:
        raise typer.Exit(1)
