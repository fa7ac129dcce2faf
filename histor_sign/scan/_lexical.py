"""Lexical candidate selection: which tool pairs look confusable by name or description.

Similarity of two tools is the maximum of three Jaccard indices (docs/scan.md):

* **name tokens** — the name split on separators, camelCase and digit boundaries,
  lowercased, lightly stemmed (plural ``s``/``ies``), synonym verbs mapped to one
  canonical verb (``fetch``/``read``/``retrieve``/... → ``get``);
* **name trigrams** — character trigrams of the separator-free, lowercased name with
  ``^``/``$`` padding (catches ``readfile`` vs ``read_files``);
* **description tokens** — word tokens of the description without stop words, normalized
  the same way; CJK runs contribute character bigrams.

A pair is a candidate when that maximum reaches the threshold (default 0.62). Candidates are
found with the prefix-filtering all-pairs algorithm (Bayardo et al., WWW 2007): tokens are
ordered rarest first and only the first ``|x| - ceil(t·|x|) + 1`` tokens of each set are
indexed and probed, which provably finds every pair with Jaccard ≥ t without comparing all
pairs. Every candidate is then scored exactly.
"""

from __future__ import annotations

import heapq
import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

SYNONYM_GROUPS: dict[str, tuple[str, ...]] = {
    "get": ("get", "fetch", "read", "retrieve", "load", "obtain", "lookup", "show", "view",
            "describe", "inspect", "download"),
    "list": ("list", "enumerate", "ls", "browse"),
    "search": ("search", "find", "query", "locate", "seek", "grep"),
    "create": ("create", "add", "new", "insert", "make", "register", "generate"),
    "update": ("update", "modify", "edit", "change", "set", "patch", "alter", "rename"),
    "delete": ("delete", "remove", "erase", "destroy", "drop", "purge", "unlink", "rm", "del",
               "wipe", "clear"),
    "write": ("write", "save", "store", "put", "persist", "upload"),
    "send": ("send", "post", "publish", "submit", "notify", "email", "message"),
    "run": ("run", "exec", "execute", "invoke", "call", "trigger", "launch", "start"),
    "stop": ("stop", "kill", "terminate", "cancel", "abort", "halt", "end"),
    "move": ("move", "mv", "rename", "transfer"),
    "copy": ("copy", "cp", "duplicate", "clone"),
}
SYNONYMS: dict[str, str] = {}
for _canon, _words in SYNONYM_GROUPS.items():
    for _word in _words:
        SYNONYMS.setdefault(_word, _canon)

STOPWORDS = frozenset(
    "a an the and or of to in on for with by from at as is are be this that it its into "
    "via using use given if not no all any can will may should must which when then than "
    "your you we our their them they these those such only also each other more most".split()
)

