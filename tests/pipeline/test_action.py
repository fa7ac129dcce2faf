"""The release workflow that ``histor-sign init`` writes, run in a simulated GitHub Actions
environment (tests/pipeline/actions_runner.py): the two jobs, the composite actions, the
hashed install, the chain on the histor-revisions branch of a real git ``origin``, and a
client that checks the server against what was published.

The OIDC token comes from a local Sigstore instance through ACTIONS_ID_TOKEN_REQUEST_URL/
TOKEN, exactly as a job with ``permissions: id-token: write`` gets it; only such a job gets
those variables.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from actions_runner import Runner
from cli_harness import REPO, run_cli
from release_fixtures import DRIFT, IDENTITY, SERVER, server_command

from histor_sign.layout import OUTPUT_NAMES
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
ACTION = yaml.safe_load((REPO / "action.yml").read_text())


def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _origin(base: Path) -> Path:
    """A bare ``origin`` with one commit on main, like a server's repository."""
    origin = base / "origin.git"
    _git("init", "-q", "--bare", "-b", "main", str(origin))
    seed = base / "seed"
    _git("init", "-q", "-b", "main", str(seed))
    (seed / "README.md").write_text("an MCP server\n")
    _git("add", "-A", cwd=seed)
    _git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init",
         cwd=seed)
    _git("push", "-q", str(origin), "main", cwd=seed)
    return origin


def _workflow(base: Path, trust_config: Path, *extra: str) -> dict[str, Any]:
    path = base / "sign.yml"
    result = run_cli("init", "--server", SERVER, "--stdio", server_command(), "-o", str(path),
                     *extra)
    assert result.code == 0, result.stderr
    assert f"wrote {path}" in result.stdout
    workflow: dict[str, Any] = yaml.safe_load(path.read_text())
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step.get("id") == "release":  # the only change: trust the local instance
                step["with"]["trust-config"] = str(trust_config)
    return workflow


def _gh_shim(base: Path) -> Path:
    """GitHub's CLI is not ours to run: record the release-asset upload it is asked for."""
    bin_dir = base / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{base}/gh.log"\n'
                  'for f in "$@"; do case "$f" in *.json) test -f "$f" || exit 1;; esac; done\n')
    gh.chmod(0o755)
    return bin_dir


def _published(origin: Path, base: Path) -> Path:
    """What a client sees on the histor-revisions branch (a fresh clone of it)."""
    client = base / "client"
    if client.exists():
        _git("-C", str(client), "pull", "-q")
    else:
        _git("clone", "-q", "--branch", "histor-revisions", str(origin), str(client))
    return client / "revisions" / SERVER


def _actions_cache(factory: pytest.TempPathFactory) -> Path:
    """GitHub keeps a repository's actions/cache across workflow runs: the wheel cache that
    the session's first job fills (the cold path, which downloads the locked files) serves
    the later jobs and tests (the warm path, hash-checked again on each install)."""
    shared = factory.getbasetemp() / "actions-cache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(autouse=True)
