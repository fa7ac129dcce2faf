"""Forks repeat tools: their profiles share word sets and their pairs share similarities
(registry memory), and sharing changes no value."""

from __future__ import annotations

from histor_sign.collisions._lexical import (
    Similarity,
    bounded_candidate_pairs,
    description_tokens,
    profiles_of,
)

TOOLS = [("search_issues", "Search issues in a project by text."),
         ("get_issue", "Get one issue by its id."),
         ("create_issue", "Create an issue in a project.")]


def forks(count: int) -> list[tuple[str, str, str]]:
    return [(f"fork{n}", name, text) for n in range(count) for name, text in TOOLS]


def test_forked_profiles_share_their_word_sets_and_keep_their_values() -> None:
    profiles = profiles_of(forks(3))
    first, fork = profiles[0], profiles[3]
    assert fork.description is first.description
    assert fork.objects is first.objects
    assert fork.source != first.source
    assert first.description == description_tokens(TOOLS[0][1])


def test_forked_pairs_share_one_similarity_and_one_json_view() -> None:
    profiles = profiles_of(forks(4))
    pairs = bounded_candidate_pairs(profiles, 0.4).pairs
    same = [sim for (i, j), sim in pairs.items() if i % 3 == j % 3 == 1]  # get_issue x get_issue
    assert len(same) == 6 and all(sim is same[0] for sim in same)
    assert same[0].to_json() is same[0].to_json()
    # the view is the value's, however the object was made
    copy = Similarity(**{name: getattr(same[0], name) for name in (
        "basis", "action", "action_words", "objects", "description", "shared_words",
        "inferred", "variants", "contrasting", "bulk")})
    assert copy == same[0] and copy.to_json() == same[0].to_json()