_SEPARATORS = re.compile(r"[\s_\-./:]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_WORD = re.compile(r"[A-Za-z]+|[0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def normalize_token(token: str) -> str:
    """Lowercase, strip a plural, and map synonym verbs to their canonical verb."""
    t = token.lower()
    if t in SYNONYMS:
        return SYNONYMS[t]
    if len(t) > 4 and t.endswith("ies"):
        t = t[:-3] + "y"
    elif len(t) > 3 and t.endswith("s") and not t.endswith("ss"):
        t = t[:-1]
    return SYNONYMS.get(t, t)


def split_identifier(name: str) -> list[str]:
    """``getUserHTTPStatus_v2`` → ``['get', 'User', 'HTTP', 'Status', 'v', '2']``."""
    parts: list[str] = []
    for chunk in _SEPARATORS.split(name):
        found = _CAMEL.findall(chunk)
        parts.extend(found if found else ([chunk] if chunk else []))
    return parts


def normalized_name(name: str) -> str:
    """The TC002 key: lowercase with separators removed (``Read-File`` → ``readfile``)."""
    return _SEPARATORS.sub("", name).lower()


def name_tokens(name: str) -> frozenset[str]:
    return frozenset(normalize_token(t) for t in split_identifier(name) if t)


def name_trigrams(name: str) -> frozenset[str]:
    text = f"^{normalized_name(name)}$"
    return frozenset(text[i:i + 3] for i in range(len(text) - 2))


#: Lexical work per tool is bounded: only the first this many characters of a description
#: are read (real tool descriptions are far shorter: the 527-tool corpus tops out near 4 KB)
MAX_DESCRIPTION_CHARS = 16_384
#: and at most this many of its distinct tokens are kept — the ones with the smallest stable
#: hash (a bottom-k sketch: two descriptions keep the same sample of their shared words, so
#: the Jaccard index of the sketches estimates theirs without bias).
MAX_DESCRIPTION_TOKENS = 256


@lru_cache(maxsize=65_536)
def _word_tokens(word: str) -> tuple[str, ...]:
    if _CJK.match(word):
        return tuple(word[i:i + 2] for i in range(max(1, len(word) - 1)))
    out: list[str] = []
    for part in split_identifier(word):
        low = part.lower()
        if low in STOPWORDS or (len(low) < 2 and not low.isdigit()):
            continue
        out.append(normalize_token(low))
    return tuple(out)


def _stable_hash(token: str) -> int:
    return zlib.crc32(token.encode("utf-8", "surrogatepass"))


def description_tokens(text: str) -> frozenset[str]:
    out: set[str] = set()
    for word in _WORD.findall(text[:MAX_DESCRIPTION_CHARS]):
        out.update(_word_tokens(word))
    if len(out) > MAX_DESCRIPTION_TOKENS:
        return frozenset(heapq.nsmallest(MAX_DESCRIPTION_TOKENS, out,
                                         key=lambda t: (_stable_hash(t), t)))
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def similar_pairs(sets: Sequence[frozenset[str]], threshold: float) -> dict[tuple[int, int], float]:
    """Every pair (i < j) with Jaccard ≥ threshold, via prefix filtering (no all-pairs loop).

    With the positional filter of PPJoin (Xiao et al., WWW 2008): tokens in a global
    rarest-first order, so when a probe meets set ``j`` at positions ``px``/``py`` every
    earlier common token has been counted already, and the overlap can grow by at most
    ``1 + min(|x| - px - 1, |y| - py - 1)``; a pair that cannot reach the overlap a Jaccard
    of ``threshold`` needs is dropped before it is scored. Exact: the same pairs as scoring
    all of them.
    """
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
        overlap: dict[int, int] = {}  # common tokens so far; -1 once pruned
        for px, token in enumerate(tokens[:prefix]):
            for j, py in index.get(token, ()):
                seen = overlap.get(j, 0)
                if seen < 0:
                    continue
                other = len(sets[j])
                if other < min_size:
                    continue
                need = math.ceil(ratio * (size + other) - 1e-9)
                reach = seen + 1 + min(size - px - 1, other - py - 1)
                overlap[j] = seen + 1 if reach >= need else -1
            index.setdefault(token, []).append((i, px))
        for j, seen in overlap.items():
            if seen > 0:
                score = jaccard(sets[i], sets[j])
                if score >= threshold - 1e-12:
                    result[(min(i, j), max(i, j))] = score
    return result


@dataclass(frozen=True)
class Similarity:
    name: float
    trigram: float
    description: float

    @property
    def score(self) -> float:
        return max(self.name, self.trigram, self.description)

    def to_json(self) -> dict[str, float]:
        return {
            "description": round(self.description, 4),
            "name": round(self.name, 4),
            "score": round(self.score, 4),
            "trigram": round(self.trigram, 4),
        }


@dataclass(frozen=True)
class Profile:
    """The three token sets of one tool."""

    name: frozenset[str]
    trigram: frozenset[str]
    description: frozenset[str]

    @classmethod
    def of(cls, name: str, description: str) -> Profile:
        return cls(name_tokens(name), name_trigrams(name), description_tokens(description))


def similarity(a: Profile, b: Profile) -> Similarity:
    return Similarity(
        jaccard(a.name, b.name), jaccard(a.trigram, b.trigram),
        jaccard(a.description, b.description),
    )


def candidate_pairs(
    profiles: Sequence[Profile], threshold: float
) -> dict[tuple[int, int], Similarity]:
    """All pairs whose similarity (max of the three Jaccards) reaches ``threshold``."""
    keys: set[tuple[int, int]] = set()
    for attr in ("name", "trigram", "description"):
        keys.update(similar_pairs([getattr(p, attr) for p in profiles], threshold))
    return {k: similarity(profiles[k[0]], profiles[k[1]]) for k in sorted(keys)}
