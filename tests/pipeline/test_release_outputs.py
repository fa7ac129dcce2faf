"""Release outputs through the real CLI and a local Sigstore instance: a locked, busy
--out-dir, unwritable GitHub Actions files (refused before any Rekor entry), a tripped gate
that replaces an earlier release, foreign files, concurrent releases and the umask."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, cli_env, run_cli
from release_fixtures import IDENTITY, release_args, server_command

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

OUTPUTS = ["envelope.json", "intoto.sigstore.json", "manifest.json", "registry-meta.json",
           "scan.sarif", "sigstore.json", "statement.json", "summary.md", "tools.snapshot.json"]


@pytest.fixture(scope="module")
def sigstore(local_sigstore: LocalSigstore) -> Iterator[LocalSigstore]:
    """The session's shared LocalSigstore (tests/conftest.py): this module counts its log
    entries by difference."""
    yield local_sigstore


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example server's tools as a file, so releases need no live fetch."""
    path = tmp_path_factory.mktemp("catalog") / "tools.json"
    run = run_cli("fetch", "--stdio", server_command(), "-o", str(path))
    assert run.code == 0, run.stderr
    return path


def release(sigstore: LocalSigstore, catalog: Path, out: Path, *extra: str,
            env: dict[str, str] | None = None) -> tuple[int, str, str]:
    run = run_cli(*release_args(out, sigstore.trust_config_path, "--tools", str(catalog),
                                "--identity-token", sigstore.mint_token(IDENTITY), *extra),
                  env=env)
    return run.code, run.stdout, run.stderr


def test_unwritable_github_output_fails_before_signing(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    for var, path in [("GITHUB_OUTPUT", tmp_path / "missing-dir" / "out"),
                      ("GITHUB_STEP_SUMMARY", tmp_path)]:  # a directory cannot be appended to
        entries = len(sigstore.log.tree)
        run = run_cli(*release_args(tmp_path / "out", sigstore.trust_config_path,
                                    "--tools", str(catalog),
                                    "--identity-token", sigstore.mint_token(IDENTITY)),
                      env={var: str(path)})
        assert_clean_error(run)
        assert f"cannot write ${var} ({path})" in run.stderr and "nothing was signed" in run.stderr
        assert len(sigstore.log.tree) == entries  # no Rekor entry was made
        assert not (tmp_path / "out").exists()


def test_busy_out_dir_fails_before_signing_and_is_left_intact(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, _, err = release(sigstore, catalog, out)
    assert code == 0, err
    before = {n: (out / n).read_bytes() for n in OUTPUTS}
    entries = len(sigstore.log.tree)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)  # what a running release holds
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        code, _, err = release(sigstore, catalog, out, "--server-version", "2.0.0")
    finally:
        os.close(fd)
    assert code == 2 and "Traceback" not in err
    assert [line for line in err.splitlines() if "error" in line] == [
        f"histor-sign: error: --out-dir {out} is in use by another run (it is locked); "
        "nothing was written"]
    assert len(sigstore.log.tree) == entries
    assert {n: (out / n).read_bytes() for n in OUTPUTS} == before


def test_two_concurrent_releases_never_mix(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "histor_sign",
             *release_args(out, sigstore.trust_config_path, "--tools", str(catalog),
                           "--identity-token", sigstore.mint_token(IDENTITY),
                           version=version)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(),
        )
        for version in ("1.0.0", "2.0.0")
    ]
    results = [(p.wait(120), p.stderr.read().decode()) for p in procs if p.stderr]
    for code, err in results:
        assert code in (0, 2) and "Traceback" not in err, err
        if code == 2:
            assert "is in use by another run" in err
    assert any(code == 0 for code, _ in results)
    # Whoever won, the directory holds one complete release: every file agrees.
    assert sorted(os.listdir(out)) == OUTPUTS
    assert os.listdir(tmp_path) == ["out"]
    envelope = json.loads((out / "envelope.json").read_text())
    statement = json.loads((out / "statement.json").read_text())
    assert statement["serverVersion"] == envelope["serverVersion"]
    assert envelope["serverVersion"] in (out / "summary.md").read_text()
    verify = run_cli("verify", str(out / "envelope.json"), "--tools",
                     str(out / "tools.snapshot.json"), "--trust-config",
                     str(sigstore.trust_config_path), "--cert-identity", IDENTITY)
    assert verify.code == 0, verify.stdout + verify.stderr


