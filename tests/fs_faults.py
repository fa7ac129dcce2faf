"""Devices that fail: a small tmpfs (filled to the last block, or read-only) for the
full-device and read-only runs of every output. Mounting needs root (and a kernel that
allows it): without it the test is skipped, saying why."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_tmpfs(mnt: Path, size: str = "64k") -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``mnt`` (created), unmounted afterwards."""
    mnt.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                       check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("mounting a small tmpfs needs root (a full or read-only device cannot "
                    "be made without it)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False, capture_output=True)


def fill(mnt: Path) -> Path:
    """Fill the file system of ``mnt`` to the last block (a file named ``filler``)."""
    filler = mnt / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        for size in (65536, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"x" * size)
    finally:
        os.close(fd)
    return filler


def remount_read_only(mnt: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True, capture_output=True)
