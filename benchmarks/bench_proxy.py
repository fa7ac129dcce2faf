"""Per-call overhead of ``histor-sign proxy`` over a direct SDK connection, and its
start-up over the server's own.

Both sessions use the official MCP SDK client and the bundled example server over stdio;
the proxied one runs ``histor-sign proxy`` against a release made through the local
Sigstore instance (as the tests do). Calls alternate between the two sessions (interleaved,
so machine load hits both alike); start-up is spawn → initialize → tools/list done.
Run: ``python benchmarks/bench_proxy.py [CALLS] [STARTS]``. Numbers are reported, never
asserted.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "proxy")]

from cli_harness import cli_env  # noqa: E402
from proxy_fixtures import make_world, proxy_argv  # noqa: E402

EXAMPLE = [sys.executable, "-m", "histor_sign.demo.example_server"]


async def session(argv: list[str], stack: Any) -> Any:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=cli_env())
    devnull = stack.enter_context(open("/dev/null", "w"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    await client.list_tools()
    return client


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def per_call(proxied: list[str], calls: int) -> tuple[list[float], list[float]]:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        direct = await session(EXAMPLE, stack)
        proxy = await session(proxied, stack)
        d: list[float] = []
        p: list[float] = []
        for i in range(calls):
            for client, out in ((direct, d), (proxy, p)) if i % 2 else ((proxy, p), (direct, d)):
                start = time.perf_counter()
                await client.call_tool("search_notes", {"query": f"q{i}", "limit": 5})
                out.append(time.perf_counter() - start)
        return d, p


async def startup(argv: list[str]) -> float:
    from contextlib import AsyncExitStack

    start = time.perf_counter()
    async with AsyncExitStack() as stack:
        await session(argv, stack)
        ready = time.perf_counter() - start
    return ready


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    starts = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        world = make_world(base / "world")
        proxied = proxy_argv(world, base, upstream=EXAMPLE)
        d, p = asyncio.run(per_call(proxied, calls))
        print(f"per call, {calls} interleaved tools/call each (ms):")
        for label, values in (("direct", d), ("proxy", p)):
            print(f"  {label:7} p50 {pct(values, 0.5) * 1e3:7.3f}   p99 {pct(values, 0.99) * 1e3:7.3f}")
        print(f"  overhead p50 {(pct(p, 0.5) - pct(d, 0.5)) * 1e3:+.3f} ms, "
              f"p99 {(pct(p, 0.99) - pct(d, 0.99)) * 1e3:+.3f} ms")
        ds, ps = [], []
        for i in range(starts):
            order = ((EXAMPLE, ds), (proxied, ps)) if i % 2 else ((proxied, ps), (EXAMPLE, ds))
            for argv, out in order:
                out.append(asyncio.run(startup(argv)))
        print(f"start-up to a listed session, {starts} runs each (median ms): "
              f"server alone {statistics.median(ds) * 1e3:.0f}, through the proxy "
              f"{statistics.median(ps) * 1e3:.0f} "
              f"(+{(statistics.median(ps) - statistics.median(ds)) * 1e3:.0f}: verification, "
              "interpreter, the proxy's own tools/list walk)")


if __name__ == "__main__":
    main()
