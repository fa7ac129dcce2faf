"""Real peers: the official ``mcp`` SDK low-level server paginating N tools in pages of P,
over stdio and Streamable HTTP (SSE, JSON, stateless), in both protocol eras. What we fetch
must digest exactly like the definitions the server was given."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from mcp_helpers import sdk_stdio_command, start_sdk_http, stop

from histor_sign.mcp import FetchOptions, Target, fetch
from histor_sign.revision import digests

pytestmark = pytest.mark.slow

N, PAGE = 23, 4


def definitions() -> list[dict[str, Any]]:
    return [
        {
            "name": f"tool_{i:03d}",
            "title": f"Tool {i}",
            "description": f"Does thing {i} — ünïcödé ✓",
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"type": "integer", "minimum": i}, "r": {"type": "number",
                                                                             "maximum": 0.5}},
                "required": ["x"],
                "additionalProperties": False,
            },
            "outputSchema": {"type": "object", "properties": {"y": {"type": "integer"}}},
            "annotations": {"readOnlyHint": i % 2 == 0, "destructiveHint": False},
            "_meta": {"com.example/seq": i},
        }
        for i in range(N)
    ]


@pytest.fixture(scope="module")
def defs_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("defs") / "defs.json"
    path.write_text(json.dumps(definitions(), ensure_ascii=False), encoding="utf-8")
    return path


EXPECTED = digests(definitions())


def check(snapshot_tools: list[dict[str, Any]]) -> None:
    assert [t["name"] for t in snapshot_tools] == [f"tool_{i:03d}" for i in range(N)]
    assert digests(snapshot_tools) == EXPECTED
    assert snapshot_tools[5]["_meta"] == {"com.example/seq": 5}  # kept as evidence


@pytest.mark.parametrize(("protocol", "era"), [("auto", "modern"), ("modern", "modern"),
                                               ("legacy", "legacy")])
def test_stdio_sdk_peer(defs_file: Path, protocol: str, era: str) -> None:
    snap = fetch(Target.stdio(sdk_stdio_command(defs_file, PAGE)),
                       FetchOptions(protocol=protocol))  # type: ignore[arg-type]
    check(snap.tools)
    assert snap.capture["era"] == era
    assert snap.capture["pages"] == 6 and snap.capture["pageSizes"] == [4, 4, 4, 4, 4, 3]
    assert snap.capture["serverInfo"] == {"name": "pager-peer", "version": "0.1.0"}
    assert snap.capture["transport"] == "stdio"


def test_stdio_sdk_peer_empty_string_cursor(defs_file: Path) -> None:
    """The SDK server hands out "" as the page-2 cursor: it must be followed."""
    snap = fetch(Target.stdio(sdk_stdio_command(defs_file, PAGE, "--empty-cursor-first")))
    check(snap.tools)


HTTP_MODES = {"sse": (), "json": ("--json-response",), "stateless": ("--stateless",)}


@pytest.fixture(scope="module", params=sorted(HTTP_MODES))
def http_peer(request: pytest.FixtureRequest, defs_file: Path) -> Iterator[str]:
    proc, url = start_sdk_http(defs_file, PAGE, *HTTP_MODES[request.param])
    try:
        yield url
    finally:
        stop(proc)


@pytest.mark.parametrize(("protocol", "era", "version"), [
    ("auto", "modern", "2026-07-28"), ("legacy", "legacy", "2025-11-25"),
])
def test_http_sdk_peer(http_peer: str, protocol: str, era: str, version: str) -> None:
    snap = fetch(Target.http(http_peer), FetchOptions(protocol=protocol))  # type: ignore[arg-type]
    check(snap.tools)
    assert (snap.capture["era"], snap.capture["protocolVersion"]) == (era, version)
    assert snap.capture["target"] == {"transport": "streamable-http", "url": http_peer}
    assert snap.capture["pages"] == 6


def test_cli_fetch_then_digest_equals_live_digest(defs_file: Path, tmp_path: Path) -> None:
    command = sdk_stdio_command(defs_file, PAGE)
    out = tmp_path / "tools.snapshot.json"
    fetched = run_cli("fetch", "--stdio", command, "--output", str(out))
    assert fetched.code == 0, fetched.stderr
    assert fetched.stdout == ""
    from_file = run_cli("digest", str(out), "--format", "json")
    live = run_cli("digest", "--stdio", command, "--format", "json", "--protocol", "legacy")
    assert from_file.code == live.code == 0, (from_file.stderr, live.stderr)
    assert json.loads(from_file.stdout)["manifestDigest"] == EXPECTED[0]
    assert json.loads(live.stdout) == json.loads(from_file.stdout)
