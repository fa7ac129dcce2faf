"""The proxy's own streams. A host that never reads the proxy's stderr (a real pipe, left
full): notices never stall the MCP stream — every call is answered, the notices that did
not fit are counted on stderr, and the audit log records every decision. And stdin/stdout
that the event loop cannot wait on (files, /dev/null) still work."""

from __future__ import annotations

import contextlib
import fcntl
import re
import threading
from pathlib import Path

import pytest
from proxy_fixtures import RawHost, World, audit, proxy_argv, received_calls, recorder

pytestmark = pytest.mark.slow

#: Denied calls, each one notice line: far more than a one-page pipe and the proxy's queue
#: of waiting notices (256) hold together.
CALLS = 600


def test_a_host_that_never_reads_stderr_gets_every_answer(world: World,
                                                          tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, "--audit", str(trail), upstream=recorder(log)))
    assert host.proc.stderr is not None
    # The smallest pipe Linux allows (one page): a few dozen lines fill it.
    with contextlib.suppress(AttributeError, OSError):
        fcntl.fcntl(host.proc.stderr.fileno(), fcntl.F_SETPIPE_SZ, 4096)  # type: ignore[attr-defined]
    # A stalled proxy would leave a read of its stdout waiting forever: end it instead
    # (the answers then stop, and the test fails rather than hangs).
    watchdog = threading.Timer(300, host.proc.kill)
    watchdog.start()
    try:
        host.initialize()
        for ident in range(1, CALLS + 1):
            answer = host.request(ident, "tools/call",
                                  {"name": "never_offered", "arguments": {}})
            assert answer["result"]["isError"] is True, answer
        code, err = host.finish()  # reads stderr only now
    finally:
        watchdog.cancel()
    assert code == 0, err
    assert received_calls(log) == []
    denied = [e for e in audit(trail) if e["event"] == "call-denied"]
    assert len(denied) == CALLS  # the record is whole, whatever stderr showed
    shown = err.count("denied a call to \"never_offered\": not-offered")
    dropped = [int(n) for n in re.findall(r"histor-sign proxy: (\d+) notice\(s\) not shown",
                                          err)]
    assert dropped, err[-2000:]  # the pipe did fill: lines were dropped, and said so
    assert shown + sum(dropped) == CALLS
    assert "Traceback" not in err


def test_stdin_and_stdout_may_be_files_or_dev_null(world: World, tmp_path: Path) -> None:
    """A host's messages read from a file, answers written to a file (the event loop
    cannot wait on either); /dev/null as stdin is a host that said nothing: a clean end."""
    import json
    import subprocess

    from cli_harness import cli_env

    argv = proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl"))
    empty = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                           env=cli_env(), timeout=120, check=False)
    assert (empty.returncode, empty.stdout) == (0, b""), empty.stderr
    assert b"Traceback" not in empty.stderr
    messages = tmp_path / "host.jsonl"
    messages.write_text("".join(json.dumps(m) + "\n" for m in [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "file-host", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]))
    answers = tmp_path / "answers.jsonl"
    with messages.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                              env=cli_env(), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in answers.read_text().splitlines()]
    assert [m["id"] for m in got] == [1, 2]
    assert "search_notes" in {t["name"] for t in got[1]["result"]["tools"]}
