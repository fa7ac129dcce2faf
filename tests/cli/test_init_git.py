"""``init`` reads the repository from the checkout's ``origin`` remote when not given (every
GitHub URL form git accepts), and offers the commit SHA of the action it writes — resolved
offline from a local tag, or says how to look it up."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli

from histor_sign._git import github_repository, tag_commit


def _git(directory: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(directory), *args], check=True,
                          capture_output=True, text=True).stdout.strip()


def _checkout(tmp_path: Path, origin: str | None) -> Path:
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q")
    if origin is not None:
        _git(repo, "remote", "add", "origin", origin)
    return repo


@pytest.mark.parametrize("origin", [
    "https://github.com/acme/search-mcp.git",
    "https://github.com/acme/search-mcp",
    "git@github.com:acme/search-mcp.git",
    "ssh://git@github.com/acme/search-mcp.git",
    "git://github.com/acme/search-mcp/",
])
def test_init_reads_the_repository_from_origin(tmp_path: Path, origin: str) -> None:
    repo = _checkout(tmp_path, origin)
    run = run_cli("init", "--stdio", "node dist/index.js", cwd=repo)
    assert run.code == 0, run.stderr
    workflow = (repo / ".github" / "workflows" / "sign.yml").read_text()
    assert 'server: "io.github.acme/search-mcp"' in workflow
    assert ("  histor-sign trust add io.github.acme/search-mcp --repository acme/search-mcp\n"
            in run.stdout)
    # The default action is a tag: its commit is offered, or how to look it up offline.
    assert "--action histor-sign/histor-sign@" in run.stdout
    assert ("cannot be resolved offline here; look it up with: git ls-remote "
            "https://github.com/histor-sign/histor-sign refs/tags/v" in run.stdout
            or "in the git checkout histor-sign runs from" in run.stdout)


@pytest.mark.parametrize("origin", [None, "https://gitlab.com/acme/search-mcp.git"])
def test_init_without_a_github_origin_asks_for_the_server(
    tmp_path: Path, origin: str | None
) -> None:
    repo = _checkout(tmp_path, origin)
    run = run_cli("init", "--stdio", "node dist/index.js", cwd=repo)
    assert_clean_error(run)
    assert "give --server io.github.OWNER/NAME or --repository OWNER/REPO" in run.stderr
    assert not (repo / ".github").exists()
    given = run_cli("init", "--stdio", "x", "--repository", "acme/other", cwd=repo)
    assert given.code == 0, given.stderr
    assert "trust add io.github.acme/other --repository acme/other" in given.stdout


def test_remote_forms_and_offline_tag_resolution(tmp_path: Path) -> None:
    assert github_repository("git@github.com:o/r.git") == "o/r"
    assert github_repository("https://github.com/o/r/") == "o/r"
    assert github_repository("https://github.com.evil.example/o/r") is None
    assert github_repository("https://example.com/github.com/o/r") is None
    repo = _checkout(tmp_path, None)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q",
         "--allow-empty", "-m", "x")
    _git(repo, "tag", "v9.9.9")
    assert tag_commit(repo, "v9.9.9") == _git(repo, "rev-parse", "HEAD")
    assert tag_commit(repo, "v0.0.0") is None
    assert tag_commit(tmp_path / "no-such-dir", "v9.9.9") is None


def test_a_server_outside_io_github_is_written_with_a_warning(tmp_path: Path) -> None:
    run = run_cli("init", "--server", "com.example/notes", "--stdio", "x", "-o",
                  str(tmp_path / "w.yml"))
    assert run.code == 0, run.stderr
    assert run.stderr == ("histor-sign: warning: com.example/notes is outside io.github.*: "
                          "clients cannot pin it with 'trust add'; they verify it with "
                          "--envelope and an identity pin instead\n")


def test_an_origin_url_that_is_not_utf8_is_no_github_origin(tmp_path: Path) -> None:
    repo = _checkout(tmp_path, None)
    subprocess.run([b"git", b"-C", bytes(repo), b"config", b"remote.origin.url",
                    b"https://github.com/acme\xff/search-mcp"], check=True)
    run = run_cli("init", "--stdio", "node dist/index.js", cwd=repo)
    assert_clean_error(run)  # one line, exit 2: never an internal error
    assert "give --server io.github.OWNER/NAME or --repository OWNER/REPO" in run.stderr
