"""Two things at once on one host config: two ``wrap`` runs of different entries both land
(the write re-reads the file under its lock and merges), and a ``wrap`` killed at any file
operation leaves no staged copy of the config (``0600``, holding API keys) that later runs
never remove."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_env, run_cli
from hostconfig_helpers import FIXTURES, make_pins, place

from histor_sign.hostconfig import BACKUP_SUFFIX, wrap_config

DESKTOP = next(f for f in FIXTURES if f.id == "claude-desktop")
#: Rounds of two racing wraps (bounded; each round is two short processes).
ROUNDS = 4


def _wrap(path: Path, pins: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "histor_sign", "wrap", str(path), "--server-name",
            f"{name}={DESKTOP.stdio[name]}", "--pins", str(pins)]


def _wrapped(path: Path) -> set[str]:
    servers = json.loads(path.read_text())["mcpServers"]
    return {name for name, entry in servers.items()
            if Path(entry.get("command", "")).name == "histor-sign"}


@pytest.mark.slow
def test_two_wraps_of_different_entries_both_land(tmp_path: Path) -> None:
    pins = make_pins(tmp_path / "pins.json", list(DESKTOP.stdio.values()))
    for round_ in range(ROUNDS):
        path = place(DESKTOP, tmp_path / f"round{round_}")
        racers = [subprocess.Popen(_wrap(path, pins, name), env=cli_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for name in ("filesystem", "search")]
        results = [(p.wait(timeout=120), *p.communicate()) for p in racers]
        assert [code for code, _o, _e in results] == [0, 0], (round_, results)
        assert _wrapped(path) == {"filesystem", "search"}, (round_, results)


_STEPS = ("replace", "rename", "unlink", "link", "open", "fsync", "fchmod", "close")


def _killed_at(step: int, path: Path, pins: Path) -> bool:
    """Wrap ``search`` in a forked child that dies like ``kill -9`` at the ``step``-th file
    operation of the write step; True when it died, False when it finished first."""
    import os

    import histor_sign.hostconfig as hostconfig

    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        count, armed = [0], [False]
        real_write = hostconfig._write

        def write(*args: Any, **kwargs: Any) -> Any:
            armed[0] = True
            return real_write(*args, **kwargs)

        def counting(real: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                if armed[0]:
                    count[0] += 1
                    if count[0] == step:
                        os._exit(86)
                return real(*args, **kwargs)
            return call

        hostconfig._write = write  # type: ignore[assignment]
        for name in _STEPS:
            setattr(os, name, counting(getattr(os, name)))
        try:
            wrap_config(path, {"search": DESKTOP.stdio["search"]}, pins=pins)
        except BaseException:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, 86), code
    return code == 86


def _copies(directory: Path, config: Path) -> list[str]:
    """Copies of the config beside it other than the backups a user is told about."""
    told = {config.name, f"{config.name}{BACKUP_SUFFIX}"}
    return sorted(p.name for p in directory.iterdir()
                  if p.name not in told and config.name in p.name)


@pytest.mark.slow
def test_a_killed_wrap_leaves_no_copy_of_the_config_behind(tmp_path: Path) -> None:
    pins = make_pins(tmp_path / "pins.json", list(DESKTOP.stdio.values()))
    original = place(DESKTOP, tmp_path / "original").read_bytes()
    step, killed = 0, 0
    while True:
        step += 1
        path = place(DESKTOP, tmp_path / f"step{step}")
        if not _killed_at(step, path, pins):
            break
        killed += 1
        assert path.read_bytes() == original or _wrapped(path) == {"search"}, step
        # the next run (another entry) ends with the config and its backups only
        again = run_cli(*_wrap(path, pins, "sqlite")[3:])
        assert again.code == 0, (step, again.stderr)
        assert _copies(path.parent, path) in ([], [f"{path.name}{BACKUP_SUFFIX}.1"]), step
    assert killed > 5, killed  # the kills landed inside the write step


def test_a_full_device_leaves_the_config_as_it_was(tmp_path: Path) -> None:
    from fs_faults import fill, small_tmpfs

    pins = make_pins(tmp_path / "pins.json", list(DESKTOP.stdio.values()))
    with small_tmpfs(tmp_path / "mnt", "64k") as mnt:
        path = place(DESKTOP, mnt)
        before = path.read_bytes()
        fill(mnt)
        run = run_cli(*_wrap(path, pins, "search")[3:])
        assert run.code == 2 and "No space left on device" in run.stderr, run.stderr
        assert run.stderr.count("error:") == 1 and "Traceback" not in run.stderr
        assert path.read_bytes() == before
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
