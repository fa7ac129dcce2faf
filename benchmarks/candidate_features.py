"""Offline analysis (issue 38, not shipped): which general catalog features would select the
labelled positives the scan misses, on the TUNING sets only, with leave-one-set-out figures.

For every tuning set it scans the set's servers together (as ``eval_scan.py`` does), then for
every labelled pair computes features that read only the catalog's own structure and token
statistics — never a word list:

* ``cos``: TF-IDF cosine of the two tools' name tokens and description words, the IDF from
  the scanned set (binary term frequency); ``rank_ab`` / ``rank_ba``: the rank of each among
  the other's neighbours by that cosine (1 = nearest), ``mrank`` the larger (mutual rank);
* ``schema_eq``: equal canonical input schemas; ``props_eq``: the same top-level property
  names (non-empty); ``name_shared``: name tokens the two share (source-common tokens — a
  token in half or more of the source's names — not counted);
* ``same_source``; the schema decision (a new candidate is flagged only when it is decided).

A rule family is a predicate over the features with parameters; a pair is flagged when the
scan without the statistical candidates (the rules these families led to, issue 38) flags it
(TC003|TC004|TC011) or the rule fires and its schemas are decided (overlap →
TC003, disjoint → TC011). Leave-one-set-out: for each set, the parameters are chosen on the
other six (highest pooled recall at pooled precision >= 0.8, else the best F1) and the set's
own figure is reported — what an unseen set would read.

    python benchmarks/candidate_features.py [--dump FILE] [--family NAME]

Reads ``pairs-tuning*.json`` only; the held-out half is never opened.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import eval_scan as E  # noqa: E402

from histor_sign._schema.witness import decide  # noqa: E402
from histor_sign.collisions import _scanner as scanner  # noqa: E402
from histor_sign.collisions._lexical import (  # noqa: E402
    Profile,
    profiles_of,
    singular,
    split_identifier,
)
from histor_sign.effects import stated_effect  # noqa: E402

DATA = REPO / "benchmarks" / "data"
SETS = E.TUNING_SETS
_WORD = re.compile(r"[A-Za-z]+|[0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def raw_tokens(text: str) -> set[str]:
    """Words of a text, lower-case and singular, CJK runs as bigrams; no stop-word list."""
    out: set[str] = set()
    for w in _WORD.findall(text[:16384]):
        if _CJK.match(w):
            out.update(w[i:i + 2] for i in range(max(1, len(w) - 1)))
        elif len(w) > 1:
            out.update(singular(p) for p in split_identifier(w) if len(p) > 1)
    return out


def name_words(name: str) -> list[str]:
    return [singular(w) for w in split_identifier(name) if w]


def canonical(schema: Any) -> str:
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))


def top_props(schema: Any) -> frozenset[str]:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        return frozenset(schema["properties"])
    return frozenset()


@dataclass
class SetData:
    name: str
    labels: dict[frozenset[str], str]
    uncertain: set[frozenset[str]]
    base: set[frozenset[str]]          # flagged by the scan today (TC003|TC004|TC011)
    feats: dict[frozenset[str], dict[str, Any]]


def vectors(tokens: list[set[str]]) -> list[dict[str, float]]:
    """Binary-TF IDF vectors, L2-normalised; IDF from these documents."""
    n = len(tokens)
    df = Counter(t for ts in tokens for t in ts)
    out = []
    for ts in tokens:
        v = {t: math.log(n / df[t]) for t in ts}
        norm = math.sqrt(sum(w * w for w in v.values())) or 1.0
        out.append({t: w / norm for t, w in v.items() if w > 0})
    return out


def source_vectors(tokens: list[set[str]], sources: list[str]) -> list[dict[str, float]]:
    """IDF over sources (how many sources use a token), L2-normalised."""
    users: dict[str, set[str]] = defaultdict(set)
    for ts, src in zip(tokens, sources, strict=True):
        for t in ts:
            users[t].add(src)
    n = len(set(sources))
    out = []
    for ts in tokens:
        v = {t: math.log(n / len(users[t])) for t in ts}
        norm = math.sqrt(sum(w * w for w in v.values())) or 1.0
        out.append({t: w / norm for t, w in v.items() if w > 0})
    return out


def own_cosines(tokens: list[set[str]], sources: list[str]) -> dict[tuple[int, int], float]:
    """Cosines of tools of one source, the IDF over that source's tools."""
    by: dict[str, list[int]] = defaultdict(list)
    for i, src in enumerate(sources):
        by[src].append(i)
    out: dict[tuple[int, int], float] = {}
    for idx in by.values():
        sims = all_cosines(vectors([tokens[i] for i in idx]))
        for x, row in enumerate(sims):
            for y, v in row.items():
                out[(idx[x], idx[y])] = v
    return out


