"""Past one machine: the scan's partitions (profiles by source, candidates by action block,
decisions by schema-pair digest) give the same report byte for byte in one process, in a
pool of fresh workers, or on a Dask cluster."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import realistic_catalog

from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, _parallel, local_mapper, scan_tools
from histor_sign.collisions._lexical import bounded_candidate_pairs, profiles_of
from histor_sign.collisions._partition import (
    action_blocks,
    partitioned_candidates,
    partitioned_profiles,
)
from histor_sign.models import Tool
from histor_sign.report._render import render

REPO = Path(__file__).resolve().parents[2]


def generator() -> ModuleType:
    return realistic_catalog  # testkit: the generator tests and benchmarks share


def realistic_tools(n: int) -> list[Tool]:
    return [t for name, items in generator().realistic_catalog(n)
            for t in tools_from_dicts(items, name)]


def report(tools: list[Tool], **kwargs: Any) -> str:
    options = ScanOptions(max_tools=len(tools), max_candidates=10_000_000,
                          budget_seconds=None, workers=kwargs.pop("workers", 1))
    result = scan_tools(tools, options, **kwargs)
    return "".join(render(result.findings, "json", stats=result.stats, command="scan"))


def test_action_blocks_cover_every_tool_with_an_action_once() -> None:
    tools = realistic_tools(2_000)
    profiles = profiles_of([(t.source, t.name, t.description) for t in tools])
    blocks = action_blocks(profiles)
    flat = [i for block in blocks for i in block]
    assert sorted(flat) == [i for i, p in enumerate(profiles) if p.action]
    assert all(block == sorted(block) for block in blocks)
    # a contrasting pair of classes (delete vs archive) shares a block
    where = {profiles[block[0]].action: n for n, block in enumerate(blocks)}
    assert len(blocks) > 3 and len(where) == len(blocks)


@pytest.mark.parametrize("per_tool", [8, 2, None])
def test_partitioned_selection_is_the_global_selection(per_tool: int | None) -> None:
    tools = realistic_tools(3_000)
    triples = [(t.source, t.name, t.description) for t in tools]
    profiles = profiles_of(triples)
    assert partitioned_profiles(triples) == profiles
    whole = bounded_candidate_pairs(profiles, 0.4, per_tool)
    parts = partitioned_candidates(profiles, 0.4, per_tool)
    assert list(parts.pairs.items()) == list(whole.pairs.items())
    assert list(parts.cut.items()) == list(whole.cut.items())
    assert parts.probes_cut == whole.probes_cut
    assert len(whole.pairs) > 1_000


def test_a_mapper_and_a_worker_pool_give_the_single_process_report(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """1,500 tools: enough that the pool gets several chunks of schema pairs (asserted);
    the same bytes is what is tested, not a size."""
    tools = realistic_tools(1_500)
    single = report(tools)
    assert '"overlap"' in single
    assert report(tools, mapper=local_mapper) == single
    # decisions by schema-pair digest in a pool of fresh (forkserver) workers
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_PAIRS", 1)
    started: list[int] = []
    chunks: list[int] = []
    real = _parallel.forkserver_mapper

    def pool(workers: int) -> Any:
        started.append(workers)
        mapper = real(workers)
        if mapper is None:  # no forkserver on this platform: the caller's fallback runs
            return None
        return lambda function, tasks: chunks.append(len(tasks)) or mapper(function, tasks)

    monkeypatch.setattr(_parallel, "forkserver_mapper", pool)
    assert report(tools, workers=2) == single
    assert started == [2] and chunks and min(chunks) >= 2, (started, chunks)


@pytest.mark.slow
def test_dask_gives_the_single_process_report_byte_for_byte() -> None:
    """What is tested is "the same bytes", not a size: the catalog only has to be large
    enough that every stage is split into several tasks on the cluster (more than one
    profile task, i.e. more than ``SOURCES_PER_TASK`` sources; many action blocks; several
    chunks of schema pairs), which is asserted. 5,000 tools (314 sources) are enough; the
    20,000 this test used before cost ~90 s of CI for the same partitions, only more of
    them."""
    distributed = pytest.importorskip("distributed")
    from histor_sign.collisions import dask_mapper

    tools = realistic_tools(5_000)
    single = report(tools)
    tasks: dict[str, int] = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        on_cluster = dask_mapper(client)

        def counted(function: Any, stage: Any) -> list[Any]:
            tasks[function.__name__] = tasks.get(function.__name__, 0) + len(stage)
            return on_cluster(function, stage)

        on_dask = report(tools, mapper=counted)
    assert on_dask == single
    assert len(tasks) == 3 and min(tasks.values()) >= 2, tasks  # every stage split
    assert single.count("\n") > 10_000
