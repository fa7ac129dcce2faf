"""Two processes pinning different servers into one pin store at the same time: every pin
lands (the store is re-read under its directory's lock and merged), and a full device
leaves the store as it was with one error naming it."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from histor_sign.errors import OperationalError
from histor_sign.pins import PinEntry, PinStore

#: Pins each of the two writers adds, one store write each (bounded).
PINS_EACH = 15


def make_pins(path: Path, servers: list[str]) -> Path:
    """Pin each server (one store write each), as ``trust add`` would."""
    for server in servers:
        owner, _, name = server.removeprefix("io.github.").partition("/")
        PinStore.load(path).add(PinEntry(
            server=server, repository=f"{owner}/{name}",
            location=f"https://example.org/{name}/latest.envelope.json", revision=1,
            manifest_digest="sha256:" + "ab" * 32,
            signer=f"https://github.com/{owner}/{name}/.github/workflows/sign.yml"
            "@refs/tags/v1.0.0",
            workflow=".github/workflows/sign.yml", owner_id="11", repository_id="22",
            ref_pattern="refs/tags/**",
        ))
    return path


def _pin_many(path: str, owner: str) -> None:
    for n in range(PINS_EACH):
        make_pins(Path(path), [f"io.github.{owner}/server{n}"])


@pytest.mark.slow
def test_two_processes_pinning_at_once_lose_no_pin(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_pin_many, args=(str(path), owner))
               for owner in ("alice", "bob")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(timeout=120)
        assert writer.exitcode == 0
    pinned = set(PinStore.load(path).entries)
    assert len(pinned) == 2 * PINS_EACH, sorted(pinned)


def test_a_full_device_leaves_the_pin_store_as_it_was(tmp_path: Path) -> None:
    from fs_faults import fill, small_tmpfs

    with small_tmpfs(tmp_path / "mnt", "64k") as mnt:
        path = make_pins(mnt / "pins.json", ["io.github.alice/docs"])
        before = path.read_bytes()
        fill(mnt)
        with pytest.raises(OperationalError, match="No space left on device"):
            make_pins(path, ["io.github.bob/docs"])
        assert path.read_bytes() == before
        assert sorted(p.name for p in mnt.iterdir()) == ["filler", "pins.json"]