def source_margin(sims: dict[int, float], j: int, sources: list[str]) -> float:
    """How much more similar ``j`` is than the next best tool of its source (cosine minus
    the runner-up's)."""
    mine = sims.get(j, 0.0)
    rest = [v for k, v in sims.items() if sources[k] == sources[j] and k != j]
    return mine - max(rest, default=0.0)


def source_rank(sims: dict[int, float], j: int, sources: list[str]) -> int:
    """The rank of ``j`` among the tools of its own source by similarity (1 = best)."""
    mine = sims.get(j, 0.0)
    return 1 + sum(1 for k, v in sims.items() if sources[k] == sources[j] and v > mine)


def source_similarity(tokens: list[set[str]], sources: list[str]
                      ) -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], int]]:
    """Cosine of two sources' token sets (IDF over sources), and each source's rank among
    another's nearest sources."""
    names = sorted(set(sources))
    merged: dict[str, set[str]] = defaultdict(set)
    for ts, src in zip(tokens, sources, strict=True):
        merged[src] |= ts
    vecs = vectors([merged[n] for n in names])
    sims = all_cosines(vecs)
    cos = {(names[i], names[j]): v for i, row in enumerate(sims) for j, v in row.items()}
    rank = {}
    for i, row in enumerate(sims):
        for r, (j, _) in enumerate(sorted(row.items(), key=lambda kv: -kv[1])):
            rank[(names[i], names[j])] = r + 1
    return cos, rank


def all_cosines(vecs: list[dict[str, float]]) -> list[dict[int, float]]:
    post: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, v in enumerate(vecs):
        for t, w in v.items():
            post[t].append((i, w))
    sims: list[dict[int, float]] = [defaultdict(float) for _ in vecs]
    for plist in post.values():
        for x, (i, wi) in enumerate(plist):
            for j, wj in plist[x + 1:]:
                sims[i][j] += wi * wj
                sims[j][i] += wi * wj
    return sims


def ranks(sims: list[dict[int, float]]) -> list[dict[int, int]]:
    out = []
    for s in sims:
        order = sorted(s.items(), key=lambda kv: -kv[1])
        out.append({j: r + 1 for r, (j, _) in enumerate(order)})
    return out


def source_common(tools: list[Any], words: list[list[str]]) -> dict[str, set[str]]:
    """Per source, the name words in half or more (and 3) of its names."""
    by: dict[str, Counter[str]] = defaultdict(Counter)
    count: Counter[str] = Counter()
    for t, ws in zip(tools, words, strict=True):
        by[t.source].update(set(ws))
        count[t.source] += 1
    return {s: {w for w, c in cnt.items() if c >= max(3, count[s] / 2)} for s, cnt in by.items()}


def source_spread(tools: list[Any], words: list[list[str]]) -> dict[str, float]:
    """Per name word, the share of the set's sources that use it in a name."""
    users: dict[str, set[str]] = defaultdict(set)
    for t, ws in zip(tools, words, strict=True):
        for w in ws:
            users[w].add(t.source)
    n = len({t.source for t in tools})
    return {w: len(s) / n for w, s in users.items()}


