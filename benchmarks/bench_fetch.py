"""Benchmark: fetch every page of tools from the official SDK server, against the SDK client.

histor-sign's raw-JSON fetch (strict I-JSON parsing, all guards) against the official ``mcp``
SDK client's own ``list_tools`` cursor loop on the same server, interleaved in one run, over
loopback Streamable HTTP and over stdio, as library calls and as commands (memory summed
over the command and the stdio server it starts). Each side includes connecting and
negotiating; stdio includes starting the server. Ratio = histor-sign / SDK client.

    python benchmarks/bench_fetch.py [--quick] [--tools 2000] [--page 100] [--everything]

``--everything`` adds one whole fetch from ``@modelcontextprotocol/server-everything``
(13 tools, a real TS-SDK server; needs ``npm ci --prefix tests/peers``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "testkit"))  # the MCP peers tests and benchmarks share
sys.path.insert(0, str(REPO / "benchmarks"))

import everything_peer  # noqa: E402
from _harness import Case, Sample, run_cases, run_command  # noqa: E402
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


_SDK_SCRIPT = """\
import asyncio, json, shlex, sys
from mcp import Client, StdioServerParameters

async def main(where):
    if where.startswith("http"):
        server = where
    else:
        argv = shlex.split(where)
        server = StdioServerParameters(command=argv[0], args=argv[1:])
    tools, cursor = [], None
    async with Client(server) as client:
        while True:
            result = await client.list_tools(cursor=cursor)
            tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                      for t in result.tools]
            cursor = result.next_cursor
            if cursor is None:
                break
    sys.stdout.write(json.dumps({"tools": tools}))

asyncio.run(main(sys.argv[1]))
"""


def _lib(factory: Any) -> Any:
    return lambda: asyncio.run(factory())


def cases(quick: bool = False, tools: int | None = None, page: int = 100,
          everything: bool = False) -> list[Case]:
    """Fetch every page from the official SDK server (Python ``mcp``), ours against the
    official SDK client (``list_tools`` cursor loop) on the same server, interleaved:
    library calls (connect + negotiate + every page; stdio includes starting the server)
    and the commands (``histor-sign fetch`` against a script driving the SDK client that
    prints the same tools as JSON)."""
    from mcp import StdioServerParameters

    n_tools = tools or (500 if quick else 2_000)
    work = Path(tempfile.mkdtemp(prefix="bench-fetch-"))
    defs = work / "defs.json"
    defs.write_text(json.dumps(definitions(n_tools)))
    state: dict[str, Any] = {}

    def start() -> None:
        state["proc"], state["url"] = start_sdk_http(defs, page)

    def end() -> None:
        stop(state.pop("proc"))

    argv = [sys.executable, str(SDK_PEER), "--defs", str(defs), "--page", str(page)]
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    runs = 3 if quick else 7
    label = f"{n_tools} tools / pages of {page}"
    py = sys.executable
    out = str(work / "snapshot.json")

    def ours_cli(*target: str) -> Sample:
        return run_command([py, "-m", "histor_sign", "fetch", *target, "-o", out,
                            "--max-tools", "1000000"])

    out_cases = [
        Case(f"fetch http lib ({label})", "lib",
             _lib(lambda: ours(Target.http(state["url"]))), _lib(lambda: sdk(state["url"])),
             "mcp SDK Client.list_tools loop", runs, setup=start, teardown=end),
        Case(f"fetch stdio lib ({label})", "lib", _lib(lambda: ours(Target.stdio(argv))),
             _lib(lambda: sdk(params)), "mcp SDK Client.list_tools loop", runs),
        Case(f"fetch http command ({label})", "cli",
             lambda: ours_cli("--url", state["url"]),
             lambda: run_command([py, "-c", _SDK_SCRIPT, state["url"]]),
             "python script: mcp SDK client", runs, setup=start, teardown=end),
        Case(f"fetch stdio command ({label})", "cli",
             lambda: ours_cli("--stdio", shlex.join(argv)),
             lambda: run_command([py, "-c", _SDK_SCRIPT, shlex.join(argv)]),
             "python script: mcp SDK client", runs),
    ]
    if everything:
        out_cases += everything_cases(runs)
    return out_cases


def everything_cases(runs: int) -> list[Case]:
    """One whole fetch from the real TS-SDK reference server (13 tools: connect +
    negotiate + shutdown, not throughput), ours against the SDK client."""
    from mcp import StdioServerParameters

    if not everything_peer.ENTRY.is_file():
        print(f"(server-everything not installed: {everything_peer.INSTALL})", file=sys.stderr)
        return []
    argv = everything_peer.argv("stdio")
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    state: dict[str, Any] = {}

    def start() -> None:
        state["cm"] = everything_peer.serve("streamableHttp", "/mcp")
        state["url"] = state["cm"].__enter__()

    def end() -> None:
        state.pop("cm").__exit__(None, None, None)

    return [
        Case("fetch server-everything http", "lib",
             _lib(lambda: ours(Target.http(state["url"]))), _lib(lambda: sdk(state["url"])),
             "mcp SDK Client.list_tools loop", runs, setup=start, teardown=end),
        Case("fetch server-everything stdio", "lib", _lib(lambda: ours(Target.stdio(argv))),
             _lib(lambda: sdk(params)), "mcp SDK Client.list_tools loop", runs),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tools", type=int, help="catalog size (default 2,000)")
    ap.add_argument("--page", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="fewer tools and runs")
    ap.add_argument("--everything", action="store_true",
                    help="also server-everything (needs npm ci --prefix tests/peers)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args()
    run_cases(cases(args.quick, args.tools, args.page, args.everything), args.json)


if __name__ == "__main__":
    main()
