"""The proxy's overhead with a real server and the official SDK host (issue 37), direct and
proxied interleaved in one run.

The host is the MCP Python SDK's ``ClientSession`` in every case; the servers are the pinned
npm reference servers of the compatibility matrix (tests/peers; ``npm ci --prefix
tests/peers``), each released through a local Sigstore instance and pinned as the matrix does
(testkit/matrix_peers.py):

* **per call**: ``tools/call echo`` on server-everything over stdio, one direct session and
  one proxied session open side by side, calls alternating which goes first; p50 / p99 of
  each and the overhead (difference of the p50s and of the p99s);
* **start-up to the first tools/list**: spawn → initialize → the first ``tools/list``
  answered, direct and proxied alternately (the proxy's share is its start, verification of
  the signed revision, its own walk of the server's tools, the comparison);
* **peak RSS with a large result**: server-filesystem reads a text file whose result (text
  and structured content) is about 10 MB, one of about 7 MB and a one-line file (the
  baseline), proxied with the default message limit (8 MiB: the 10 MB answer fails that one
  call) and with ``--max-message-bytes`` 32 MiB; the peak resident memory
  (``VmHWM``) of the proxy process and of the server process, read from ``/proc`` just
  before the session closes, and whether the call succeeded.

Every Python process runs with cached bytecode (its own ``PYTHONPYCACHEPREFIX``), as an
installed package has. Numbers are reported, never asserted.
Run: ``python benchmarks/bench_compat_overhead.py [CALLS] [STARTS]`` (default 1000, 10).
``BENCH_BASELINE_TREE=/path/to/another/checkout`` adds a third start-up arm, the proxy of
that checkout (``PYTHONPATH``), interleaved with the two others: a before/after in one run.
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
sys.path.insert(0, str(REPO / "testkit"))  # the matrix peers tests and benchmarks share

from _harness import latency_row, quantile  # noqa: E402
from matrix_peers import (  # noqa: E402
    SERVERS,
    Peer,
    Signed,
    loopback_page,
    matrix_env,
    missing,
    sign_all,
)

EVERYTHING = SERVERS[0]
FILESYSTEM = next(p for p in SERVERS if p.slug == "server-filesystem")



async def open_session(argv: list[str], stack: AsyncExitStack) -> Any:
    """An initialized SDK ``ClientSession`` on ``argv`` (stderr discarded)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=matrix_env())
    devnull = stack.enter_context(open(os.devnull, "w"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=devnull))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def per_call(signed: Signed, base: Path, calls: int) -> tuple[list[float], list[float]]:
    async with AsyncExitStack() as stack:
        direct = await open_session(signed.stdio(EVERYTHING), stack)
        proxied = await open_session(signed.proxy(EVERYTHING, base), stack)
        d: list[float] = []
        p: list[float] = []
        for i in range(calls + 50):  # the first 50 warm both up and are dropped
            order = ((direct, d), (proxied, p)) if i % 2 else ((proxied, p), (direct, d))
            for session, out in order:
                start = time.perf_counter()
                await session.call_tool("echo", {"message": f"m{i}"})
                if i >= 50:
                    out.append(time.perf_counter() - start)
        return d, p


async def first_list(argv: list[str]) -> float:
    start = time.perf_counter()
    async with AsyncExitStack() as stack:
        session = await open_session(argv, stack)
        await session.list_tools()
        return time.perf_counter() - start


def start_ups(signed: Signed, base: Path, runs: int) -> dict[str, list[float]]:
    """Start-up times of each arm, interleaved (the order rotates every run)."""
    arms = {"direct": signed.stdio(EVERYTHING), "proxied": signed.proxy(EVERYTHING, base)}
    baseline = os.environ.get("BENCH_BASELINE_TREE")
    if baseline:
        (base / "baseline").mkdir(exist_ok=True)
        # -P: not the working directory (this checkout) first on the path, the baseline
        python, *rest = signed.proxy(EVERYTHING, base / "baseline")
        arms["baseline"] = ["env", f"PYTHONPATH={baseline}", python, "-P", *rest]
    for argv in list(arms.values())[1:]:
        asyncio.run(first_list(argv))  # warm the bytecode and verified caches
    times: dict[str, list[float]] = {name: [] for name in arms}
    names = list(arms)
    for i in range(runs):
        for name in names[i % len(names):] + names[:i % len(names)]:
            times[name].append(asyncio.run(first_list(arms[name])))
    return times


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *_descendants(child)]
    return found


