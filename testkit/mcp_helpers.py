"""Shared helpers for the MCP client tests: peers, PID checks, free ports."""

from __future__ import annotations

import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "mcp"  # the raw servers and the SDK peer
RAW_STDIO = HERE / "raw_stdio_server.py"
SDK_PEER = HERE / "sdk_peer.py"


def raw_command(scenario: str, pidfile: Path) -> str:
    return shlex.join([sys.executable, str(RAW_STDIO), scenario, str(pidfile)])


def sdk_stdio_command(defs: Path, page: int, *extra: str) -> str:
    return shlex.join(
        [sys.executable, str(SDK_PEER), "--defs", str(defs), "--page", str(page), *extra]
    )


def pids_from(pidfile: Path) -> list[int]:
    return [int(p) for p in pidfile.read_text().split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); treat it as gone.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def assert_all_gone(pidfile: Path) -> None:
    pids = pids_from(pidfile)
    deadline = time.monotonic() + 2
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in pids if alive(p)], f"left running: {pids}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_sdk_http(defs: Path, page: int, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start the SDK peer on Streamable HTTP and wait until it accepts connections."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SDK_PEER), "--defs", str(defs), "--page", str(page),
         "--transport", "http", "--port", str(port), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("SDK peer exited") from None
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("SDK peer did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
