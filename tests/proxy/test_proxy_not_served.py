"""Issue 27 through the proxy: a stdio server that prints a banner before its first JSON-RPC
message and log lines between messages, and one that advertises prompts and resources but
answers their list methods with -32601, are served — the non-JSON lines skipped within the
fetch's own bounds (and said once on stderr), the errors relayed to the host as errors."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import RawHost, World, proxy_argv, received_calls, recorder, sdk_host

pytestmark = pytest.mark.slow


def test_banner_and_lists_not_served_are_served_through(world: World, tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    log = tmp_path / "up.jsonl"
    argv = proxy_argv(world, tmp_path, upstream=recorder(log, "--banner", "--not-served"))

    async def go() -> tuple[list[str], list[Any], list[str]]:
        async with sdk_host(argv, tmp_path / "err") as host:
            names = [t.name for t in (await host.list_tools()).tools]
            results = [await host.call_tool("get_note", {"note_id": f"note-{n}"})
                       for n in range(1, 4)]
            errors: list[str] = []
            for ask in (host.list_prompts, host.list_resource_templates):
                try:
                    await ask()
                except MCPError as exc:
                    errors.append(str(exc))
            return names, results, errors

    names, results, errors = asyncio.run(go())
    assert len(names) == 7  # every signed tool, the banner notwithstanding
    assert all(not r.is_error for r in results)
    assert len(received_calls(log)) == 3
    assert len(errors) == 2 and all("Method not found" in e for e in errors)
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err and "error:" not in err
    # Said on stderr: the banner at start-up, and the total at the end (3 log lines more).
    skipped = [line for line in err.splitlines() if "non-JSON line" in line]
    assert skipped and "skipped 2 non-JSON lines" in skipped[0]
    assert "skipped 5 non-JSON lines" in skipped[-1]
    assert "\x1b" not in err  # the banner's escape sequence never reaches the terminal


def test_banner_beyond_the_bound_ends_the_session(world: World, tmp_path: Path) -> None:
    """More non-JSON output than fetch skips (100 lines) is not a banner: one line, exit 2.
    The recorder logs one line per call; 100 calls take it past the bound."""
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl",
                                                                 "--banner")))
    host.initialize()
    answers = 0
    for n in range(200):
        host.send({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                   "params": {"name": "list_notebooks", "arguments": {}}})
        answer = host.receive()
        if answer is None or "error" in answer:
            break
        answers += 1
    code, err = host.finish()
    assert 90 <= answers < 200
    assert code == 2 and "Traceback" not in err
    assert "more non-JSON output on its standard output than is skipped" in err


def test_log_records_are_skipped_and_said_once(world: World, tmp_path: Path) -> None:
    """JSON log records with no JSON-RPC member (an OpenTelemetry preamble) are passed over
    like a banner, within the same bounds, and said on stderr escaped."""
    log = tmp_path / "up.jsonl"
    argv = proxy_argv(world, tmp_path, upstream=recorder(log, "--log-records"))

    async def go() -> list[Any]:
        async with sdk_host(argv, tmp_path / "err") as host:
            await host.list_tools()
            return [await host.call_tool("get_note", {"note_id": f"note-{n}"})
                    for n in range(1, 3)]

    results = asyncio.run(go())
    assert len(results) == 2 and not any(r.is_error for r in results)
    assert len(received_calls(log)) == 2
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err and "error:" not in err and "\x1b" not in err
    said = [line for line in err.splitlines() if "with no JSON-RPC member" in line]
    assert said and "skipped 3 JSON objects" in said[-1]
