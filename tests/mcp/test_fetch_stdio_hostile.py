"""Hostile and byte-exact stdio servers: every failure is one line, exit 2, no output
file, and no process left behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, cli_env, run_cli, sigint_default
from mcp_helpers import assert_all_gone, pids_from, raw_command

pytestmark = pytest.mark.slow


def fetch(tmp_path: Path, scenario: str, *flags: str, subprocess: bool = False):  # type: ignore[no-untyped-def]
    """``subprocess=True`` for the tests that check that no process is left (a process tree
    below histor-sign's own process, as a user runs it)."""
    pidfile = tmp_path / "pids"
    out = tmp_path / "snap.json"
    run = run_cli("fetch", "--stdio", raw_command(scenario, pidfile), "-o", str(out), *flags,
                  subprocess=subprocess)
    return run, out, pidfile


@pytest.mark.parametrize(
    ("scenario", "flags", "expected"),
    [
        ("cycle", (), "cursor cycle: tools/list page 3 returned cursor \"a\" which page 1"),
        ("endless", ("--max-pages", "5"), "more than --max-pages 5 pages"),
        ("endless", ("--max-tools", "7"), "more than --max-tools 7 tools"),
        # Long enough for a loaded machine to start the server and answer initialize.
        ("hang", ("--timeout", "5"), "no answer to tools/list within 5 s"),
        ("hang-all", ("--timeout", "0.3"), "no answer to initialize within 0.3 s"),
        ("hang", ("--total-timeout", "1"), "took longer than --total-timeout 1 s"),
        # A banner is skipped (test_fetch_not_served.py); past the bound it is an error.
        ("non-json", (), "server stdout line 101: not valid JSON: Expecting value (line 1, "
                         "column 1); the server wrote more non-JSON output on its standard "
                         "output than is skipped (at most 100 lines and 65536 bytes"),
        ("non-json-long", (), "server stdout line 1: not valid JSON"),
        ("non-json-long", (), "more non-JSON output on its standard output than is skipped"),
        # Log records are skipped within the same bounds; an object with a JSON-RPC member
        # claims to be a message and is judged as one.
        ("log-records-flood", (), "server stdout line 101: a JSON object that is not a "
                                  "JSON-RPC message; the server wrote more non-JSON output"),
        ("claims-message", (), "server stdout line 1: not a JSON-RPC 2.0 message"),
        ("not-served-bad-code", (), "server answered prompts/list with JSON-RPC error oops: "
                                    "Method not found\\u001b[2J"),
        ("not-served-page-2", (), "prompts/list page 2: server answered prompts/list with "
                                  "JSON-RPC error -32601"),
        ("crash", (), "exited with code 3 before answering tools/list (last stderr line: "
                      "fatal: boom)"),
        # A Node crash ends with its version line: the cause above it is shown too, inert.
        ("node-crash", (), "exited with code 1 before answering tools/list (last 5 stderr "
                           "lines: Error: Cannot find module '/app/dist/index.js'\\u001b[2J | "
                           "at Module._resolveFilename (node:internal/modules:1225:15) | "
                           "code: 'MODULE_NOT_FOUND', | } | Node.js v20.20.2)"),
        ("oversized", ("--max-bytes", "100000"), "more than --max-bytes 100000 bytes"),
        ("wrong-id", (), "response has id 102 but the pending tools/list request has id 2"),
        # The same request id answered twice: a protocol error naming it, never the first
        # answer taken silently.
        ("answer-twice", (), "protocol error: the server answered request id 2 (tools/list) "
                             "a second time"),
        ("init-twice", (), "protocol error: the server answered request id 1 (initialize) "
                           "a second time"),
        ("rpc-error", (), "tools/list with JSON-RPC error -32603: database down"),
        ("tool-not-object", (), "tool at page 1 item 1 (#/tools/1) is not a JSON object"),
        ("name-not-string", (), "tool at page 1 item 1 (#/tools/1) has no string \"name\""),
        ("duplicate", (), "duplicate tool name 'a': page 1 item 0 (#/tools/0) and "
                          "page 2 item 1 (#/tools/3)"),
        ("dup-keys", (), "duplicate object key \"name\" at /result/tools/0"),
        ("huge-int", (), "is outside ±(2^53−1) at /result/tools/0/n"),
        ("bad-cursor-type", (), "nextCursor must be a string or absent, got 7"),
        ("list-changed-always", (), "changed again (notifications/tools/list_changed)"),
        ("surface-changed-prompts-always", (),
         "prompt list changed again (notifications/prompts/list_changed)"),
    ],
)
def test_hostile_server_fails_cleanly(
    tmp_path: Path, scenario: str, flags: tuple[str, ...], expected: str
) -> None:
    run, out, pidfile = fetch(tmp_path, scenario, "--protocol", "legacy", *flags, subprocess=True)
    assert_clean_error(run, 2)
    assert expected in run.stderr, run.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".snap.json.*"))
    assert_all_gone(pidfile)


def test_missing_command_is_a_clean_error(tmp_path: Path) -> None:
    run = run_cli("fetch", "--stdio", "no-such-mcp-server-xyz --flag", "-o", str(tmp_path / "s"))
    assert_clean_error(run, 2)
    assert "no such command 'no-such-mcp-server-xyz'" in run.stderr
    assert not (tmp_path / "s").exists()


