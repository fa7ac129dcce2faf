"""Publishing a yank: a published yank is never replaced, not even by a writer racing in
between the check and the write (the yank is created exclusively)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from histor_sign import _chain_store
from histor_sign._chain_store import publish_yank
from histor_sign.errors import InputError
from histor_sign.layout import chain_dir

SERVER = "io.github.alice/docs"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = chain_dir(tmp_path / "revisions", SERVER)
    directory.mkdir(parents=True)
    (directory / "1.envelope.json").write_text("{}\n")  # publish_yank checks it is there
    return tmp_path / "revisions"


def test_a_yank_racing_in_after_the_check_is_never_replaced(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer (one that takes no lock, on another machine sharing the directory)
    publishes its yank after this one checked that none exists: this one must fail and
    leave the other's yank as it is."""
    directory = chain_dir(root, SERVER)
    write_atomic = _chain_store.write_atomic

    def racing(path: Path, data: bytes) -> None:
        (directory / "1.yank.envelope.json").write_bytes(b"the other writer's yank")
        write_atomic(path, data)

    monkeypatch.setattr(_chain_store, "write_atomic", racing)
    with pytest.raises(InputError, match="already yanked"):
        publish_yank(root, SERVER, 1, b"mine", b"my attestation")
    assert (directory / "1.yank.envelope.json").read_bytes() == b"the other writer's yank"


def test_concurrent_yanks_publish_exactly_one_with_its_own_attestation(root: Path) -> None:
    directory = chain_dir(root, SERVER)
    start = threading.Barrier(6)
    won: list[int] = []
    refused: list[int] = []

    def yank(i: int) -> None:
        start.wait()
        try:
            publish_yank(root, SERVER, 1, b"yank %d" % i, b"attestation %d" % i)
            won.append(i)
        except InputError as exc:
            assert "already yanked" in exc.message
            refused.append(i)

    threads = [threading.Thread(target=yank, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and len(refused) == 5
    (winner,) = won
    assert (directory / "1.yank.envelope.json").read_bytes() == b"yank %d" % winner
    assert (directory / "1.yank.intoto.sigstore.json").read_bytes() == b"attestation %d" % winner


def test_a_yank_of_an_unpublished_revision_writes_nothing(root: Path) -> None:
    with pytest.raises(InputError, match="not published"):
        publish_yank(root, SERVER, 2, b"yank", b"attestation")
    assert not list(chain_dir(root, SERVER).glob("2.*"))
