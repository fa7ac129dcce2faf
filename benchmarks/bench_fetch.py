"""Benchmark: fetch 10,000 tools in pages of 100 from the official SDK server.

Compares histor-sign's raw-JSON fetch (strict I-JSON parsing, all guards) with the official
``mcp`` SDK client's own ``list_tools`` cursor loop against the same server in the same run,
over loopback Streamable HTTP and over stdio. Each side includes connecting/negotiating;
stdio includes starting the server process. Prints tools/s and the ratio.

    python benchmarks/bench_fetch.py [--tools 10000] [--page 100] [--repeat 3]

When the npm test peer is installed (``npm ci --prefix tests/peers``) it also times one
whole fetch from ``@modelcontextprotocol/server-everything`` (13 tools, a real TS-SDK
server: this measures connect + negotiate + shutdown, not throughput).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "mcp"))

import everything_peer  # noqa: E402
from mcp_helpers import SDK_PEER, start_sdk_http, stop  # noqa: E402

from histor_sign.mcp import FetchOptions, Target, fetch_async  # noqa: E402


def definitions(n: int) -> list[dict[str, Any]]:
    return [
        {
            "name": f"tool_{i:05d}",
            "description": f"Tool number {i}: does a thing with the input and returns a result.",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string", "maxLength": 200},
                               "limit": {"type": "integer", "minimum": 1, "maximum": 100}},
                "required": ["query"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": True},
        }
        for i in range(n)
    ]


async def ours(target: Target) -> int:
    snap = await fetch_async(target, FetchOptions(max_tools=1_000_000))
    return len(snap.tools)


async def sdk(server: Any) -> int:
    from mcp import Client

    count = 0
    async with Client(server) as client:
        cursor: str | None = None
        while True:
            result = await client.list_tools(cursor=cursor)
            count += len(result.tools)
            cursor = result.next_cursor
            if cursor is None:
                return count


def timed(coro_factory: Any, repeat: int) -> tuple[float, int]:
    best, n = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        n = asyncio.run(coro_factory())
        best = min(best, time.perf_counter() - start)
    return best, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tools", type=int, default=10_000)
    ap.add_argument("--page", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from mcp import StdioServerParameters

    with tempfile.TemporaryDirectory() as tmp:
        defs = Path(tmp) / "defs.json"
        defs.write_text(json.dumps(definitions(args.tools)))
        print(f"{args.tools} tools in pages of {args.page}; best of {args.repeat}")
        print(f"{'transport':<10} {'histor-sign':>16} {'mcp SDK client':>16} {'ratio':>7}")
        proc, url = start_sdk_http(defs, args.page)
        try:
            rows = [("http", timed(lambda: ours(Target.http(url)), args.repeat),
                     timed(lambda: sdk(url), args.repeat))]
        finally:
            stop(proc)
        argv = [sys.executable, str(SDK_PEER), "--defs", str(defs), "--page", str(args.page)]
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        rows.append(("stdio", timed(lambda: ours(Target.stdio(argv)), args.repeat),
                     timed(lambda: sdk(params), args.repeat)))
        for name, (t_ours, n_ours), (t_sdk, n_sdk) in rows:
            assert n_ours == n_sdk == args.tools, (n_ours, n_sdk)
            print(f"{name:<10} {n_ours / t_ours:>10.0f} tools/s {n_sdk / t_sdk:>10.0f} tools/s "
                  f"{t_sdk / t_ours:>6.2f}x")
    bench_everything(args.repeat)


def bench_everything(repeat: int) -> None:
    """One whole fetch from the real TS-SDK reference server, ours vs the SDK client."""
    from mcp import StdioServerParameters

    if not everything_peer.ENTRY.is_file():
        print(f"(server-everything not installed: {everything_peer.INSTALL})")
        return
    print("server-everything: one whole fetch (13 tools), seconds, best of", repeat)
    print(f"{'transport':<10} {'histor-sign':>12} {'mcp SDK client':>16} {'ratio':>7}")
    argv = everything_peer.argv("stdio")
    rows = []
    with everything_peer.serve("streamableHttp", "/mcp") as url:
        rows.append(("http", timed(lambda: ours(Target.http(url)), repeat),
                     timed(lambda: sdk(url), repeat)))
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    rows.append(("stdio", timed(lambda: ours(Target.stdio(argv)), repeat),
                 timed(lambda: sdk(params), repeat)))
    for name, (t_ours, n_ours), (t_sdk, n_sdk) in rows:
        print(f"{name:<10} {t_ours:>10.3f} s {t_sdk:>14.3f} s {t_sdk / t_ours:>6.2f}x"
              f"   ({n_ours} vs {n_sdk} tools)")


if __name__ == "__main__":
    main()