def effect_of(tool: Any, profile: Any) -> str | None:
    stated = stated_effect(tool.annotations).effect
    return stated if stated is not None else profile.effect


def base_scan(catalogs: list[Any]) -> list[Any]:
    """The scan without the statistical candidates (``_neighbours``), which the rule
    families here model: the base every family is added to."""
    saved = scanner.statistical_pairs
    scanner.statistical_pairs = lambda tools, profiles: []
    try:
        return list(E.scan_catalogs(catalogs, E.options()).findings)
    finally:
        scanner.statistical_pairs = saved


def load_set(name: str, directory: str) -> SetData:
    doc = json.loads((DATA / f"pairs-{name}.json").read_text(encoding="utf-8"))
    labels = {frozenset((p["a"], p["b"])): p["label"] for p in doc["pairs"]}
    uncertain = {frozenset((p["a"], p["b"])) for p in doc["pairs"] if p.get("uncertain")}
    catalogs = E.set_catalogs(doc, DATA / directory)
    tools = [t for c in catalogs for t in c.tools]
    key = {f"{t.source}:{t.name}": i for i, t in enumerate(tools)}
    findings = base_scan(catalogs)
    base = set(E.flagged(findings, E.WITH_DISJOINT))
    profiles = profiles_of([(t.source, t.name, t.description) for t in tools])
    nwords = [name_words(t.name) for t in tools]
    common = source_common(tools, nwords)
    variants = {
        "raw": [set(nw) | raw_tokens(t.description or "") for t, nw in zip(tools, nwords, strict=True)],
        "prof": [set(nw) - common[t.source] | set(p.description)
                 for t, nw, p in zip(tools, nwords, profiles, strict=True)],
        "desc": [raw_tokens(t.description or "") for t in tools],
    }
    spread = source_spread(tools, nwords)
    variants["srcidf"] = variants["prof"]
    cos = {}
    rk = {}
    for v, toks in variants.items():
        vec = (source_vectors(toks, [t.source for t in tools]) if v == "srcidf"
               else vectors(toks))
        cos[v] = all_cosines(vec)
        rk[v] = ranks(cos[v])
    src_of = [t.source for t in tools]
    own = own_cosines(variants["prof"], src_of)
    src_cos, src_rank = source_similarity(variants["prof"], src_of)
    feats = {}
    for pair in labels:
        a, b = sorted(pair)
        i, j = key[a], key[b]
        ta, tb = tools[i], tools[j]
        f: dict[str, Any] = {"same_source": ta.source == tb.source}
        for v in variants:
            f[f"cos_{v}"] = cos[v][i].get(j, 0.0)
            big = len(tools)
            f[f"rab_{v}"] = rk[v][i].get(j, big)
            f[f"rba_{v}"] = rk[v][j].get(i, big)
            f[f"mrank_{v}"] = max(f[f"rab_{v}"], f[f"rba_{v}"])
            best = max(max(cos[v][i].values(), default=0), max(cos[v][j].values(), default=0))
            f[f"rel_{v}"] = f[f"cos_{v}"] / best if best else 0.0
        f["srank_ab"] = source_rank(cos["srcidf"][i], j, src_of)
        f["srank_ba"] = source_rank(cos["srcidf"][j], i, src_of)
        f["smrank"] = max(f["srank_ab"], f["srank_ba"])
        f["margin"] = min(source_margin(cos["srcidf"][i], j, src_of),
                          source_margin(cos["srcidf"][j], i, src_of))
        f["cos_own"] = own.get((i, j), 0.0)
        f["src_cos"] = src_cos.get((ta.source, tb.source), 0.0)
        f["src_rank"] = max(src_rank.get((ta.source, tb.source), 99),
                            src_rank.get((tb.source, ta.source), 99))
        f["schema_eq"] = canonical(ta.input_schema) == canonical(tb.input_schema)
        pa, pb = top_props(ta.input_schema), top_props(tb.input_schema)
        f["props_eq"] = bool(pa) and pa == pb
        f["props_jacc"] = len(pa & pb) / len(pa | pb) if pa | pb else 0.0
        sa = set(nwords[i]) - common[ta.source]
        sb = set(nwords[j]) - common[tb.source]
        f["name_shared"] = len(sa & sb)
        f["name_jacc"] = len(sa & sb) / len(sa | sb) if sa | sb else 0.0
        f["outcome"] = decide(ta.input_schema, tb.input_schema).outcome
        f["action_eq"] = profiles[i].action == profiles[j].action
        f["action_a"], f["action_b"] = profiles[i].action, profiles[j].action
        f["eff_a"], f["eff_b"] = effect_of(ta, profiles[i]), effect_of(tb, profiles[j])
        f["eff_compat"] = (f["eff_a"] == f["eff_b"] or None in (f["eff_a"], f["eff_b"]))
        f["eff_eq"] = f["eff_a"] is not None and f["eff_a"] == f["eff_b"]
        oa, ob = profiles[i].objects, profiles[j].objects
        f["obj_jacc"] = len(oa & ob) / len(oa | ob) if oa | ob else 0.0
        da, db = sa - sb, sb - sa
        f["diff_a"], f["diff_b"] = sorted(da), sorted(db)
        f["diff_spread"] = max((spread.get(w, 0.0) for w in da | db), default=0.0)
        f["cos_desc"] = cos["desc"][i].get(j, 0.0)
        f["mrank_desc"] = max(rk["desc"][i].get(j, len(tools)), rk["desc"][j].get(i, len(tools)))
        f["head_eq"] = bool(profiles[i].head) and profiles[i].head == profiles[j].head
        f.update(reading_features(ta, tb, profiles[i], profiles[j]))
        feats[pair] = f
    return SetData(name, labels, uncertain, base, feats)


