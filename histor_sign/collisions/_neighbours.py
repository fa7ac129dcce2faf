"""Candidates from the scanned catalogs' own token statistics, with no word list (issue 38).

The lexical reading (:mod:`histor_sign.collisions._lexical`) pairs tools by the words it
knows; a backend that names the same job in other words escapes it. Two rules here read only
what the catalogs themselves say — which words are rare among them, which servers cover the
same ground — and so hold for catalogs no word list was written for.

A tool's **words** are its name's words (singular, lower case) without those half or more of
its source's names share (a namespace, a product word), plus its description tokens as the
scan reads them (the source's boilerplate and repeated sentences dropped, stop words out).
Words are weighted by inverse document frequency, so a word every tool (or every server) uses
weighs nothing, and two tools are compared by the cosine of their weighted words.

* **Aligned across servers.** Each source is a document (the union of its tools' words, IDF
  over the scanned sources). Two sources are *neighbours* when each is among the other's
  :data:`ALIGNED_SOURCES` most similar sources — two servers that cover the same ground (two
  Prometheus front ends, two mail servers, two SQL servers). Between two neighbours, a tool
  and a tool are **aligned** when each is the other's best match in the other's source (the
  same IDF over sources) with cosine at least :data:`ALIGNED_FLOOR`: the same operation in
  two servers, whatever each calls it. Copies of one catalog (forks and releases: the same
  tool names) are one source here: the first copy in catalog order stands for them, so a
  fork does not crowd out the servers that really cover the same ground. Two tools with the
  same name (once case and separators are ignored) are left to the name rules and their
  partner bound (``--max-partners``).
* **Near-duplicate siblings.** Two tools of one source with the same action class (the
  lexical reading's), identical input schemas and descriptions at least
  :data:`DUPLICATE_FLOOR` alike by the source's own word statistics (IDF over its tools),
  whose names differ only in words the source uses with no other action: a detail level or
  a variant its names tell apart in a word a request rarely holds
  (``get_historic_flight_events_full`` / ``…_light``: the server only ever *gets* full and
  light). A word the source also lists, updates or deletes names a resource of its own
  (``list_tags`` / ``list_document_types`` under one description template are two
  resources, not two variants).

Neither pairs tools whose effects differ — the stated hints (:mod:`histor_sign.effects`),
else the effect the action implies — so a pair these rules add never makes TC004 or HS201 on
its own: it is TC003 with a witness, or TC011 when the schemas are disjoint.

Bounded and deterministic: source similarity is accumulated over words used by at most
:data:`SOURCE_POSTINGS` sources (a word more servers use weighs little and would make the
work quadratic in the sources); tools are compared only within neighbouring sources (at most
:data:`ALIGNED_SOURCES` per source, through an index of words, and not at all when that takes
more than :data:`MAX_PAIR_WORK` word matches) and within groups of at most :data:`MAX_GROUP`
tools of one source. Ties go to the first in catalog order.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import combinations

from histor_sign.collisions._lexical import (
    Profile,
    normalized_name,
    singular,
    split_identifier,
)
from histor_sign.effects import stated_effect
from histor_sign.models import Tool

#: Two sources are neighbours when each is among the other's this many most similar.
ALIGNED_SOURCES = 3
#: The cosine two aligned tools need (IDF over sources).
ALIGNED_FLOOR = 0.4
#: The cosine two near-duplicate siblings need (IDF over their source's tools).
DUPLICATE_FLOOR = 0.8
#: A word used by more sources than this does not count toward source similarity.
SOURCE_POSTINGS = 64
#: Two neighbouring sources whose tools' comparison takes more word matches than this are
#: not aligned (the largest pair of a 100,000-tool registry mirror takes 121,293).
MAX_PAIR_WORK = 500_000
#: A (source, action) group larger than this is not compared for near duplicates.
MAX_GROUP = 64
#: A name word in at least this share (and 3) of its source's names is the source's, not
#: the tool's (a namespace, a product name).
COMMON_SHARE = 0.5

#: How the bases of these rules begin (the scan decides such pairs after all others).
STATISTICAL_BASES = ("aligned across servers:", "near-duplicate siblings:")

Vector = dict[str, float]
Pair = tuple[int, int, str]


def statistical_pairs(tools: Sequence[Tool], profiles: Sequence[Profile]) -> list[Pair]:
    """Pairs (i, j, basis), i < j, of aligned tools and near-duplicate siblings (module
    docstring); the basis says why the pair is confusable."""
    members = _members(tools)
    words = _tool_words(tools, profiles, members)
    effects = _Effects(tools, profiles)
    out = set(_aligned(tools, words, effects, _distinct(tools, members)))
    out.update(_duplicates(tools, profiles, words, effects, members))
    return sorted(out)


def _members(tools: Sequence[Tool]) -> dict[str, list[int]]:
    """Each source's tools, in catalog order."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, tool in enumerate(tools):
        members[tool.source].append(i)
    return members


