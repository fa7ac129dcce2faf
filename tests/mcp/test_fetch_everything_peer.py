"""A real third-party peer: the npm reference server (TS SDK, legacy era only, no
pagination, capability-dependent list, list_changed right after ``initialized``, SSE
priming events, a draft-07 ``$schema`` in a tool). What we fetch must be the same, tool
for tool and digest for digest, over stdio and Streamable HTTP and across fetches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli
from everything_peer import TOOL_NAMES, serve, stdio_command

from histor_sign.errors import FetchError
from histor_sign.mcp import FetchOptions, Target, fetch
from histor_sign.models import Snapshot
from histor_sign.revision import digests

pytestmark = pytest.mark.slow


def check_snapshot(snap: Snapshot, transport: str) -> None:
    assert [t["name"] for t in snap.tools] == TOOL_NAMES
    capture = snap.capture
    assert capture["transport"] == transport
    assert capture["era"] == "legacy" and capture["protocolVersion"] == "2025-11-25"
    # A fully capable host's declaration: the 17-tool list, not the bare 13-tool one.
    assert capture["clientCapabilities"] == {
        "roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}, "url": {}}}
    assert capture["serverInfo"]["name"] == "mcp-servers/everything"
    assert capture["serverCapabilities"]["tools"] == {"listChanged": True}
    assert capture["pages"] == 1 and capture["pageSizes"] == [len(TOOL_NAMES)]
    # It announces list_changed right after initialized: at most one restart, never an error.
    assert capture["restarts"] in (0, 1)
    echo = snap.tools[0]
    assert echo["inputSchema"]["$schema"] == "http://json-schema.org/draft-07/schema#"
    research = snap.tools[TOOL_NAMES.index("simulate-research-query")]
    assert research["execution"] == {"taskSupport": "required"}


def test_same_tools_and_digest_over_stdio_and_http_across_fetches() -> None:
    options = FetchOptions(timeout=20)
    stdio = [fetch(Target.stdio(stdio_command()), options) for _ in range(2)]
    with serve("streamableHttp", "/mcp") as url:
        http = [fetch(Target.http(url), options) for _ in range(2)]
    for snap in stdio:
        check_snapshot(snap, "stdio")
    for snap in http:
        check_snapshot(snap, "streamable-http")
    first = stdio[0]
    manifest, per_tool = digests(first.tools)
    assert sorted(per_tool) == sorted(TOOL_NAMES)
    for snap in [*stdio[1:], *http]:
        assert snap.tools == first.tools  # every served field, not only the digested ones
        assert digests(snap.tools) == (manifest, per_tool)


def test_cli_fetch_over_http_then_digest_matches_stdio(tmp_path: Path) -> None:
    out = tmp_path / "everything.snapshot.json"
    with serve("streamableHttp", "/mcp") as url:
        run = run_cli("fetch", "--url", url, "--output", str(out))
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert doc["capture"]["target"] == {"transport": "streamable-http", "url": url}
    assert [t["name"] for t in doc["tools"]] == TOOL_NAMES
    from_file = run_cli("digest", str(out))
    from_stdio = run_cli("digest", "--stdio", stdio_command())
    assert from_file.code == 0 and from_stdio.code == 0, from_file.stderr + from_stdio.stderr
    assert from_file.stdout == from_stdio.stdout and "sha256:" in from_file.stdout


def test_deprecated_http_sse_mode_is_named_in_one_error(tmp_path: Path) -> None:
    with serve("sse", "/sse") as url:
        with pytest.raises(FetchError, match=r"only speaks the deprecated HTTP\+SSE transport"):
            fetch(Target.http(url), FetchOptions(timeout=10))
        out = tmp_path / "snap.json"
        run = run_cli("fetch", "--url", url, "-o", str(out))
    assert_clean_error(run, 2)
    assert "deprecated HTTP+SSE transport (2024-11-05" in run.stderr
    assert "Streamable HTTP endpoint" in run.stderr and not out.exists()
