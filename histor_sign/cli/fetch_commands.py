"""``fetch``: write a server's complete tools/list as a ``histor.snapshot/v1`` file."""


from pathlib import Path

import typer

from histor_sign._atomic import reserve_outputs, write_all_atomic
from histor_sign.cli.app import app, emit
from histor_sign.cli.target_options import (
    ALLOW_DUPLICATES_OPTION,
    BEARER_OPTION,
    HEADER_OPTION,
    MAX_BYTES_OPTION,
    MAX_PAGES_OPTION,
    MAX_TOOLS_OPTION,
    PROTOCOL_OPTION,
    QUIET_OPTION,
    STDIO_OPTION,
    TIMEOUT_OPTION,
    TOTAL_TIMEOUT_OPTION,
    TRUSTED_CODE_OPTION,
    URL_OPTION,
    ProtocolChoice,
    fetch_options_from_flags,
    fetch_snapshot,
    target_from_flags,
    warn_push_credentials,
)

SNAPSHOT_OUTPUT_OPTION = typer.Option(
    None, "--output", "-o",
    help="Write the snapshot to this file (atomically; nothing is written on failure). "
    "Default: standard output.",
)


@app.command()
def fetch(
    stdio: str | None = STDIO_OPTION,
    url: str | None = URL_OPTION,
    header: list[str] | None = HEADER_OPTION,
    bearer_token_env: str | None = BEARER_OPTION,
    server_is_trusted_code: bool = TRUSTED_CODE_OPTION,
    output: Path | None = SNAPSHOT_OUTPUT_OPTION,
    timeout: float = TIMEOUT_OPTION,
    total_timeout: float = TOTAL_TIMEOUT_OPTION,
    max_pages: int = MAX_PAGES_OPTION,
    max_tools: int = MAX_TOOLS_OPTION,
    max_bytes: int = MAX_BYTES_OPTION,
    protocol: ProtocolChoice = PROTOCOL_OPTION,
    allow_duplicates: bool = ALLOW_DUPLICATES_OPTION,
    quiet: bool = QUIET_OPTION,
) -> None:
    """Fetch the complete tools/list of an MCP server (every page) into a snapshot."""
    target = target_from_flags(stdio, url, header, bearer_token_env,
                                 trusted_code=server_is_trusted_code)
    assert target is not None
    warn_push_credentials(target)
    options = fetch_options_from_flags(
        timeout=timeout, total_timeout=total_timeout, max_pages=max_pages,
        max_tools=max_tools, max_bytes=max_bytes, protocol=protocol,
        allow_duplicates=allow_duplicates, quiet=quiet,
    )
    if output is None:
        emit(fetch_snapshot(target, options, summary=not quiet).to_bytes().decode("utf-8"),
             None)
        return
    # The output is checked before the server is started (a FIFO keeps its reader).
    with reserve_outputs([output]) as reserved:
        data = fetch_snapshot(target, options, summary=not quiet).to_bytes()
        write_all_atomic({output: data}, reserved=reserved)
