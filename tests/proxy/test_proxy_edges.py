"""The proxy at the edges real hosts and servers hit (issue 37): the server's stderr passed
on, faults reported as they are."""

from __future__ import annotations

from pathlib import Path

import pytest
from proxy_fixtures import RawHost, World, proxy_argv, recorder

pytestmark = pytest.mark.slow


def test_the_servers_stderr_is_passed_on_escaped_and_prefixed(world: World,
                                                              tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl",
                                                                 "--stderr")))
    host.initialize()
    host.request(1, "tools/call", {"name": "get_note", "arguments": {"note_id": "note-1"}})
    code, err = host.finish()
    assert code == 0, err
    lines = [line for line in err.splitlines() if "server stderr:" in line]
    assert lines == [
        "histor-sign proxy: server stderr: notes server: starting",
        "histor-sign proxy: server stderr: \\u001b[31mred\\u001b[0m \\u202eevil",
        "histor-sign proxy: server stderr: notes server: call 1",
    ]
    assert "\x1b" not in err and "\u202e" not in err


def test_a_server_killed_by_sigkill_reads_so(world: World, tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(
        tmp_path / "up.jsonl", "--kill-self-after", "1")))
    host.initialize()
    answer = host.request(1, "tools/call", {"name": "get_note",
                                            "arguments": {"note_id": "note-1"}})
    code, err = host.finish()
    assert answer["error"]["code"] == -32000
    assert code == 2 and "the upstream server was killed by signal 9 (SIGKILL)" in err, err
    assert "OSError" not in err and "Errno" not in err and "Traceback" not in err


def test_sigterm_ends_the_session_with_its_audit_record(world: World, tmp_path: Path) -> None:
    import json
    import signal

    trail = tmp_path / "audit.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, "--audit", str(trail),
                              upstream=recorder(tmp_path / "up.jsonl")))
    host.initialize()
    host.proc.send_signal(signal.SIGTERM)
    assert host.receive() is None  # the proxy ends its side
    code, err = host.finish()
    assert code == 0 and "Traceback" not in err
    records = [json.loads(line) for line in trail.read_text().splitlines()]
    assert records[-1]["event"] == "session-end", records
    assert records[-1]["reason"] == "the proxy was stopped (SIGTERM)"


def test_a_url_upstream_that_never_answers_initialize_times_out(world: World,
                                                                tmp_path: Path) -> None:
    import sys
    import threading

    from cli_harness import REPO

    sys.path.insert(0, str(REPO / "tests" / "mcp"))
    from raw_http_server import Reply, Seen, serve

    release = threading.Event()

    def silent(_request: Seen) -> Reply:
        release.wait(60)
        return Reply(500)

    try:
        with serve(silent) as (url, _seen):
            host = RawHost(proxy_argv(world, tmp_path, "--timeout", "2", url=url))
            answer = host.request(0, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw-host", "version": "0"}})
            code, err = host.finish()
            release.set()
    finally:
        release.set()
    assert "error" in answer
    assert code == 2 and "did not answer initialize within 2 s" in err, err
