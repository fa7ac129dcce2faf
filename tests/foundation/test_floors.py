"""The floors of docs/architecture.md are import-linter contracts (``[tool.importlinter]`` in
pyproject.toml, run by ``.ci/run`` as ``lint-imports``): the tree keeps them, and an import
that runs up a floor breaks the contract by name."""

from __future__ import annotations

import ast
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


#: Underscore names the standard library documents as public.
_DOCUMENTED = {("os", "_exit"), ("sys", "_getframe")}


def _private_uses(path: Path) -> list[str]:
    """Where a module imports, or reads from an imported module, a name another package
    keeps private (a path component or attribute starting with one underscore)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    private = lambda name: name.startswith("_") and not name.startswith("__")  # noqa: E731
    found, modules = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] != "histor_sign":
                    modules[alias.asname or alias.name.split(".")[0]] = alias.name
                    if any(private(part) for part in alias.name.split(".")):
                        found.append(f"{path.name}:{node.lineno} import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in ("histor_sign", "__future__"):
                continue
            names = [*node.module.split("."), *(a.name for a in node.names)]
            if any(private(part) for part in names):
                found.append(f"{path.name}:{node.lineno} from {node.module} import ...")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in modules and private(node.attr)
                and (modules[node.value.id], node.attr) not in _DOCUMENTED):
            found.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def test_no_module_leans_on_another_packages_private_code() -> None:
    # A private module or function of a dependency (or of the standard library) changes
    # without notice in a minor release; the package uses public APIs only.
    found = [use for path in sorted((REPO / "histor_sign").rglob("*.py"))
             for use in _private_uses(path)]
    assert found == []
