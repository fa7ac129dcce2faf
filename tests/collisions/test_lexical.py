"""Lexical candidates: actions and objects as a model reads them, and the grouping plus prefix
filter finds exactly the pairs the pairwise rule accepts."""

from __future__ import annotations

import itertools
import random

from histor_sign.collisions._lexical import (
    Profile,
    candidate_pairs,
    jaccard,
    normalized_name,
    profiles_of,
    similar_pairs,
    similarity,
    source_context,
    split_identifier,
)


def test_identifiers_split_on_snake_camel_kebab_and_digits() -> None:
    assert split_identifier("getUserHTTPStatus_v2") == ["get", "User", "HTTP", "Status", "v", "2"]
    assert split_identifier("read-file.v1") == ["read", "file", "v", "1"]
    assert normalized_name("Read-File") == normalized_name("read_file") == "readfile"


def test_action_synonyms_plurals_and_variant_words() -> None:
    a, b = Profile.of("fetch_user_profiles", ""), Profile.of("getUserProfile", "")
    assert (a.action, a.objects) == (b.action, b.objects) == ("get", frozenset({"user", "profile"}))
    assert Profile.of("erase_records", "").action == Profile.of("delete-record", "").action
    assert Profile.of("read_file", "").action != Profile.of("write_file", "").action
    # count/format words and by/with/from qualifiers are variants of the same object
    for name in ("read_text_file", "read_multiple_files", "read_file_by_path"):
        assert Profile.of(name, "").objects == frozenset({"file"}), name
    assert Profile.of("list_directory_with_sizes", "").objects == frozenset({"directory"})
    # a qualifier word that names a different object is kept
    assert Profile.of("list_allowed_directories", "").objects == {"allowed", "directory"}


def test_action_from_the_description_when_the_name_has_none() -> None:
    p = Profile.of("git_status", "Shows the working tree status", frozenset({"git"}))
    assert (p.action, p.action_word, p.inferred_action) == ("get", "Shows", True)
    assert p.objects == {"status"} and p.effect == "read-only"
    # no known verb anywhere: the name's first word is the action, with no effect implied
    q = Profile.of("playwright_click", "Click an element", frozenset({"playwright"}))
    assert (q.action, q.objects, q.effect) == ("click", frozenset(), None)


def test_namespace_and_boilerplate_come_from_the_source() -> None:
    names = ["git_status", "git_add", "git_log", "git_create_branch", "git_branch"]
    descs = ["This tool belongs to Git. It lets users run Git. Tool description: " + d
             for d in ("Shows status", "Adds files", "Shows log", "Creates a branch", "List")]
    namespace, (prefix, _) = source_context(names, descs)
    assert namespace == {"git"}
    assert " ".join(prefix).startswith("This tool belongs to Git.")
    profiles = profiles_of([("git", n, d) for n, d in zip(names, descs, strict=True)])
    assert all("belong" not in p.description for p in profiles)
    # git_add vs git_create_branch share only the namespace: not confusable
    assert similarity(profiles[1], profiles[3], 0.25) is None
    # git_branch ("List Git branches") vs git_create_branch: read vs create
    assert similarity(profiles[4], profiles[3], 0.25) is None
    # a source of two tools has no namespace (too little evidence)
    assert source_context(["git_a", "git_b"], ["", ""]) == (frozenset(), ((), ()))


def test_rules_and_messages_say_which_words_matched() -> None:
    read = Profile.of("read_file", "Read a file as text")
    text = Profile.of("read_text_file", "Read a text file")
    sim = similarity(read, text, 0.25)
    assert sim is not None and sim.basis == "name"
    assert sim.why() == "same action 'read' on the same object 'file', differing only in 'text'"
    # file vs file info: one object extends the other, so the descriptions decide
    contents = Profile.of("read_file", "Read the complete contents of a file as text.")
    info = Profile.of("get_file_info", "Retrieve detailed metadata about a file or directory. "
                      "Returns size, creation time, last modified time, permissions and type.")
    assert similarity(contents, info, 0.25) is None
    html = Profile.of("fetch_html", "Fetch a website and return the content as HTML")
    md = Profile.of("fetch_markdown", "Fetch a website and return the content as Markdown")
    sim2 = similarity(html, md, 0.25)
    assert sim2 is not None and "'html', 'markdown'" in sim2.why()
    fetch, load = Profile.of("download_paper", ""), Profile.of("read_paper", "")
    assert similarity(fetch, load, 0.25) is None  # download vs read: different action classes


def test_prefix_filter_finds_exactly_the_brute_force_pairs() -> None:
    rng = random.Random(7)
    for threshold in (0.3, 0.62, 0.9, 1.0):
        sets = [frozenset(str(t) for t in rng.sample(range(25), rng.randint(0, 6)))
                for _ in range(250)]
        fast = similar_pairs(sets, threshold)
        brute = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
                 if jaccard(sets[i], sets[j]) >= threshold - 1e-12}
        assert set(fast) == brute


def test_candidates_equal_the_pairwise_rule_on_random_catalogs() -> None:
    rng = random.Random(16)
    verbs = ["get", "fetch", "list", "create", "add", "delete", "remove", "search", "show", ""]
    nouns = ["user", "users", "file", "order", "item", "text", "all", "by", "city", "git"]
    words = ["read", "the", "file", "user", "order", "list", "of", "items", "city", "weather"]
    for threshold in (0.25, 0.5, 0.8):
        tools = []
        for i in range(300):
            name = "_".join(x for x in [rng.choice(verbs), *rng.sample(nouns, rng.randint(0, 3))]
                            if x) or f"t{i}"
            desc = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
            tools.append((f"s{rng.randint(0, 3)}", name, desc))
        profiles = profiles_of(tools)
        fast = candidate_pairs(profiles, threshold)
        brute = {(i, j) for i, j in itertools.combinations(range(len(profiles)), 2)
                 if similarity(profiles[i], profiles[j], threshold) is not None}
        assert set(fast) == brute
        assert brute  # the generator makes confusable pairs
