"""A wrapped entry started exactly as a desktop host starts it: its own command and args, its
own env, and a minimal ``PATH=/usr/bin:/bin`` (where a ``histor-sign`` installed in a
virtual environment or ``~/.local/bin`` is not found). ``wrap`` writes this installation's
``histor-sign`` by its absolute path, so the proxy starts; ``wrap --lock`` puts a locked
(unsigned) server behind ``proxy --lock`` and the host is served its locked tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_harness import REPO, bytecode_env, run_cli
from hostconfig_helpers import make_pins, plain

pytestmark = pytest.mark.slow

SERVER = [sys.executable, "-m", "histor_sign.demo.example_server"]
MINIMAL_PATH = "/usr/bin:/bin"


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {"notes": {
        "command": SERVER[0], "args": SERVER[1:], "env": {"NOTES_LOG": "off"}}}}, indent=2))
    return path


def _host_env(entry: dict[str, Any]) -> dict[str, str]:
    """What a desktop host gives a server: a minimal PATH, HOME and the entry's env (plus
    the import path of this checkout, which an installed histor-sign does not need)."""
    env = {"PATH": MINIMAL_PATH, "HOME": os.environ.get("HOME", "/tmp"),
           "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
           "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
           **bytecode_env(), **entry.get("env", {})}
    return env


def _exchange(entry: dict[str, Any], *methods: str) -> tuple[list[dict[str, Any]], str]:
    """Start the entry as a host does, send initialize then each method; the answers."""
    proc = subprocess.Popen([entry["command"], *entry["args"]], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_host_env(entry), cwd="/")
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    answers: list[dict[str, Any]] = []

    def request(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method,
                                     "params": params}).encode() + b"\n")
        proc.stdin.flush()
        while True:
            line = proc.stdout.readline()
            assert line, "the proxy closed its output"
            answer = json.loads(line)
            if answer.get("id") == ident and "method" not in answer:
                return answer

    try:
        first = request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "desktop", "version": "0"}})
        answers.append(first)
        if "result" in first:
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            for n, method in enumerate(methods, 1):
                answers.append(request(n, method, {}))
    finally:
        proc.stdin.close()
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    return answers, err


def test_the_wrapped_entry_starts_with_a_minimal_path(tmp_path: Path) -> None:
    config = _config(tmp_path)
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/notes"])
    run = run_cli("wrap", str(config), "--server-name", "notes=io.github.acme/notes",
                  "--pins", str(pins))
    assert run.code == 0, run.stderr
    entry = plain(config.read_text())["mcpServers"]["notes"]
    assert os.path.isabs(entry["command"]) and os.access(entry["command"], os.X_OK), entry
    # The pin is gone again: the proxy must start, and refuse at initialize (no network).
    pins.unlink()  # a missing pin file pins nothing
    answers, err = _exchange(entry)
    assert "error" in answers[0] and "not pinned" in answers[0]["error"]["message"], answers
    assert "io.github.acme/notes" in err


def test_wrap_lock_serves_a_locked_unsigned_server(tmp_path: Path) -> None:
    lock = tmp_path / "mcp.lock"
    locked = run_cli("lock", "--stdio", " ".join(SERVER), "--server-is-trusted-code",
                     "--server", "notes", "--output", str(lock))
    assert locked.code == 0, locked.stderr
    config = _config(tmp_path)
    original = config.read_bytes()
    run = run_cli("wrap", str(config), "--lock", str(lock), "--server-name", "notes")
    assert run.code == 0, run.stderr
    entry = plain(config.read_text())["mcpServers"]["notes"]
    assert entry["args"] == ["proxy", "--server", "notes", "--lock", str(lock), "--",
                             *SERVER]
    answers, err = _exchange(entry, "tools/list")
    served = [t["name"] for t in answers[1]["result"]["tools"]]
    signed = json.loads(lock.read_text())["servers"]["notes"]["snapshot"]["tools"]
    assert served == [t["name"] for t in signed] and served
    assert "not publisher-signed" in err
    # Idempotent, and a name the lock does not have is named and not wrapped.
    again = run_cli("wrap", str(config), "--lock", str(lock), "--server-name", "notes")
    assert again.code == 0 and "already wrapped" in again.stderr
    assert run_cli("unwrap", str(config)).code == 0
    assert config.read_bytes() == original
    other = run_cli("wrap", str(config), "--lock", str(lock), "--server-name", "notes=other")
    assert other.code == 1 and f"other is not locked in {lock}" in other.stderr
    assert config.read_bytes() == original
    both = run_cli("wrap", str(config), "--lock", str(lock), "--pins", str(tmp_path / "p"),
                   "--server-name", "notes")
    assert both.code == 2 and "--pins" in both.stderr


def test_a_wrapped_url_entry_runs_proxy_url(tmp_path: Path) -> None:
    """A VS Code Streamable HTTP entry (``"type": "http"``, a ``url``) becomes a stdio entry
    running ``proxy --url``; started as a host starts it (minimal PATH), it serves the locked
    tools of the remote server; unwrap restores the entry byte for byte."""
    from histor_sign.demo.example_server import build_tools

    defs = tmp_path / "defs.json"
    defs.write_text(json.dumps(build_tools()))
    peer = REPO / "tests" / "proxy" / "sdk_http_server.py"
    upstream = subprocess.Popen([sys.executable, str(peer), str(defs), str(tmp_path / "up.log")],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert upstream.stdout is not None
        url = upstream.stdout.readline().decode().strip()
        assert url.startswith("http://127.0.0.1:"), "the SDK HTTP peer did not start"
        lock = tmp_path / "mcp.lock"
        locked = run_cli("lock", "--url", url, "--server", "remote", "--output", str(lock))
        assert locked.code == 0, locked.stderr
        config = tmp_path / ".vscode" / "mcp.json"
        config.parent.mkdir()
        config.write_text('{\n  "servers": {\n    "remote": {\n      "type": "http",\n'
                          f'      "url": "{url}"\n    }}\n  }}\n}}\n')
        original = config.read_bytes()
        run = run_cli("wrap", str(config), "--lock", str(lock), "--server-name", "remote")
        assert run.code == 0, run.stderr
        entry = plain(config.read_text())["servers"]["remote"]
        assert entry["type"] == "stdio" and os.path.isabs(entry["command"])
        assert entry["args"] == ["proxy", "--server", "remote", "--lock", str(lock),
                                 "--url", url]
        answers, err = _exchange(entry, "tools/list")
        served = [t["name"] for t in answers[1]["result"]["tools"]]
        assert served == [t["name"] for t in build_tools()], err
        assert run_cli("unwrap", str(config)).code == 0
        assert config.read_bytes() == original
    finally:
        upstream.terminate()
        upstream.wait(10)
        if upstream.stdout is not None:
            upstream.stdout.close()