_SENTENCE = re.compile(r"[^.!?\n]*")
#: Where a description's lead phrase (its verb and object) ends: punctuation or a word that
#: starts a qualifier or a clause (grammar, not a domain's vocabulary).
_LEAD_END = re.compile(r"[.,;:!?()\n]| (?:by|for|from|in|on|of|with|using|via|to|into|at|"
                       r"and|or|as|that|which|based|including|within)\b")
#: Determiners and generic adjectives skipped in a lead phrase ("Update an existing comment").
_LEAD_SKIP = frozenset({"a", "an", "the", "this", "that", "these", "those", "its", "their",
                        "your", "my", "our", "one", "all", "any", "each", "every", "some",
                        "specific", "given", "existing", "new"})


def first_sentence_words(text: str) -> list[str]:
    m = _SENTENCE.match(text.strip())
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", m.group() if m else "")]


def lead(text: str) -> tuple[str, frozenset[str]] | None:
    """The description's lead verb and object, read by the scan's own name reader from its
    first words up to the first qualifier ("Update an existing comment on …" → modify,
    {comment}); None when it names no action word and object."""
    head = text.strip()[:300]
    end = _LEAD_END.search(head)
    words = re.findall(r"[A-Za-z]+", head[:end.start()] if end else head)
    words = words[:1] + [w for w in words[1:] if w.lower() not in _LEAD_SKIP]
    if len(words) < 2:
        return None
    p = Profile.of("_".join(words), "")
    return (p.action, p.objects) if p.objects and not p.inferred_action else None


def common_suffix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def reading_features(ta: Any, tb: Any, pa: Any, pb: Any) -> dict[str, Any]:
    """Features of the lexical reading the diagnosis (``explain_misses.py``) pointed at:
    the same (action, object) once namespaces are dropped (``obj_same``), the same name
    words once namespaces are dropped (``names_same``), the same lead verb and object in
    both descriptions (``lead_eq``), and the length of the word suffix both first sentences
    end with (``suffix``: "… by flight number")."""
    la, lb = lead(ta.description or ""), lead(tb.description or "")
    na = frozenset(name_words(ta.name)) - pa.domain
    nb = frozenset(name_words(tb.name)) - pb.domain
    return {"obj_same": pa.action == pb.action and bool(pa.objects) and pa.objects == pb.objects,
            "names_same": bool(na) and na == nb, "lead_eq": la is not None and la == lb,
            "suffix": common_suffix(first_sentence_words(ta.description or ""),
                                    first_sentence_words(tb.description or ""))}


