"""The composite action, run for real in a simulated GitHub Actions environment.

Every ``run:`` step of action.yml is executed with bash, in order, with ``inputs.*``
substituted and the GitHub environment files pointing at temp files; the OIDC token
comes from a local Sigstore instance through ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, exactly
as a job with ``permissions: id-token: write`` gets it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from cli_harness import REPO, read_github_output
from release_fixtures import IDENTITY, SERVER, server_command

from histor_sign._internal.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
ACTION = yaml.safe_load((REPO / "action.yml").read_text())


def _substitute(text: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    def value(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        if expr.startswith("inputs."):
            return inputs[expr.removeprefix("inputs.")]
        found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expr)
        if found:
            return steps.get(found.group(1), {}).get(found.group(2), "")
        raise AssertionError(f"unexpected expression in action.yml: {expr}")

    return re.sub(r"\$\{\{(.*?)\}\}", value, text)


def _read_outputs(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    return read_github_output(path.read_text())


def run_action(inputs: dict[str, str], env: dict[str, str], work: Path) -> tuple[int, dict[str, str], str]:
    """Run the action's steps; return (exit code of the last step run, outputs, stderr)."""
    merged = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    merged.update(inputs)
    missing = [n for n, s in ACTION["inputs"].items() if s.get("required") and not merged[n]]
    assert not missing, missing
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "ACTIONS_"))}
    github_env = work / "github_env"
    base_env.update(
        GITHUB_ACTIONS="true", GITHUB_ACTION_PATH=str(REPO), RUNNER_TEMP=str(work / "runner"),
        GITHUB_ENV=str(github_env), GITHUB_STEP_SUMMARY=str(work / "summary.md"),
        NO_PROXY="127.0.0.1,localhost",
    )
    base_env.update(env)
    (work / "runner").mkdir(exist_ok=True)
    steps: dict[str, dict[str, str]] = {}
    code, stderr = 0, ""
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            assert "uses" in step  # upload-sarif: GitHub's own action, not ours to run
            continue
        output_file = work / f"output-{step.get('id', 'step')}"
        step_env = dict(base_env, GITHUB_OUTPUT=str(output_file))
        step_env.update(
            (line.split("=", 1) for line in github_env.read_text().splitlines())
            if github_env.exists() else []
        )
        step_env.update({k: _substitute(str(v), merged, steps) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(["bash", "-c", _substitute(step["run"], merged, steps)],
                              env=step_env, cwd=work, capture_output=True, text=True, timeout=900)
        code, stderr = proc.returncode, proc.stdout + proc.stderr
        steps[step.get("id", "")] = _read_outputs(output_file)
        if code != 0:
            break
    outputs = {name: _substitute(spec["value"], merged, steps) for name, spec in ACTION["outputs"].items()}
    return code, outputs, stderr


def test_action_releases_with_ambient_oidc(tmp_path: Path) -> None:
    with LocalSigstore(directory=tmp_path / "sigstore") as sigstore:
        env = sigstore.github_env(IDENTITY)
        code, outputs, log = run_action(
            # The server runs from the action's own venv, where setup installed histor-sign.
            {"server": SERVER, "server-version": "2.0.0",
             "stdio": f"{tmp_path}/runner/histor-sign-venv/bin/python -m "
                      "histor_sign.demo.example_server",
             "trust-config": str(sigstore.trust_config_path), "out-dir": "out"},
            env, tmp_path,
        )
    assert code == 0, log
    envelope = json.loads((tmp_path / "out" / "envelope.json").read_text())
    assert outputs["revision"] == "1"
    assert outputs["manifest-digest"] == envelope["manifestDigest"]
    assert outputs["log-index"] == str(envelope["transparencyLog"]["logIndex"])
    assert Path(outputs["envelope"]) == Path("out") / "envelope.json"
    assert "revision | 1" in (tmp_path / "summary.md").read_text()


def test_action_without_id_token_permission_fails_clearly(tmp_path: Path) -> None:
    code, outputs, log = run_action(
        {"server": SERVER, "server-version": "2.0.0", "stdio": server_command()}, {}, tmp_path,
    )
    assert code == 1
    assert "id-token: write" in log
    assert outputs["revision"] == ""
    assert not (tmp_path / "histor-release").exists()


def test_action_declares_what_the_issue_asks_for() -> None:
    inputs: dict[str, Any] = ACTION["inputs"]
    for name in ("server", "server-version", "identity", "stdio", "url", "previous", "fail-on",
                 "staging", "trust-config", "upload-sarif"):
        assert name in inputs and inputs[name]["description"]
    assert set(ACTION["outputs"]) >= {"revision", "manifest-digest", "log-index", "envelope"}
    assert ACTION["runs"]["using"] == "composite"
