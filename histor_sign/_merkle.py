"""RFC 6962 / RFC 9162 Merkle tree hashing and the proofs a log client checks.

One place for the hashing both sides use: the local Rekor builds its tree with it
(:mod:`histor_sign.sigstore_dev.merkle`) and the monitor checks what a log serves with it —
inclusion of an entry, consistency of two tree heads, and the root of a tree of any size
from the complete subtrees a tiled log (C2SP tlog-tiles) publishes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

#: Hashes in one full tile of a tiled log (C2SP tlog-tiles: 2**8).
TILE_WIDTH = 256
#: Tree levels one tile spans.
TILE_HEIGHT = 8


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_from_inclusion(leaf: bytes, index: int, size: int, path: Sequence[bytes]) -> bytes:
    """The root an inclusion proof of leaf hash ``leaf`` at ``index`` leads to (RFC 9162
    §2.1.3.2); :class:`ValueError` for a proof of the wrong length or shape."""
    if not 0 <= index < size:
        raise ValueError(f"leaf index {index} is outside a tree of size {size}")
    fn, sn, node = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            raise ValueError("inclusion proof too long")
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
        raise ValueError("inclusion proof too short")
    return node


def consistent(size1: int, size2: int, root1: bytes, root2: bytes,
               proof: Sequence[bytes]) -> bool:
    """Whether ``proof`` shows the tree of ``size2`` and ``root2`` extends the one of
    ``size1`` and ``root1`` (RFC 9162 §2.1.4.2): the log only appended."""
    if size1 > size2 or size1 < 0:
        return False
    if size1 == size2:
        return not proof and root1 == root2
    if size1 == 0:
        return not proof
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # a power of two: the old root is the first node
        path = [root1, *path]
    if not path:
        return False
    roots = _consistency_roots(size1, size2, path)
    return roots is not None and roots == (root1, root2)


def _consistency_roots(size1: int, size2: int,
                       path: list[bytes]) -> tuple[bytes, bytes] | None:
    """Step: the (old, new) roots a non-empty consistency path computes (RFC 9162
    §2.1.4.2 steps 3-6), or None when the path is longer than the trees allow."""
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for node in path[1:]:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            fr, sr = node_hash(node, fr), node_hash(node, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    return (fr, sr) if sn == 0 else None


def root_from_subtrees(size: int, node: Callable[[int, int], bytes]) -> bytes:
    """The root of the tree of ``size`` leaves, from ``node(height, index)``: the hash of
    the complete subtree of ``2**height`` leaves starting at leaf ``index * 2**height`` (what
    tiles hold). The empty tree's root is SHA-256 of nothing."""
    if size == 0:
        return hashlib.sha256(b"").digest()
    subtrees: list[bytes] = []
    offset = 0
    for height in range(size.bit_length() - 1, -1, -1):
        if size & (1 << height):
            subtrees.append(node(height, offset >> height))
            offset += 1 << height
    root = subtrees[-1]
    for left in reversed(subtrees[:-1]):
        root = node_hash(left, root)
    return root


def tile_path(level: int | str, index: int, width: int) -> str:
    """``tile/<L>/<N>[.p/<W>]`` with N in C2SP's zero-padded three-digit groups, all but
    the last prefixed with ``x`` (1234067 → ``x001/x234/067``); ``level`` ``entries`` for
    an entry bundle."""
    digits = f"{index:d}"
    digits = digits.zfill(-(-len(digits) // 3) * 3)
    groups = [digits[i:i + 3] for i in range(0, len(digits), 3)]
    encoded = "/".join([*(f"x{g}" for g in groups[:-1]), groups[-1]])
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{level}/{encoded}{suffix}"


def parse_tile_path(path: str) -> tuple[str, int, int] | None:
    """``(level, index, width)`` of a tile path (level ``"entries"`` or digits), or None."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != "tile":
        return None
    level, index = parts[1], _tile_width(parts[2:])
    if index is None:
        return None
    rest, width = index
    if not (level == "entries" or level.isdigit()) or not _tile_index_spelled(rest):
        return None
    return level, int("".join(g.lstrip("x") for g in rest)), width


def _tile_width(rest: list[str]) -> tuple[list[str], int] | None:
    """Step: a tile path's index groups and width (a partial tile's ``.p/W`` suffix
    removed), or None for a width out of range."""
    if len(rest) >= 2 and rest[-2].endswith(".p"):
        if not rest[-1].isdigit() or not 0 < int(rest[-1]) < TILE_WIDTH:
            return None
        return [*rest[:-2], rest[-2][:-2]], int(rest[-1])
    return rest, TILE_WIDTH


def _tile_index_spelled(groups: list[str]) -> bool:
    """Step: a tile index as C2SP spells it: ``xNNN/`` groups, then three digits."""
    if not all(len(g) == 4 and g[0] == "x" and g[1:].isdigit() for g in groups[:-1]):
        return False
    return len(groups[-1]) == 3 and groups[-1].isdigit()
