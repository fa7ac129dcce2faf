"""Atomic outputs: all files of a group appear, or none of the new ones do."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from histor_sign._internal.atomic import write_all_atomic
from histor_sign.errors import OperationalError


def test_group_written_completely(tmp_path: Path) -> None:
    files = {tmp_path / "a.json": b"A", tmp_path / "sub" / "b.json": b"B"}
    write_all_atomic(files)
    assert {p: p.read_bytes() for p in files} == files
    assert sorted(os.listdir(tmp_path)) == ["a.json", "sub"]  # no temp or backup files


def test_failed_rename_rolls_back_earlier_files(tmp_path: Path) -> None:
    old = tmp_path / "envelope.json"
    old.write_bytes(b"old envelope")
    new_only = tmp_path / "statement.json"
    blocker = tmp_path / "bundle.json"
    blocker.mkdir()  # renaming a file onto a directory fails
    with pytest.raises(OperationalError, match="cannot write"):
        write_all_atomic({old: b"new envelope", new_only: b"new statement", blocker: b"x"})
    assert old.read_bytes() == b"old envelope"  # restored
    assert not new_only.exists()  # removed again
    assert sorted(os.listdir(tmp_path)) == ["bundle.json", "envelope.json"]  # nothing left over