Rule = Callable[[dict[str, Any]], bool]


def score(s: SetData, rule: Rule | None) -> tuple[int, int, int]:
    """(true positives, flagged labelled pairs, positives)."""
    tp = fl = pos = 0
    for pair, lab in s.labels.items():
        f = s.feats[pair]
        hit = pair in s.base or (rule is not None and f["outcome"] != "unknown" and rule(f))
        positive = lab in E.POSITIVE
        pos += positive
        fl += hit
        tp += hit and positive
    return tp, fl, pos


def pr(tp: int, fl: int, pos: int) -> tuple[float, float]:
    return (tp / fl if fl else 1.0), (tp / pos if pos else 1.0)


def fmt(tp: int, fl: int, pos: int) -> str:
    p, r = pr(tp, fl, pos)
    return f"{p:.2f}/{r:.2f} ({tp}/{fl}/{pos})"


def families() -> dict[str, tuple[Callable[..., Rule], dict[str, list[Any]]]]:
    """Rule families: a builder from parameters to a predicate, and the parameter grid."""
    def mutual(v: str) -> Callable[..., Rule]:
        def build(k: int, t: float, scope: str) -> Rule:
            def rule(f: dict[str, Any]) -> bool:
                if scope == "within" and not f["same_source"]:
                    return False
                if scope == "cross" and f["same_source"]:
                    return False
                return bool(f[f"mrank_{v}"] <= k and f[f"cos_{v}"] >= t)
            return rule
        return build

    def equal_and_named(equal: str) -> Callable[..., Rule]:
        """Feature ``equal`` (identical schemas, or identical properties) and ``k`` shared
        name words."""
        def build(k: int, same: str) -> Rule:
            def rule(f: dict[str, Any]) -> bool:
                if same == "within" and not f["same_source"]:
                    return False
                return bool(f[equal] and f["name_shared"] >= k)
            return rule
        return build

    def rel(v: str) -> Callable[..., Rule]:
        def build(r: float, t: float, k: int) -> Rule:
            def rule(f: dict[str, Any]) -> bool:
                return bool(f[f"rel_{v}"] >= r and f[f"cos_{v}"] >= t
                            and f[f"mrank_{v}"] <= k)
            return rule
        return build

    def aligned(sr: int, k: int, t: float) -> Rule:
        def rule(f: dict[str, Any]) -> bool:
            return bool(not f["same_source"] and f["src_rank"] <= sr and f["smrank"] <= k
                        and f["cos_srcidf"] >= t and f["eff_compat"])
        return rule

    def near_dup(t: float, schema: str, scope: str) -> Rule:
        def rule(f: dict[str, Any]) -> bool:
            if scope == "within" and not f["same_source"]:
                return False
            same = f["schema_eq"] if schema == "equal" else f["props_eq"]
            return bool(same and f["action_eq"] and f["eff_compat"] and f["cos_raw"] >= t)
        return rule

    def gated_mutual(k: int, t: float, scope: str) -> Rule:
        def rule(f: dict[str, Any]) -> bool:
            if scope == "cross" and f["same_source"]:
                return False
            return bool(f["action_eq"] and f["eff_compat"] and f["mrank_raw"] <= k
                        and f["cos_raw"] >= t)
        return rule

    cosgrid = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7]
    fam: dict[str, tuple[Callable[..., Rule], dict[str, list[Any]]]] = {}
    for v in ("raw", "prof"):
        fam[f"mutual_{v}"] = (mutual(v), {"k": [1, 2, 3, 5, 8], "t": cosgrid,
                                          "scope": ["all", "within", "cross"]})
        fam[f"rel_{v}"] = (rel(v), {"r": [0.8, 0.9, 1.0], "t": cosgrid, "k": [1, 3, 8]})
    fam["aligned"] = (aligned, {"sr": [1, 2, 3], "k": [1, 2], "t": cosgrid})
    def aligned_margin(t: float, m: float) -> Rule:
        a = aligned(3, 1, t)
        return lambda f: a(f) and f["margin"] >= m

    fam["aligned_margin"] = (aligned_margin, {"t": cosgrid, "m": [0.0, 0.05, 0.1, 0.15, 0.2]})
    fam["aligned_nosrc"] = (aligned, {"sr": [99], "k": [1, 2], "t": cosgrid})

    def aligned_dup(sr: int, t: float, d: float) -> Rule:
        a, n = aligned(sr, 1, t), near_dup(d, "equal", "all")
        return lambda f: a(f) or n(f)

    def near_dup_src(d: float) -> Rule:
        def rule(f: dict[str, Any]) -> bool:
            return bool(f["same_source"] and f["schema_eq"] and f["action_eq"]
                        and f["eff_compat"] and f["cos_srcidf"] >= d)
        return rule

    def near_dup_own(d: float) -> Rule:
        def rule(f: dict[str, Any]) -> bool:
            return bool(f["same_source"] and f["schema_eq"] and f["action_eq"]
                        and f["eff_compat"] and f["cos_own"] >= d)
        return rule

    def shipped(sr: int, t: float, d: float) -> Rule:
        a, n = aligned(sr, 1, t), near_dup_own(d)
        return lambda f: a(f) or n(f)

    fam["shipped"] = (shipped, {"sr": [2, 3], "t": cosgrid, "d": [0.7, 0.8, 0.9, 1.01]})
    fam["aligned_dup"] = (aligned_dup, {"sr": [2, 3, 99], "t": cosgrid,
                                        "d": [0.7, 0.8, 0.9, 1.01]})
    fam["near_dup"] = (near_dup, {"t": [0.3, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95],
                                  "schema": ["equal", "props"], "scope": ["all", "within"]})
    fam["gated_mutual"] = (gated_mutual, {"k": [1, 2, 3], "t": cosgrid,
                                          "scope": ["all", "cross"]})
    fam["schema_name"] = (equal_and_named("schema_eq"), {"k": [1, 2], "same": ["all", "within"]})
    fam["props_name"] = (equal_and_named("props_eq"), {"k": [1, 2], "same": ["all", "within"]})
    fam.update(reading_families(cosgrid))
    return fam


