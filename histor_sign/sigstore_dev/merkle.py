"""An append-only RFC 6962 Merkle tree with inclusion and consistency proofs, and the
tiles of C2SP tlog-tiles.

The Verifier recomputes the root from the leaf and the audit path, so the fake log has to
keep a real tree; a canned proof would only work for a tree of size one. The hashing is
:mod:`histor_sign._merkle`'s, the one the monitor checks with.
"""

from __future__ import annotations

import threading

from histor_sign._merkle import TILE_HEIGHT, TILE_WIDTH, leaf_hash, node_hash
from histor_sign._merkle import root_from_inclusion as _root_from_inclusion

__all__ = ["MerkleTree", "leaf_hash", "node_hash", "root_from_path"]


def _split(n: int) -> int:
    """Largest power of two strictly smaller than ``n`` (RFC 6962 §2.1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _root(leaves: list[bytes]) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node_hash(_root(leaves[:k]), _root(leaves[k:]))


def _path(index: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*_path(index, leaves[:k]), _root(leaves[k:])]
    return [*_path(index - k, leaves[k:]), _root(leaves[:k])]


def _subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    """RFC 6962 §2.1.2 SUBPROOF(m, D[n], b)."""
    n = len(leaves)
    if m == n:
        return [] if whole else [_root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], whole), _root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], False), _root(leaves[:k])]


class MerkleTree:
    """Thread-safe append-only tree; ``append`` returns index, size, root and audit path."""

    def __init__(self) -> None:
        self._leaves: list[bytes] = []
        self._lock = threading.Lock()

    def append(self, data: bytes) -> tuple[int, int, bytes, list[bytes]]:
        with self._lock:
            self._leaves.append(leaf_hash(data))
            leaves = list(self._leaves)
        index = len(leaves) - 1
        return index, len(leaves), _root(leaves), _path(index, leaves)

    def extend(self, items: list[bytes]) -> None:
        """Append leaves without computing a root or proof for each: linear, where
        ``append`` per leaf would be quadratic (placeholders before the first signature)."""
        hashed = [leaf_hash(data) for data in items]
        with self._lock:
            self._leaves.extend(hashed)

    def __len__(self) -> int:
        return len(self._leaves)

    def snapshot(self) -> list[bytes]:
        """The leaf hashes as they are now."""
        with self._lock:
            return list(self._leaves)

    def restore(self, hashes: list[bytes]) -> None:
        """Replace the leaves with ``hashes`` (from :meth:`snapshot`; ``dev-sigstore --state``)."""
        with self._lock:
            self._leaves = list(hashes)

    def root(self, size: int | None = None) -> bytes:
        leaves = self.snapshot()[:size]
        return _root(leaves) if leaves else _empty_root()

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return _path(index, self.snapshot()[:size])

    def consistency(self, first: int, second: int) -> list[bytes]:
        """RFC 6962 PROOF(first, D[second]) (empty for ``first`` 0 or equal sizes)."""
        leaves = self.snapshot()[:second]
        if first == 0 or first == len(leaves):
            return []
        return _subproof(first, leaves, True)

    def tile(self, level: int, index: int, width: int, size: int) -> bytes | None:
        """Tile ``level``/``index`` of the tree of ``size`` leaves, ``width`` hashes wide
        (None when the tree has no such tile)."""
        span = 1 << (TILE_HEIGHT * level)  # leaves under one hash of this level
        count = size // span
        first = index * TILE_WIDTH
        if width < 1 or width > TILE_WIDTH or first + width > count or (
                width < TILE_WIDTH and first + width != count):
            return None
        leaves = self.snapshot()[:size]
        return b"".join(_root(leaves[(first + k) * span:(first + k + 1) * span])
                        for k in range(width))


def _empty_root() -> bytes:
    import hashlib

    return hashlib.sha256(b"").digest()


def root_from_path(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes:
    """Recompute the root from an audit path of leaf *data* (for self-checks in tests)."""
    return _root_from_inclusion(leaf_hash(leaf), index, size, path)
