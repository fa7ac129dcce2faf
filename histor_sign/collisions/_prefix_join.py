"""Every pair of token sets with Jaccard at least a threshold, without an all-pairs loop.

Prefix filtering (Bayardo, Ma, Srikant, WWW 2007) with PPJoin's positional filter (Xiao et
al., WWW 2008), optionally bounded per set (``max_postings``, docs/scan.md "Bounded work and
scale"). Two exact shortcuts keep the work proportional to what can match:

* a **bitmap filter** (Sandes et al., "Bitmap filter: speeding up exact set similarity
  joins with bitwise operations", 2020): each set is also a bitmap of its tokens' hashes; a
  bit set in one bitmap and not in the other is a token only that set has, so
  ``(|x| + |y| - popcount(bx ^ by)) // 2`` bounds the overlap from above, and a pair whose
  bound cannot reach the threshold is never scored;
* a probe that would read more posting entries than there are earlier sets it could meet
  first compares their bitmaps: when none can reach the threshold, the probe's outcome is
  known (no partner) and only its bookkeeping (the index, the cut counts) is done.

Neither changes which pairs are found, their scores or the cut counts: they skip only work
whose outcome is "below the threshold" (tested against the plain algorithm).
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Sequence

#: Bits per token bitmap (a power of two): a description keeps at most 256 tokens, so two
#: bitmaps of 4,096 bits rarely map two tokens to one bit.
BITMAP_BITS = 4096


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    if a is b:  # one shared set (forks): what the division below gives
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def _bitmap(tokens: frozenset[str]) -> int:
    """One bit per token, by ``hash`` (salted per process: it decides only which pairs are
    scored, never a result)."""
    bits = 0
    for token in tokens:
        bits |= 1 << (hash(token) & (BITMAP_BITS - 1))
    return bits


def _can_reach(x: int, y: int, bits: int, threshold: float) -> bool:
    """Whether sets of sizes ``x`` and ``y`` whose bitmaps differ in ``bits`` bits may have
    a Jaccard of ``threshold``: the overlap's upper bound scored as :func:`jaccard` scores
    (its division is monotone in the overlap, so no true score is above the bound's)."""
    most = min(x, y, (x + y - bits) // 2)
    return most / (x + y - most) >= threshold - 1e-12


class _Join:
    """The state of one prefix-filtering join: the index of probed prefixes, the sets in
    probe order (ascending size), and each set's bitmap once needed."""

    def __init__(self, sets: Sequence[frozenset[str]], threshold: float,
                 max_postings: int | None, cut: dict[int, tuple[int, int]] | None) -> None:
        self.sets, self.threshold = sets, threshold
        self.max_postings, self.cut = max_postings, cut
        self.sizes = [len(s) for s in sets]
        #: token → (set, its tokens after this one, its size) per probed prefix holding it
        self.index: dict[str, list[tuple[int, int, int]]] = {}
        self.probed: list[int] = []  # set numbers in probe order (ascending size)
        self.probed_sizes: list[int] = []
        self.bitmaps: dict[int, int] = {}
        self._needs: dict[int, list[int]] = {}
        self._limits: dict[int, list[int]] = {}

    def bitmap(self, i: int) -> int:
        bits = self.bitmaps.get(i)
        if bits is None:
            bits = self.bitmaps[i] = _bitmap(self.sets[i])
        return bits

    def needs(self, size: int) -> list[int]:
        """For a set of ``size`` tokens: the overlap a Jaccard of the threshold needs with a
        set of each size up to its own (earlier probes are never larger)."""
        out = self._needs.get(size)
        if out is None:
            ratio = self.threshold / (1 + self.threshold)
            out = self._needs[size] = [math.ceil(ratio * (size + other) - 1e-9)
                                       for other in range(size + 1)]
        return out

    def _index_only(self, i: int, prefix: list[str]) -> None:
        """Index ``i``'s prefix and count the entries a full probe would have cut."""
        size, bound = self.sizes[i], self.max_postings
        for px, token in enumerate(prefix):
            postings = self.index.get(token)
            if postings is None:
                self.index[token] = [(i, size - px - 1, size)]
                continue
            if bound is not None and len(postings) > bound:
                self.window(i, token)  # the cut counts, as a full probe keeps them
            postings.append((i, size - px - 1, size))

    def window(self, i: int, token: str) -> list[tuple[int, int, int]]:
        """The posting entries of ``token`` probe ``i`` reads: all, or the last
        ``max_postings`` (nearest in size), the others counted in ``cut[i]``."""
        postings = self.index.get(token, [])
        bound = self.max_postings
        if bound is None or len(postings) <= bound:
            return postings
        skipped = len(postings) - bound
        if self.cut is not None:
            count, first = self.cut.get(i, (0, postings[0][0]))
            self.cut[i] = (count + skipped, first)
        return postings[skipped:]

    def reachable(self, i: int, prefix: list[str], min_size: float) -> list[int] | None:
        """The earlier sets whose bitmaps let them reach the threshold with set ``i`` —
        or None when comparing them would cost more than reading ``prefix``'s postings."""
        start = bisect.bisect_left(self.probed_sizes, min_size)
        bound = self.max_postings
        reads = 0
        for token in prefix:
            postings = self.index.get(token)
            if postings:
                reads += len(postings) if bound is None else min(len(postings), bound)
        if len(self.probed) - start >= reads:
            return None
        bits, sizes, limits = self.bitmap(i), self.sizes, self.limits(self.sizes[i])
        return [j for j in self.probed[start:]
                if (bits ^ self.bitmap(j)).bit_count() <= limits[sizes[j]]]

    def limits(self, size: int) -> list[int]:
        """For a set of ``size`` tokens: per size of an earlier set, the most bits their
        bitmaps may differ in and still :func:`_can_reach` the threshold (-1: none) — the
        test is monotone in the bits, so a binary search of it finds the edge exactly."""
        out = self._limits.get(size)
        if out is None:
            out = self._limits[size] = [self._limit(size, other) for other in range(size + 1)]
        return out

    def _limit(self, x: int, y: int) -> int:
        low, high = -1, x + y  # _can_reach holds at low (or low is -1), fails above high
        if _can_reach(x, y, high, self.threshold):
            return high
        while high - low > 1:
            mid = (low + high) // 2
            if _can_reach(x, y, mid, self.threshold):
                low = mid
            else:
                high = mid
        return low

    def probe(self, i: int, tokens: list[str]) -> list[tuple[float, int]]:
        """(score, j) of every earlier set ``j`` the probe of ``i`` meets whose Jaccard
        reaches the threshold (before the per-set bound on partners); ``i`` is indexed."""
        size = len(tokens)
        prefix = tokens[:size - math.ceil(self.threshold * size - 1e-9) + 1]
        min_size = self.threshold * size - 1e-9
        alive = self.reachable(i, prefix, min_size)
        found: list[tuple[float, int]] = []
        if alive is not None and not alive:  # no partner: only the bookkeeping
            self._index_only(i, prefix)
        else:
            keep = set(alive) if alive is not None else None
            for j, seen in self._overlaps(i, prefix, min_size).items():
                if seen > 0 and (keep is None or j in keep):
                    score = jaccard(self.sets[i], self.sets[j])
                    if score >= self.threshold - 1e-12:
                        found.append((score, j))
        self.probed.append(i)
        self.probed_sizes.append(size)
        return found

    def _overlaps(self, i: int, prefix: list[str], min_size: float) -> dict[int, int]:
        """Common prefix tokens per earlier set met (-1 once the positional filter pruned
        it), indexing ``i``'s prefix as it goes."""
        size = self.sizes[i]
        needs = self.needs(size)
        index, bound = self.index, self.max_postings
        overlap: dict[int, int] = {}
        for px, token in enumerate(prefix):
            rest = size - px - 1  # tokens of i after this one
            postings = index.get(token)
            if postings is None:  # nothing to meet
                index[token] = [(i, rest, size)]
                continue
            read = postings if bound is None or len(postings) <= bound \
                else self.window(i, token)
            for j, left, other in read:
                seen = overlap.get(j, 0)
                if seen < 0 or other < min_size:
                    continue
                seen += 1  # the positional filter: can the overlap still reach the need?
                overlap[j] = seen if seen + (rest if rest < left else left) >= needs[other] \
                    else -1
            postings.append((i, rest, size))
        return overlap


def similar_pairs(sets: Sequence[frozenset[str]], threshold: float, *,
                  max_postings: int | None = None,
                  cut: dict[int, tuple[int, int]] | None = None) -> dict[tuple[int, int], float]:
    """Every pair (i < j) with Jaccard ≥ threshold, via prefix filtering (no all-pairs loop).

    With the positional filter of PPJoin (Xiao et al., WWW 2008): tokens in a global
    rarest-first order, so when a probe meets set ``j`` at positions ``px``/``py`` every
    earlier common token has been counted already, and the overlap can grow by at most
    ``1 + min(|x| - px - 1, |y| - py - 1)``; a pair that cannot reach the overlap a Jaccard
    of ``threshold`` needs is dropped before it is scored. Exact: the same pairs as scoring
    all of them — unless ``max_postings`` is given: then a probe reads only the last
    ``max_postings`` sets of a token's list (the nearest in size) and keeps only its
    ``max_postings`` most similar partners, so the work and the output per set are bounded;
    ``cut[i]`` records for set ``i`` how many entries or partners it left and the first of
    them (those pairs are unexamined, not disjoint).
    """
    freq: Counter[str] = Counter()
    for s in sets:
        freq.update(s)
    rank = {t: r for r, t in enumerate(sorted(freq, key=lambda t: (freq[t], t)))}
    join = _Join(sets, threshold, max_postings, cut)
    result: dict[tuple[int, int], float] = {}
    for i in sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i)):
        found = join.probe(i, sorted(sets[i], key=rank.__getitem__))
        if max_postings is not None and len(found) > max_postings:
            found.sort(key=lambda f: (-f[0], f[1]))
            if cut is not None:
                count, first = cut.get(i, (0, found[max_postings][1]))
                cut[i] = (count + len(found) - max_postings, first)
            del found[max_postings:]
        for score, j in found:
            result[(min(i, j), max(i, j))] = score
    return result
