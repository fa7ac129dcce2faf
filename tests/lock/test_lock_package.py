"""A lock records which npm package ran only where that is evidence (issue 25): a command
that runs a package installed in a local node_modules whose lockfile keeps its integrity.
A request (``npx pkg@other-version``, a package npx would download) records nothing.

Real packages: an ``npm pack`` tarball installed with ``npm install``, and the npm
server-everything peer of tests/peers (installed by ``npm ci``) run for real."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from artifact_kit import Unavailable, npm_install, npm_tarball
from cli_harness import REPO, run_cli

from histor_sign.artifacts import npm_package_run_by
from histor_sign.lock import LockedServer, LockFile
from histor_sign.models import Snapshot

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the project directory, the tarball npm installed into its node_modules)."""
    base = tmp_path_factory.mktemp("npm")
    try:
        tarball = npm_tarball(base)
        npm_install(base / "app", tarball)
    except Unavailable as exc:
        pytest.skip(str(exc))
    return base / "app", tarball


def test_a_command_running_an_installed_package_is_evidence(
    installed: tuple[Path, Path],
) -> None:
    app, tarball = installed
    sha512 = hashlib.sha512(tarball.read_bytes()).hexdigest()
    for command in (["node", "node_modules/@acme/search/index.js"],
                    ["npx", "-y", "@acme/search"], ["npx", "@acme/search@2.3.0", "--flag"],
                    ["node", str(app / "node_modules" / "@acme" / "search" / "index.js")]):
        evidence = npm_package_run_by(command, app)
        assert evidence is not None, command
        assert (evidence.label, evidence.version) == ("node_modules/@acme/search", "2.3.0")
        assert evidence.digests["sha512"] == sha512


@pytest.mark.parametrize("command", [
    ["npx", "-y", "@acme/search@9.9.9"],  # npx would fetch that version, not run this one
    ["npx", "-y", "left-pad"],  # not installed: npx would download it
    ["npx", "--package", "@acme/search", "search"],
    ["node", "node_modules/@acme/search"],  # the directory, not a file in it
    ["node", "server.js"],
    [],
])
def test_a_request_is_not_evidence(installed: tuple[Path, Path], command: list[str]) -> None:
    assert npm_package_run_by(command, installed[0]) is None


def test_no_lockfile_integrity_no_evidence(installed: tuple[Path, Path],
                                           tmp_path: Path) -> None:
    app = tmp_path / "app"
    shutil.copytree(installed[0], app)
    (app / "node_modules" / ".package-lock.json").unlink()
    (app / "package-lock.json").unlink()
    assert npm_package_run_by(["npx", "@acme/search"], app) is None
    # A lockfile recording another version than the one installed: not evidence either.
    shutil.copytree(installed[0], tmp_path / "other")
    lock = tmp_path / "other" / "node_modules" / ".package-lock.json"
    doc = json.loads(lock.read_text())
    doc["packages"]["node_modules/@acme/search"]["version"] = "2.2.0"
    lock.write_text(json.dumps(doc))
    assert npm_package_run_by(["npx", "@acme/search"], tmp_path / "other") is None


def test_the_lock_file_keeps_the_package_and_refuses_an_edited_one(
    installed: tuple[Path, Path], tmp_path: Path,
) -> None:
    evidence = npm_package_run_by(["npx", "@acme/search"], installed[0])
    snap = Snapshot(tools=[{"name": "find", "inputSchema": {"type": "object"}}],
                    capture={"target": {"transport": "stdio", "command": ["npx", "@acme/search"]},
                             "serverInfo": {"name": "search", "version": "2.3.0"}})
    path = tmp_path / "mcp.lock"
    LockFile(path).with_entry(LockedServer.observe(snap, None, evidence)).write()
    package = json.loads(path.read_text())["servers"]["search"]["package"]
    integrity = json.loads((installed[0] / "package-lock.json").read_text())[
        "packages"]["node_modules/@acme/search"]["integrity"]
    assert package == {"ecosystem": "npm", "name": "@acme/search", "version": "2.3.0",
                       "digests": {"sha512": base64.b64decode(integrity[7:]).hex()}}
    loaded = LockFile.load(path)
    assert loaded.to_bytes() == path.read_bytes()


