"""Two ``lock`` runs into one lock file at the same time: both entries land (the lock file is
re-read under its lock and merged), never last-writer-wins; an ``--update --accept`` whose
entry another run changed meanwhile writes nothing and says so."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import cli_env
from test_lock_file import _snapshot

from histor_sign.errors import UsageError
from histor_sign.lock import LockedServer, LockFile, add_locked, check_locked, promote_locked

#: Rounds of two racing ``lock`` runs (bounded; each round is two short processes).
ROUNDS = 3


@pytest.mark.slow
def test_two_locks_into_one_file_both_land(tmp_path: Path) -> None:
    """Each run's server first waits on a FIFO: once the test's open of both FIFOs returns,
    both runs have read the lock file as it was and are about to write it (the race)."""
    for round_ in range(ROUNDS):
        lock = tmp_path / f"round{round_}.lock"
        racers = []
        for name in ("alpha", "beta"):
            gate = tmp_path / f"{name}{round_}.gate"
            os.mkfifo(gate)
            server = (f"cat {shlex.quote(str(gate))} > /dev/null && exec "
                      + shlex.join([sys.executable, "-m", "histor_sign.demo.example_server"]))
            racers.append((gate, subprocess.Popen(
                [sys.executable, "-m", "histor_sign", "lock", "--stdio",
                 shlex.join(["sh", "-c", server]), "-o", str(lock), "--server", name],
                env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        gates = [open(gate, "wb") for gate, _p in racers]  # both runs are past the read
        for gate in gates:
            gate.close()
        results = [(p.wait(timeout=120), *p.communicate()) for _g, p in racers]
        assert [code for code, _o, _e in results] == [0, 0], (round_, results)
        assert sorted(json.loads(lock.read_text())["servers"]) == ["alpha", "beta"], round_


def test_an_entry_locked_meanwhile_is_refused_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "mcp.lock"
    add_locked(path, LockedServer.observe(_snapshot(), "notes"))
    written = path.read_bytes()
    with pytest.raises(UsageError, match="already locked"):
        add_locked(path, LockedServer.observe(_snapshot(instructions="Other."), "notes"))
    assert path.read_bytes() == written


def test_an_accept_after_another_accept_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "mcp.lock"
    add_locked(path, LockedServer.observe(_snapshot(), "notes"))
    changed = _snapshot(instructions="Changed once.")
    check = check_locked(LockFile.load(path), changed, "notes")
    promote_locked(path, check)  # another run accepted meanwhile
    after_first = path.read_bytes()
    stale = check_locked(LockFile.load_or_new(tmp_path / "none.lock").with_entry(
        LockedServer.observe(_snapshot(), "notes")), _snapshot(instructions="Twice."), "notes")
    with pytest.raises(UsageError, match=r"changed in .* by another process meanwhile"):
        promote_locked(path, stale)
    assert path.read_bytes() == after_first


def test_a_full_device_leaves_the_lock_file_as_it_was(tmp_path: Path) -> None:
    from cli_harness import assert_clean_error, run_cli
    from fs_faults import fill, small_tmpfs

    served = tmp_path / "served.json"
    served.write_bytes(_snapshot().to_bytes())
    with small_tmpfs(tmp_path / "mnt", "64k") as mnt:
        lock = mnt / "mcp.lock"
        assert run_cli("lock", str(served), "-o", str(lock), "--server", "alpha").code == 0
        before = lock.read_bytes()
        fill(mnt)
        run = run_cli("lock", str(served), "-o", str(lock), "--server", "beta")
        assert_clean_error(run)
        assert "No space left on device" in run.stderr
        assert lock.read_bytes() == before
        assert sorted(p.name for p in mnt.iterdir()) == ["filler", "mcp.lock"]
