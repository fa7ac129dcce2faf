"""``scan`` and ``replay``: catalog collisions and observed-call replay."""


import os
import sys
from pathlib import Path

import typer

from histor_sign._limits import (
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_PARTNERS,
    DEFAULT_MAX_SCAN_TOOLS,
    DEFAULT_MAX_TRACE_BYTES,
    DEFAULT_MAX_VALIDATIONS,
    DEFAULT_SCAN_BUDGET_SECONDS,
    DEFAULT_SCAN_THRESHOLD,
)
from histor_sign.cli import target_options as t
from histor_sign.cli.app import app, emit, note
from histor_sign.errors import UsageError
from histor_sign.models import Finding, Severity
from histor_sign.report._findings import FailOn, at_least, reaches_threshold
from histor_sign.report._render import ReportFormat, render_pieces

FORMAT_OPT = typer.Option(
    ReportFormat.human, "--format", "-f", help="Output format: human, json or sarif."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the report to this file (atomically) instead of stdout."
)
FAIL_ON_OPT = typer.Option(
    FailOn.error, "--fail-on",
    help="Exit 1 when a finding reaches this severity: warning, error or never.",
)
MIN_SEVERITY_OPT = typer.Option(
    Severity.note, "--min-severity",
    help="Show only findings at this severity or above: note (all), warning or error. "
    "--fail-on still judges every finding.",
)
STRICT_OPT = typer.Option(
    False, "--strict",
    help="Fail (exit 1) when analysis is incomplete; incomplete findings render as warnings.",
)

CATALOGS_ARG = typer.Argument(
    None, help="Tool catalogs (MCP, OpenAI, Anthropic, arrays, snapshots); - reads stdin once. "
    "With --stdio/--url, the live server's tools are scanned together with these."
)
TRACES_ARG = typer.Argument(
    ..., help="Trace files: provider responses, MCP tools/call requests, or JSONL mixes."
)
CATALOG_OPT = typer.Option(..., "--catalog", "-c", help="Catalog to replay against (repeatable).")


def parse_threshold(value: str) -> float:
    """``--threshold``: a similarity in (0, 1] (scan and release)."""
    try:
        number = float(value)
    except ValueError:
        raise UsageError(f"--threshold must be a number in (0, 1], got {value!r}") from None
    if not 0 < number <= 1:
        raise UsageError(f"--threshold must be in (0, 1], got {value}")
    return number


#: Library bound parameters and the replay flags that set them.

def _positive(name: str, value: int) -> int:
    if value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value}")
    return value


def _positive_seconds(name: str, value: float) -> float:
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{name} must be a positive number of seconds, got {value}")
    return value


def _finish(
    findings: list[Finding],
    stats: dict[str, object],
    fmt: ReportFormat,
    output: Path | None,
    fail_on: FailOn,
    strict: bool,
    command: str,
    min_severity: Severity = Severity.note,
) -> None:
    color = (
        output is None and fmt is ReportFormat.human and sys.stdout.isatty()
        and "NO_COLOR" not in os.environ
    )
    shown = shown_findings(findings, min_severity, strict)
    emit(render_pieces(shown, fmt, strict=strict, stats=stats, command=command,
                       color=color), output, colors=color)
    if reaches_threshold(findings, fail_on, strict):
        raise typer.Exit(1)


def shown_findings(findings: list[Finding], minimum: Severity, strict: bool) -> list[Finding]:
    """``--min-severity``: the findings to show; how many were left out is said on stderr."""
    shown = at_least(findings, minimum, strict)
    hidden = len(findings) - len(shown)
    if hidden:
        note(f"{hidden} finding{'s' if hidden != 1 else ''} below --min-severity "
             f"{minimum.value} not shown")
    return shown


