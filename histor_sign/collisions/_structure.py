"""Candidates from a catalog's own structure, with no word list: **template siblings**.

A server that writes one tool per backend from one template (``search_arxiv``,
``search_pubmed``, … each "Search academic papers from <source>.") gives a model tools it
cannot tell apart by what they do: only the backend differs, and a request rarely names it.
The lexical reading takes the backend for a different object and keeps them apart; the
catalog's structure says otherwise.

Two tools of one source are template siblings when

* their names split into the same number of words and differ in exactly one position;
* each description names its own differing word (case-insensitively, as a whole word) and the
  two descriptions are identical once that word is replaced by a placeholder — the template,
  at least :data:`MIN_TEMPLATE_WORDS` words long, so a short "Get a user" says too little;
* in the template the differing word qualifies the action — it follows a word that says
  where or through what (from, on, via, using, with, at, through: :data:`QUALIFIERS`) — and is
  not its object: "Get a user by id" / "Get a team by id" are two objects, not two backends.

The pairs are found by grouping on (source, name with the word masked, template): linear in
the tools, never all pairs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import combinations

from histor_sign.collisions._lexical import split_identifier
from histor_sign.models import Tool

#: Words a template puts before the word that names where or through what a tool acts.
QUALIFIERS = frozenset({"from", "on", "via", "using", "with", "at", "through"})
#: The shortest template (in words, the placeholder included) that says what a tool does.
MIN_TEMPLATE_WORDS = 4
#: Descriptions longer than this are read only up to it (a template is in its opening).
MAX_TEMPLATE_CHARS = 4000
#: A group larger than this names no sibling pairs (a bound on the pairs one group adds).
MAX_GROUP = 64
_HOLE = "\x00"
_SPACE = re.compile(r"\s+")
_WORDS = re.compile(r"[^\W_]+|\x00")


def _template(description: str, word: str) -> str | None:
    """The description with ``word`` replaced by a placeholder, when the word is there, the
    template is long enough, and each place the word stands follows a qualifier."""
    text = _SPACE.sub(" ", description[:MAX_TEMPLATE_CHARS]).strip().lower()
    holed, count = re.subn(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", _HOLE, text)
    if not count:
        return None
    words = _WORDS.findall(holed)
    if len(words) < MIN_TEMPLATE_WORDS:
        return None
    for i, token in enumerate(words):
        if token == _HOLE and (i == 0 or words[i - 1] not in QUALIFIERS):
            return None
    return holed


def template_siblings(tools: Sequence[Tool]) -> list[tuple[int, int, str]]:
    """Pairs (i, j, basis), i < j, of template siblings (module docstring); the basis names
    the two differing words. Names are grouped first (source, masked name): a description is
    read only for a name that has a sibling, and once per (description, word)."""
    templates: dict[tuple[str, str], str | None] = {}
    out: set[tuple[int, int, str]] = set()
    for members in _masked_names(tools).values():
        if len(members) < 2 or len(members) > MAX_GROUP:
            continue
        for group in _by_template(tools, members, templates).values():
            for (i, wi), (j, wj) in combinations(group, 2):
                if wi != wj:
                    out.add((i, j, f"template siblings: names and descriptions differ only "
                                   f"in {wi!r} / {wj!r}"))
    return sorted(out)


def _masked_names(
    tools: Sequence[Tool],
) -> dict[tuple[str, int, tuple[str, ...]], list[tuple[int, str]]]:
    """Step 1 of :func:`template_siblings`: tools (with the word masked) per (source,
    position, name with one alphabetic word masked), for described multi-word names."""
    by_name: dict[tuple[str, int, tuple[str, ...]], list[tuple[int, str]]] = {}
    for i, tool in enumerate(tools):
        words = [w.lower() for w in split_identifier(tool.name) if w]
        if len(words) < 2 or not tool.description:
            continue
        for k, word in enumerate(words):
            if word.isalpha() and len(word) >= 2:
                masked = (*words[:k], _HOLE, *words[k + 1:])
                by_name.setdefault((tool.source, k, masked), []).append((i, word))
    return by_name


def _by_template(tools: Sequence[Tool], members: list[tuple[int, str]],
                 templates: dict[tuple[str, str], str | None]) -> dict[str, list[tuple[int, str]]]:
    """Step 2 of :func:`template_siblings`: one name group's members per description
    template (each (description, word) templated once, in ``templates``)."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for i, word in members:
        key = (tools[i].description, word)
        if key not in templates:
            templates[key] = _template(*key)
        template = templates[key]
        if template is not None:
            groups.setdefault(template, []).append((i, word))
    return groups