def reading_families(cosgrid: list[float]
                     ) -> dict[str, tuple[Callable[..., Rule], dict[str, list[Any]]]]:
    """The rules the diagnosis suggested (issue 38): general statements about catalogs."""
    def scoped(f: dict[str, Any], scope: str) -> bool:
        return scope == "all" or (scope == "within") == f["same_source"]

    def same_operation(t: float, scope: str) -> Rule:
        # the same action on the same object words once namespaces are dropped, whatever
        # subject areas the lexicon guesses, with descriptions at least t alike
        return lambda f: bool(scoped(f, scope) and f["obj_same"] and f["cos_desc"] >= t)

    def same_name(t: float, scope: str) -> Rule:
        # the same name words once namespaces are dropped, whatever action each reading gave
        return lambda f: bool(scoped(f, scope) and f["names_same"] and f["eff_compat"]
                              and f["cos_desc"] >= t)

    def lead_phrase(t: float, scope: str) -> Rule:
        # both descriptions lead with the same verb class on the same object words
        return lambda f: bool(scoped(f, scope) and f["lead_eq"] and f["eff_compat"]
                              and f["cos_desc"] >= t)

    def sibling_phrase(k: int, schema: str) -> Rule:
        # siblings of one source, one action, the same schema (or argument names), whose
        # first sentences end with the same k words (the identifying phrase)
        def rule(f: dict[str, Any]) -> bool:
            same = f["schema_eq"] if schema == "equal" else f["props_eq"]
            return bool(f["same_source"] and same and f["action_eq"] and f["eff_compat"]
                        and f["suffix"] >= k)
        return rule

    low = [0.0, *cosgrid]
    return {
        "same_operation": (same_operation, {"t": low, "scope": ["all", "cross"]}),
        "same_name": (same_name, {"t": low, "scope": ["all", "cross"]}),
        "lead_phrase": (lead_phrase, {"t": low, "scope": ["all", "cross", "within"]}),
        "sibling_phrase": (sibling_phrase, {"k": [2, 3, 4, 5, 6], "schema": ["equal", "props"]}),
    }


