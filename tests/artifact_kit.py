"""Real package artifacts built in a test: an ``npm pack`` tarball, a wheel built by pip
from a tiny flit project, and their installs (``npm install`` of the tarball, ``pip install
--target`` of the wheel), all offline. A builder that cannot run here raises
:class:`Unavailable` so the test can skip with the reason (CI has node, npm and pip)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


class Unavailable(Exception):
    """A builder cannot run on this machine (the reason is the message)."""


def _run(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{args[0]} failed: {exc}") from None
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def npm_tarball(directory: Path, *, name: str = "@acme/search", version: str = "2.3.0",
                body: str = "module.exports = 'search';\n") -> Path:
    """``npm pack`` of a one-file package; returns the tarball."""
    if shutil.which("npm") is None:
        raise Unavailable("npm is not installed")
    source = directory / "npm-src"
    source.mkdir(parents=True)
    (source / "package.json").write_text(json.dumps(
        {"name": name, "version": version, "main": "index.js", "license": "MIT"}))
    (source / "index.js").write_text(body)
    out = _run(["npm", "pack", "--silent", "--pack-destination", str(directory)], source)
    return directory / out.strip().splitlines()[-1]


def npm_install(project: Path, tarball: Path) -> Path:
    """``npm install`` of a tarball into a fresh project; returns the package directory."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "package.json").write_text('{"name": "consumer", "version": "1.0.0", '
                                          '"private": true}')
    _run(["npm", "install", "--offline", "--no-audit", "--no-fund", str(tarball)], project)
    lock = json.loads((project / "node_modules" / ".package-lock.json").read_text())
    (key,) = lock["packages"]
    return project / key


def wheel(directory: Path, *, name: str = "acme-search", version: str = "2.3.0",
          body: str = '"""acme search"""\n') -> Path:
    """A wheel built by ``pip wheel`` from a tiny flit project (no index, no isolation)."""
    module = name.replace("-", "_")
    source = directory / "py-src"
    (source / module).mkdir(parents=True)
    (source / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["flit_core>=3.9"]\nbuild-backend = "flit_core.buildapi"\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\ndescription = "tiny"\n'
    )
    (source / module / "__init__.py").write_text(body)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "-w", str(directory), str(source)], directory)
    (built,) = directory.glob(f"{module}-{version}-*.whl")
    return built


def pip_install(target: Path, built: Path) -> Path:
    """``pip install --target`` of a wheel file; returns its ``.dist-info`` directory."""
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps",
          "--target", str(target), str(built)], target.parent)
    (dist_info,) = target.glob("*.dist-info")
    return dist_info
