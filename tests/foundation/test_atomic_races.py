"""Two writers of one group of files at the same time (two ``sign -o`` of one output):
their renames take turns, so the group ends as one writer's complete set, never a mix, and
neither leaves a record or staged file behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from histor_sign._atomic import write_all_atomic

NAMES = ("x.envelope.json", "x.statement.json", "x.sigstore.json", "x.intoto.sigstore.json")
#: Rounds of two racing group writes (bounded; each is two forked writers).
ROUNDS = 6


def _write(directory: Path, tag: bytes) -> None:
    write_all_atomic({directory / name: tag + b" " + name.encode() for name in NAMES})


@pytest.mark.slow
def test_two_writers_of_one_group_never_mix_it(tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        directory = tmp_path / f"round{round_}"
        directory.mkdir()
        _write(directory, b"old")
        read, write = os.pipe()
        children = []
        for tag in (b"A", b"B"):
            pid = os.fork()
            if pid == 0:  # pragma: no cover - child
                os.close(write)
                os.read(read, 1)  # both start writing at once
                try:
                    _write(directory, tag)
                except BaseException:
                    os._exit(1)
                os._exit(0)
            children.append(pid)
        os.close(read)
        os.write(write, b"go")  # one byte each
        os.close(write)
        for pid in children:
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        tags = {(directory / name).read_bytes().split(b" ")[0] for name in NAMES}
        assert tags in ({b"A"}, {b"B"}), (round_, tags)
        assert sorted(os.listdir(directory)) == sorted(NAMES), round_
