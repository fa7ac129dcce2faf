"""Push credentials (``GITHUB_TOKEN``, ``GH_TOKEN``) in a stdio server's reach: withheld from
its environment, but as the same user it reads any ancestor's ``/proc/<pid>/environ``. So
``release`` in GitHub Actions does not start an untrusted server near one, and ``fetch`` and
``proxy`` say once on stderr that the server can read it (docs/signing.md)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import REPO, cli_env

from histor_sign.mcp._target import push_credentials_in_reach

pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")

SERVER = shlex.join([sys.executable, str(REPO / "tests" / "mcp" / "raw_env_server.py")])
#: Runs its arguments with ``GH_TOKEN``/``GITHUB_TOKEN`` removed from the child's own
#: environment: the token stays in this process's, an ancestor of the child.
WRAPPER = """
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
done = subprocess.run(sys.argv[1:], env=env, capture_output=True, text=True)
sys.stdout.write(done.stdout); sys.stderr.write(done.stderr); sys.exit(done.returncode)
"""
PROBE = ("import os; from histor_sign.mcp._target import push_credentials_in_reach as p; "
         "print(p(os.environ))")
WARNING = "can read GH_TOKEN (in this process's or an ancestor's environment"
#: Whether the session running these tests has a push credential in reach itself (a
#: developer's exported GH_TOKEN): then no child of it is away from one, and the cases
#: that need a token-free ancestry are skipped.
SESSION_IN_REACH = push_credentials_in_reach(os.environ)


def _needs_a_token_free_session() -> None:
    if SESSION_IN_REACH:
        pytest.skip(f"this test session has {', '.join(SESSION_IN_REACH)} in reach itself")


def _from_a_parent_holding(token: dict[str, str], *argv: str,
                           extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = cli_env({**token, **(extra or {})})
    return subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=120, check=False)


def test_a_token_in_an_ancestors_environment_is_in_reach() -> None:
    _needs_a_token_free_session()
    assert push_credentials_in_reach({"GH_TOKEN": "x", "PATH": "/bin"}) == ["GH_TOKEN"]
    assert push_credentials_in_reach({"GH_TOKEN": ""}) == []
    held = _from_a_parent_holding({"GITHUB_TOKEN": "ghs_x", "GH_TOKEN": "gho_y"},
                                  sys.executable, "-c", PROBE)
    assert held.stdout.strip() == "['GH_TOKEN', 'GITHUB_TOKEN']", held.stderr
    clean = _from_a_parent_holding({}, sys.executable, "-c", PROBE)
    assert clean.stdout.strip() == "[]"


@pytest.mark.slow
def test_fetch_says_once_that_the_server_can_read_the_token(tmp_path: Path) -> None:
    _needs_a_token_free_session()
    fetch = [sys.executable, "-m", "histor_sign", "fetch", "--stdio", SERVER,
             "-o", str(tmp_path / "snap.json")]
    near = _from_a_parent_holding({"GH_TOKEN": "gho_secret-value"}, *fetch)
    assert near.returncode == 0, near.stderr
    assert near.stderr.count(WARNING) == 1
    assert "gho_secret-value" not in near.stderr + (tmp_path / "snap.json").read_text()
    away = _from_a_parent_holding({}, *fetch)
    assert away.returncode == 0 and "warning" not in away.stderr


@pytest.mark.slow
def test_proxy_says_once_that_the_server_can_read_the_token() -> None:
    _needs_a_token_free_session()
    proxy = [sys.executable, "-m", "histor_sign", "proxy", "--server", "io.github.a/b",
             "--pins", "/nonexistent/pins.json", "--", *shlex.split(SERVER)]
    near = _from_a_parent_holding({"GITHUB_TOKEN": "ghs_secret-value"}, *proxy)
    assert near.stderr.count(WARNING.replace("GH_TOKEN", "GITHUB_TOKEN")) == 1, near.stderr
    away = _from_a_parent_holding({}, *proxy)
    assert "can read" not in away.stderr


@pytest.mark.parametrize("token", ["GITHUB_TOKEN", "GH_TOKEN"])
def test_release_in_actions_does_not_start_a_server_near_a_push_token(
        token: str, tmp_path: Path) -> None:
    marker = tmp_path / "started"
    release = [sys.executable, "-m", "histor_sign", "release", "--server",
               "io.github.alice/docs", "--server-version", "1.0.0", "--out-dir",
               str(tmp_path / "out"), "--stdio", shlex.join(["touch", str(marker)])]
    actions = {"GITHUB_ACTIONS": "true"}
    refused = _from_a_parent_holding({token: "ghs_secret-value"}, *release, extra=actions)
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("histor-sign: error: refusing to start a stdio server")
    assert token in refused.stderr and "--server-is-trusted-code" in refused.stderr
    assert "ghs_secret-value" not in refused.stderr
    assert not marker.exists()
    # Vouched for as trusted code, it is started (and fails later for its own reasons).
    trusted = _from_a_parent_holding({token: "ghs_secret-value"}, *release,
                                     "--server-is-trusted-code", extra=actions)
    assert "refusing to start" not in trusted.stderr and marker.exists()
    marker.unlink()
    # Outside Actions it is the user's machine and token: started, no refusal (whatever the
    # session has in reach).
    local = _from_a_parent_holding({token: "ghs_secret-value"}, *release)
    assert "refusing to start" not in local.stderr and marker.exists()


def test_the_wrapper_really_keeps_the_token_out_of_the_childs_own_environment() -> None:
    code = "import os; print(os.environ.get('GH_TOKEN', 'absent'))"
    assert _from_a_parent_holding({"GH_TOKEN": "x"}, sys.executable, "-c",
                                  code).stdout.strip() == "absent"
