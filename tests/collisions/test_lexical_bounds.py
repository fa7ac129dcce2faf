"""Lexical candidate selection is exact where it filters and bounded where it samples."""

from __future__ import annotations

import itertools
import random

import pytest

from histor_sign.collisions._lexical import (
    MAX_DESCRIPTION_CHARS,
    MAX_DESCRIPTION_TOKENS,
    description_tokens,
    jaccard,
    similar_pairs,
)


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.62, 0.8, 1.0])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_filtered_pairs_equal_all_pairs_scored(threshold: float, seed: int) -> None:
    rng = random.Random(seed)
    vocab = [f"w{k}" for k in range(rng.choice([8, 30, 200]))]
    sets = [frozenset(rng.sample(vocab, rng.randint(0, min(len(vocab), 40))))
            for _ in range(150)]
    sets += [sets[k] for k in range(0, 150, 7)]  # exact duplicates
    sets += [sets[k] | {"extra"} for k in range(0, 150, 11)]  # near duplicates
    expected = {(i, j): jaccard(a, b) for (i, a), (j, b) in
                itertools.combinations(enumerate(sets), 2) if jaccard(a, b) >= threshold - 1e-12}
    assert similar_pairs(sets, threshold) == expected


def test_long_descriptions_keep_a_bounded_stable_sample() -> None:
    rng = random.Random(4)
    vocab = [f"word{k}x" for k in range(5000)]
    text = " ".join(rng.choice(vocab) for _ in range(20_000))
    tokens = description_tokens(text)
    assert len(tokens) == MAX_DESCRIPTION_TOKENS
    # the same words in another order keep the same sample (bottom-k by a stable hash)
    words = text[:MAX_DESCRIPTION_CHARS].split(" ")[:-1]
    rng.shuffle(words)
    assert description_tokens(" ".join(words)) == description_tokens(
        " ".join(text[:MAX_DESCRIPTION_CHARS].split(" ")[:-1]))
    # nothing past the character bound is read
    assert description_tokens("alpha " * 10 + " " * MAX_DESCRIPTION_CHARS + "omega") == {"alpha"}


def test_short_descriptions_are_unchanged_by_the_bounds() -> None:
    text = "Read the complete contents of a file from the file system as text."
    assert description_tokens(text) == {"get", "complete", "content", "file", "system", "text"}
