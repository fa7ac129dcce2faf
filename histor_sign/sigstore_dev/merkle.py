"""An append-only RFC 6962 Merkle tree with inclusion proofs.

The Verifier recomputes the root from the leaf and the audit path, so the fake log has to
keep a real tree; a canned proof would only work for a tree of size one.
"""

from __future__ import annotations

import hashlib
import threading


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


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

    def leaves(self) -> list[bytes]:
        """The leaf hashes, in order (what ``--state`` keeps)."""
        with self._lock:
            return list(self._leaves)

    def restore(self, hashes: list[bytes]) -> None:
        """Replace the leaves with ``hashes`` (leaf hashes, from :meth:`leaves`)."""
        with self._lock:
            self._leaves = list(hashes)


def root_from_path(leaf: bytes, index: int, size: int, path: list[bytes]) -> bytes:
    """Recompute the root from an audit path (RFC 9162 §2.1.3.2), for self-checks in tests."""
    fn, sn, node = index, size - 1, leaf_hash(leaf)
    for sibling in path:
        if sn == 0:
            raise ValueError("audit path too long")
        if fn & 1 or fn == sn:
            node = node_hash(sibling, node)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            node = node_hash(node, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ValueError("audit path too short")
    return node
