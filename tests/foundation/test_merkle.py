"""RFC 6962 proofs and tiles: the local log's tree (server side) against the checks the
monitor makes (``histor_sign._merkle``), for every pair of sizes up to a few tiles."""

from __future__ import annotations

import pytest

from histor_sign._merkle import (
    TILE_HEIGHT,
    TILE_WIDTH,
    consistent,
    leaf_hash,
    parse_tile_path,
    root_from_inclusion,
    root_from_subtrees,
    tile_path,
)
from histor_sign.sigstore_dev.merkle import MerkleTree


def tree(n: int) -> MerkleTree:
    t = MerkleTree()
    t.extend([f"leaf {i}".encode() for i in range(n)])
    return t


@pytest.mark.parametrize("second", [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31])
def test_consistency_proofs_verify_and_a_changed_history_does_not(second: int) -> None:
    t = tree(second)
    other = tree(second)
    other_leaves = MerkleTree()
    other_leaves.extend([b"forged"] + [f"leaf {i}".encode() for i in range(1, second)])
    for first in range(0, second + 1):
        proof = t.consistency(first, second)
        assert consistent(first, second, t.root(first), t.root(second), proof)
        assert consistent(first, second, other.root(first), other.root(second), proof)
        if first:
            assert not consistent(first, second, other_leaves.root(first), t.root(second),
                                  proof)
        if first < second:
            assert not consistent(second, first, t.root(second), t.root(first), proof)


def test_inclusion_proofs() -> None:
    t = tree(13)
    for index in range(13):
        path = t.inclusion(index, 13)
        leaf = leaf_hash(f"leaf {index}".encode())
        assert root_from_inclusion(leaf, index, 13, path) == t.root()
        assert root_from_inclusion(leaf_hash(b"other"), index, 13, path) != t.root()
    with pytest.raises(ValueError):
        root_from_inclusion(leaf, 0, 13, [*t.inclusion(0, 13), leaf])
    with pytest.raises(ValueError):
        root_from_inclusion(leaf, 13, 13, [])


@pytest.mark.parametrize("size", [0, 1, 255, 256, 257, 511, 700])
def test_roots_from_tiles(size: int) -> None:
    t = tree(700)
    leaves_hashed = t.snapshot()

    def node(height: int, index: int) -> bytes:
        level, below = divmod(height, TILE_HEIGHT)
        if below:
            return pytest.fail("root_from_subtrees asks only for whole subtrees")  # type: ignore[no-any-return]
        span = 1 << (TILE_HEIGHT * level)
        count = 700 // span
        n, k = divmod(index, TILE_WIDTH)
        width = min(TILE_WIDTH, count - n * TILE_WIDTH)
        data = t.tile(level, n, width, 700)
        assert data is not None
        return data[k * 32:(k + 1) * 32]

    def any_node(height: int, index: int) -> bytes:
        level = height // TILE_HEIGHT
        if height == level * TILE_HEIGHT:
            return node(height, index)
        from histor_sign._merkle import node_hash

        return node_hash(any_node(height - 1, 2 * index), any_node(height - 1, 2 * index + 1))

    assert root_from_subtrees(size, any_node) == t.root(size)
    assert len(leaves_hashed) == 700


@pytest.mark.parametrize(("level", "index", "width", "path"), [
    (0, 0, 256, "tile/0/000"),
    (1, 1234067, 256, "tile/1/x001/x234/067"),
    ("entries", 5, 17, "tile/entries/005.p/17"),
])
def test_tile_paths(level: int | str, index: int, width: int, path: str) -> None:
    assert tile_path(level, index, width) == path
    assert parse_tile_path(path) == (str(level), index, width)
    assert parse_tile_path(path.replace("tile/", "tiles/")) is None