def test_tripped_gate_replaces_an_earlier_release(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    code, _, err = release(sigstore, catalog, out)
    assert code == 0, err
    run = run_cli(*release_args(out, sigstore.trust_config_path,
                                "--stdio", server_command("--collision"),
                                "--server-is-trusted-code",
                                "--identity-token", "not-needed-gate-fails-first"))
    assert run.code == 1, run.stderr
    # No envelope of the earlier release beside a summary saying nothing was signed.
    assert sorted(os.listdir(out)) == ["scan.sarif", "summary.md"]
    assert "Gate failed" in (out / "summary.md").read_text()


def test_out_dir_with_other_files_is_refused_before_signing(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "README.md").write_text("mine")
    entries = len(sigstore.log.tree)
    code, _, err = release(sigstore, catalog, out)
    assert code == 2 and "Traceback" not in err
    assert "--out-dir" in err and "'README.md'" in err
    assert len(sigstore.log.tree) == entries and os.listdir(out) == ["README.md"]


def test_release_files_follow_the_umask_and_keep_modes(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    script = "import os, sys, runpy; os.umask(int(sys.argv.pop(1), 8)); " \
             "sys.argv[0] = 'histor-sign'; runpy.run_module('histor_sign', run_name='__main__')"

    def run(mask: str, directory: Path) -> None:
        args = release_args(directory, sigstore.trust_config_path, "--tools", str(catalog),
                            "--identity-token", sigstore.mint_token(IDENTITY))
        proc = subprocess.run([sys.executable, "-c", script, mask, *args],
                              capture_output=True, env=cli_env(), timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()

    run("022", out)
    assert {stat.S_IMODE((out / n).stat().st_mode) for n in OUTPUTS} == {0o644}
    os.chmod(out / "envelope.json", 0o640)
    run("077", out)
    assert stat.S_IMODE((out / "envelope.json").stat().st_mode) == 0o640  # kept
    assert stat.S_IMODE((out / "summary.md").stat().st_mode) == 0o644  # kept
    fresh = tmp_path / "fresh"
    run("077", fresh)
    assert {stat.S_IMODE((fresh / n).stat().st_mode) for n in OUTPUTS} == {0o600}


def test_output_flag_onto_dev_stdout_and_a_fifo(catalog: Path, tmp_path: Path) -> None:
    # The process boundary is the point: /dev/stdout and a FIFO are the process's own files.
    to_stdout = run_cli("digest", str(catalog), "-o", "/dev/stdout", subprocess=True)
    assert to_stdout.code == 0, to_stdout.stderr
    assert to_stdout.stdout.startswith("manifest ") and "sha256:" in to_stdout.stdout
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    run = run_cli("digest", str(catalog), "-o", str(fifo), subprocess=True)
    out, _ = reader.communicate(timeout=30)
    assert run.code == 0, run.stderr
    assert out.decode() == to_stdout.stdout and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


def test_summary_recommends_pins_that_survive_the_next_tag(
    sigstore: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    # summary.md's "Verify it yourself" line must not pin the exact tag identity: the
    # same command has to verify the next tag's release too.
    import shlex

    tagged = IDENTITY.replace("refs/heads/main", "refs/tags/v1.0.0")
    code, _, err = release(sigstore, catalog, tmp_path / "v1", "--identity", tagged,
                           "--identity-token", sigstore.mint_token(tagged))
    assert code == 0, err
    summary = (tmp_path / "v1" / "summary.md").read_text()
    line = next(x for x in summary.splitlines() if x.startswith("histor-sign verify "))
    assert "--cert-identity" not in line and "refs/tags/v1.0.0" not in line
    assert "--repository example/notes-server" in line and "--ref-pattern" in line
    args = shlex.split(line)[1:]
    trust = ("--trust-config", str(sigstore.trust_config_path))
    first = run_cli(*args, *trust, cwd=tmp_path / "v1")
    assert first.code == 0, first.stdout + first.stderr
    nxt = IDENTITY.replace("refs/heads/main", "refs/tags/v1.1.0")
    code, _, err = release(sigstore, catalog, tmp_path / "v2", "--identity", nxt,
                           "--identity-token", sigstore.mint_token(nxt))
    assert code == 0, err
    second = run_cli(*args, *trust, cwd=tmp_path / "v2")
    assert second.code == 0, second.stdout + second.stderr
    assert "VERIFIED" in second.stdout


def test_stdio_finding_locations_never_show_the_command_line(
    sigstore: LocalSigstore, tmp_path: Path
) -> None:
    # The server's command line (runner paths, secrets passed as arguments) is no location:
    # SARIF and summary.md name the snapshot file instead.
    out = tmp_path / "out"
    command = server_command("--collision")
    run_cli(*release_args(out, sigstore.trust_config_path, "--stdio", command,
                          "--server-is-trusted-code",
                          "--identity-token", sigstore.mint_token(IDENTITY)))
    sarif = json.loads((out / "scan.sarif").read_text())
    results = sarif["runs"][0]["results"]
    assert results, "the confusable pair must give findings"
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for r in results for loc in r["locations"]}
    assert uris == {"tools.snapshot.json"}, uris
    text = (out / "scan.sarif").read_text() + (out / "summary.md").read_text()
    assert "example_server" not in text and sys.executable not in text
