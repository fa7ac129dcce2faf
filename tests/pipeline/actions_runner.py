"""A small GitHub Actions runner for tests: workflows, jobs with ``needs:``, composite actions.

What it really runs: every ``run:`` step with bash (GitHub's env files, ``inputs.*``,
``steps.*`` and ``github.*`` expressions, ``if:`` conditions), local and histor-sign composite
actions (``./``, ``./snapshot``, ``histor-sign/histor-sign[/snapshot]@…`` map to this
checkout), each job in a fresh clone of an ``origin`` repository, in ``needs:`` order. The
third-party actions are GitHub's own and are played by their documented behaviour:
checkout clones ``origin`` (a ``ref`` branch, at ``path`` when given); setup-python gives this interpreter (PATH unchanged); cache
restores and saves a directory by key; upload/download-artifact copy through a temp
directory; upload-sarif records the file. Only jobs whose ``permissions`` grant
``id-token: write`` get the OIDC request variables.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cli_harness import REPO, read_github_output

ACTION_REPO = "histor-sign/histor-sign"
_TOKEN = re.compile(r"\s*(?:(==|!=|&&|\|\||!|\(|\))|'((?:[^']|'')*)'|([A-Za-z_][\w.-]*\(\))|"
                    r"([A-Za-z_][\w.\-*]*)|(\d+))")


def evaluate(expr: str, ctx: dict[str, Any]) -> Any:
    """Evaluate the subset of the expression language the workflows here use."""
    tokens: list[tuple[str, Any]] = []
    pos = 0
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        assert m and m.end() > pos, f"cannot parse expression: {expr!r}"
        op, string, call, name, number = m.groups()
        if op:
            tokens.append(("op", op))
        elif string is not None:
            tokens.append(("val", string.replace("''", "'")))
        elif call:
            fn = call[:-2]
            assert fn in ("always", "success"), fn
            tokens.append(("val", True if fn == "always" else ctx.get("_success", True)))
        elif name:
            if name in ("true", "false"):
                tokens.append(("val", name == "true"))
            else:
                value: Any = ctx
                for part in name.split("."):
                    value = value.get(part, "") if isinstance(value, dict) else ""
                tokens.append(("val", value))
        else:
            tokens.append(("val", int(number)))
        pos = m.end()

    def parse_or(i: int) -> tuple[Any, int]:
        left, i = parse_and(i)
        while i < len(tokens) and tokens[i] == ("op", "||"):
            right, i = parse_and(i + 1)
            left = left or right
        return left, i

    def parse_and(i: int) -> tuple[Any, int]:
        left, i = parse_cmp(i)
        while i < len(tokens) and tokens[i] == ("op", "&&"):
            right, i = parse_cmp(i + 1)
            left = left and right
        return left, i

    def parse_cmp(i: int) -> tuple[Any, int]:
        left, i = parse_unary(i)
        while i < len(tokens) and tokens[i] in (("op", "=="), ("op", "!=")):
            op = tokens[i][1]
            right, i = parse_unary(i + 1)
            left = (str(left) == str(right)) if op == "==" else (str(left) != str(right))
        return left, i

    def parse_unary(i: int) -> tuple[Any, int]:
        if tokens[i] == ("op", "!"):
            value, i = parse_unary(i + 1)
            return not value, i
        if tokens[i] == ("op", "("):
            value, i = parse_or(i + 1)
            assert tokens[i] == ("op", ")")
            return value, i + 1
        kind, value = tokens[i]
        assert kind == "val", tokens[i]
        return value, i + 1

    value, end = parse_or(0)
    assert end == len(tokens), f"trailing tokens in {expr!r}"
    return value


def substitute(text: str, ctx: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        got = evaluate(match.group(1), ctx)
        return "" if got is None else str(got).lower() if isinstance(got, bool) else str(got)

    if isinstance(text, bool):  # YAML true/false: the runner passes them as "true"/"false"
        return str(text).lower()
    return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))


def _condition(step: dict[str, Any], ctx: dict[str, Any]) -> bool:
    cond = step.get("if")
    if cond is None:
        return bool(ctx.get("_success", True))
    text = str(cond).strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    uses_status = any(fn in text for fn in ("always()", "success()", "failure()"))
    result = bool(evaluate(text, ctx))
    return result if uses_status else result and bool(ctx.get("_success", True))


@dataclass
class StepResult:
    name: str
    code: int
    log: str


@dataclass
class Runner:
    """One simulated repository (``origin``), artifact store and cache, shared by runs."""

    base: Path
    github: dict[str, Any]
    id_token_env: Callable[[], dict[str, str]]
    extra_env: dict[str, str] = field(default_factory=dict)
    sarif_uploads: list[Path] = field(default_factory=list)
    log: list[StepResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.origin = self.base / "origin.git"
        self.caches = self.base / "caches"
        self.caches.mkdir(parents=True, exist_ok=True)
        self.runs = 0
        self.action_root = action_checkout(self.base / "histor-sign-action")

    # ------------------------------------------------------------------ workflow level
    def run_workflow(self, workflow: dict[str, Any],
                     inputs: dict[str, str] | None = None) -> dict[str, int]:
        """Run every job in ``needs:`` order; return each job's exit code (skipped: absent).
        ``inputs``: a ``workflow_dispatch`` run's inputs (a scheduled run has none)."""
        self.runs += 1
        self.inputs = dict(inputs or {})
        run_dir = self.base / f"run-{self.runs}"
        self.artifacts = run_dir / "artifacts"
        self.artifacts.mkdir(parents=True)
        results: dict[str, int] = {}
        pending = dict(workflow["jobs"])
        while pending:
            ready = [n for n, j in pending.items()
                     if all(d in results for d in _needs(j))]
            assert ready, f"needs cycle among {list(pending)}"
            for name in ready:
                job = pending.pop(name)
                if any(results[d] != 0 for d in _needs(job)):
                    continue  # a failed need skips the job, like GitHub
                results[name] = self.run_job(name, job, run_dir / name)
        return {n: c for n, c in results.items()}

    def run_job(self, name: str, job: dict[str, Any], work: Path) -> int:
        workspace = work / "workspace"
        temp = work / "temp"
        temp.mkdir(parents=True)
        subprocess.run(["git", "clone", "-q", str(self.origin), str(workspace)], check=True)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("GITHUB_", "ACTIONS_", "RUNNER_"))}
        env.update(self.extra_env)
        env.update(
            GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(workspace), RUNNER_TEMP=str(temp),
            RUNNER_OS="Linux", RUNNER_ARCH="X64", GITHUB_ENV=str(work / "github_env"),
            GITHUB_STEP_SUMMARY=str(work / "summary.md"), CI="true",
        )
        permissions = job.get("permissions", {})
        if permissions.get("id-token") == "write":
            env.update(self.id_token_env())
        ctx: dict[str, Any] = {"github": self.github, "runner": {"temp": str(temp)},
                               "inputs": self.inputs, "_success": True, "steps": {}}
        job_state = {"work": work, "workspace": workspace, "env": env, "post": []}
        for step in job["steps"]:
            if not _condition(step, ctx):
                continue
            code, outputs = self.run_step(step, ctx, job_state, workspace)
            if step.get("id"):
                ctx["steps"][step["id"]] = {"outputs": outputs}
            if code != 0:
                ctx["_success"] = False
        for post in job_state["post"]:
            post()
        return 0 if ctx["_success"] else 1

    # ------------------------------------------------------------------ step level
    def run_step(self, step: dict[str, Any], ctx: dict[str, Any], job: dict[str, Any],
                 cwd: Path, action_path: Path | None = None) -> tuple[int, dict[str, str]]:
        with_ = {k: substitute(v, ctx) for k, v in step.get("with", {}).items()}
        step_env = {k: substitute(v, ctx) for k, v in step.get("env", {}).items()}
        if "run" in step:
            return self._run(substitute(step["run"], ctx), step, step_env, job, cwd, action_path)
        uses: str = step["uses"]
        local = self._local_action(uses, job["workspace"])
        if local is not None:
            return self.run_composite(local, with_, step_env, job)
        return self._third_party(uses.split("@")[0], with_, ctx, job)

    def _run(self, script: str, step: dict[str, Any], step_env: dict[str, str],
             job: dict[str, Any], cwd: Path, action_path: Path | None) -> tuple[int, dict[str, str]]:
        work: Path = job["work"]
        output_file = work / f"output-{len(self.log)}"
        env = dict(job["env"], GITHUB_OUTPUT=str(output_file))
        github_env = Path(env["GITHUB_ENV"])
        if github_env.exists():
            env.update(line.split("=", 1) for line in github_env.read_text().splitlines())
        if action_path is not None:
            env["GITHUB_ACTION_PATH"] = str(action_path)
        env.update(step_env)
        proc = subprocess.run(["bash", "-e", "-c", script], env=env, cwd=cwd,
                              capture_output=True, text=True, timeout=900)
        self.log.append(StepResult(step.get("name", script[:40]), proc.returncode,
                                   proc.stdout + proc.stderr))
        outputs = read_github_output(output_file.read_text()) if output_file.exists() else {}
        return proc.returncode, outputs

    def _local_action(self, uses: str, workspace: Path) -> Path | None:
        if uses.startswith("./"):
            return workspace / uses[2:]
        repo, _, _ref = uses.partition("@")
        if repo == ACTION_REPO:
            return self.action_root
        if repo.startswith(ACTION_REPO + "/"):
            return self.action_root / repo.removeprefix(ACTION_REPO + "/")
        return None

    def run_composite(self, path: Path, with_: dict[str, str], step_env: dict[str, str],
                      job: dict[str, Any]) -> tuple[int, dict[str, str]]:
        action = yaml.safe_load((path / "action.yml").read_text())
        assert action["runs"]["using"] == "composite"
        unknown = set(with_) - set(action["inputs"])
        assert not unknown, f"inputs not declared by {path}/action.yml: {unknown}"
        inputs = {n: s.get("default", "") for n, s in action["inputs"].items()}
        inputs.update(with_)
        missing = [n for n, s in action["inputs"].items() if s.get("required") and not inputs[n]]
        assert not missing, missing
        outer_env = job["env"]
        job["env"] = {**outer_env, **step_env}
        ctx: dict[str, Any] = {"inputs": inputs, "steps": {}, "github": self.github,
                               "runner": {"temp": job["env"]["RUNNER_TEMP"]}, "_success": True}
        try:
            for step in action["runs"]["steps"]:
                if not _condition(step, ctx):
                    continue
                if "run" in step:
                    code, outputs = self.run_step(step, ctx, job, job["workspace"], path)
                else:
                    code, outputs = self.run_step(step, ctx, job, job["workspace"])
                if step.get("id"):
                    ctx["steps"][step["id"]] = {"outputs": outputs}
                if code != 0:
                    ctx["_success"] = False
        finally:
            job["env"] = outer_env
        outputs = {n: substitute(s["value"], ctx) for n, s in action.get("outputs", {}).items()}
        return (0 if ctx["_success"] else 1), outputs

    def _third_party(self, name: str, with_: dict[str, str], ctx: dict[str, Any],
                     job: dict[str, Any]) -> tuple[int, dict[str, str]]:
        workspace: Path = job["workspace"]
        self.log.append(StepResult(name, 0, ""))
        if name == "actions/checkout":
            ref, path = with_.get("ref"), with_.get("path")
            if not ref and not path:
                return 0, {}  # the job's workspace is already a fresh clone of origin
            if path:  # another clone, of `ref` (a branch), at `path` in the workspace
                proc = subprocess.run(["git", "clone", "-q", *(["--branch", ref] if ref else []),
                                       str(self.origin), str(workspace / path)],
                                      capture_output=True, text=True)
            else:  # the workspace itself, switched to branch `ref`
                proc = subprocess.run(["git", "-C", str(workspace), "checkout", "-q", str(ref)],
                                      capture_output=True, text=True)
            self.log[-1] = StepResult(name, proc.returncode, proc.stdout + proc.stderr)
            return proc.returncode, {}
        if name == "actions/setup-python":
            assert with_.get("update-environment") == "false"
            return 0, {"python-path": sys.executable,
                       "python-version": platform.python_version()}
        if name == "actions/cache":
            target, key = Path(with_["path"]), with_["key"]
            stored = self.caches / key
            if stored.exists():
                shutil.copytree(stored, target, dirs_exist_ok=True)
                return 0, {"cache-hit": "true"}

            def save() -> None:
                if target.exists() and not stored.exists():
                    shutil.copytree(target, stored)

            job["post"].append(save)
            return 0, {"cache-hit": "false"}
        if name == "actions/upload-artifact":
            source = workspace / with_["path"]
            if not source.exists():
                return 1, {}
            dest = self.artifacts / with_["name"]
            dest.mkdir(parents=True)
            shutil.copy2(source, dest / source.name)
            return 0, {"artifact-id": with_["name"]}
        if name == "actions/download-artifact":
            source = self.artifacts / with_["name"]
            if not source.exists():
                return 1, {}
            shutil.copytree(source, workspace / with_.get("path", "."), dirs_exist_ok=True)
            return 0, {"download-path": with_.get("path", ".")}
        if name == "github/codeql-action/upload-sarif":
            sarif = workspace / with_["sarif_file"]
            self.sarif_uploads.append(sarif)
            return (0 if sarif.is_file() else 1), {}
        raise AssertionError(f"no simulation for action {name}")


#: What GitHub checks out for ``uses: histor-sign/histor-sign[/…]@ref``, as far as the
#: actions read it: their files and what ``action/setup.sh`` builds histor-sign from.
ACTION_FILES = ("action.yml", "action", "snapshot", "monitor", "histor_sign",
                "pyproject.toml", "README.md")


def action_checkout(target: Path) -> Path:
    """A copy of this checkout's action files: ``setup.sh`` builds histor-sign in the
    action's directory (pip's in-tree build writes ``build/`` and ``*.egg-info`` there), which
    must be the runner's, never the developer's checkout."""
    junk = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in ACTION_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=junk)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _needs(job: dict[str, Any]) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)