def _tool_words(tools: Sequence[Tool], profiles: Sequence[Profile],
                members: dict[str, list[int]]) -> list[frozenset[str]]:
    """Each tool's words: its name's words less its source's common ones, and its
    description tokens (module docstring)."""
    out: list[frozenset[str]] = [frozenset()] * len(tools)
    for idx in members.values():
        common = _common_words([_name_words(tools[i].name) for i in idx])
        for i in idx:
            out[i] = (_name_words(tools[i].name) - common) | profiles[i].description
    return out


@lru_cache(maxsize=65_536)
def _name_words(name: str) -> frozenset[str]:
    """A name's words, singular and lower case (a registry repeats its names: cached)."""
    return frozenset(singular(w) for w in split_identifier(name) if w)


def _common_words(names: Sequence[frozenset[str]]) -> frozenset[str]:
    """The name words at least :data:`COMMON_SHARE` (and 3) of a source's names use."""
    counts = Counter(w for words in names for w in words)
    floor = max(3.0, COMMON_SHARE * len(names))
    return frozenset(w for w, c in counts.items() if c >= floor)


class _Effects:
    """Each tool's effect, read when first asked for: the one its hints state, else the one
    its action implies (None: unknown)."""

    def __init__(self, tools: Sequence[Tool], profiles: Sequence[Profile]) -> None:
        self._tools, self._profiles = tools, profiles
        self._known: dict[int, str | None] = {}

    def __getitem__(self, i: int) -> str | None:
        if i not in self._known:
            stated = stated_effect(self._tools[i].annotations).effect
            self._known[i] = stated if stated is not None else self._profiles[i].effect
        return self._known[i]


def _compatible(a: str | None, b: str | None) -> bool:
    """Effects that do not differ: equal, or one of them unknown."""
    return a is None or b is None or a == b


def _weights(documents: Iterable[frozenset[str]]) -> dict[str, float]:
    """Inverse document frequency, ``log(n / df)``, of every word of the documents."""
    docs = list(documents)
    df = Counter(w for doc in docs for w in doc)
    return {w: math.log(len(docs) / c) for w, c in df.items()}


def _unit(words: Iterable[str], idf: dict[str, float]) -> Vector:
    """The words' IDF vector, of length 1 (words of weight 0 left out), its words in sorted
    order: every sum over them is taken in one order, whatever the hash seed."""
    vec = {w: idf[w] for w in sorted(words) if idf.get(w, 0.0) > 0.0}
    norm = math.sqrt(sum(x * x for x in vec.values()))
    return {w: x / norm for w, x in vec.items()} if norm else {}


def _cosine(a: Vector, b: Vector) -> float:
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(x * large[w] for w, x in small.items() if w in large)


def _shared(a: Vector, b: Vector, limit: int = 4) -> str:
    """The words that weigh most in two vectors' cosine, for a message."""
    top = sorted((w for w in a if w in b), key=lambda w: (-a[w] * b[w], w))[:limit]
    return ", ".join(top)


def _distinct(tools: Sequence[Tool], members: dict[str, list[int]]) -> dict[str, list[int]]:
    """The sources that are not copies of an earlier source (the same tool names: a fork or
    a release of one server), with their tools."""
    seen: set[frozenset[str]] = set()
    out: dict[str, list[int]] = {}
    for source, idx in members.items():
        key = frozenset(tools[i].name for i in idx)
        if key not in seen:
            seen.add(key)
            out[source] = idx
    return out


