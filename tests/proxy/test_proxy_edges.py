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
