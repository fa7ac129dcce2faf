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
    import threading

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


def test_a_storm_of_list_changed_is_merged_and_calls_do_not_wait_behind_it(
        world: World, tmp_path: Path) -> None:
    """2,000 notices after one call: at most the walk under way and one more per change
    still pending (not one walk per notice); the next call is answered against the
    current state; the host hears the change, not 2,000 times."""
    from proxy_fixtures import received

    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log, "--storm", "2000")))
    host.initialize()
    first = host.request(1, "tools/call", {"name": "get_note",
                                           "arguments": {"note_id": "note-1"}})
    while (heard := host.receive()) is not None:  # the change, once the proxy re-walked
        if heard.get("method") == "notifications/tools/list_changed":
            break
    second = host.request(2, "tools/call", {"name": "get_note",
                                            "arguments": {"note_id": "note-2"}})
    code, err = host.finish()
    assert code == 0, err
    assert first["result"]["isError"] is False and second["result"]["isError"] is False
    pages = [m for m in received(log) if m.get("method") == "tools/list"]
    walks = len(pages) / 3  # 7 tools in pages of 3
    assert 2 <= walks <= 50, walks  # the first walk, then merged re-walks (not 2,000)


def test_messages_held_for_the_host_are_bounded(world: World, tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl",
                                                                 "--flood", "1000")))
    host.initialize()
    logs = 0
    answer = None
    host.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    while answer is None:
        message = host.receive()
        assert message is not None
        if message.get("method") == "notifications/message":
            logs += 1
        elif message.get("id") == 1:
            answer = message
    code, err = host.finish()
    assert code == 0, err
    assert logs <= 256 and "message(s) the server sent before the session started were " \
        "dropped" in err


def test_arguments_as_json_text_are_denied_not_forwarded(world: World, tmp_path: Path) -> None:
    from proxy_fixtures import received_calls

    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log)))
    host.initialize()
    answer = host.request(1, "tools/call", {"name": "get_note",
                                            "arguments": '{"note_id": "note-1"}'})
    code, err = host.finish()
    assert answer["result"]["isError"] is True
    assert "malformed-call" in answer["result"]["content"][0]["text"]
    assert received_calls(log) == [] and code == 0, err
