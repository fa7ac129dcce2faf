"""The hosts of the compatibility matrix: what each official client library or tool shows
its user of one session.

Every host opens one session to a target (a stdio command, or a Streamable HTTP URL), lists
the tools (every page), makes one tool call, and lists resources and prompts where the
server declares them, returning what the library returned as plain JSON (``{"error": …}``
for the first request that failed). The same host is pointed at a server directly and
through ``histor-sign proxy``, and the two answers are compared (test_matrix.py).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from matrix_peers import MODULES, PEERS, matrix_env

TS_HOST = PEERS / "sdk_host.mjs"
INSPECTOR = MODULES / "@modelcontextprotocol" / "inspector-cli" / "build" / "index.js"
#: Seconds one host session (or one Inspector invocation) may take: a bound, not a timing.
SESSION_TIMEOUT = 60.0


@dataclass(frozen=True)
class Target:
    """Where a host connects: a stdio command or a Streamable HTTP URL."""

    stdio: list[str] | None = None
    url: str | None = None


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def _session_answers(session: Any, capabilities: Any,
                           call: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """tools (every page), the call, resources and prompts if declared — as JSON."""
    from mcp import Client, types

    out: dict[str, Any] = {"tools": []}
    cursor = None
    while True:
        if isinstance(session, Client):
            page = await session.list_tools(cursor=cursor)
        else:
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
        out["tools"] += [_dump(t) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    out["call"] = _dump(await session.call_tool(call[0], call[1]))
    if capabilities is not None and capabilities.resources is not None:
        out["resources"] = [_dump(r) for r in (await session.list_resources()).resources]
    if capabilities is not None and capabilities.prompts is not None:
        out["prompts"] = [_dump(p) for p in (await session.list_prompts()).prompts]
    return out


@asynccontextmanager
async def _transport(target: Target, stderr: Path, stack: AsyncExitStack
                     ) -> AsyncIterator[Any]:
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if target.url is not None:
        yield streamable_http_client(target.url)
        return
    assert target.stdio is not None
    errlog = stack.enter_context(stderr.open("a"))
    params = StdioServerParameters(command=target.stdio[0], args=target.stdio[1:],
                                   env=matrix_env())
    yield stdio_client(params, errlog=errlog)


def _capable() -> dict[str, Any]:
    """Callbacks that make a ``ClientSession`` declare roots, sampling and elicitation, as a
    fully capable host does (each answers a request with a refusal)."""
    from mcp import types

    async def refuse(*_args: Any) -> types.ErrorData:
        return types.ErrorData(code=-32600, message="not in this test")

    return {"sampling_callback": refuse, "elicitation_callback": refuse,
            "list_roots_callback": refuse}


async def _python_sdk(target: Target, call: tuple[str, dict[str, Any]], stderr: Path,
                      auto: bool, capable: bool = False) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.session import ClientSession

    async with AsyncExitStack() as stack:
        async with _transport(target, stderr, stack) as transport:
            if auto:  # the SDK's recommended client, in its default (auto) mode
                client = await stack.enter_async_context(Client(transport))
                return await _session_answers(client, client.server_capabilities, call)
            streams = await stack.enter_async_context(transport)
            session = await stack.enter_async_context(
                ClientSession(streams[0], streams[1], **(_capable() if capable else {})))
            started = await session.initialize()
            return await _session_answers(session, started.capabilities, call)


def python_session(target: Target, call: tuple[str, dict[str, Any]], stderr: Path,
                   *, auto: bool = False, capable: bool = False) -> dict[str, Any]:
    """The Python SDK: ``ClientSession`` (legacy initialize; ``capable``: declaring roots,
    sampling and elicitation) or ``mcp.Client`` (auto)."""

    async def bounded() -> dict[str, Any]:
        async with asyncio.timeout(SESSION_TIMEOUT):
            return await _python_sdk(target, call, stderr, auto, capable)

    try:
        return asyncio.run(bounded())
    except Exception as exc:  # what the host's user sees: the first failure
        return {"error": _describe(exc)}


def python_calls(target: Target, calls: list[tuple[str, dict[str, Any]]], stderr: Path
                 ) -> list[dict[str, Any]]:
    """One ``ClientSession`` making ``calls`` in turn: each result as JSON, or
    ``{"error": …}`` for a call that failed (the session goes on to the next)."""

    async def session() -> list[dict[str, Any]]:
        from mcp.client.session import ClientSession

        out: list[dict[str, Any]] = []
        async with AsyncExitStack() as stack, asyncio.timeout(SESSION_TIMEOUT):
            async with _transport(target, stderr, stack) as transport:
                streams = await stack.enter_async_context(transport)
                client = await stack.enter_async_context(ClientSession(streams[0], streams[1]))
                await client.initialize()
                for name, arguments in calls:
                    try:
                        out.append(_dump(await client.call_tool(name, arguments)))
                    except Exception as exc:
                        out.append({"error": _describe(exc)})
        return out

    try:
        return asyncio.run(session())
    except Exception as exc:
        return [{"error": _describe(exc)}]


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    return f"{type(exc).__name__}: {exc}"


def _node_json(argv: list[str], stderr: Path, cwd: Path | None = None) -> Any:
    with stderr.open("a") as errlog:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=errlog, env=matrix_env(),
                              timeout=SESSION_TIMEOUT, check=False, cwd=cwd)
    text = done.stdout.decode("utf-8", "replace").strip()
    try:
        return json.loads(text)
    except ValueError:
        return {"error": f"exit {done.returncode}: {text[-500:]}"}


def typescript_session(node: str, target: Target, call: tuple[str, dict[str, Any]],
                       stderr: Path) -> dict[str, Any]:
    """The TypeScript SDK ``Client`` (tests/peers/sdk_host.mjs)."""
    plan: dict[str, Any] = {"call": {"name": call[0], "arguments": call[1]}}
    plan.update({"url": target.url} if target.url else {"command": target.stdio})
    answer: dict[str, Any] = _node_json([node, str(TS_HOST), json.dumps(plan)], stderr)
    return answer


def _inspector_arg(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def inspector_session(node: str, target: Target, call: tuple[str, dict[str, Any]],
                      stderr: Path, *, lists: bool) -> dict[str, Any]:
    """The MCP Inspector CLI: one invocation (one session) per method, as its users run it;
    ``lists`` adds resources/list and prompts/list."""
    command = target.stdio or []
    # The target's first word comes first (--tool-arg takes every word up to the next
    # option, and one target word must precede "--"); the command's other words follow "--".
    head, tail = ((["--transport", "http", target.url], []) if target.url
                  else ([command[0]], ["--", *command[1:]]))
    arguments = [f"{k}={_inspector_arg(v)}" for k, v in call[1].items()]
    methods: dict[str, list[str]] = {
        "tools": ["--method", "tools/list"],
        "call": ["--method", "tools/call", "--tool-name", call[0],
                 *(["--tool-arg", *arguments] if arguments else [])],
    }
    if lists:
        methods["resources"] = ["--method", "resources/list"]
        methods["prompts"] = ["--method", "prompts/list"]
    out: dict[str, Any] = {}
    for key, options in methods.items():
        # It finds its own package.json relative to the working directory.
        answer = _node_json([node, str(INSPECTOR), *head, *options, *tail], stderr, INSPECTOR.parent)
        out[key] = answer.get(key, answer) if key != "call" else answer
    return out