def test_lock_of_the_npm_peer_records_its_package(tmp_path: Path) -> None:
    """``lock --stdio`` of server-everything run from tests/peers/node_modules: the lock
    records the integrity npm ci installed; the same server from a snapshot file records
    none (a file is not evidence of what ran)."""
    peers = REPO / "tests" / "peers"
    entry = peers / "node_modules" / "@modelcontextprotocol" / "server-everything"
    if not (entry / "dist" / "index.js").is_file() or shutil.which("node") is None:
        pytest.skip("the npm peer is not installed (npm ci --prefix tests/peers)")
    command = f"node {entry / 'dist' / 'index.js'} stdio"
    path = tmp_path / "mcp.lock"
    run = run_cli("lock", "--stdio", command, "--server-is-trusted-code", "-o", str(path),
                  "--server", "everything")
    assert run.code == 0, run.stderr
    package = json.loads(path.read_text())["servers"]["everything"]["package"]
    version = json.loads((entry / "package.json").read_text())["version"]
    assert package["name"] == "@modelcontextprotocol/server-everything"
    assert package["version"] == version and len(package["digests"]["sha512"]) == 128
    snapshot = tmp_path / "snap.json"
    assert run_cli("fetch", "--stdio", command, "--server-is-trusted-code", "-o",
                   str(snapshot)).code == 0
    other = tmp_path / "other.lock"
    assert run_cli("lock", str(snapshot), "-o", str(other), "--server", "e").code == 0
    assert json.loads(other.read_text())["servers"]["e"]["package"] is None


def _peer_command() -> tuple[Path, str]:
    entry = REPO / "tests" / "peers" / "node_modules" / "@modelcontextprotocol" / \
        "server-everything"
    if not (entry / "dist" / "index.js").is_file() or shutil.which("node") is None:
        pytest.skip("the npm peer is not installed (npm ci --prefix tests/peers)")
    return entry, f"node {entry / 'dist' / 'index.js'} stdio"


def test_check_lock_compares_the_package_that_runs(tmp_path: Path) -> None:
    """A lock that records a package is a claim about code: ``check --lock`` of the same
    command compares the package that runs now, and fails (exit 1, both named) when the
    locked one is another — though every definition matches — or when nothing shows which
    package runs; a file of served tools is no evidence of code and leaves it uncompared."""
    entry, command = _peer_command()
    path = tmp_path / "mcp.lock"
    flags = ("--server-is-trusted-code", "--server", "everything")
    assert run_cli("lock", "--stdio", command, "-o", str(path), *flags).code == 0

    same = run_cli("check", "--lock", str(path), "--stdio", command, *flags)
    assert same.code == 0, same.stderr
    assert "package @modelcontextprotocol/server-everything@" in same.stdout
    assert "as locked" in same.stdout

    doc = json.loads(path.read_text())
    locked = doc["servers"]["everything"]["package"]["digests"]["sha512"]
    doc["servers"]["everything"]["package"]["digests"]["sha512"] = "0" * 128
    other = tmp_path / "other.lock"
    other.write_text(json.dumps(doc))
    changed = run_cli("check", "--lock", str(other), "--stdio", command, *flags,
                      "--format", "json")
    assert changed.code == 1, changed.stderr
    report = json.loads(changed.stdout)
    assert report["package"]["compared"] is True
    assert report["package"]["observed"]["digests"]["sha512"] == locked
    assert report["package"]["problem"].startswith("the npm package changed: locked "
                                                   "@modelcontextprotocol/server-everything@")
    # Every definition matches: only the package fails the check.
    assert report["status"] == "match"
    assert report["signedManifestDigest"] == report["currentManifestDigest"]

    # The same server run from a path that shows no package: fail closed, say why.
    alias = tmp_path / "srv"
    alias.symlink_to(entry, target_is_directory=True)
    unproven = run_cli("check", "--lock", str(path), "--stdio",
                       f"node {alias / 'dist' / 'index.js'} stdio", *flags)
    assert unproven.code == 1
    assert "PACKAGE the locked npm package @modelcontextprotocol/server-everything@" in \
        unproven.stdout and "no installed package with lockfile integrity" in unproven.stdout

    # The served tools from a file: the definitions are compared, the package is not.
    snapshot = tmp_path / "snap.json"
    assert run_cli("fetch", "--stdio", command, "--server-is-trusted-code", "-o",
                   str(snapshot)).code == 0
    from_file = run_cli("check", "--lock", str(other), str(snapshot), "--server",
                        "everything", "--format", "json")
    assert from_file.code == 0, from_file.stderr
    assert json.loads(from_file.stdout)["package"]["compared"] is False