def grid(space: dict[str, list[Any]]) -> Iterable[dict[str, Any]]:
    keys = list(space)
    for values in product(*(space[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


def choose(train: list[SetData], build: Callable[..., Rule],
           space: dict[str, list[Any]], floor: float = 0.8) -> dict[str, Any]:
    """Parameters with the highest pooled recall at pooled precision >= floor (ties: the
    higher precision, then grid order), else the best pooled F1."""
    best: tuple[Any, ...] | None = None
    best_f1: tuple[Any, ...] | None = None
    for params in grid(space):
        rule = build(**params)
        tp = fl = pos = 0
        for s in train:
            a, b, c = score(s, rule)
            tp, fl, pos = tp + a, fl + b, pos + c
        p, r = pr(tp, fl, pos)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        if p >= floor and (best is None or (r, p) > best[:2]):
            best = (r, p, params)
        if best_f1 is None or f1 > best_f1[0]:
            best_f1 = (f1, 0, params)
    chosen = best if best is not None else best_f1
    assert chosen is not None
    return dict(chosen[2])


def loso(data: list[SetData], name: str, build: Callable[..., Rule],
         space: dict[str, list[Any]]) -> list[str]:
    lines = [f"== {name}: leave-one-set-out (params chosen on the other six)"]
    tot_base = [0, 0, 0]
    tot_rule = [0, 0, 0]
    for s in data:
        params = choose([o for o in data if o is not s], build, space)
        b = score(s, None)
        r = score(s, build(**params))
        tot_base = [x + y for x, y in zip(tot_base, b, strict=True)]
        tot_rule = [x + y for x, y in zip(tot_rule, r, strict=True)]
        lines.append(f"  {s.name:8} base {fmt(*b):22} -> {fmt(*r):22} {params}")
    lines.append(f"  {'pooled':8} base {fmt(*tot_base):22} -> {fmt(*tot_rule)}")
    return lines


def curve(data: list[SetData], build: Callable[..., Rule],
          space: dict[str, list[Any]]) -> list[str]:
    """Per set, every parameter setting's figures (to see the trade-off)."""
    lines = []
    for params in grid(space):
        rule = build(**params)
        cells = [fmt(*score(s, rule)) for s in data]
        lines.append(f"  {params}: " + " | ".join(cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", type=Path, help="write the per-pair features as JSON")
    ap.add_argument("--family", action="append", help="only these rule families")
    ap.add_argument("--curve", action="store_true", help="print every setting per set")
    args = ap.parse_args(argv)
    data = [load_set(n, d) for n, d in SETS.items()]
    if args.dump:
        rows = [{"set": s.name, "pair": sorted(p), "label": s.labels[p],
                 "uncertain": p in s.uncertain, "base": p in s.base, **f}
                for s in data for p, f in s.feats.items()]
        args.dump.write_text(json.dumps(rows, indent=0) + "\n")
    for name, (build, space) in families().items():
        if args.family and name not in args.family:
            continue
        print("\n".join(loso(data, name, build, space)))
        if args.curve:
            print("\n".join(curve(data, build, space)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
