"""Pair decisions spread over the cores, in a deterministic order.

Each pair is independent (one bounded solver run), so a scan with many candidate pairs
decides them in a pool of forked worker processes: the tools are inherited by the fork, not
pickled; each worker prepares a tool's schema once and keeps it for its later chunks; the
decisions come back in the order of ``pairs`` (``imap`` keeps it), so the report is the same
byte for byte whatever the number of workers. Small scans, and platforms without ``fork``,
decide in-process.

Forks and releases of one server repeat the same schemas, so each distinct (ordered) pair of
input schemas — by the SHA-256 of their RFC 8785 bytes — is decided once and its decision
given to every tool pair with those schemas. A decision depends only on the two schemas (a
tool's name reaches a decision only through a schema problem, and those pairs are not
shared), so the report is the same with the cache as without it (``dedupe=False``).

The distinct schema pairs can also be decided by a :data:`~._partition.Mapper` — a pool of
fresh worker processes, or a Dask cluster: tasks are chunks of schema pairs ordered by their
digests (a decision's partition is its schema-pair digest), each carrying the two schemas and
tool names, so a worker holds only what it decides. A forked pool inherits the whole scan
(every tool, profile and candidate): each worker's resident size starts at the parent's, so
the memory summed over processes was three times the scan's on two cores. A *forkserver*
pool's workers start from a small process that has imported only the schema code.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from histor_sign._schema.algebra import Bounds
from histor_sign._schema.validation import SchemaRoot, prepare_root
from histor_sign._schema.witness import Decision, decide_roots
from histor_sign.canonical import canonical_bytes
from histor_sign.errors import InputError
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


def _prepared(schema: Any, name: str, has_schema: bool) -> SchemaRoot:
    if has_schema:
        return prepare_root(schema, name)
    root = prepare_root({}, name, check=False)
    root.problem = "tool has no input schema"
    return root


#: One schema pair as a task carries it: (schema, tool name, has a schema) for each side.
SchemaPair = tuple[Any, str, bool, Any, str, bool]


def decide_schema_pairs(task: tuple[list[SchemaPair], Bounds, int, float]) -> list[Decision | None]:
    """Decide a chunk of schema pairs anywhere (a pool or cluster worker): each schema is
    prepared once per chunk; pairs not started by ``deadline`` (``time.time()``, the clock
    machines share) are ``None``."""
    items, bounds, max_witness_bytes, deadline = task
    roots: dict[tuple[int, str], SchemaRoot] = {}

    def root(schema: Any, name: str, has_schema: bool) -> SchemaRoot:
        key = (id(schema), name)
        found = roots.get(key)
        if found is None:
            found = roots[key] = _prepared(schema, name, has_schema)
        return found

    out: list[Decision | None] = []
    for sa, na, ha, sb, nb, hb in items:
        if time.time() >= deadline:
            out.extend([None] * (len(items) - len(out)))
            break
        out.append(decide_roots(root(sa, na, ha), root(sb, nb, hb), bounds,
                                max_witness_bytes=max_witness_bytes))
    return out


def forkserver_mapper(workers: int) -> Any:
    """A mapper over a pool of ``workers`` forkserver processes (started from a process that
    imported only the schema code, not forked from the scan), or None where the platform has
    no forkserver."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return None
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["histor_sign.collisions._parallel"])

    def run(function: Any, tasks: Sequence[Any]) -> list[Any]:
        with context.Pool(workers) as pool:
            return list(pool.imap(function, tasks))

    return run


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


@dataclass(frozen=True)
class Decided:
    """Each pair's decision (in the order asked), and how many schema pairs were decided."""

    decisions: list[Decision | None]
    schema_pairs: int


def schema_digests(tools: Sequence[Tool], used: set[int]) -> dict[int, bytes]:
    """The SHA-256 of each used tool's input schema (RFC 8785 bytes); tools without one, or
    with one that has no canonical form, have none (their pairs are decided one by one)."""
    out: dict[int, bytes] = {}
    seen: dict[int, bytes] = {}  # one schema object shared by several tools: hashed once
    for i in used:
        tool = tools[i]
        if not tool.has_input_schema or not isinstance(tool.input_schema, dict):
            continue
        key = id(tool.input_schema)
        digest = seen.get(key)
        if digest is None:
            try:
                digest = hashlib.sha256(canonical_bytes(tool.input_schema)).digest()
            except InputError:
                continue
            seen[key] = digest
        out[i] = digest
    return out


