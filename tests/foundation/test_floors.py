"""The floors of docs/architecture.md are import-linter contracts (``[tool.importlinter]`` in
pyproject.toml, run by ``.ci/run`` as ``lint-imports``): the tree keeps them, and an import
that runs up a floor breaks the contract by name."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from cli_harness import REPO

CONTRACT = "docs/architecture.md floors: each module imports only lower floors"


def _lint_imports(root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the repository's contracts over the package found at ``root``."""
    env = dict(os.environ, PYTHONPATH=str(root))
    code = "import sys; from importlinter.cli import lint_imports_command as c; c()"
    return subprocess.run([sys.executable, "-c", code, "--config",
                           str(REPO / "pyproject.toml"), "--no-cache"],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
                          check=False)


def test_the_package_keeps_the_documented_floors(tmp_path: Path) -> None:
    done = _lint_imports(REPO, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{CONTRACT} KEPT" in done.stdout


def test_an_import_up_a_floor_breaks_the_contract_by_name(tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(REPO / "histor_sign", copy / "histor_sign",
                    ignore=shutil.ignore_patterns("__pycache__"))
    canonical = copy / "histor_sign" / "canonical.py"  # floor 2 reaching for floor 9
    canonical.write_text(canonical.read_text() + "\nimport histor_sign.pins  # noqa\n")
    done = _lint_imports(copy, tmp_path)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"{CONTRACT} BROKEN" in done.stdout
    assert "histor_sign.canonical -> histor_sign.pins" in done.stdout


def test_every_floor_of_the_architecture_page_is_a_layer() -> None:
    # The page's table and the contract name the same modules on the same floors, top down.
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (contract,) = config["tool"]["importlinter"]["contracts"]
    layered = [m.strip() for layer in contract["layers"] for m in re.split(r"[|:]", layer)]
    page = (REPO / "docs" / "architecture.md").read_text()
    rows = re.findall(r"^\| (ground|\d+) \| ([^|]+) \|", page, re.M)
    documented = [name.strip("`/ ") for _floor, cell in reversed(rows)
                  for name in cell.split(",")]
    documented = [name for name in documented if name != "__init__"]
    assert sorted(documented) == sorted(layered)
