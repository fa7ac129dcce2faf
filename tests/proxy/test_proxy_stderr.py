"""A host that never reads the proxy's stderr (a real pipe, left full): the proxy's notices
never stall the MCP stream — every call is answered, the notices that did not fit are
counted on stderr, and the audit log records every decision."""

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