def decide_pairs(
    tools: Sequence[Tool],
    pairs: Sequence[tuple[int, int]],
    bounds: Bounds,
    *,
    max_witness_bytes: int,
    workers: int = 0,
    budget_seconds: float | None = None,
    dedupe: bool = True,
    mapper: Any = None,
) -> Decided:
    """The decision of each ``(i, j)`` pair of ``tools``, in the order of ``pairs``; ``None``
    for each pair not started before ``budget_seconds`` ran out (a started pair finishes
    within its own bound).

    ``workers=0`` uses every core this process may run on; ``1`` decides in-process.
    ``dedupe`` decides each distinct pair of schemas once (module docstring). ``mapper``
    (a :data:`~._partition.Mapper`) decides them in tasks by schema-pair digest instead of
    here or in a forked pool; a larger scan without one uses a forkserver pool.
    """
    if mapper is not None or (dedupe and (workers or default_workers()) > 1):
        return _decide_mapped(tools, pairs, bounds, max_witness_bytes, workers, budget_seconds,
                              mapper)
    if not dedupe:
        return Decided(_decide_all(tools, pairs, bounds, max_witness_bytes, workers,
                                   budget_seconds), len(pairs))
    unique, slot, _ = _unique_pairs(tools, pairs)
    decided = _decide_all(tools, unique, bounds, max_witness_bytes, workers, budget_seconds)
    return Decided([decided[k] for k in slot], len(unique))


def _unique_pairs(
    tools: Sequence[Tool], pairs: Sequence[tuple[int, int]]
) -> tuple[list[tuple[int, int]], list[int], list[tuple[bytes, bytes, int]]]:
    """One pair per distinct pair of schemas (a pair with an unreadable schema is its own),
    each asked pair's slot among them, and each unique pair's (digest, digest, slot)."""
    digests = schema_digests(tools, {k for pair in pairs for k in pair})
    first: dict[tuple[bytes, bytes], int] = {}
    unique: list[tuple[int, int]] = []
    keys: list[tuple[bytes, bytes, int]] = []
    slot: list[int] = []
    for i, j in pairs:
        da, db = digests.get(i), digests.get(j)
        if da is None or db is None:
            slot.append(len(unique))
            keys.append((b"", b"", len(unique)))
            unique.append((i, j))
            continue
        at = first.setdefault((da, db), len(unique))
        if at == len(unique):
            keys.append((da, db, at))
            unique.append((i, j))
        slot.append(at)
    return unique, slot, keys


def _decide_mapped(
    tools: Sequence[Tool],
    pairs: Sequence[tuple[int, int]],
    bounds: Bounds,
    max_witness_bytes: int,
    workers: int,
    budget_seconds: float | None,
    mapper: Any,
) -> Decided:
    """Decide each distinct pair of schemas once, in tasks partitioned by schema-pair digest
    (through ``mapper``, or a forkserver pool; in-process when there are few)."""
    unique, slot, keys = _unique_pairs(tools, pairs)
    if mapper is None:
        if len(unique) < PARALLEL_MIN_PAIRS:
            decided = _decide_all(tools, unique, bounds, max_witness_bytes, 1, budget_seconds)
            return Decided([decided[k] for k in slot], len(unique))
        mapper = forkserver_mapper(workers or default_workers())
        if mapper is None:  # pragma: no cover - no forkserver on this platform
            decided = _decide_all(tools, unique, bounds, max_witness_bytes, workers,
                                  budget_seconds)
            return Decided([decided[k] for k in slot], len(unique))
    mapped = _decide_in_tasks(tools, unique, keys, bounds, max_witness_bytes, budget_seconds,
                              mapper)
    return Decided([mapped[k] for k in slot], len(unique))


def _decide_in_tasks(
    tools: Sequence[Tool],
    unique: list[tuple[int, int]],
    keys: list[tuple[bytes, bytes, int]],
    bounds: Bounds,
    max_witness_bytes: int,
    budget_seconds: float | None,
    mapper: Any,
) -> list[Decision | None]:
    """Each unique pair's decision, from tasks of :data:`CHUNK_PAIRS` schema pairs sorted by
    digest that ``mapper`` runs."""
    deadline = math.inf if budget_seconds is None else time.time() + budget_seconds
    keys.sort()  # partitions by schema-pair digest
    tasks = [(_schema_pairs(tools, unique, keys[start:start + CHUNK_PAIRS]), bounds,
              max_witness_bytes, deadline) for start in range(0, len(keys), CHUNK_PAIRS)]
    mapped: list[Decision | None] = [None] * len(unique)
    done = mapper(decide_schema_pairs, tasks)
    for start, part in zip(range(0, len(keys), CHUNK_PAIRS), done, strict=True):
        for (_, _, at), decision in zip(keys[start:start + CHUNK_PAIRS], part, strict=True):
            mapped[at] = decision
    return mapped


def _schema_pairs(tools: Sequence[Tool], unique: list[tuple[int, int]],
                  keys: list[tuple[bytes, bytes, int]]) -> list[SchemaPair]:
    """One task's items: the two schemas (with names and presence) of each unique pair."""
    items: list[SchemaPair] = []
    for _, _, at in keys:
        a, b = tools[unique[at][0]], tools[unique[at][1]]
        items.append((a.input_schema, a.name, a.has_input_schema,
                      b.input_schema, b.name, b.has_input_schema))
    return items


def _decide_all(
    tools: Sequence[Tool],
    pairs: Sequence[tuple[int, int]],
    bounds: Bounds,
    max_witness_bytes: int,
    workers: int,
    budget_seconds: float | None,
) -> list[Decision | None]:
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