def _aligned(tools: Sequence[Tool], words: Sequence[frozenset[str]],
             effects: _Effects, sources: dict[str, list[int]]) -> list[Pair]:
    """Aligned tools of neighbouring sources (module docstring)."""
    if len(sources) < 2:
        return []
    bags, vectors = _source_vectors(words, sources)
    counts = {s: Counter(w for i in idx for w in vectors[i]) for s, idx in sources.items()}
    out: list[Pair] = []
    for a, b in _neighbour_sources(bags):
        if _matching_work(counts[a], counts[b]) <= MAX_PAIR_WORK:
            out.extend(_aligned_between(tools, a, b, sources, vectors, effects))
    return out


def _source_vectors(words: Sequence[frozenset[str]], sources: dict[str, list[int]]
                    ) -> tuple[dict[str, Vector], dict[int, Vector]]:
    """Each source's vector (the union of its tools' words) and each of its tools' vectors,
    with the IDF over the sources."""
    bags = {s: frozenset().union(*(words[i] for i in idx)) for s, idx in sources.items()}
    idf = _weights(bags.values())
    tool_vectors = {i: _unit(words[i], idf) for idx in sources.values() for i in idx}
    return {s: _unit(bag, idf) for s, bag in bags.items()}, tool_vectors


def _aligned_between(tools: Sequence[Tool], a: str, b: str, sources: dict[str, list[int]],
                     vectors: dict[int, Vector], effects: _Effects) -> list[Pair]:
    """The aligned pairs of two neighbouring sources: mutual best matches whose effects do
    not differ; equal names are the name rules' (and the partner bound's), not added here."""
    out: list[Pair] = []
    for i, j, cos in _mutual_best(sources[a], sources[b], vectors):
        if (_compatible(effects[i], effects[j])
                and normalized_name(tools[i].name) != normalized_name(tools[j].name)):
            out.append((min(i, j), max(i, j),
                        _aligned_basis(a, b, cos, _shared(vectors[i], vectors[j]))))
    return out


def _matching_work(a: Counter[str], b: Counter[str]) -> int:
    """How many word matches comparing every tool of one source with the other's takes."""
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    return sum(n * large[w] for w, n in small.items() if w in large)


def _aligned_basis(a: str, b: str, cos: float, words: str) -> str:
    return (f"aligned across servers: {a!r} and {b!r} are among each other's "
            f"{ALIGNED_SOURCES} most similar catalogs in the scan, and each tool is the "
            f"other's best match there ({cos:.2f}: {words})")


def _neighbour_sources(vectors: dict[str, Vector]) -> list[tuple[str, str]]:
    """Pairs of sources each among the other's :data:`ALIGNED_SOURCES` most similar."""
    nearest = {s: {t for t, _ in sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))
                   [:ALIGNED_SOURCES]} for s, row in _source_scores(vectors).items()}
    return sorted((x, y) for x, near in nearest.items() for y in near
                  if x < y and x in nearest.get(y, ()))


def _source_scores(vectors: dict[str, Vector]) -> dict[str, dict[str, float]]:
    """Each source's similarity to the sources it shares a word with, accumulated over the
    words of at most :data:`SOURCE_POSTINGS` sources (never all pairs of sources)."""
    postings: dict[str, list[str]] = defaultdict(list)
    for source, vec in vectors.items():
        for w in vec:
            postings[w].append(source)
    score: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for w, users in postings.items():
        if 1 < len(users) <= SOURCE_POSTINGS:
            for x, y in combinations(users, 2):
                product = vectors[x][w] * vectors[y][w]
                score[x][y] += product
                score[y][x] += product
    return score


def _mutual_best(left: list[int], right: list[int], vectors: dict[int, Vector]
                 ) -> list[tuple[int, int, float]]:
    """Pairs (i, j, cosine) of a tool of ``left`` and one of ``right``, each the other's
    best match (the first in catalog order among equals) with cosine ≥ ALIGNED_FLOOR."""
    scores = _cross_scores(left, right, vectors)
    best_left: dict[int, tuple[int, float]] = {}
    for i in left:  # in catalog order: a later equal never replaces the first
        for j, cos in scores[i].items():
            if cos > best_left.get(j, (-1, 0.0))[1]:
                best_left[j] = (i, cos)
    out = []
    for i in left:
        if scores[i]:
            cos, j = max((c, -k) for k, c in scores[i].items())
            if cos >= ALIGNED_FLOOR and best_left[-j][0] == i:
                out.append((i, -j, cos))
    return out


