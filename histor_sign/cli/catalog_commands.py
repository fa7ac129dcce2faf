"""``digest`` and ``build``: digests of a catalog and a chained revision statement."""


from pathlib import Path

import typer

from histor_sign._escape import printable
from histor_sign.canonical import read_json_file
from histor_sign.cli.app import OutputFormat, app, emit, json_document
from histor_sign.cli.target_options import (
    BEARER_OPTION,
    HEADER_OPTION,
    MAX_BYTES_OPTION,
    MAX_PAGES_OPTION,
    MAX_TOOLS_OPTION,
    PROTOCOL_OPTION,
    STDIO_OPTION,
    TIMEOUT_OPTION,
    TOTAL_TIMEOUT_OPTION,
    TRUSTED_CODE_OPTION,
    URL_OPTION,
    ProtocolChoice,
    fetch_options_from_flags,
    target_from_flags,
    tools_from_file_or_target,
)
from histor_sign.models import Statement
from histor_sign.revision import build_statement, digests, manifest_bytes

TOOLS_ARG = typer.Argument(
    None,
    help="Tool catalog: MCP tools/list JSON, a fetch snapshot, or - for stdin. "
    "Omit it to fetch live with --stdio or --url.",
)
OUTPUT_OPT = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")
FORMAT_OPT = typer.Option(OutputFormat.human, "--format", "-f", help="Output format.")


@app.command()
def digest(
    tools: str | None = TOOLS_ARG,
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    stdio: str | None = STDIO_OPTION,
    url: str | None = URL_OPTION,
    header: list[str] | None = HEADER_OPTION,
    bearer_token_env: str | None = BEARER_OPTION,
    server_is_trusted_code: bool = TRUSTED_CODE_OPTION,
    timeout: float = TIMEOUT_OPTION,
    total_timeout: float = TOTAL_TIMEOUT_OPTION,
    max_pages: int = MAX_PAGES_OPTION,
    max_tools: int = MAX_TOOLS_OPTION,
    max_bytes: int = MAX_BYTES_OPTION,
    protocol: ProtocolChoice = PROTOCOL_OPTION,
    manifest_out: Path | None = typer.Option(
        None, "--manifest-out", metavar="FILE",
        help="Also write the manifest itself (RFC 8785 bytes whose SHA-256 is the manifest "
        "digest): the file 'gh attestation verify' checks against the attestation.",
    ),
) -> None:
    """Print the manifest digest and per-tool digests of an MCP catalog (file or live)."""
    options = fetch_options_from_flags(
        timeout=timeout, total_timeout=total_timeout, max_pages=max_pages,
        max_tools=max_tools, max_bytes=max_bytes, protocol=protocol,
    )
    target = target_from_flags(stdio, url, header, bearer_token_env, required=False,
                                 trusted_code=server_is_trusted_code)
    loaded = tools_from_file_or_target(tools, target, options)
    manifest, per_tool = digests(loaded)
    if manifest_out is not None:
        from histor_sign._atomic import write_atomic

        write_atomic(manifest_out, manifest_bytes(loaded))
    if format is OutputFormat.json:
        doc = {"manifestDigest": manifest, "toolDigests": dict(sorted(per_tool.items()))}
        emit(json_document(doc), output)
        return
    # Tool names are chosen by the server: shown escaped, like every human renderer does.
    shown = {printable(name): d for name, d in sorted(per_tool.items())}
    width = max([len("manifest"), *(len(n) for n in shown)])
    lines = [f"{'manifest':<{width}}  {manifest}"]
    lines += [f"{name:<{width}}  {d}" for name, d in shown.items()]
    emit("\n".join(lines), output)


@app.command()
def build(
    tools: str | None = TOOLS_ARG,
    server: str = typer.Option(..., "--server", help="Registry name, e.g. io.github.OWNER/NAME."),
    server_version: str = typer.Option(..., "--server-version", help="The server's version."),
    identity: str = typer.Option(
        ..., "--identity",
        help="Signer workflow identity the revision claims. In GitHub Actions, a server in "
        "an io.github.OWNER namespace this job's repository owner cannot own is refused "
        "here, as release and sign refuse it, before anything is fetched.",
    ),
    previous: str | None = typer.Option(
        None, "--previous", help="Previous statement or envelope to chain to."
    ),
    output: Path | None = OUTPUT_OPT,
    stdio: str | None = STDIO_OPTION,
    url: str | None = URL_OPTION,
    header: list[str] | None = HEADER_OPTION,
    bearer_token_env: str | None = BEARER_OPTION,
    server_is_trusted_code: bool = TRUSTED_CODE_OPTION,
    timeout: float = TIMEOUT_OPTION,
    total_timeout: float = TOTAL_TIMEOUT_OPTION,
    max_pages: int = MAX_PAGES_OPTION,
    max_tools: int = MAX_TOOLS_OPTION,
    max_bytes: int = MAX_BYTES_OPTION,
    protocol: ProtocolChoice = PROTOCOL_OPTION,
) -> None:
    """Build a revision statement (canonical RFC 8785 bytes) chained to --previous."""
    _namespace_preflight(server, identity)
    prev = Statement.from_json(read_json_file(previous), previous) if previous else None
    options = fetch_options_from_flags(
        timeout=timeout, total_timeout=total_timeout, max_pages=max_pages,
        max_tools=max_tools, max_bytes=max_bytes, protocol=protocol,
    )
    target = target_from_flags(stdio, url, header, bearer_token_env, required=False,
                                 trusted_code=server_is_trusted_code)
    loaded = tools_from_file_or_target(tools, target, options)
    statement = build_statement(
        tools=loaded,
        server=server,
        identity=identity,
        server_version=server_version,
        previous=prev,
    )
    # emit() writes these exact bytes to --output (no newline added to a file).
    emit(statement.to_bytes().decode("utf-8"), output)


def _namespace_preflight(server: str, identity: str) -> None:
    """In GitHub Actions, refuse a statement whose ``io.github`` namespace this job cannot
    sign for: the job's token will carry the repository owner the runner's variables name,
    and ``sign``/``release`` would refuse it only after the fetch. Elsewhere the signer's
    repository is unknown (``identity`` may be a reusable workflow another owner keeps), so
    ``sign`` makes the same check once it holds the token."""
    import os

    from histor_sign.models import validate_server_name
    from histor_sign.signing import actions_identity, require_namespace

    claimed = actions_identity(identity, os.environ)
    if claimed is not None:
        validate_server_name(server)
        require_namespace(server, claimed)
