"""The join's shortcuts (bitmap filter, bookkeeping-only probes) change no result: the same
pairs, scores and cut counts as the plain prefix-filtering join, bounded or not."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

import pytest

from histor_sign.collisions._prefix_join import (
    _bitmap,
    _can_reach,
    _Join,
    jaccard,
    similar_pairs,
)


def plain_join(sets: Sequence[frozenset[str]], threshold: float, max_postings: int | None,
               cut: dict[int, tuple[int, int]]) -> dict[tuple[int, int], float]:
    """Prefix filtering with the positional filter and per-set bounds, without shortcuts
    (the join as it was before the shortcuts)."""
    freq: Counter[str] = Counter()
    for s in sets:
        freq.update(s)
    order = sorted((i for i, s in enumerate(sets) if s), key=lambda i: (len(sets[i]), i))
    index: dict[str, list[tuple[int, int]]] = {}
    result: dict[tuple[int, int], float] = {}
    ratio = threshold / (1 + threshold)
    for i in order:
        tokens = sorted(sets[i], key=lambda t: (freq[t], t))
        size = len(tokens)
        prefix = size - math.ceil(threshold * size - 1e-9) + 1
        min_size = threshold * size - 1e-9
        overlap: dict[int, int] = {}
        for px, token in enumerate(tokens[:prefix]):
            postings = index.get(token, [])
            if max_postings is not None and len(postings) > max_postings:
                skipped = len(postings) - max_postings
                count, first = cut.get(i, (0, postings[0][0]))
                cut[i] = (count + skipped, first)
                postings = postings[skipped:]
            for j, py in postings:
                seen = overlap.get(j, 0)
                if seen < 0 or len(sets[j]) < min_size:
                    continue
                other = len(sets[j])
                need = math.ceil(ratio * (size + other) - 1e-9)
                reach = seen + 1 + min(size - px - 1, other - py - 1)
                overlap[j] = seen + 1 if reach >= need else -1
            index.setdefault(token, []).append((i, px))
        found = [(jaccard(sets[i], sets[j]), j) for j, seen in overlap.items() if seen > 0]
        found = [(score, j) for score, j in found if score >= threshold - 1e-12]
        if max_postings is not None and len(found) > max_postings:
            found.sort(key=lambda f: (-f[0], f[1]))
            count, first = cut.get(i, (0, found[max_postings][1]))
            cut[i] = (count + len(found) - max_postings, first)
            del found[max_postings:]
        for score, j in found:
            result[(min(i, j), max(i, j))] = score
    return result


def zipf_sets(rng: random.Random, count: int, vocab: int, size: tuple[int, int]
              ) -> list[frozenset[str]]:
    words = [f"w{k}" for k in range(vocab)]
    weights = [1 / (rank + 1) for rank in range(vocab)]
    out = [frozenset(rng.choices(words, weights, k=rng.randint(*size))) for _ in range(count)]
    out += [out[k] for k in range(0, count, 9)]  # forks: the same set again
    out += [out[k] | {"changed"} for k in range(0, count, 13)]  # releases: one token more
    return out


@pytest.mark.parametrize("threshold", [0.25, 0.4, 0.7, 1.0])
@pytest.mark.parametrize("max_postings", [None, 1, 2, 8])
@pytest.mark.parametrize("shape", [(300, 400, (0, 12)), (120, 3000, (100, 400)),
                                   (200, 60, (5, 40))])
def test_the_shortcuts_change_no_pair_score_or_cut(
        threshold: float, max_postings: int | None, shape: tuple[int, int, tuple[int, int]]
) -> None:
    count, vocab, size = shape
    sets = zipf_sets(random.Random(count + vocab), count, vocab, size)
    cut: dict[int, tuple[int, int]] = {}
    expected_cut: dict[int, tuple[int, int]] = {}
    found = similar_pairs(sets, threshold, max_postings=max_postings, cut=cut)
    expected = plain_join(sets, threshold, max_postings, expected_cut)
    assert list(found.items()) == list(expected.items())
    assert list(cut.items()) == list(expected_cut.items())


def test_the_bitmap_bound_never_rejects_a_pair_that_reaches_the_threshold() -> None:
    rng = random.Random(5)
    words = [f"t{k}" for k in range(600)]
    for _ in range(2000):
        a = frozenset(rng.sample(words, rng.randint(1, 300)))
        b = frozenset(rng.sample(sorted(a), rng.randint(0, len(a)))
                      + rng.sample(words, rng.randint(0, 50)))
        if not b:
            continue
        bits = (_bitmap(a) ^ _bitmap(b)).bit_count()
        score = jaccard(a, b)
        for threshold in (0.1, 0.4, score):
            if score >= threshold - 1e-12:
                assert _can_reach(len(a), len(b), bits, threshold)


@pytest.mark.parametrize("threshold", [0.1, 0.25, 0.4, 0.62, 1.0])
def test_the_bit_limits_are_the_edge_of_the_bitmap_test(threshold: float) -> None:
    join = _Join([], threshold, None, None)
    for x in range(1, 70, 3):  # (a probed set is never empty)
        limits = join.limits(x)
        for y in range(x + 1):
            reach = [b for b in range(x + y + 1) if _can_reach(x, y, b, threshold)]
            assert reach == list(range(limits[y] + 1))