def _cross_scores(left: list[int], right: list[int], vectors: dict[int, Vector]
                  ) -> dict[int, dict[int, float]]:
    """The cosine of each tool of ``left`` with the tools of ``right`` it shares a word
    with, through an index of ``right``'s words (never every pair of tools)."""
    postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for j in right:
        for w, y in vectors[j].items():
            postings[w].append((j, y))
    scores: dict[int, dict[int, float]] = {}
    for i in left:
        row: dict[int, float] = defaultdict(float)
        for w, x in vectors[i].items():
            for j, y in postings.get(w, ()):
                row[j] += x * y
        scores[i] = row
    return scores


def _duplicates(tools: Sequence[Tool], profiles: Sequence[Profile],
                words: Sequence[frozenset[str]], effects: _Effects,
                members: dict[str, list[int]]) -> list[Pair]:
    """Near-duplicate siblings (module docstring), per source: only tools with the same
    action and the same name words besides the ones the source uses with that action alone
    can be, so those groups are all that is compared."""
    out: list[Pair] = []
    for idx in members.values():
        actions = _actions_of_words(idx, profiles, tools)
        groups: dict[tuple[str, frozenset[str]], list[int]] = defaultdict(list)
        for i in idx:
            action = profiles[i].action
            shared = frozenset(w for w in _name_words(tools[i].name) if actions[w] != {action})
            groups[(action, shared)].append(i)
        idf: dict[str, float] | None = None
        for (action, _), group in groups.items():
            if 2 <= len(group) <= MAX_GROUP:
                idf = idf if idf is not None else _weights(words[i] for i in idx)
                out.extend(_duplicate_group(tools, action, group, words, effects, idf))
    return out


def _actions_of_words(idx: list[int], profiles: Sequence[Profile], tools: Sequence[Tool]
                      ) -> dict[str, set[str]]:
    """Per name word of one source, the action classes of the source's names that hold it."""
    actions: dict[str, set[str]] = defaultdict(set)
    for i in idx:
        for w in _name_words(tools[i].name):
            actions[w].add(profiles[i].action)
    return actions


def _duplicate_group(tools: Sequence[Tool], action: str, group: list[int],
                     words: Sequence[frozenset[str]], effects: _Effects,
                     idf: dict[str, float]) -> list[Pair]:
    """The near-duplicate pairs of one group of :func:`_duplicates`."""
    vectors = {i: _unit(words[i], idf) for i in group}
    schemas: dict[int, str | None] = {}
    out: list[Pair] = []
    for i, j in combinations(group, 2):
        cos = _cosine(vectors[i], vectors[j])
        if (cos >= DUPLICATE_FLOOR and _compatible(effects[i], effects[j])
                and _same_schema(tools, i, j, schemas)):
            out.append((i, j, _duplicate_basis(tools[i], tools[j], action, cos,
                                               _shared(vectors[i], vectors[j]))))
    return out


def _duplicate_basis(a: Tool, b: Tool, action: str, cos: float, words: str) -> str:
    differ = " / ".join(repr(" ".join(sorted(x - y)))
                        for x, y in ((_name_words(a.name), _name_words(b.name)),
                                     (_name_words(b.name), _name_words(a.name))))
    return (f"near-duplicate siblings: same action {action!r}, identical input schemas, "
            f"descriptions {cos:.2f} alike by the source's own word statistics ({words}); "
            f"the names differ only in {differ}, words the source uses with no other action")


def _same_schema(tools: Sequence[Tool], i: int, j: int, cache: dict[int, str | None]) -> bool:
    """Both tools have an input schema and the two are equal (keys in any order)."""
    for k in (i, j):
        if k not in cache:
            tool = tools[k]
            cache[k] = (json.dumps(tool.input_schema, sort_keys=True, ensure_ascii=False)
                        if tool.has_input_schema else None)
    return cache[i] is not None and cache[i] == cache[j]
