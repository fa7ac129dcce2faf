"""Pair decisions in a worker pool give the same report as in-process, in the same order."""

from __future__ import annotations

import random
from typing import Any

import pytest

from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, _parallel, scan_tools

KINDS: list[dict[str, Any]] = [
    {"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "boolean"},
    {"type": "string", "pattern": "^[a-z]+$"}, {"type": "array", "uniqueItems": True,
                                                "minItems": 2}, {"enum": ["a", "b"]},
    {"not": {"type": "string"}},
]


def _catalog(n: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    out = []
    for i in range(n):
        props = {p: rng.choice(KINDS) for p in rng.sample(["id", "q", "n", "path"], 2)}
        out.append({"name": f"get_user_{i}", "description": "Get a user record by its id.",
                    "inputSchema": {"type": "object", "properties": props,
                                    "required": [p for p in props if rng.random() < 0.6],
                                    **({"additionalProperties": False} if i % 2 else {})}})
    # pairs whose decision is unknown (a remote $ref is never fetched)
    out.append({"name": "get_user_by_x", "description": "Get a user record by its id.",
                "inputSchema": {"$ref": "https://example.invalid/schema.json"}})
    return out


_CALLS: list[int] = []
_REAL_CHUNK = _parallel._decide_chunk


def _counting(chunk: Any) -> Any:
    _CALLS.append(len(chunk))
    return _REAL_CHUNK(chunk)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
def test_pool_decisions_equal_in_process_decisions(monkeypatch: pytest.MonkeyPatch,
                                                   workers: int) -> None:
    tools = tools_from_dicts(_catalog(60))
    serial = scan_tools(tools, ScanOptions(workers=1, max_candidates=10_000,
                                           max_partners=None))
    _CALLS.clear()
    monkeypatch.setattr(_parallel, "_decide_chunk", _counting)  # children count in their copy
    monkeypatch.setattr(_parallel, "PARALLEL_MIN_PAIRS", 10)
    monkeypatch.setattr(_parallel, "CHUNK_PAIRS", 37)
    pooled = scan_tools(tools, ScanOptions(workers=workers, max_candidates=10_000,
                                           max_partners=None))
    assert serial.stats["analysedPairs"] > 1000
    assert min(serial.stats["overlap"], serial.stats["disjoint"], serial.stats["unknown"]) > 0
    assert pooled.stats == serial.stats
    assert pooled.findings == serial.findings  # same findings, same order
    assert not _CALLS  # the parent decided nothing itself: the pool did


def test_small_scans_decide_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = tools_from_dicts(_catalog(6))
    _CALLS.clear()
    monkeypatch.setattr(_parallel, "_decide_chunk", _counting)
    scan_tools(tools, ScanOptions(workers=4))
    assert _CALLS  # below PARALLEL_MIN_PAIRS: no pool
