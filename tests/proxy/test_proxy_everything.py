"""``histor-sign proxy`` in front of a real third-party server: the npm reference server
``@modelcontextprotocol/server-everything`` (TS SDK) over stdio, released through a local
Sigstore instance, with the official Python SDK client as host."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from everything_peer import BARE_TOOL_NAMES, CAPABLE_TOOL_NAMES, TOOL_NAMES, argv, stdio_command
from proxy_fixtures import RawHost, World, audit, proxy_argv, publish, sdk_host

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

EVERYTHING = "io.github.modelcontextprotocol/server-everything"
REPOSITORY = "modelcontextprotocol/servers"
WORKFLOW = ".github/workflows/sign.yml"
IDENTITY = f"https://github.com/{REPOSITORY}/{WORKFLOW}@refs/heads/main"


@dataclass
class Everything:
    trust_config: Path
    pins: Path
    release: Path


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Everything:
    base = tmp_path_factory.mktemp("everything")
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        token = sigstore.mint_token(IDENTITY)
        released = run_cli("release", "--server", EVERYTHING, "--server-version", "1.0.0",
                           "--out-dir", str(base / "rev1"),
                           "--trust-config", str(sigstore.trust_config_path),
                           "--stdio", stdio_command(), "--server-is-trusted-code",
                           "--identity-token", token)
        assert released.code == 0, released.stderr
        trust_config = sigstore.trust_config_path
    location = base / "published"
    publish(base / "rev1", location, 1)
    pins = base / "pins.json"
    added = run_cli("trust", "add", EVERYTHING, "--repository", REPOSITORY,
                    "--workflow", WORKFLOW, "--envelope", str(location), "--pins", str(pins),
                    "--trust-config", str(trust_config))
    assert added.code == 0, added.stderr
    return Everything(trust_config, pins, base / "rev1")


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content)


def test_everything_released_proxied_and_decided(world: World, everything: Everything,
                                                 tmp_path: Path) -> None:
    trail = tmp_path / "audit.jsonl"
    command = argv("stdio")
    signed = json.loads((everything.release / "tools.snapshot.json").read_text())["tools"]
    assert [t["name"] for t in signed] == TOOL_NAMES

    async def go() -> tuple[list[dict[str, Any]], Any, list[Any]]:
        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail),
                                       "--server-is-trusted-code",
                                       pins=everything.pins, server=EVERYTHING,
                                       trust_config=everything.trust_config,
                                       upstream=command), tmp_path / "err") as host:
            listed = await host.list_tools()
            tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
            echo = await host.call_tool("echo", {"message": "hello through the proxy"})
            denied = [await host.call_tool("echo", {"message": 42}),
                      await host.call_tool("echo", {}),
                      await host.call_tool("get-sum", {"a": "1", "b": 2}),
                      await host.call_tool("no-such-tool", {})]
            return tools, echo, denied

    tools, echo, denied = asyncio.run(go())
    # This host declares no capability: it is offered the signed tools the server offers
    # it, and the four it does not are no drift (nothing withheld, below).
    assert [t["name"] for t in tools] == BARE_TOOL_NAMES
    assert not echo.is_error and texts(echo) == "Echo: hello through the proxy"
    codes = ["type-mismatch", "missing-required", "type-mismatch", "not-offered"]
    for code, result in zip(codes, denied, strict=True):
        assert result.is_error and code in texts(result), texts(result)
        assert "before it reached the server" in texts(result)
    records = audit(trail)
    start = next(r for r in records if r["event"] == "session-start")
    assert start["server"] == EVERYTHING and start["signer"]["identity"] == IDENTITY
    assert start["era"] == "legacy"
    assert not [r for r in records if r["event"] == "tool-withheld"]
    assert [r["tool"] for r in records if r["event"] == "call-denied"] == [
        "echo", "echo", "get-sum", "no-such-tool"]
    err = (tmp_path / "err").read_text()
    assert f"{len(BARE_TOOL_NAMES)} tool(s) offered" in err and "Traceback" not in err


def test_a_capable_host_is_offered_every_signed_tool_and_block_refuses_none(
        world: World, everything: Everything, tmp_path: Path) -> None:
    """The release declared what a fully capable host declares, so what server-everything
    offers only to such hosts is signed: a host declaring roots, sampling and elicitation
    is offered all of it, and one declaring nothing the rest — under ``--on-drift block``
    neither is refused, as no served tool differs from the signed one."""

    async def sampling(*_args: Any) -> Any:
        raise AssertionError("not asked")

    async def roots(*_args: Any) -> Any:
        from mcp.types import ListRootsResult

        return ListRootsResult(roots=[])

    async def listed(**callbacks: Any) -> list[str]:
        async with sdk_host(proxy_argv(world, tmp_path, "--on-drift", "block",
                                       "--server-is-trusted-code",
                                       pins=everything.pins, server=EVERYTHING,
                                       trust_config=everything.trust_config,
                                       upstream=argv("stdio")), tmp_path / "err",
                            **callbacks) as host:
            return [t.name for t in (await host.list_tools()).tools]

    capable = asyncio.run(listed(sampling_callback=sampling, list_roots_callback=roots,
                                 elicitation=sampling))
    bare = asyncio.run(listed())
    assert capable == TOOL_NAMES and set(CAPABLE_TOOL_NAMES) < set(capable)
    assert bare == BARE_TOOL_NAMES


def test_everything_tools_offered_as_signed(world: World, everything: Everything,
                                            tmp_path: Path) -> None:
    signed = json.loads((everything.release / "tools.snapshot.json").read_text())["tools"]
    host = RawHost(proxy_argv(world, tmp_path, "--server-is-trusted-code",
                              pins=everything.pins, server=EVERYTHING,
                              trust_config=everything.trust_config, upstream=argv("stdio")))
    host.initialize()
    answer = host.request(1, "tools/list")
    code, err = host.finish()
    offered = [t for t in signed if t["name"] in BARE_TOOL_NAMES]  # what it offers this host
    assert [json.dumps(t) for t in answer["result"]["tools"]] == [json.dumps(t) for t in offered]
    assert code == 0, err


@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_sdk_auto_client_through_the_proxy_as_directly(world: World, everything: Everything,
                                                       tmp_path: Path, transport: str) -> None:
    """Issue 37's report: the Python SDK's recommended client, ``mcp.Client`` in its
    default auto mode, against the 2025-era server-everything: it probes server/discover,
    gets -32601 (over HTTP: 400 with a JSON-RPC error) and falls back to initialize —
    through the proxy (a stdio child, or ``--url``) as directly."""
    from cli_harness import cli_env
    from everything_peer import serve
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    async def session(server: Any) -> tuple[str, list[str], str]:
        async with Client(server) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            echo = await client.call_tool("echo", {"message": "auto"})
            return client.protocol_version, names, texts(echo)

    def stdio(command: list[str]) -> Any:
        return StdioServerParameters(command=command[0], args=command[1:], env=cli_env())

    flags = ("--server-is-trusted-code",)
    common = {"pins": everything.pins, "server": EVERYTHING,
              "trust_config": everything.trust_config}
    if transport == "stdio":
        direct = asyncio.run(session(stdio(argv("stdio"))))
        proxied = asyncio.run(session(stdio(proxy_argv(world, tmp_path, *flags, **common,
                                                       upstream=argv("stdio")))))
    else:
        with serve("streamableHttp", "/mcp") as url:
            direct = asyncio.run(session(url))
            proxied = asyncio.run(session(stdio(proxy_argv(world, tmp_path, **common,
                                                           url=url))))
    assert direct == ("2025-11-25", BARE_TOOL_NAMES, "Echo: auto")
    assert proxied == direct
