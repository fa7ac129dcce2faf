"""The scan's work in independent partitions, run by any map engine with the same result.

A registry operator scanning every published version of every server outgrows one machine.
The scan splits into three stages whose partitions share nothing:

1. **profiles by source** — a tool is read in its source's context (namespace, boilerplate,
   domain words), which depends on that source alone (:func:`profile_tasks`);
2. **candidates by action block** — two tools are candidates only when their action classes
   are equal or pair across classes (:data:`~._lexical.CONTRASTING`, ``EQUIVALENT``,
   ``STATEMENT_PAIRS``), so the connected components of "equal or paired" are independent
   blocks (:func:`action_blocks`); each block is
   selected on its own, its tools in catalog order, which gives exactly the pairs, cuts and
   counts of selecting the whole catalog at once (tested);
3. **decisions by schema-pair digest** — a decision depends only on the two schemas, so each
   distinct pair of schemas is decided once, wherever (:mod:`._parallel`).

Each stage is a list of tasks given to a :data:`Mapper` (``mapper(function, tasks)`` → the
results in task order): :func:`local_mapper` in-process, :func:`dask_mapper` on a Dask
cluster (the optional ``histor-sign[dask]`` extra). Tasks carry plain data (strings, profiles,
schemas) and top-level functions, so they pickle; results are merged in task order and
sorted by tool index, so the report is the same byte for byte whichever mapper ran them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from histor_sign.collisions._lexical import (
    CONTRASTING,
    EQUIVALENT,
    STATEMENT_PAIRS,
    Candidates,
    Profile,
    bounded_candidate_pairs,
    profiles_of,
)

T = TypeVar("T")
R = TypeVar("R")
#: ``mapper(function, tasks)`` → ``[function(task) for task in tasks]``, run anywhere.
Mapper = Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]

#: Sources per profile task (a registry has one source per server: thousands of small ones).
SOURCES_PER_TASK = 256


def local_mapper(function: Callable[[T], R], tasks: Sequence[T]) -> list[R]:
    """Run every task in this process, in order."""
    return [function(task) for task in tasks]


def dask_mapper(client: Any) -> Mapper:
    """A mapper that runs each task on a ``dask.distributed`` cluster (``client`` is a
    ``distributed.Client``) and gathers the results in task order. Tasks are submitted
    unhashed (``pure=False``): equal tasks still return their own results."""

    def run(function: Callable[[Any], Any], tasks: Sequence[Any]) -> list[Any]:
        if not tasks:
            return []
        futures = client.map(function, list(tasks), pure=False)
        return list(client.gather(futures))

    return run


# --- stage 1: profiles by source ---------------------------------------------------------


def _profiles_task(task: list[tuple[str, str, str]]) -> list[Profile]:
    return profiles_of(task)


def profile_tasks(triples: Sequence[tuple[str, str, str]]) -> tuple[list[list[int]],
                                                                     list[Any]]:
    """(tool indices per task, tasks): whole sources only, :data:`SOURCES_PER_TASK` a task."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for i, (source, _, _) in enumerate(triples):
        by_source[source].append(i)
    groups = list(by_source.values())
    indices: list[list[int]] = []
    for start in range(0, len(groups), SOURCES_PER_TASK):
        indices.append([i for group in groups[start:start + SOURCES_PER_TASK] for i in group])
    return indices, [[triples[i] for i in idx] for idx in indices]


def partitioned_profiles(triples: Sequence[tuple[str, str, str]],
                         mapper: Mapper = local_mapper) -> list[Profile]:
    """:func:`~._lexical.profiles_of` of ``triples``, one task per group of sources."""
    indices, tasks = profile_tasks(triples)
    out: list[Profile | None] = [None] * len(triples)
    for idx, profiles in zip(indices, mapper(_profiles_task, tasks), strict=True):
        for i, profile in zip(idx, profiles, strict=True):
            out[i] = profile
    assert all(p is not None for p in out)
    return out  # type: ignore[return-value]


# --- stage 2: candidates by action block -------------------------------------------------


def action_blocks(profiles: Sequence[Profile]) -> list[list[int]]:
    """Tool indices (catalog order) per block of action classes that can pair: the
    connected components of "equal or paired across classes" (tools without an action are never
    candidates and belong to no block). Blocks are ordered by their smallest class name."""
    parent: dict[str, str] = {}

    def find(action: str) -> str:
        while parent.setdefault(action, action) != action:
            action = parent[action]
        return action

    for pair in CONTRASTING | EQUIVALENT | STATEMENT_PAIRS:
        a, b = sorted(pair)
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    blocks: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(profiles):
        if p.action:
            blocks[find(p.action)].append(i)
    return [blocks[key] for key in sorted(blocks)]


def _candidates_task(task: tuple[list[Profile], float, int | None]) -> Candidates:
    profiles, threshold, per_tool = task
    return bounded_candidate_pairs(profiles, threshold, per_tool)


def partitioned_candidates(profiles: Sequence[Profile], threshold: float,
                           per_tool: int | None, mapper: Mapper = local_mapper) -> Candidates:
    """:func:`~._lexical.bounded_candidate_pairs` of ``profiles``, one task per action
    block; the same pairs (in the same order), cuts and counts as one call on all of them."""
    blocks = action_blocks(profiles)
    tasks = [([profiles[i] for i in block], threshold, per_tool) for block in blocks]
    pairs: list[tuple[tuple[int, int], Any]] = []
    cut: dict[int, tuple[int, int]] = {}
    probes_cut = 0
    for block, found in zip(blocks, mapper(_candidates_task, tasks), strict=True):
        pairs.extend(((block[i], block[j]), sim) for (i, j), sim in found.pairs.items())
        for i, (count, first) in found.cut.items():
            cut[block[i]] = (count, block[first])
        probes_cut += found.probes_cut
    pairs.sort(key=lambda item: item[0])
    return Candidates(dict(pairs), dict(sorted(cut.items())), probes_cut)
