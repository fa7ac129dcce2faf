"""Real package artifacts built in a test: an ``npm pack`` tarball, a wheel built by pip
from a tiny flit project, and their installs (``npm install`` of the tarball, ``pip install
--target`` of the wheel), all offline. A builder that cannot run here raises
:class:`Unavailable` so the test can skip with the reason (CI has node, npm and pip)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
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


IMAGE = "ghcr.io/acme/search:2.3.0@sha256:" + "5e" * 32


@dataclass
class BoundRelease:
    """A release of the example server with artifacts bound, its instance stopped."""

    out_dir: Path
    chain: Path  # the chain directory of the server under --revisions
    trust_config: Path
    trusted_root: Path
    tarball: Path | None
    wheel: Path
    identity: str
    server: str


def release_with_artifacts(base: Path) -> BoundRelease:
    """Build an npm tarball (when npm is here) and a wheel, then release the example server
    with both and an image digest bound, published into a chain directory."""
    from cli_harness import run_cli

    from histor_sign.layout import chain_dir
    from histor_sign.sigstore_dev import LocalSigstore

    server = "io.github.example/notes-server"
    identity = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"
    base.mkdir(parents=True, exist_ok=True)
    try:
        tarball: Path | None = npm_tarball(base / "npm")
    except Unavailable:
        tarball = None
    built = wheel(base / "py")
    command = shlex.join([sys.executable, "-m", "histor_sign.demo.example_server"])
    tools = base / "tools.json"
    fetched = run_cli("fetch", "--stdio", command, "-o", str(tools))
    assert fetched.code == 0, fetched.stderr
    artifacts = [*(["--artifact", str(tarball)] if tarball else []), "--artifact", str(built),
                 "--artifact", f"oci:{IMAGE}"]
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        run = run_cli("release", "--server", server, "--server-version", "2.3.0",
                      "--out-dir", str(base / "out"), "--trust-config",
                      str(sigstore.trust_config_path), "--tools", str(tools),
                      "--identity-token", sigstore.mint_token(identity),
                      "--revisions", str(base / "revisions"),
                      "--published-at", str(chain_dir(base / "revisions", server)), *artifacts)
        assert run.code == 0, run.stderr
        trust_config, trusted_root = sigstore.trust_config_path, sigstore.trusted_root_path
    return BoundRelease(base / "out", chain_dir(base / "revisions", server), trust_config,
                        trusted_root, tarball, built, identity, server)