@app.command()
def scan(
    catalogs: list[str] | None = CATALOGS_ARG,
    format: ReportFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    fail_on: FailOn = FAIL_ON_OPT,
    threshold: str = typer.Option(
        str(DEFAULT_SCAN_THRESHOLD), "--threshold", metavar="FLOAT",
        help="Description similarity in (0, 1] that makes two same-action tools confusable "
        "when their object words do not match exactly.",
    ),
    strict: bool = STRICT_OPT,
    min_severity: Severity = MIN_SEVERITY_OPT,
    max_tools: int = typer.Option(
        DEFAULT_MAX_SCAN_TOOLS, "--max-tools", help="Imported-tool limit."
    ),
    max_bytes: int = typer.Option(
        DEFAULT_MAX_FILE_BYTES, "--max-bytes", metavar="N",
        help="Fail if a catalog file (or standard input) is larger (default 64 MiB).",
    ),
    max_candidates: int = typer.Option(
        DEFAULT_MAX_CANDIDATES,
        "--max-candidates",
        help="Schema-proof limit: candidate pairs analysed.",
    ),
    max_partners: int = typer.Option(
        DEFAULT_MAX_PARTNERS, "--max-partners",
        help="Candidate partners per tool in a large group of same-action, same-object tools; "
        "the rest are reported as not analysed.",
    ),
    budget_seconds: float = typer.Option(
        DEFAULT_SCAN_BUDGET_SECONDS, "--budget-seconds", metavar="SECONDS",
        help="Wall-clock budget of the scan; pairs left when it runs out are reported as "
        "not analysed (unknown).",
    ),
    stdio: str | None = t.STDIO_OPTION,
    url: str | None = t.URL_OPTION,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    server_is_trusted_code: bool = t.TRUSTED_CODE_OPTION,
    timeout: float = t.TIMEOUT_OPTION,
    protocol: t.ProtocolChoice = t.PROTOCOL_OPTION,
) -> None:
    """Find confusable tools (same action on the same object) and description shadowing
    (TC001–TC005, TC010, TC011)."""
    from histor_sign.catalog import load_catalogs
    from histor_sign.collisions import ScanOptions, scan_catalogs

    options = ScanOptions(
        threshold=parse_threshold(threshold),
        max_tools=_positive("--max-tools", max_tools),
        max_bytes=_positive("--max-bytes", max_bytes),
        max_candidates=_positive("--max-candidates", max_candidates),
        max_partners=_positive("--max-partners", max_partners),
        budget_seconds=_positive_seconds("--budget-seconds", budget_seconds),
    )
    target = t.target_from_flags(stdio, url, header, bearer_token_env, required=not catalogs,
                                 trusted_code=server_is_trusted_code)
    loaded = load_catalogs(catalogs or [], max_tools=options.max_tools,
                           max_bytes=options.max_bytes)
    if target is not None:
        fetch = t.fetch_options_from_flags(
            timeout=timeout, max_tools=options.max_tools, protocol=protocol
        )
        loaded.insert(0, t.fetch_catalog(target, fetch))
    result = scan_catalogs(loaded, options)
    _finish(result.findings, result.stats, format, output, fail_on, strict, "scan",
            min_severity)


@app.command()
def replay(
    traces: list[str] = TRACES_ARG,
    catalog: list[str] = CATALOG_OPT,
    format: ReportFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    fail_on: FailOn = FAIL_ON_OPT,
    strict: bool = STRICT_OPT,
    max_tools: int = typer.Option(
        DEFAULT_MAX_SCAN_TOOLS, "--max-tools", help="Imported-tool limit."
    ),
    max_calls: int = typer.Option(DEFAULT_MAX_CALLS, "--max-calls", help="Observed-call limit."),
    max_validations: int = typer.Option(
        DEFAULT_MAX_VALIDATIONS, "--max-validations", help="Call-by-tool schema validation limit."
    ),
    max_trace_bytes: int = typer.Option(
        DEFAULT_MAX_TRACE_BYTES, "--max-trace-bytes", help="Aggregate trace-byte limit."
    ),
) -> None:
    """Replay observed calls: which other catalog tools accept the same arguments (TC006–TC009)."""
    from histor_sign.collisions._replay import ReplayOptions, replay_paths

    options = ReplayOptions(
        max_tools=_positive("--max-tools", max_tools),
        max_calls=_positive("--max-calls", max_calls),
        max_validations=_positive("--max-validations", max_validations),
        max_trace_bytes=_positive("--max-trace-bytes", max_trace_bytes),
    )
    result = replay_paths(catalog, traces, options)
    _finish(result.findings, result.stats, format, output, fail_on, strict, "replay")
