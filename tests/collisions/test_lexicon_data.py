"""The lexicon as data (issue 38): every word class of the scan lives in
histor_sign/collisions/lexicon.json, one entry a line, each saying where it comes from."""

from __future__ import annotations

import json

from histor_sign.collisions import _domains, _lexical, _lexicon


def test_every_entry_is_one_line_with_its_provenance() -> None:
    text = _lexicon.PATH.read_text(encoding="utf-8")
    entries = [line for line in text.splitlines() if line.startswith("   {")]
    assert len(entries) == sum(len(es) for es in _lexicon.classes().values())
    for line in entries:
        entry = json.loads(line.rstrip(","))
        assert entry["from"].strip(), line
        assert ("word" in entry) != ("words" in entry), line


def test_the_code_reads_its_word_classes_from_the_data() -> None:
    """What the scan uses is what the file says: a word added to a class there is in the
    class the code reads (and the first action group listing a word keeps it)."""
    assert _lexical.VARIANT_WORDS == _lexicon.words("VARIANT_WORDS")
    assert _domains.SERVICES == _lexicon.words("SERVICES")
    groups = _lexicon.grouped("ACTION_GROUPS", "class")
    assert _lexical.ACTION_GROUPS == groups
    for group, words in groups.items():
        for word in words:
            assert _lexical.ACTIONS[word] == next(g for g, ws in groups.items() if word in ws)
        assert group in _lexical.ACTION_CLASSES
    assert _domains.OBJECT_ALIASES[("merge", "request")] == "pr"
    assert _lexical.ARG_KINDS == _lexicon.mapping("ARG_KINDS", "kind")


def test_no_word_is_listed_twice_in_one_class() -> None:
    for name, entries in _lexicon.classes().items():
        keys = [(e.get("word") or tuple(e["words"]), e.get("class") or e.get("area"))
                for e in entries]
        assert len(keys) == len(set(keys)), name
