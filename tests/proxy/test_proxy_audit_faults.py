"""The proxy's audit log when it cannot be written: a full device, ``/dev/full``, a file
that refuses writes (``/proc/self/status``), a FIFO nobody reads. The call whose record
failed is not made (it gets the proxy's own error answer), the session ends cleanly with
one stderr line and exit 2 — never an internal error, never a hang. And every line stays
inert for a terminal: a tool name's bidi override or line separator is a JSON escape."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_env
from fs_faults import small_tmpfs
from proxy_fixtures import RawHost, World, proxy_argv, received_calls, recorder

pytestmark = pytest.mark.slow

#: Calls sent into a session whose audit log fills up (bounded).
CALLS = 200


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if "error:" in line]


def _denied_call(ident: int, name: str = "no_such_tool") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": name, "arguments": {}}}


def _ends_with_one_line(host: RawHost, reason: str) -> None:
    code, err = host.finish()
    assert code == 2 and "Traceback" not in err and "internal error" not in err, err
    [line] = _errors(err)
    assert "cannot write the audit log" in line and reason in line, line


@pytest.mark.parametrize("where", ["/dev/full", "/proc/self/status"])
def test_an_audit_log_that_refuses_writes_ends_the_session_at_its_start(
    world: World, tmp_path: Path, where: str
) -> None:
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, "--audit", where, upstream=recorder(log)))
    answer = host.request(0, "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw-host", "version": "0"}})
    assert "result" not in answer and "audit log cannot be written" in \
        answer["error"]["message"], answer
    assert host.receive() is None
    _ends_with_one_line(host, "No space left on device" if where == "/dev/full" else "")
    assert received_calls(log) == []


def test_an_audit_log_on_a_device_that_fills_denies_the_call_and_ends_cleanly(
    world: World, tmp_path: Path
) -> None:
    with small_tmpfs(tmp_path / "mnt", "16k") as mnt:
        trail = mnt / "audit.jsonl"
        log = tmp_path / "up.jsonl"
        host = RawHost(proxy_argv(world, tmp_path, "--audit", str(trail),
                                  upstream=recorder(log)))
        host.initialize()
        answered: dict[int, dict[str, Any]] = {}
        for ident in range(1, CALLS + 1):
            host.send(_denied_call(ident))
            answer = host.receive()
            if answer is None:
                break
            answered[answer["id"]] = answer
            if "error" in answer:
                break
        failed = [a for a in answered.values() if "error" in a]
        assert len(failed) == 1 and "audit log cannot be written" in \
            failed[0]["error"]["message"], list(answered.values())[-3:]
        assert all("result" in a and a["result"]["isError"]  # denied, each one recorded
                   for a in answered.values() if a is not failed[0])
        recorded = [json.loads(line) for line in trail.read_text().splitlines()
                    if line.endswith("}")]
        denials = [r for r in recorded if r["event"] == "call-denied"]
        assert len(denials) == len(answered) - 1  # every denial said was recorded
        _ends_with_one_line(host, "No space left on device")
        assert received_calls(log) == []


def test_a_fifo_nobody_reads_is_refused_at_once(world: World, tmp_path: Path) -> None:
    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    run = subprocess.run(proxy_argv(world, tmp_path, "--audit", str(fifo),
                                    upstream=recorder(tmp_path / "up.jsonl")),
                         stdin=subprocess.DEVNULL, capture_output=True, text=True,
                         env=cli_env(), timeout=60)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    [line] = _errors(run.stderr)
    assert f"cannot open the audit log {fifo}: it is a FIFO that no process reads" in line
    assert time.monotonic() - started < 30


def test_audit_lines_escape_what_a_terminal_would_act_on(world: World, tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, "--audit", str(trail),
                              upstream=recorder(tmp_path / "up.jsonl")))
    host.initialize()
    hostile = "evil\u202etxt.exe\u2028forged\x85line\u200b"
    answer = host.request(1, "tools/call", _denied_call(1, hostile)["params"])
    assert answer["result"]["isError"]
    code, _err = host.finish()
    assert code == 0
    text = trail.read_text(encoding="utf-8")
    assert all(c not in text for c in "\u202e\u2028\x85\u200b")
    lines = text.splitlines()
    assert all(line.isprintable() for line in lines)
    [denied] = [json.loads(line) for line in lines if '"call-denied"' in line]
    assert denied["tool"] == hostile  # the same JSON value, escaped
