"""Lexical candidates: tokenization, synonyms, and the prefix filter equals brute force."""

from __future__ import annotations

import itertools
import random

from histor_sign.scan._lexical import (
    Profile,
    candidate_pairs,
    jaccard,
    name_tokens,
    normalized_name,
    similar_pairs,
    split_identifier,
)


def test_identifiers_split_on_snake_camel_kebab_and_digits() -> None:
    assert split_identifier("getUserHTTPStatus_v2") == ["get", "User", "HTTP", "Status", "v", "2"]
    assert split_identifier("read-file.v1") == ["read", "file", "v", "1"]
    assert normalized_name("Read-File") == normalized_name("read_file") == "readfile"


def test_synonym_verbs_and_plurals_normalize_to_one_token() -> None:
    assert name_tokens("fetch_user_profiles") == name_tokens("getUserProfile")
    assert name_tokens("erase_records") == name_tokens("delete-record")
    assert name_tokens("read_file") != name_tokens("write_file")


def test_prefix_filter_finds_exactly_the_brute_force_pairs() -> None:
    rng = random.Random(7)
    for threshold in (0.3, 0.62, 0.9, 1.0):
        sets = [frozenset(str(t) for t in rng.sample(range(25), rng.randint(0, 6)))
                for _ in range(250)]
        fast = similar_pairs(sets, threshold)
        brute = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
                 if jaccard(sets[i], sets[j]) >= threshold - 1e-12}
        assert set(fast) == brute


def test_candidates_use_names_and_descriptions_with_threshold() -> None:
    profiles = [
        Profile.of("read_file", "Read a UTF-8 text file from disk"),
        Profile.of("fetchFile", "Download something"),
        Profile.of("delete_user", "Read a UTF-8 text file from disk"),
        Profile.of("send_email", "Send an email message"),
    ]
    pairs = candidate_pairs(profiles, 0.62)
    assert (0, 1) in pairs and pairs[(0, 1)].name == 1.0
    assert (0, 2) in pairs and pairs[(0, 2)].description == 1.0
    assert (0, 3) not in pairs
    assert set(candidate_pairs(profiles, 1.0)) == {(0, 1), (0, 2)}
