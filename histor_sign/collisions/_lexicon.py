"""The lexicon's word classes as data: ``lexicon.json`` beside this module.

Each class (``VARIANT_WORDS``, ``ACTION_GROUPS``, ``AREAS`` …) is a list of entries, one a
line, each with the word (or words), what the class maps it to where it maps, and ``from``:
where the entry comes from — the first commit of the lexicon files that wrote the word (its
date and subject, which names the issue or labelled set it was added for), until an entry is
given a better reason by hand. The code keeps the mechanics (:mod:`._lexical`,
:mod:`._domains`); what a word means to it is here, so the words can be counted, reviewed and
removed without reading code (``benchmarks/eval_scan.py --lexicon-hits``).

Entries are read in file order: a word in two action groups belongs to the first, as it did
in code.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

PATH = Path(__file__).with_name("lexicon.json")
FORMAT = "histor.lexicon/v1"


@cache
def classes() -> dict[str, list[dict[str, Any]]]:
    """Every class's entries, in file order."""
    doc = json.loads(PATH.read_text(encoding="utf-8"))
    if doc.get("format") != FORMAT:
        raise ValueError(f"{PATH}: not a {FORMAT} document")
    return {name: list(body["entries"]) for name, body in doc["classes"].items()}


def words(name: str) -> frozenset[str]:
    """A class of words (``VARIANT_WORDS``)."""
    return frozenset(e["word"] for e in classes()[name])


def grouped(name: str, key: str) -> dict[str, tuple[str, ...]]:
    """A class that sorts words into groups (``ACTION_GROUPS`` by ``class``): group → its
    words, groups and words in file order."""
    out: dict[str, list[str]] = {}
    for e in classes()[name]:
        out.setdefault(e[key], []).append(e["word"])
    return {group: tuple(ws) for group, ws in out.items()}


def mapping(name: str, key: str) -> dict[str, str]:
    """A class that maps each word to one value (``ARG_KINDS``: word → ``kind``)."""
    return {e["word"]: e[key] for e in classes()[name]}


def phrase_mapping(name: str, key: str) -> dict[tuple[str, ...], str]:
    """A class that maps word sequences to one value (``OBJECT_ALIASES``: words → ``alias``)."""
    return {tuple(e["words"]): e[key] for e in classes()[name]}
