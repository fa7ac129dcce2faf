"""Pair decisions spread over the cores, in a deterministic order.

Each pair is independent (one bounded solver run), so a scan with many candidate pairs
decides them in a pool of forked worker processes: the tools are inherited by the fork, not
pickled; each worker prepares a tool's schema once and keeps it for its later chunks; the
decisions come back in the order of ``pairs`` (``imap`` keeps it), so the report is the same
byte for byte whatever the number of workers. Small scans, and platforms without ``fork``,
decide in-process.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import time
from collections.abc import Sequence

from histor_sign._schema.algebra import Bounds
from histor_sign._schema.validation import SchemaRoot, prepare_root
from histor_sign._schema.witness import Decision, decide_roots
from histor_sign.models import Tool

#: Below this many pairs a pool costs more than it saves (fork + result pickling).
PARALLEL_MIN_PAIRS = 2_000
#: Pairs per task: large enough to amortise the round trip, small enough to balance.
CHUNK_PAIRS = 256

_STATE: tuple[Sequence[Tool], Bounds, int, float] | None = None
_ROOTS: dict[int, SchemaRoot] = {}


def default_workers() -> int:
    """The cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _root(i: int) -> SchemaRoot:
    root = _ROOTS.get(i)
    if root is None:
        assert _STATE is not None
        tool = _STATE[0][i]
        if tool.has_input_schema:
            root = prepare_root(tool.input_schema, tool.name)
        else:
            root = prepare_root({}, tool.name, check=False)
            root.problem = "tool has no input schema"
        _ROOTS[i] = root
    return root


def _decide_chunk(chunk: Sequence[tuple[int, int]]) -> list[Decision | None]:
    assert _STATE is not None
    _, bounds, max_witness_bytes, deadline = _STATE
    out: list[Decision | None] = []
    for i, j in chunk:
        if time.monotonic() >= deadline:  # CLOCK_MONOTONIC: one clock for every process
            out.extend([None] * (len(chunk) - len(out)))
            break
        out.append(decide_roots(_root(i), _root(j), bounds,
                                max_witness_bytes=max_witness_bytes))
    return out


def decide_pairs(
    tools: Sequence[Tool],
    pairs: Sequence[tuple[int, int]],
    bounds: Bounds,
    *,
    max_witness_bytes: int,
    workers: int = 0,
    budget_seconds: float | None = None,
) -> list[Decision | None]:
    """The decision of each ``(i, j)`` pair of ``tools``, in the order of ``pairs``; ``None``
    for each pair not started before ``budget_seconds`` ran out (a started pair finishes
    within its own bound).

    ``workers=0`` uses every core this process may run on; ``1`` decides in-process.
    """
    global _STATE
    workers = workers or default_workers()
    deadline = math.inf if budget_seconds is None else time.monotonic() + budget_seconds
    _STATE = (tools, bounds, max_witness_bytes, deadline)
    _ROOTS.clear()
    try:
        if (workers <= 1 or len(pairs) < PARALLEL_MIN_PAIRS
                or "fork" not in multiprocessing.get_all_start_methods()):
            return _decide_chunk(pairs)
        chunks = [pairs[k:k + CHUNK_PAIRS] for k in range(0, len(pairs), CHUNK_PAIRS)]
        out: list[Decision | None] = []
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for part in pool.imap(_decide_chunk, chunks):
                out.extend(part)
        return out
    finally:
        _STATE = None
        _ROOTS.clear()
