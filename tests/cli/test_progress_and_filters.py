"""Long work is not silent: ``fetch`` and ``release --stdio`` say what they fetched (one line
on stderr, always; a progress line while a terminal watches), ``--quiet`` leaves both out;
``--min-severity`` hides findings below a level from the report, never from the gate."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
from pathlib import Path

from cli_harness import REPO, cli_env, run_cli

from histor_sign.mcp import Target
from histor_sign.mcp._target import push_credentials_warning

EXAMPLE = shlex.join([sys.executable, "-m", "histor_sign.demo.example_server"])
SUMMARY = "histor-sign: fetched 7 tools in 3 pages from example-notes (stdio)\n"
#: What fetch says first when the session running these tests has a GitHub token in reach
#: (a developer's exported GH_TOKEN: every ancestor's environment counts; --quiet keeps
#: warnings), else nothing (tests/mcp/test_push_credentials.py tests the warning itself).
_IN_REACH = push_credentials_warning(Target.stdio(EXAMPLE), os.environ)
TOKEN_WARNING = f"histor-sign: warning: {_IN_REACH}\n" if _IN_REACH else ""
FILESYSTEM = str(REPO / "tests" / "data" / "reference-servers" / "filesystem.json")


def test_fetch_says_what_it_fetched_unless_quiet(tmp_path: Path) -> None:
    run = run_cli("fetch", "--stdio", EXAMPLE, "-o", str(tmp_path / "s.json"))
    assert (run.code, run.stdout, run.stderr) == (0, "", TOKEN_WARNING + SUMMARY)
    quiet = run_cli("fetch", "--stdio", EXAMPLE, "-o", str(tmp_path / "s.json"), "--quiet")
    assert (quiet.code, quiet.stdout, quiet.stderr) == (0, "", TOKEN_WARNING)


def _stderr_on_a_terminal(*argv: str) -> str:
    """Run the CLI with stderr on a pseudo-terminal (stdout to a pipe); what it wrote there."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "histor_sign", *argv], env=cli_env(),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0, seen
    return seen.decode()


def test_fetch_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    seen = _stderr_on_a_terminal("fetch", "--stdio", EXAMPLE, "-o", str(tmp_path / "s.json"))
    assert "\rhistor-sign: fetching tools/list: 1 pages, 3 tools" in seen
    assert "3 pages, 7 tools" in seen and seen.endswith(SUMMARY.replace("\n", "\r\n"))
    quiet = _stderr_on_a_terminal("fetch", "--stdio", EXAMPLE, "-o",
                                  str(tmp_path / "s.json"), "-q")
    assert quiet == TOKEN_WARNING.replace("\n", "\r\n")


def test_min_severity_hides_findings_from_the_report_not_from_the_gate() -> None:
    every = run_cli("scan", FILESYSTEM, "-f", "json", "--fail-on", "never")
    severities = [f["severity"] for f in json.loads(every.stdout)["findings"]]
    assert "note" in severities and "warning" in severities
    shown = run_cli("scan", FILESYSTEM, "-f", "json", "--fail-on", "never",
                    "--min-severity", "warning")
    assert shown.code == 0
    kept = [f["severity"] for f in json.loads(shown.stdout)["findings"]]
    assert kept == [s for s in severities if s != "note"]
    hidden = severities.count("note")
    assert shown.stderr == (f"histor-sign: {hidden} finding{'s' if hidden != 1 else ''} "
                            "below --min-severity warning not shown\n")
    # The gate still judges every finding: hiding warnings does not pass --fail-on warning.
    gated = run_cli("scan", FILESYSTEM, "--fail-on", "warning", "--min-severity", "error")
    assert gated.code == 1 and "warning" not in gated.stdout.split("findings:")[0]
    bad = run_cli("scan", FILESYSTEM, "--min-severity", "loud")
    assert bad.code == 2
