"""Every action and workflow the project ships, and the workflows `init` writes, pass
actionlint and check-jsonschema's vendored GitHub schemas (offline), and pin every
third-party action by commit."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_harness import REPO, run_cli

ACTIONS = [REPO / "action.yml", REPO / "snapshot" / "action.yml", REPO / "monitor" / "action.yml"]
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert found, f"{name} is not installed (pip install -e '.[test]')"
    return found


def _generated(tmp_path: Path) -> list[Path]:
    paths = []
    for name, extra in (("two-job.yml", ["--stdio", "node dist/index.js"]),
                        ("single-job.yml", ["--url", "https://host.example/mcp", "--single-job"])):
        path = tmp_path / ".github" / "workflows" / name
        result = run_cli("init", "--server", "io.github.owner/name", *extra, "-o", str(path))
        assert result.code == 0, result.stderr
        paths.append(path)
    monitor = tmp_path / ".github" / "workflows" / "histor-monitor.yml"
    result = run_cli("init", "--server", "io.github.owner/name", "--monitor",
                     "--ref-pattern", "refs/tags/v*", "-o", str(monitor))
    assert result.code == 0, result.stderr
    return [*paths, monitor]


def test_actionlint_passes_on_every_workflow(tmp_path: Path) -> None:
    files = [*WORKFLOWS, *_generated(tmp_path)]
    proc = subprocess.run([_tool("actionlint"), "-no-color", *map(str, files)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("schema", "kind"), [("vendor.github-actions", "actions"),
                                              ("vendor.github-workflows", "workflows")])
def test_github_schemas_accept_every_action_and_workflow(
    tmp_path: Path, schema: str, kind: str
) -> None:
    files = ACTIONS if kind == "actions" else [*WORKFLOWS, *_generated(tmp_path)]
    proc = subprocess.run([_tool("check-jsonschema"), "--builtin-schema", schema,
                           *map(str, files)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_third_party_actions_are_pinned_by_commit(tmp_path: Path) -> None:
    for path in [*ACTIONS, *WORKFLOWS, *_generated(tmp_path)]:
        doc = yaml.safe_load(path.read_text())
        steps = (doc.get("runs", {}).get("steps", []) if "runs" in doc else
                 [s for job in doc["jobs"].values() for s in job["steps"]])
        for step in steps:
            uses = step.get("uses", "")
            if not uses or uses.startswith("./") or uses.startswith("histor-sign/"):
                continue
            assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses), f"{path}: {uses}"
