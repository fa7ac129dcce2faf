"""Per-call overhead of ``histor-sign proxy`` over a direct SDK connection, and its
start-up over the server's own.

The host is the official MCP SDK client in every case. The baselines run in the same
process, interleaved with the measured side (alternating which goes first), so machine
load hits both alike:

* **per call**: ``tools/call search_notes`` on the bundled example server, directly and
  through the proxy (signed through the local Sigstore instance, as the tests do):
  min / median / p99 of each, the ratio of the medians, and the overhead as the
  difference of the medians and of the p99s;
* **start-up** (spawn → initialize → every tools/list page answered): the example server
  (7 tools, 3 pages) and a 100-tool server (``hundred_tools_server.py``), each directly
  and through the proxy with ``--offline`` trust — the proxy's share is verification,
  its own walk of the tools, the comparison and the guard.

Every process runs with cached bytecode (its own ``PYTHONPYCACHEPREFIX``, warmed once) as
an installed package has: without it the interpreter compiles every module each start.
``--compare-with DIR`` adds another checkout's proxy (e.g. ``git worktree add /tmp/before
main``) to the start-ups, interleaved with the others ("other").
Run: ``python benchmarks/bench_proxy.py [CALLS] [STARTS] [--compare-with DIR]``. Numbers
are reported, never asserted.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "testkit"))  # the proxy fixtures tests and benchmarks share

from _harness import latency_row, quantile  # noqa: E402
from cli_harness import cli_env, run_cli  # noqa: E402
from proxy_fixtures import make_world, proxy_argv, publish  # noqa: E402

EXAMPLE = [sys.executable, "-m", "histor_sign.demo.example_server"]
HUNDRED = [sys.executable, str(REPO / "benchmarks" / "hundred_tools_server.py"), "100"]
HUNDRED_SERVER = "io.github.example/hundred"
HUNDRED_IDENTITY = ("https://github.com/example/hundred/.github/workflows/sign.yml"
                    "@refs/heads/main")
ENV: dict[str, str] = {}


async def session(argv: list[str], stack: AsyncExitStack) -> Any:
    """An SDK client session with every tools/list page read. ``argv`` may start with
    ``PYTHONPATH=DIR`` (another checkout, for ``--compare-with``)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env, cwd = ENV, str(REPO)  # ``-m`` puts the working directory first on the path
    if argv[0].startswith("PYTHONPATH="):
        cwd = argv[0].removeprefix("PYTHONPATH=")
        env = dict(ENV, PYTHONPATH=cwd)
        argv = argv[1:]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=cwd)
    devnull = stack.enter_context(open(os.devnull, "w"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
    client = await stack.enter_async_context(ClientSession(read, write))
    await client.initialize()
    from mcp import types

    cursor = None
    while True:
        page = await client.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        cursor = page.next_cursor
        if not cursor:
            return client



async def per_call(proxied: list[str], calls: int) -> tuple[list[float], list[float]]:
    async with AsyncExitStack() as stack:
        direct = await session(EXAMPLE, stack)
        proxy = await session(proxied, stack)
        d: list[float] = []
        p: list[float] = []
        for i in range(calls + 50):  # the first 50 warm both up and are dropped
            order = ((direct, d), (proxy, p)) if i % 2 else ((proxy, p), (direct, d))
            for client, out in order:
                start = time.perf_counter()
                await client.call_tool("search_notes", {"query": f"q{i}", "limit": 5})
                if i >= 50:
                    out.append(time.perf_counter() - start)
        return d, p


async def startup(argv: list[str]) -> float:
    start = time.perf_counter()
    async with AsyncExitStack() as stack:
        await session(argv, stack)
        ready = time.perf_counter() - start
    return ready


def release_hundred(base: Path) -> tuple[Path, Path]:
    """Release the 100-tool server through a fresh local Sigstore; (pins, trust config)."""
    import shlex

    from histor_sign.sigstore_dev import LocalSigstore

    with LocalSigstore(directory=base / "sigstore") as sigstore:
        token = sigstore.mint_token(HUNDRED_IDENTITY)
        done = run_cli("release", "--server", HUNDRED_SERVER, "--server-version", "1.0.0",
                       "--out-dir", str(base / "rev1"), "--trust-config",
                       str(sigstore.trust_config_path), "--stdio", shlex.join(HUNDRED),
                       "--server-is-trusted-code", "--identity-token", token)
        assert done.code == 0, done.stderr
        trust_config = sigstore.trust_config_path
    publish(base / "rev1", base / "published", 1)
    pins = base / "pins.json"
    added = run_cli("trust", "add", HUNDRED_SERVER, "--repository", "example/hundred",
                    "--workflow", ".github/workflows/sign.yml", "--envelope",
                    str(base / "published"), "--pins", str(pins), "--trust-config",
                    str(trust_config))
    assert added.code == 0, added.stderr
    return pins, trust_config


def start_ups(pairs: list[tuple[str, list[str], list[str]]], runs: int,
              other: Path | None = None) -> None:
    for label, direct, proxied in pairs:
        variants = [("server", direct), ("proxied", proxied)]
        if other is not None:
            variants.append(("other", [f"PYTHONPATH={other}", *proxied]))
        for _name, argv in variants:  # warm the bytecode caches
            asyncio.run(startup(argv))
        times: list[list[float]] = [[] for _ in variants]
        for i in range(runs):
            order = list(zip(variants, times, strict=True))
            for (_name, argv), out in (order if i % 2 else order[::-1]):
                out.append(asyncio.run(startup(argv)))
        print(f"start-up to a listed session, {label}, {runs} interleaved runs each (ms):")
        ds = times[0]
        for (name, _argv), ps in zip(variants, times, strict=True):
            print(latency_row(name, ps))
            if name != "server":
                print(f"  {name} adds: median {(quantile(ps, 0.5) - quantile(ds, 0.5)) * 1e3:+.0f} ms, "
                      f"min {(min(ps) - min(ds)) * 1e3:+.0f} ms "
                      f"(ratio of medians {quantile(ps, 0.5) / quantile(ds, 0.5):.1f})")


def main() -> None:
    args = sys.argv[1:]
    other = None
    if "--compare-with" in args:  # another checkout's proxy, interleaved in the start-ups
        at = args.index("--compare-with")
        other = Path(args[at + 1]).resolve()
        del args[at:at + 2]
    calls = int(args[0]) if args else 1000
    starts = int(args[1]) if len(args) > 1 else 10
    print(f"load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = cli_env({"PYTHONPYCACHEPREFIX": str(base / "pycache")})
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV.update(env)
        world = make_world(base / "world")
        proxied = proxy_argv(world, base, "--offline", upstream=EXAMPLE)
        asyncio.run(startup(proxied))  # warm the bytecode cache
        d, p = asyncio.run(per_call(proxied, calls))
        print(f"per call, {calls} interleaved tools/call each (ms):")
        print(latency_row("direct", d))
        print(latency_row("proxied", p))
        print(f"  overhead: median {(quantile(p, 0.5) - quantile(d, 0.5)) * 1e3:+.3f} ms, "
              f"p99 {(quantile(p, 0.99) - quantile(d, 0.99)) * 1e3:+.3f} ms "
              f"(ratio of medians {quantile(p, 0.5) / quantile(d, 0.5):.2f})")
        (base / "hundred").mkdir()
        pins, trust = release_hundred(base / "hundred")
        (base / "h").mkdir()
        hundred = proxy_argv(world, base / "h", "--offline", pins=pins, upstream=HUNDRED,
                             server=HUNDRED_SERVER, trust_config=trust)
        start_ups([("example server (7 tools)", EXAMPLE, proxied),
                   ("100-tool server", HUNDRED, hundred)], starts, other)


if __name__ == "__main__":
    main()
