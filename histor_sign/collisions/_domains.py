"""What a tool's description is about: a small lexicon of subject areas (issue 24).

A model tells two same-named tools apart by what their descriptions are about: calendar
events are not Kubernetes events, a biomedical search is not a Hacker News search, a table in
a slide is not a table in a spreadsheet. But two *services* of one area are interchangeable to
a request that names neither (a Jira issue and a Linear issue; two web search engines). This
lexicon maps words that name one area without doubt to that area; a word that names several
(``github``: code and issue tracking) maps to all of them, and a word that is common in many
areas (``event``, ``log``, ``table``, ``message``, ``ticket``) is not in it at all — it says
nothing about the area.

Written for this project (no outside source; same licence as the project). It lists subject
areas of tools in general — it is not tuned to any labeled pair. :data:`OBJECT_ALIASES` is
the same kind of list for the objects a name names: abbreviations and the words two platforms
use for one thing (a GitHub pull request is a GitLab merge request).
"""

from __future__ import annotations

from collections.abc import Callable

from histor_sign.collisions import _lexicon as lexicon

AREAS: dict[str, tuple[str, ...]] = lexicon.grouped("AREAS", "area")



#: Names of services, vendors and engines: in a tool's name one says where the action happens,
#: not what it acts on (``google_search``, ``search_with_bing``), so it is a domain word of
#: the tool, as a namespace is — never its object. Two services of one area stay confusable to
#: a request that names neither (docs/scan-rubric.md, "Backends and platforms").
SERVICES = lexicon.words("SERVICES")

#: Name words (lower case, singular) and word pairs that name one object kind → its one
#: spelling: abbreviations (``mr``, ``repo``, ``db``), the words two platforms use for one
#: thing (pull request / merge request), and plain synonyms (folder / directory).
OBJECT_ALIASES: dict[tuple[str, ...], str] = lexicon.phrase_mapping("OBJECT_ALIASES", "alias")


def canonical_words(words: list[str]) -> list[str]:
    """Name words with each alias of :data:`OBJECT_ALIASES` replaced by its one spelling
    (``get_merge_request_notes`` and ``mr_notes`` name one object); other words unchanged."""
    out: list[str] = []
    k = 0
    while k < len(words):
        pair = tuple(w.lower() for w in words[k:k + 2])
        if len(pair) == 2 and pair in OBJECT_ALIASES:
            out.append(OBJECT_ALIASES[pair])
            k += 2
            continue
        low = words[k].lower()
        one = OBJECT_ALIASES.get((low,)) or OBJECT_ALIASES.get((low[:-1],)) \
            if low.endswith("s") else OBJECT_ALIASES.get((low,))
        out.append(one or words[k])
        k += 1
    return out


def word_areas(normalize: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """Word → the areas it names, each word in the form ``normalize`` gives description
    tokens (singular, lower case)."""
    out: dict[str, frozenset[str]] = {}
    for area, words in AREAS.items():
        for word in words:
            key = normalize(word)
            out[key] = out.get(key, frozenset()) | {area}
    return out
