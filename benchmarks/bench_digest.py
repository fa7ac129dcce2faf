"""Digest a generated 10,000-tool catalog (~5 MB) and compare with baselines.

Prints, from one run on the same bytes: ``json.loads`` alone, a plain ``rfc8785`` loop
(parse with json.loads, then rfc8785.dumps per tool and of the manifest — what a naive
implementation does), and histor-sign's strict parse + digests. Run:
``python benchmarks/bench_digest.py``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

import rfc8785

from histor_sign.canonical import parse_json
from histor_sign.models import parse_catalog
from histor_sign.revision import digests


def make_catalog(n: int = 10_000) -> bytes:
    tools = []
    for i in range(n):
        tools.append(
            {
                "name": f"tool_{i:05d}",
                "title": f"Tool number {i}",
                "description": f"Does thing {i} to a document. Returns a summary of the result; "
                "use it when the user asks about documents.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "description": "Document path"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100 + i},
                        "ratio": {"type": "number", "minimum": 0.25, "maximum": 0.75},
                        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                        "mode": {"type": "string", "enum": ["fast", "slow", "exact"]},
                    },
                    "required": ["path"],
                    "additionalProperties": False,
                },
                "annotations": {"readOnlyHint": i % 3 == 0, "openWorldHint": False},
                "_meta": {"com.example/seq": i},
            }
        )
    return json.dumps({"tools": tools}).encode()


def best_of(fn: Callable[[], Any], runs: int = 5) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def plain_rfc8785(data: bytes) -> str:
    keys = ("name", "title", "description", "inputSchema", "outputSchema", "annotations",
            "execution")
    tools = json.loads(data)["tools"]
    manifest = {t["name"]: {k: t[k] for k in keys if k in t} for t in tools}
    for projected in manifest.values():
        hashlib.sha256(rfc8785.dumps(projected)).hexdigest()
    return hashlib.sha256(rfc8785.dumps(manifest)).hexdigest()


def ours(data: bytes) -> str:
    return digests(parse_catalog(parse_json(data, "bench"), "bench").tools)[0]


def main() -> None:
    data = make_catalog()
    assert "sha256:" + plain_rfc8785(data) == ours(data), "digests disagree"
    t_loads = best_of(lambda: json.loads(data))
    t_plain = best_of(lambda: plain_rfc8785(data))
    t_ours = best_of(lambda: ours(data))
    print(f"catalog: 10,000 tools, {len(data) / 1e6:.1f} MB")
    print(f"json.loads               {t_loads * 1000:8.1f} ms   1.0x")
    print(f"plain rfc8785 digests    {t_plain * 1000:8.1f} ms  {t_plain / t_loads:5.1f}x json.loads")
    print(f"histor-sign strict+JCS   {t_ours * 1000:8.1f} ms  {t_ours / t_loads:5.1f}x json.loads"
          f"  ({t_plain / t_ours:.1f}x faster than plain rfc8785)")


if __name__ == "__main__":
    main()