def test_byte_exact_tools_empty_cursor_and_unknown_fields(tmp_path: Path) -> None:
    run, out, pidfile = fetch(tmp_path, "legacy", subprocess=True)
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["type"] == "histor.snapshot/v1"
    # "" is a cursor: the walk went on to page 2.
    assert doc["capture"]["pages"] == 2 and doc["capture"]["pageSizes"] == [2, 1]
    assert doc["capture"]["era"] == "legacy" and doc["capture"]["protocolVersion"] == "2025-11-25"
    first = doc["tools"][0]
    assert list(first) == ["inputSchema", "name", "description", "futureField"]  # served order
    assert first["description"] == "Sök é ✓"
    assert first["futureField"] == {"z": 1, "a": [1.5, 2]}
    assert doc["tools"][1]["annotations"]["vendorHint"] == 2
    assert [t["name"] for t in doc["tools"]] == ["search", "fetch", "write"]
    assert_all_gone(pidfile)


def test_auto_detects_legacy_after_method_not_found(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "legacy")  # answers server/discover with -32601
    assert run.code == 0, run.stderr
    assert json.loads(out.read_text())["capture"]["era"] == "legacy"


def test_auto_falls_back_to_legacy_after_probe_timeout(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "hang-probe", "--timeout", "0.5")
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert doc["capture"]["era"] == "legacy" and [t["name"] for t in doc["tools"]] == ["only"]


def test_unsupported_version_error_picks_a_listed_legacy_version(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "version-error")
    assert run.code == 0, run.stderr
    assert json.loads(out.read_text())["capture"]["protocolVersion"] == "2025-06-18"


def test_modern_raw_server_gets_meta_on_every_request(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "modern")
    assert run.code == 0, run.stderr
    capture = json.loads(out.read_text())["capture"]
    assert capture["era"] == "modern" and capture["protocolVersion"] == "2026-07-28"
    assert capture["serverInfo"] == {"name": "raw", "version": "9"}
    assert sorted(capture["clientCapabilities"]) == ["elicitation", "roots", "sampling"]


def test_forcing_modern_on_a_legacy_server_fails_clearly(tmp_path: Path) -> None:
    run, out, pidfile = fetch(tmp_path, "legacy", "--protocol", "modern", subprocess=True)
    assert_clean_error(run, 2)
    assert "does not speak the modern protocol" in run.stderr
    assert not out.exists()
    assert_all_gone(pidfile)


def test_list_changed_restarts_once_and_server_requests_are_refused(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "list-changed")
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert [t["name"] for t in doc["tools"]] == ["a", "b", "c"]
    assert doc["capture"]["restarts"] == 1


def test_prompts_list_changed_restarts_only_the_prompts_walk(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "surface-changed-prompts")
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    # The prompts walk restarted on its own notification and kept only the second walk;
    # the tools and resources notifications that came with it restarted nothing.
    assert [p["name"] for p in doc["prompts"]] == ["p1", "p2-walk2"]
    assert [t["uriTemplate"] for t in doc["resourceTemplates"]] == ["t://{a}", "t://{b}"]
    assert [t["name"] for t in doc["tools"]] == ["a"] and doc["capture"]["restarts"] == 0


def test_allow_duplicates_keeps_evidence(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "duplicate", "--allow-duplicates")
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert [t["name"] for t in doc["tools"]] == ["a", "b", "c", "a"]
    assert doc["capture"]["duplicates"] == [{"name": "a", "first": 0, "second": 3}]
    # digest still refuses a catalog with duplicate names.
    digest = run_cli("digest", str(out))
    assert_clean_error(digest, 2)
    assert "duplicate tool name 'a'" in digest.stderr


def test_stderr_flood_does_not_deadlock(tmp_path: Path) -> None:
    run, out, _ = fetch(tmp_path, "stderr-flood", "--timeout", "10")
    assert run.code == 0, run.stderr
    assert len(json.loads(out.read_text())["tools"]) == 3


def test_stubborn_server_and_its_helper_are_killed(tmp_path: Path) -> None:
    run, _out, pidfile = fetch(tmp_path, "stubborn", subprocess=True)
    assert run.code == 0, run.stderr
    assert len(pids_from(pidfile)) == 2
    assert_all_gone(pidfile)


def test_ctrl_c_leaves_no_process(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    out = tmp_path / "snap.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign", "fetch", "--stdio", raw_command("hang", pidfile),
         "--protocol", "legacy", "-o", str(out)],
        env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        preexec_fn=sigint_default,
    )
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let it reach the tools/list wait
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert not out.exists()
    assert_all_gone(pidfile)


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper (subreaper) is Linux-only")
def test_setsid_grandchild_does_not_outlive_a_successful_fetch(tmp_path: Path) -> None:
    run, out, pidfile = fetch(tmp_path, "setsid-legacy", subprocess=True)
    assert run.code == 0, run.stderr
    assert out.exists() and len(pids_from(pidfile)) == 2
    assert_all_gone(pidfile)


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper (subreaper) is Linux-only")
def test_grandchild_holding_stdout_does_not_stall_the_fetch(tmp_path: Path) -> None:
    start = time.monotonic()
    run, out, pidfile = fetch(tmp_path, "hold-stdout", "--protocol", "legacy", "--timeout", "20", subprocess=True)
    assert time.monotonic() - start < 10  # not the 20 s request timeout
    assert_clean_error(run, 2)
    assert "the MCP server exited with code 4 before answering tools/list" in run.stderr
    assert not out.exists()
    assert_all_gone(pidfile)


@pytest.mark.skipif(sys.platform != "linux", reason="the keeper (subreaper) is Linux-only")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_killing_histor_sign_leaves_no_server_or_grandchild(tmp_path: Path, sig: int) -> None:
    pidfile = tmp_path / "pids"
    out = tmp_path / "snap.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign", "fetch", "--stdio",
         raw_command("setsid-hang", pidfile), "--protocol", "legacy", "-o", str(out)],
        env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 20
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # let it reach the tools/list wait
    assert len(pids_from(pidfile)) == 2
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == -sig, err
    assert b"Traceback" not in err
    assert not out.exists()
    assert_all_gone(pidfile)
