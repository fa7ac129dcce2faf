"""The README's quick start is executed, so it cannot rot."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_harness import REPO, cli_env

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
    # A virtual environment first (PEP 668: a system Python refuses pip outside one).
    assert install_and_demo.startswith(
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e . && histor-sign demo")
    # CI runs the README's test command: every part of it, in order.
    parts = [part.strip() for part in tests.split("&&")]
    assert parts[0] == 'pip install -e ".[test]"' and parts[-1] == "python -m pytest -n auto"
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    positions = [
        next(i for i, line in enumerate(ci) if line.endswith(part.replace("pip install", "")))
        for part in parts
    ]
    assert positions == sorted(positions), (parts, ci)


def test_the_long_poles_scheduled_first_are_modules_of_the_suite() -> None:
    """tests/conftest.py starts these modules first under ``-n auto``; a renamed or removed
    one would silently lose its place."""
    import importlib.util

    # By path: every test directory's conftest.py is a module named "conftest".
    spec = importlib.util.spec_from_file_location("suite_conftest", REPO / "tests" / "conftest.py")
    assert spec is not None and spec.loader is not None
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    assert conftest.LONG_POLES and [
        p for p in conftest.LONG_POLES if not (REPO / p).is_file()] == []


def _fresh_checkout(tmp: Path) -> Path:
    """The repository's tracked files, copied as a fresh clone would have them."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                            check=True).stdout.decode().split("\0")
    checkout = tmp / "checkout"
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    return checkout


def test_first_readme_command_runs_the_offline_demo(tmp_path: Path) -> None:
    """The first command exactly as written, in a fresh copy of the repository: it makes
    its own venv, installs into it (from the package index or pip's cache) and runs the
    demo with the ``histor-sign`` that install put on the PATH."""
    command = quick_start()[0]
    output = re.search(r"--output (\S+)", command)
    assert output is not None
    checkout = _fresh_checkout(tmp_path)
    env = {k: v for k, v in os.environ.items()
           if k not in ("GITHUB_ACTIONS", "PYTHONPATH", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    proc = subprocess.run(["bash", "-c", command], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "VERIFIED" in proc.stdout
    assert "different" in proc.stdout and "search_notes: description" in proc.stdout
    assert (checkout / output.group(1) / "revision-2" / "envelope.json").exists()
    assert (checkout / ".venv" / "bin" / "histor-sign").exists()  # ran from the new venv


def test_readme_links_every_documentation_page() -> None:
    readme = (REPO / "README.md").read_text()
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert pages and [p for p in pages if f"(docs/{p})" not in readme] == []


def test_readme_says_where_the_action_lives_and_init_writes_that_action(tmp_path: Path) -> None:
    from cli_harness import run_cli

    from histor_sign.cli.init_commands import DEFAULT_ACTION

    readme = (REPO / "README.md").read_text()
    assert f"`uses: {DEFAULT_ACTION}`" in readme
    repo = DEFAULT_ACTION.partition("@")[0]
    assert f"published as `{repo}`" in readme and f"`{repo}/snapshot@" in readme
    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    assert urls["Source"] == f"https://github.com/{repo}"  # where the package says it lives
    for sub in ("", "snapshot/", "monitor/"):  # the action and its sub-actions are here
        assert (REPO / sub / "action.yml").is_file(), sub
    workflow = tmp_path / "sign.yml"
    written = run_cli("init", "--server", "io.github.o/n", "--stdio", "node x.js", "-o",
                      str(workflow))
    assert written.code == 0, written.stderr
    assert f"uses: {DEFAULT_ACTION}" in workflow.read_text()
    assert f"uses: {repo}/snapshot@" in workflow.read_text()


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


def _block_after(heading: str) -> str:
    text = (REPO / "README.md").read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None, f"no bash block under {heading!r}"
    return block.group(1)


def test_the_release_rehearsal_runs_as_written(tmp_path: Path) -> None:
    """The README's rehearsal, exactly as written, in an empty directory: a local Sigstore
    instance, fetch, release, verify and a verified check against the live server."""
    script = _block_after("Rehearse a release on your machine")
    env = cli_env()
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    proc = subprocess.Popen(["bash", "-e", "-c", script], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        try:  # a failed step leaves the instance running: end the whole session
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert proc.returncode == 0, out[-2000:] + err[-2000:]
    assert "signed io.github.example/notes-server 1.0.0 revision 1" in out
    assert "VERIFIED: io.github.example/notes-server revision 1 (1.0.0)" in out
    assert "match · io.github.example/notes-server revision 1 · signed by " in out
    assert "using the LOCAL dev-sigstore instance" in err
    assert (tmp_path / "rehearsal" / "release" / "envelope.json").is_file()
