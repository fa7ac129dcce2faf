"""Work that cannot be written is not signed: ``sign -o`` and ``release --out-dir`` check
every output before a log entry exists — a parent that is a file, a full file system, a FIFO
that no reader opens (bounded: one error line, never a hang after the log entry)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Run, run_cli_in_process
from sigstore_testkit import TOOLS_V1, WF_ALICE, run_cli, statement, write_statement

from histor_sign import _limits
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("dev-sigstore")) as running:
        yield running


@pytest.fixture
def stmt(tmp_path: Path) -> Path:
    return write_statement(tmp_path / "stmt.json",
                           statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))


@pytest.fixture
def full_fs(tmp_path: Path) -> Iterator[Path]:
    """A tiny tmpfs filled to the last block (needs root to mount; skipped otherwise: a
    full disk cannot be made without it, and /dev/full is a device, written into after
    signing like any device, so it cannot stand in for a full directory)."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("mounting a tiny tmpfs needs root")
    try:
        fd = os.open(mnt / "filler", os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):
            while True:
                os.write(fd, b"x" * 4096)
        os.close(fd)
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, capture_output=True)


def sign(inst: LocalSigstore, stmt: Path, output: Path,
         cli: Callable[..., Run] = run_cli) -> tuple[int, str, str, int]:
    """Run ``sign -o output`` (with ``cli``: in-process when a test patches the library);
    returns exit code, stdout, stderr and new log entries."""
    before = len(inst.log.tree)
    run = cli("sign", str(stmt), "-o", str(output), "--identity-token",
                  inst.mint_token(WF_ALICE), "--trust-config", str(inst.trust_config_path))
    return run.code, run.stdout, run.stderr, len(inst.log.tree) - before


def test_an_output_under_a_regular_file_fails_before_signing(
    inst: LocalSigstore, stmt: Path, tmp_path: Path
) -> None:
    (tmp_path / "README.md").write_text("a file\n")
    code, out, err, entries = sign(inst, stmt, tmp_path / "README.md" / "r.envelope.json")
    assert (code, out, entries) == (2, "", 0), err
    assert err.strip().endswith("Not a directory") and err.count("\n") == 2  # warning + error


def test_a_full_file_system_fails_before_signing(
    inst: LocalSigstore, stmt: Path, full_fs: Path
) -> None:
    code, out, err, entries = sign(inst, stmt, full_fs / "release.envelope.json")
    assert (code, out, entries) == (2, "", 0), err
    assert "No space left on device" in err
    assert sorted(os.listdir(full_fs)) == ["filler"]  # no probe, no partial output


def test_release_into_a_full_file_system_fails_before_signing(
    inst: LocalSigstore, full_fs: Path, tmp_path: Path
) -> None:
    from release_fixtures import IDENTITY, release_args, server_command

    catalog = tmp_path / "tools.json"
    assert run_cli("fetch", "--stdio", server_command(), "-o", str(catalog)).code == 0
    before = len(inst.log.tree)
    run = run_cli(*release_args(full_fs / "out", inst.trust_config_path, "--tools",
                                str(catalog), "--identity-token", inst.mint_token(IDENTITY)))
    assert run.code == 2, run.stdout + run.stderr
    assert "No space left on device" in run.stderr and run.stderr.count("error:") == 1
    assert len(inst.log.tree) == before
    assert sorted(os.listdir(full_fs)) == ["filler"]  # the out dir it made is gone again


def test_a_fifo_without_a_reader_times_out_before_signing(
    inst: LocalSigstore, stmt: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The wait is the library's bound (read when the output is opened), shortened here: what
    # is tested is the refusal before signing, not how long the default wait is.
    monkeypatch.setattr(_limits, "DEFAULT_OUTPUT_READER_SECONDS", 0.5)
    fifo = tmp_path / "envelope.fifo"
    os.mkfifo(fifo)
    code, out, err, entries = sign(inst, stmt, fifo, run_cli_in_process)
    assert (code, out, entries) == (2, "", 0), err
    assert err.splitlines()[-1] == (
        f"histor-sign: error: cannot write {fifo}: it is a FIFO and no reader opened it "
        "within 0.5 s"
    )


def test_a_fifo_with_a_reader_gets_the_envelope(
    inst: LocalSigstore, stmt: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "envelope.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    code, _out, err, entries = sign(inst, stmt, fifo)
    reader.join(timeout=60)
    assert (code, entries) == (0, 2), err  # the revision and its attestation
    assert b'"revision": 1' in got[0] or b'"revision":1' in got[0]
    assert (tmp_path / "envelope.fifo.statement.json").exists() or any(
        p.name.endswith(".statement.json") for p in tmp_path.iterdir())