def _repository_actions_cache(tmp_path_factory: pytest.TempPathFactory,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    shared = _actions_cache(tmp_path_factory)
    post_init = Runner.__post_init__

    def __post_init__(self: Runner) -> None:
        post_init(self)
        self.caches = shared

    monkeypatch.setattr(Runner, "__post_init__", __post_init__)


@dataclass
class Released:
    """The first release of the module's server through the release workflow, on a live
    local Sigstore instance: the release test goes on from it, the monitor test watches
    the log it wrote (so the action is installed for a release once per module, not per
    test)."""

    base: Path
    origin: Path
    sigstore: LocalSigstore
    runner: Runner
    first: dict[str, int]
    logs: str
    token_requests: list[str]


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Released]:
    base = tmp_path_factory.mktemp("released")
    origin = _origin(base)
    token_requests: list[str] = []
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        def id_token_env() -> dict[str, str]:
            token_requests.append("sign")
            return sigstore.github_env(IDENTITY)

        runner = Runner(
            base, github={"event_name": "release", "sha": "0" * 40, "token": "x",
                          "repository": "example/notes-server",
                          "event": {"release": {"tag_name": "v1.0.0"}}},
            id_token_env=id_token_env,
            extra_env={"PATH": f"{_gh_shim(base)}{os.pathsep}{os.environ['PATH']}",
                       "NO_PROXY": "127.0.0.1,localhost", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        runner.caches = _actions_cache(tmp_path_factory)  # set up before the autouse patch
        workflow = _workflow(base, sigstore.trust_config_path)
        assert set(workflow["jobs"]) == {"snapshot", "sign"}
        assert "id-token" not in workflow["jobs"]["snapshot"]["permissions"]
        # First release: no branch yet, so no previous; revision 1 starts the chain.
        first = runner.run_workflow(workflow)
        logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
        yield Released(base, origin, sigstore, runner, first, logs, token_requests)


@pytest.fixture
def loopback_files(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()


def test_two_job_release_chains_forward_and_clients_check_it(
    released: Released, tmp_path: Path, loopback_files: tuple[str, Path]
) -> None:
    runner, origin, sigstore, base = (released.runner, released.origin, released.sigstore,
                                      released.base)
    workflow = _workflow(tmp_path, sigstore.trust_config_path)
    assert released.first == {"snapshot": 0, "sign": 0}, released.logs
    assert released.token_requests == ["sign"]  # the job that ran the server had no token
    chain = _published(origin, tmp_path)
    assert sorted(p.name for p in chain.iterdir()) == [
        "1.envelope.json", "1.intoto.sigstore.json", "1.manifest.json",
        "1.tools.snapshot.json", "latest.envelope.json", "latest.intoto.sigstore.json",
        "latest.manifest.json"]
    rev1 = json.loads((chain / "latest.envelope.json").read_text())
    assert rev1["revision"] == 1 and rev1["serverVersion"] == "v1.0.0"

    # Second release, another tag: the previous revision is found on the branch.
    runner.github["event"]["release"]["tag_name"] = "v1.1.0"
    runner.log.clear()
    second = runner.run_workflow(workflow)
    logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
    assert second == {"snapshot": 0, "sign": 0}, logs
    assert released.token_requests == ["sign", "sign"]
    chain = _published(origin, tmp_path)
    latest = json.loads((chain / "latest.envelope.json").read_text())
    stmt = latest
    assert stmt["revision"] == 2 and stmt["serverVersion"] == "v1.1.0"
    assert stmt["previousManifestDigest"] == rev1["manifestDigest"]
    assert (chain / "1.envelope.json").read_bytes() != (chain / "latest.envelope.json").read_bytes()
    assert (chain / "2.envelope.json").read_bytes() == (chain / "latest.envelope.json").read_bytes()
    assert "histor-release/envelope.json" in (base / "gh.log").read_text()
    assert "--clobber" in (base / "gh.log").read_text()

    sigstore.stop()  # started again for the module's later tests, on another port
    try:
        _clients_check(sigstore, chain, loopback_files)
    finally:
        sigstore.start()


def _clients_check(sigstore: LocalSigstore, chain: Path,
                   loopback_files: tuple[str, Path]) -> None:
    # A client, after the instance is gone: verify and check from the file and over HTTP.
    trust = str(sigstore.trust_config_path)
    verify = ("--verify", "--cert-identity", IDENTITY, "--trust-config", trust)
    from_file = run_cli("check", "--envelope", str(chain / "latest.envelope.json"), *verify,
                        "--stdio", server_command())
    assert from_file.code == 0, from_file.stderr
    assert "match" in from_file.stdout
    url, served = loopback_files
    (served / "latest.envelope.json").write_bytes((chain / "latest.envelope.json").read_bytes())
    over_http = run_cli("check", "--envelope", f"{url}/latest.envelope.json", *verify,
                        "--stdio", server_command())
    assert over_http.code == 0, over_http.stderr
    # The chain itself verifies: revision 2 follows revision 1.
    chained = run_cli("verify", str(chain / "2.envelope.json"), "--previous",
                      str(chain / "1.envelope.json"), "--cert-identity", IDENTITY,
                      "--trust-config", trust)
    assert chained.code == 0, chained.stdout + chained.stderr
    # A drifted server no longer matches what was published.
    drifted = run_cli("check", "--envelope", f"{url}/latest.envelope.json", *verify,
                      "--stdio", server_command("--description", DRIFT))
    assert drifted.code == 1, drifted.stderr


def test_action_without_id_token_permission_fails_clearly(tmp_path: Path) -> None:
    _origin(tmp_path)
    runner = Runner(tmp_path, github={}, id_token_env=dict)
    job = {"permissions": {"contents": "read"}, "steps": [
        {"id": "release", "uses": "histor-sign/histor-sign@v0",
         "with": {"server": SERVER, "server-version": "2.0.0", "stdio": server_command(),
                  "previous": "", "publish": "false"}},
    ]}
    assert runner.run_workflow({"jobs": {"sign": job}}) == {"sign": 1}
    assert "id-token: write" in runner.log[-1].log
    assert not list(tmp_path.glob("run-1/sign/workspace/histor-release"))


def test_action_exposes_every_release_output_and_the_issue_inputs() -> None:
    release_keys = {"gate", *OUTPUT_NAMES, "revision", "manifest-digest", "log-index"}
    assert set(ACTION["outputs"]) >= release_keys
    for name in ("server", "server-version", "identity", "stdio", "url", "tools", "headers",
                 "artifacts",
                 "bearer-token-env", "previous", "publish", "fail-on", "strict", "policy",
                 "staging", "trust-config", "upload-sarif", "python-version"):
        assert ACTION["inputs"][name]["description"]
    assert ACTION["runs"]["using"] == "composite"


def _sdk_http_peer(defs: Path) -> Any:
    """The official-SDK peer of tests/mcp on Streamable HTTP (testkit's mcp_helpers)."""
    import mcp_helpers

    return mcp_helpers, mcp_helpers.start_sdk_http(defs, 2)


def test_two_job_release_of_a_streamable_http_server(tmp_path: Path) -> None:
    """``init --url``: the snapshot job fetches over Streamable HTTP from a real SDK server
    (with the action's headers and bearer-token-env inputs), the sign job signs what it
    served; the bearer token appears in no log, output or published file."""
    from histor_sign.demo.example_server import build_tools
    from histor_sign.revision import digests

    defs = tmp_path / "defs.json"
    defs.write_text(json.dumps(build_tools()))
    helpers, (peer, url) = _sdk_http_peer(defs)
    secret = "mcp-bearer-4f1c9e0d2b7a"
    package = tmp_path / "acme_search-2.0.0.tar.gz"  # an sdist, bound through `artifacts`
    package.write_bytes(b"sdist bytes")
    image = f"oci:ghcr.io/acme/search@sha256:{'ab' * 32}"
    origin = _origin(tmp_path)
    try:
        with LocalSigstore(directory=tmp_path / "sigstore") as sigstore:
            runner = Runner(
                tmp_path, github={"event_name": "release", "sha": "0" * 40, "token": "x",
                                  "event": {"release": {"tag_name": "v2.0.0"}}},
                id_token_env=lambda: sigstore.github_env(IDENTITY),
                extra_env={"PATH": f"{_gh_shim(tmp_path)}{os.pathsep}{os.environ['PATH']}",
                           "NO_PROXY": "127.0.0.1,localhost",
                           "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
            )
            path = tmp_path / "sign.yml"
            made = run_cli("init", "--server", SERVER, "--url", url, "-o", str(path))
            assert made.code == 0, made.stderr
            workflow: dict[str, Any] = yaml.safe_load(path.read_text())
            snap_step = next(s for s in workflow["jobs"]["snapshot"]["steps"]
                             if "snapshot" in s.get("uses", ""))
            assert snap_step["with"]["url"] == url
            snap_step["with"].update({"headers": "X-Client: histor-sign-test",
                                      "bearer-token-env": "MCP_TOKEN"})
            snap_step["env"] = {"MCP_TOKEN": secret}
            release_step = next(s for s in workflow["jobs"]["sign"]["steps"]
                                if s.get("id") == "release")
            release_step["with"]["trust-config"] = str(sigstore.trust_config_path)
            release_step["with"]["artifacts"] = f"{package}\n  {image}\n"
            result = runner.run_workflow(workflow)
            logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
            assert result == {"snapshot": 0, "sign": 0}, logs
    finally:
        helpers.stop(peer)
    chain = _published(origin, tmp_path)
    latest = json.loads((chain / "latest.envelope.json").read_text())
    assert latest["revision"] == 1 and latest["serverVersion"] == "v2.0.0"
    assert latest["manifestDigest"] == digests(build_tools())[0]
    snapshot = json.loads((chain / "1.tools.snapshot.json").read_text())
    assert snapshot["capture"]["transport"] == "streamable-http"
    assert snapshot["capture"]["pages"] == (len(build_tools()) + 1) // 2  # pages of 2
    bundle = json.loads((chain / "1.intoto.sigstore.json").read_text())
    subjects = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))["subject"]
    bound = {s["name"]: s["digest"]["sha256"] for s in subjects}
    assert bound["pkg:pypi/acme-search@2.0.0?file_name=acme_search-2.0.0.tar.gz"] == (
        hashlib.sha256(b"sdist bytes").hexdigest())
    assert ("ab" * 32) in bound.values()
    published = "".join(p.read_text() for p in chain.iterdir())
    assert secret not in logs and secret not in published


def _monitor_workflow(base: Path, trust_config: Path) -> dict[str, Any]:
    path = base / "histor-monitor.yml"
    result = run_cli("init", "--server", SERVER, "--monitor", "-o", str(path))
    assert result.code == 0, result.stderr
    workflow: dict[str, Any] = yaml.safe_load(path.read_text())
    for step in workflow["jobs"]["monitor"]["steps"]:
        if "/monitor@" in step.get("uses", ""):  # the only change: trust the local instance
            step["with"]["trust-config"] = str(trust_config)
    return workflow


def test_monitor_workflow_stores_a_clean_checkpoint_and_fails_on_a_rogue_signature(
    released: Released, tmp_path: Path,
) -> None:
    """``init --monitor``'s workflow after a release by the release workflow (the module's,
    on a copy of its repository): the read-only job passes and the git-only job commits the
    checkpoint to the branch; a signature by the release workflow that was never published
    fails the monitor job, and the checkpoint stays."""
    from histor_sign._sigstore_trust import Trust
    from histor_sign.revision import build_statement
    from histor_sign.signing import sign_statement

    assert released.first == {"snapshot": 0, "sign": 0}, released.logs
    sigstore = released.sigstore
    origin = tmp_path / "origin.git"  # this repository, as the release workflow left it
    _git("clone", "-q", "--bare", str(released.origin), str(origin))
    runner = Runner(tmp_path, github=dict(released.runner.github), id_token_env=dict,
                    extra_env=released.runner.extra_env)
    assert _published(origin, tmp_path).joinpath("1.envelope.json").is_file()

    monitor = _monitor_workflow(tmp_path, sigstore.trust_config_path)
    assert monitor["jobs"]["monitor"]["permissions"] == {"contents": "read"}
    first = runner.run_workflow(monitor)
    logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
    assert first == {"monitor": 0, "store": 0}, logs
    checkpoint = _published(origin, tmp_path) / "monitor.checkpoint.json"
    stored = json.loads(checkpoint.read_text())
    (log,) = stored["logs"]
    assert log["nextIndex"] == int(log["checkpoint"].split("\n")[1]) == len(sigstore.log.tree)

    rogue = build_statement(tools=[{"name": "x", "inputSchema": {"type": "object"}}],
                            server=SERVER, identity=IDENTITY, server_version="9")
    signed = sign_statement(rogue, trust=Trust.from_trust_config(sigstore.trust_config_path),
                            identity_token=sigstore.mint_token(IDENTITY))
    runner.log.clear()
    second = runner.run_workflow(monitor)
    logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
    assert second == {"monitor": 1}, logs  # the store job is skipped
    assert "ALARM:" in logs and "HM001" in logs
    assert json.loads((_published(origin, tmp_path) / "monitor.checkpoint.json")
                      .read_text()) == stored

    # Run by hand with the investigated entries' log indexes (the signature and its
    # attestation, as the alarms name them) and why: they are acknowledged, the run passes
    # and the checkpoint (with the acknowledgements) is committed.
    alarmed = sorted({int(n) for n in re.findall(r"HM001 entry (\d+)", logs)})
    assert signed.envelope.transparency_log.log_index in alarmed and len(alarmed) == 2
    runner.log.clear()
    bad = runner.run_workflow(monitor, inputs={"acknowledge": "7; rm -rf /", "reason": "x"})
    assert bad == {"monitor": 1}
    assert "the acknowledge input must be log indexes" in "\n".join(s.log for s in runner.log)
    runner.log.clear()
    third = runner.run_workflow(monitor, inputs={"acknowledge": ", ".join(map(str, alarmed)),
                                                 "reason": "our own test signature"})
    logs = "\n".join(f"--- {s.name} ({s.code})\n{s.log}" for s in runner.log)
    assert third == {"monitor": 0, "store": 0}, logs
    kept = json.loads((_published(origin, tmp_path) / "monitor.checkpoint.json").read_text())
    assert kept["logs"][0]["nextIndex"] > log["nextIndex"]
    assert "our own test signature" in json.dumps(kept)
