"""Test harness: run the real CLI in a subprocess, as a user would, and check its errors.

A plain module (not conftest) so every test directory imports the same one."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env.pop("GITHUB_ACTIONS", None)
    if extra:
        env.update(extra)
    return env


def run_cli(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    """Run ``python -m histor_sign ARGS`` as a user would, in a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-m", "histor_sign", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=cli_env(env),
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def assert_clean_error(run: Run, code: int = 2) -> None:
    """One error line on stderr, the expected exit code, and no traceback.

    Warnings (e.g. that a local, untrusted Sigstore instance is in use) may precede it.
    """
    assert run.code == code, (run.code, run.stderr)
    assert "Traceback" not in run.stderr
    lines = [
        line for line in run.stderr.splitlines()
        if line.strip() and not line.startswith("histor-sign: warning: ")
    ]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("histor-sign: error: "), run.stderr


def read_github_output(text: str) -> dict[str, str]:
    """Parse a ``$GITHUB_OUTPUT`` file as the GitHub Actions runner does: ``key=value`` lines
    and ``key<<DELIMITER`` … ``DELIMITER`` blocks (later keys win)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i)  # ValueError: an unterminated block
            outputs[key] = "\n".join(lines[i:end])
            i = end + 1
        else:
            key, value = line.split("=", 1)
            outputs[key] = value
    return outputs
