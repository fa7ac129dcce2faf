"""The README's quick start is executed, so it cannot rot."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import REPO

pytestmark = pytest.mark.slow


def quick_start() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"```(?:bash|sh)?\n(.*?)```", text, re.S)
    assert block is not None, "README has no code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    commands = quick_start()
    assert len(commands) == 2
    install_and_demo, tests = commands
    assert install_and_demo.startswith("pip install -e . && histor-sign demo")
    # CI runs the README's test command: every part of it, in order.
    parts = [part.strip() for part in tests.split("&&")]
    assert parts[0] == 'pip install -e ".[test]"' and parts[-1] == "python -m pytest"
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    positions = [
        next(i for i, line in enumerate(ci) if line.endswith(part.replace("pip install", "")))
        for part in parts
    ]
    assert positions == sorted(positions), (parts, ci)


def test_first_readme_command_runs_the_offline_demo(tmp_path: Path) -> None:
    command = quick_start()[0]
    output = re.search(r"--output (\S+)", command)
    assert output is not None
    target = REPO / output.group(1)
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    env.pop("GITHUB_ACTIONS", None)
    try:
        proc = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert "VERIFIED" in proc.stdout
        assert "different" in proc.stdout and "search_notes: description" in proc.stdout
        assert (target / "revision-2" / "envelope.json").exists()
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_readme_guard_and_scan_examples_behave_as_shown() -> None:
    from cli_harness import run_cli

    guard = ["guard", "--catalog", "examples/guard/tools.json", "--policy",
             "examples/guard/guard.toml"]
    dangerous = run_cli(*guard, "examples/guard/call-dangerous.json", cwd=REPO)
    assert dangerous.code == 1
    readme = (REPO / "README.md").read_text()
    for line in dangerous.stdout.splitlines():
        assert line in readme  # the README shows this exact output
    assert run_cli(*guard, "examples/guard/call-ok.json", cwd=REPO).code == 0
    bulk = run_cli(*guard, "examples/guard/call-bulk.json", cwd=REPO)
    assert bulk.code == 1 and "effect-over-budget" in bulk.stdout
    scan = run_cli("scan", "examples/scan/collision-mcp.json", cwd=REPO)
    assert scan.code == 1
    assert scan.stdout.splitlines()[-1] in readme