def _hwm(pid: int) -> tuple[str, int]:
    """(command name, VmHWM in bytes) of ``pid``."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    if b"histor_sign" in cmdline:
        name = "proxy"
    elif cmdline[1:4] == [b"-I", b"-S", b"-c"]:
        name = "server keeper"  # the proxy's small supervisor of the server process
    else:
        name = Path(cmdline[0].decode()).name
    return name, int(fields.get("VmHWM", "0 kB").split()[0]) * 1024


async def large_read(argv: list[str], path: Path) -> tuple[str, int, dict[str, int]]:
    """Read ``path`` through server-filesystem: (outcome, result bytes, peak RSS by process)."""
    async with AsyncExitStack() as stack:
        session = await open_session(argv, stack)
        try:
            result = await session.call_tool("read_text_file", {"path": str(path)})
            size = len(result.model_dump_json(by_alias=True, exclude_none=True))
            outcome = "error result" if result.is_error else "ok"
        except Exception as exc:  # the failure the host sees is the measurement
            outcome, size = f"failed: {type(exc).__name__}: {str(exc)[:120]}", 0
        peaks: dict[str, int] = {}
        for pid in _descendants(os.getpid()):
            try:
                name, peak = _hwm(pid)
            except OSError:
                continue
            peaks[name] = max(peaks.get(name, 0), peak)
        return outcome, size, peaks


def large_results(signed: Signed, base: Path) -> None:
    work = signed.work(FILESYSTEM)
    for label, lines in (("~10 MB", 50_000), ("~7 MB", 35_000), ("tiny: the baseline", 1)):
        path = work / f"big-{lines}.txt"
        path.write_text(("x" * 99 + "\n") * lines)
        print(f"peak RSS, read_text_file of a {path.stat().st_size / 1e6:.1f} MB file "
              f"({label} result):")
        proxied = signed.proxy(FILESYSTEM, base)
        raised = [*proxied[:proxied.index("--")], "--max-message-bytes", str(32 * 2**20),
                  *proxied[proxied.index("--"):]]
        for side, argv in (("direct", signed.stdio(FILESYSTEM)), ("proxied", proxied),
                           ("proxied, --max-message-bytes 32 MiB", raised)):
            outcome, size, peaks = asyncio.run(large_read(argv, path))
            rss = ", ".join(f"{name} {peak / 2**20:.0f} MiB" for name, peak in sorted(peaks.items()))
            print(f"  {side}: {outcome}; result {size / 1e6:.1f} MB; peak RSS: {rss}")
        path.unlink()


def main() -> None:
    args = sys.argv[1:]
    calls = int(args[0]) if args else 1000
    starts = int(args[1]) if len(args) > 1 else 10
    for peer in (EVERYTHING, FILESYSTEM):
        problem = missing(peer)
        if problem:
            sys.exit(problem)
    print(f"load average {os.getloadavg()[0]:.1f} (start)")
    with tempfile.TemporaryDirectory() as tmp, loopback_page() as page:
        base = Path(tmp)
        peers: list[Peer] = [EVERYTHING, FILESYSTEM]
        signed = sign_all(base / "signed", page, peers)
        d, p = asyncio.run(per_call(signed, base, calls))
        print(f"per call, tools/call echo on server-everything, {calls} interleaved each (ms):")
        print(latency_row("direct", d))
        print(latency_row("proxied", p))
        print(f"  overhead: p50 {(quantile(p, 0.5) - quantile(d, 0.5)) * 1e3:+.3f} ms, "
              f"p99 {(quantile(p, 0.99) - quantile(d, 0.99)) * 1e3:+.3f} ms")
        times = start_ups(signed, base, starts)
        print(f"start-up to the first tools/list, server-everything, {starts} interleaved "
              "runs each (ms):")
        for name, values in times.items():
            print(latency_row(name, values))
        d = times["direct"]
        for name, p in list(times.items())[1:]:
            print(f"  {name} adds: p50 {(quantile(p, 0.5) - quantile(d, 0.5)) * 1e3:+.0f} ms, "
                  f"min {(min(p) - min(d)) * 1e3:+.0f} ms")
        large_results(signed, base)
    print(f"load average {os.getloadavg()[0]:.1f} (end)")


if __name__ == "__main__":
    main()
