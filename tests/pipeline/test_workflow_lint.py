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


@pytest.mark.parametrize("path", ACTIONS, ids=lambda p: p.parent.name)
def test_every_action_input_reaches_a_step(path: Path) -> None:
    """An input that no step reads is silently ignored by GitHub: each one is passed on
    (as an environment variable, never spliced into a script) or used by a step."""
    action = yaml.safe_load(path.read_text())
    steps = yaml.safe_dump(action["runs"]["steps"])
    for name in action["inputs"]:
        assert f"inputs.{name} " in steps or f"inputs.{name}}}" in steps, f"{path}: {name}"
    for step in action["runs"]["steps"]:
        assert "${{ inputs." not in step.get("run", ""), f"{path}: inputs spliced into a script"


def test_release_script_passes_each_artifact_once(tmp_path: Path) -> None:
    """The action's ``artifacts`` input (newline- or space-separated) becomes one
    ``--artifact`` per path or oci: reference, blank lines ignored, no glob expansion."""
    fake = tmp_path / "histor-sign"
    fake.write_text('#!/usr/bin/env bash\nprintf "%s\\n" "$@" > "$HS_ARGS_OUT"\n')
    fake.chmod(0o755)
    out = tmp_path / "args"
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "b-1-py3-none-any.whl").write_bytes(b"")  # a glob would match it
    env = {"PATH": "/usr/bin:/bin", "HISTOR_SIGN_BIN": str(fake), "HS_ARGS_OUT": str(out),
           "HS_TRUST_CONFIG": "tc.json", "HS_SERVER": "io.github.o/n", "HS_SERVER_VERSION": "1",
           "HS_OUT_DIR": "out", "HS_TOOLS": "tools.json",
           "HS_ARTIFACTS": "dist/a-1.tgz  dist/*.whl\n\n  oci:ghcr.io/o/n@sha256:" + "0" * 64 + "\n"}
    proc = subprocess.run(["bash", str(REPO / "action" / "release.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    args = out.read_text().splitlines()
    given = [args[i + 1] for i, arg in enumerate(args) if arg == "--artifact"]
    assert given == ["dist/a-1.tgz", "dist/*.whl", "oci:ghcr.io/o/n@sha256:" + "0" * 64]
    env["HS_ARTIFACTS"] = ""
    proc = subprocess.run(["bash", str(REPO / "action" / "release.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "--artifact" not in out.read_text().splitlines()
