"""digest/build through the real CLI: vectors, hostile inputs, atomic outputs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from cli_harness import REPO, Run, assert_clean_error, run_cli

EXAMPLE = REPO / "examples" / "docs-tools.json"
IDENTITY = "https://github.com/example/docs/.github/workflows/sign.yml@refs/heads/main"
BUILD = ["--server", "io.github.example/docs", "--server-version", "1.4.2", "--identity", IDENTITY]


def test_digest_human_and_json() -> None:
    human = run_cli("digest", str(EXAMPLE))
    assert human.code == 0, human.stderr
    assert "sha256:4f97f46c59c1d9185c9c12fc012e1da949abebd79764ce1af124ac8a86a9ed30" in human.stdout
    as_json = run_cli("digest", "--format", "json", str(EXAMPLE))
    assert json.loads(as_json.stdout) == {
        "schemaVersion": 1,
        "manifestDigest": "sha256:4f97f46c59c1d9185c9c12fc012e1da949abebd79764ce1af124ac8a86a9ed30",
        "toolDigests": {
            "search": "sha256:896aa19c0d891787f6a9f964ef5dbbde7fc840099a33a465678bc152df6fb7e0"
        },
    }


def test_digest_reads_stdin() -> None:
    run = run_cli("digest", "-", stdin=EXAMPLE.read_bytes())
    assert run.code == 0 and "896aa19c" in run.stdout


def test_build_chain_through_files(tmp_path: Path) -> None:
    first = tmp_path / "r1.json"
    second = tmp_path / "r2.json"
    assert run_cli("build", str(EXAMPLE), *BUILD, "--output", str(first)).code == 0
    data = first.read_bytes()
    statement = json.loads(data)
    assert data == json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    run = run_cli("build", str(EXAMPLE), *BUILD, "--previous", str(first), "-o", str(second))
    assert run.code == 0, run.stderr
    chained = json.loads(second.read_bytes())
    assert chained["revision"] == 2
    assert chained["previousManifestDigest"] == statement["manifestDigest"]
    other = run_cli(
        "build", str(EXAMPLE), *BUILD[:1], "io.github.example/other", *BUILD[2:],
        "--previous", str(first), "-o", str(tmp_path / "r3.json"),
    )
    assert_clean_error(other)
    assert "previous revision is for server" in other.stderr
    assert not (tmp_path / "r3.json").exists()


HOSTILE: dict[str, bytes] = {
    "duplicate-key": b'{"tools":[{"name":"a","name":"b"}]}',
    "nan": b'{"tools":[{"name":"a","inputSchema":{"maximum":NaN}}]}',
    "2^96": b'{"tools":[{"name":"a","inputSchema":{"maximum":79228162514264337593543950336}}]}',
    "lone-surrogate": b'{"tools":[{"name":"\\ud800"}]}',
    "invalid-utf8": b'{"tools":[{"name":"\xc3\x28"}]}',
    "random-bytes": bytes(range(256)) * 4,
    "empty": b"",
    "wrong-shape": b'{"servers":[]}',
    "tools-not-array": b'{"tools":{}}',
    "non-string-name": b'{"tools":[{"name":["a"]}]}',
    "duplicate-names": b'{"tools":[{"name":"a"},{"name":"a"}]}',
    "not-mcp": b'{"tools":[{"type":"function","name":"a","parameters":{}}]}',
    "deep-nesting": b'{"tools":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "truncated": b'{"tools":[{"name":"a"',
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_input_is_one_line_exit_2_and_no_output(case: str, tmp_path: Path) -> None:
    src = tmp_path / "tools.json"
    src.write_bytes(HOSTILE[case])
    out = tmp_path / "out.json"
    for args in (["digest", str(src), "-o", str(out)], ["build", str(src), *BUILD, "-o", str(out)]):
        run = run_cli(*args)
        assert_clean_error(run)
        assert str(src) in run.stderr
        assert not out.exists()
        assert os.listdir(tmp_path) == ["tools.json"]  # no temp files left behind


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["digest"], "give a catalog file"),
        (["digest", "--format", "xml", "x"], "--format"),
        (["build", "x.json"], "Missing option"),
        (["frobnicate"], "No such command"),
        (["digest", "/definitely/not/here.json"], "no such file"),
    ],
)
def test_usage_errors(args: list[str], fragment: str) -> None:
    run = run_cli(*args)
    assert_clean_error(run)
    assert fragment in run.stderr


def test_help_and_version() -> None:
    assert "digest" in run_cli("--help").stdout
    assert run_cli("--version").stdout.startswith("histor-sign ")


# ---------------------------------------------------------------- namespace pre-flight
def _actions(owner: str | None, **extra: str) -> dict[str, str]:
    """The default variables of a GitHub Actions job of ``owner``'s repository."""
    env = {"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": f"{owner}/docs-mcp",
           "GITHUB_REPOSITORY_ID": "2002", "GITHUB_REPOSITORY_OWNER_ID": "1001",
           "GITHUB_REF": "refs/tags/v1.4.2", **extra}
    if owner is not None:
        env["GITHUB_REPOSITORY_OWNER"] = owner
    return env


def _build_live(tmp_path: Path, server: str, env: dict[str, str]) -> tuple[Path, Path, Run]:
    """``build --stdio`` of a server that leaves a marker when it is started."""
    marker, out = tmp_path / "started", tmp_path / "statement.json"
    script = tmp_path / "server.py"
    script.write_text(
        f"import pathlib, runpy, sys\npathlib.Path({str(marker)!r}).touch()\n"
        "sys.argv = ['example_server']\n"
        "runpy.run_module('histor_sign.demo.example_server', run_name='__main__')\n"
    )
    run = run_cli("build", "--stdio", f"{sys.executable} {script}", "--server", server,
                  "--server-version", "1.4.2", "--identity", IDENTITY, "-o", str(out), env=env)
    return marker, out, run


@pytest.mark.parametrize(("server", "owner"), [
    ("io.github.example/docs", "mallory"),
    ("io.github.Example/docs", "examplE-org"),
])
def test_build_in_actions_refuses_a_namespace_the_job_cannot_sign_for(
    tmp_path: Path, server: str, owner: str
) -> None:
    marker, out, run = _build_live(tmp_path, server, _actions(owner))
    assert_clean_error(run)
    line = run.stderr.strip()
    assert "cannot be signed by this signing identity" in line
    assert f"belongs to GitHub owner {server.split('/')[0][10:]!r}" in line
    assert repr(owner) in line and line.endswith("nothing was signed")
    assert not marker.exists() and not out.exists()  # refused before the server ran


@pytest.mark.parametrize(("server", "env"), [
    ("io.github.example/docs", _actions("example")),
    ("io.github.example/docs", _actions("EXAMPLE")),   # GitHub owners are case-insensitive
    ("io.github.example/docs", {}),                    # not in Actions: sign checks later
    ("io.github.example/docs", _actions(None)),        # no owner variable: nothing to check
    ("com.example/docs", _actions("mallory")),         # no GitHub owner behind the name
])
def test_build_runs_when_the_namespace_is_the_jobs_or_not_checkable(
    tmp_path: Path, server: str, env: dict[str, str]
) -> None:
    marker, out, run = _build_live(tmp_path, server, env)
    assert run.code == 0, run.stderr
    assert marker.exists() and json.loads(out.read_bytes())["server"] == server
