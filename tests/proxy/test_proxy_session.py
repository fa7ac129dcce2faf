"""``histor-sign proxy`` between the official MCP SDK client (the host) and the example
server (the upstream, recording what it receives), released through a local Sigstore."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import (
    RawHost,
    World,
    audit,
    proxy_argv,
    received,
    received_calls,
    recorder,
    sdk_host,
)

pytestmark = pytest.mark.slow

SECRET_VALUE = "value-that-must-never-be-logged-7f3a"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def refusal(coro: Any) -> str:
    """The JSON-RPC error the host's session start got (the SDK raises it in a group)."""
    from mcp.shared.exceptions import MCPError

    try:
        asyncio.run(coro)
    except BaseException as exc:
        stack: list[BaseException] = [exc]
        while stack:
            item = stack.pop()
            if isinstance(item, MCPError):
                return str(item)
            if isinstance(item, BaseExceptionGroup):
                stack.extend(item.exceptions)
        raise
    raise AssertionError("the session was not refused")


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content)


def test_signed_tools_offered_byte_for_byte(world: World, tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl")))
    host.initialize()
    answer = host.request(1, "tools/list")
    code, err = host.finish()
    offered = answer["result"]["tools"]
    signed = world.signed_tools()
    # The same objects, in the signed order, with the same member order.
    assert [json.dumps(t) for t in offered] == [json.dumps(t) for t in signed]
    assert "nextCursor" not in answer["result"]
    assert code == 0, err
    assert "7 tool(s) offered" in err
    # The proxy walked every page of the upstream's list itself.
    pages = [m for m in received(tmp_path / "up.jsonl") if m.get("method") == "tools/list"]
    assert len(pages) == 3


def test_drifted_readonly_lost_and_unsigned_extra_are_withheld(world: World,
                                                                tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    trail = tmp_path / "audit.jsonl"
    upstream = recorder(log, "--description", "search_notes=Search every note, even private.",
                        "--lose-readonly", "get_note", "--extra")

    async def go() -> tuple[list[str], Any, Any]:
        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail),
                                       upstream=upstream), tmp_path / "err") as host:
            names = [t.name for t in (await host.list_tools()).tools]
            withheld = await host.call_tool("search_notes", {"query": "x"})
            extra = await host.call_tool("exfiltrate", {"url": "https://evil.example"})
            return names, withheld, extra

    names, withheld, extra = run(go())
    assert names == ["list_notebooks", "create_note", "update_note", "delete_note",
                     "export_notebook"]
    assert withheld.is_error and "not-offered" in texts(withheld)
    assert extra.is_error and "not-offered" in texts(extra)
    assert received_calls(log) == []  # neither call reached the server
    records = audit(trail)
    gone = {r["tool"]: r for r in records if r["event"] == "tool-withheld"}
    assert set(gone) == {"search_notes", "get_note", "exfiltrate"}
    assert gone["search_notes"]["fields"] == ["description"]
    assert gone["get_note"]["fields"] == ["annotations"]
    assert gone["exfiltrate"]["change"] == "added"
    err = (tmp_path / "err").read_text()
    assert err.count("withheld:") == 3
    start = next(r for r in records if r["event"] == "session-start")
    assert start["revision"] == 1 and start["signer"]["identity"].startswith(
        "https://github.com/example/notes-server/")


def test_invalid_calls_never_reach_the_server(world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    trail = tmp_path / "audit.jsonl"
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("search_notes", {"query": 42}, "type-mismatch"),
        ("search_notes", {"query": "x", "exfil": SECRET_VALUE}, "unknown-argument"),
        ("get_note", {}, "missing-required"),
        ("drop_database", {"really": SECRET_VALUE}, "not-offered"),
    ]

    async def go() -> list[Any]:
        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail),
                                       upstream=recorder(log)), tmp_path / "err") as host:
            out = [await host.call_tool(name, args) for name, args, _ in bad]
            out.append(await host.call_tool("get_note", {"note_id": "note-1"}))
            return out

    results = run(go())
    for (_, _, code), result in zip(bad, results[:-1], strict=True):
        assert result.is_error and code in texts(result)
        assert SECRET_VALUE not in texts(result)
    assert not results[-1].is_error
    calls = received_calls(log)
    assert [c["params"] for c in calls] == [{"name": "get_note",
                                             "arguments": {"note_id": "note-1"}}]
    text = trail.read_text()
    assert SECRET_VALUE not in text
    denied = [r for r in audit(trail) if r["event"] == "call-denied"]
    assert [r["tool"] for r in denied] == [b[0] for b in bad]
    from histor_sign.canonical import canonical_bytes, sha256_digest

    assert denied[0]["argumentsDigest"] == sha256_digest(canonical_bytes({"query": 42}))
    assert [r["reasons"][0]["code"] for r in denied] == [b[2] for b in bad]


def test_destructive_call_needs_dry_run_or_approval(world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    asked: list[str] = []

    async def go(answer: str | None) -> tuple[Any, Any]:
        from mcp import types

        async def elicit(_ctx: Any, params: Any) -> Any:
            asked.append(params.message)
            if answer == "accept":
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action="decline")

        async with sdk_host(proxy_argv(world, tmp_path, upstream=recorder(log)),
                            tmp_path / "err",
                            elicitation=elicit if answer else None) as host:
            real = await host.call_tool("delete_note", {"note_id": "note-1", "dry_run": False})
            dry = await host.call_tool("delete_note", {"note_id": "note-1", "dry_run": True})
            return real, dry

    real, dry = run(go(None))  # no elicitation: denied, with how to allow it
    assert real.is_error and "dry-run-required" in texts(real) and "guard policy" in texts(real)
    assert not dry.is_error
    assert [c["params"]["arguments"]["dry_run"] for c in received_calls(log)] == [True]

    real, _ = run(go("decline"))
    assert real.is_error and "did not approve" in texts(real)
    assert len(received_calls(log)) == 2  # only the second dry run arrived
    real, _ = run(go("accept"))
    assert not real.is_error
    assert [c["params"]["arguments"]["dry_run"] for c in received_calls(log)] == [
        True, True, False, True]
    assert len(asked) == 2 and all("sha256:" in q and "delete_note" in q for q in asked)


def test_unpinned_server_is_refused_at_initialize(world: World, tmp_path: Path) -> None:
    empty = tmp_path / "empty-pins.json"
    empty.write_text('{"version": 2, "servers": {}}\n')
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, pins=empty, upstream=recorder(log)))
    answer = host.request(0, "initialize", {"protocolVersion": "2025-11-25",
                                            "capabilities": {}, "clientInfo": {"name": "h",
                                                                               "version": "0"}})
    code, err = host.finish()
    assert "error" in answer and "is not pinned" in answer["error"]["message"]
    assert code == 1
    lines = [line for line in err.splitlines() if "warning" not in line]
    assert len(lines) == 1, err  # one clear line: the refusal is the exit line
    assert lines[0].startswith("histor-sign: refused to serve ") and "is not pinned" in lines[0]
    assert "Traceback" not in err
    assert not log.exists()  # the upstream was never started


def test_rollback_is_refused(world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    trail = tmp_path / "audit.jsonl"

    async def go() -> None:
        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail),
                                       pins=world.rolled_pins, upstream=recorder(log)),
                            tmp_path / "err"):
            pass

    assert "rollback: revision 1 is older than the pinned revision 2" in refusal(go())
    assert not log.exists()
    assert [r["event"] for r in audit(trail)] == ["session-refused", "session-end"]


def test_block_refuses_the_session_on_drift(world: World, tmp_path: Path) -> None:
    upstream = recorder(tmp_path / "up.jsonl", "--description", "get_note=Now worse.")

    async def go(*flags: str) -> list[str]:
        async with sdk_host(proxy_argv(world, tmp_path, *flags, upstream=upstream),
                            tmp_path / "err") as host:
            return [t.name for t in (await host.list_tools()).tools]

    assert "differ from signed revision 1" in refusal(go("--on-drift", "block"))
    # A wording change is low risk: block at high lets the session run, withholding it.
    assert "get_note" not in run(go("--on-drift", "block", "--fail-on", "high"))
    # warn passes everything, as served.
    assert "get_note" in run(go("--on-drift", "warn"))


def test_list_changed_mid_session_is_decided_against_the_new_state(world: World,
                                                                    tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    trail = tmp_path / "audit.jsonl"

    async def go() -> tuple[list[str], Any]:
        changed = asyncio.Event()

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                changed.set()

        async with sdk_host(proxy_argv(world, tmp_path, "--audit", str(trail),
                                       upstream=recorder(log, "--change-after", "2")),
                            tmp_path / "err", message_handler=on_message) as host:
            for _ in range(2):
                assert not (await host.call_tool("get_note", {"note_id": "note-1"})).is_error
            await changed.wait()
            names = [t.name for t in (await host.list_tools()).tools]
            return names, await host.call_tool("get_note", {"note_id": "note-1"})

    names, after = run(go())
    assert "get_note" not in names and "search_notes" in names
    assert after.is_error and "not-offered" in texts(after)
    assert len(received_calls(log)) == 2
    events = [r["event"] for r in audit(trail)]
    assert "tools-changed" in events and events.index("tools-changed") < events.index(
        "call-denied")


def test_modern_era_session(world: World, tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"

    async def go() -> tuple[list[str], Any]:
        async with sdk_host(proxy_argv(world, tmp_path, upstream=recorder(log)),
                            tmp_path / "err", initialize=False) as host:
            await host.discover()
            names = [t.name for t in (await host.list_tools()).tools]
            return names, await host.call_tool("search_notes", {"query": 1})

    names, bad = run(go())
    assert len(names) == 7 and bad.is_error and "type-mismatch" in texts(bad)
    assert received_calls(log) == []
    assert all(m.get("method") != "initialize" for m in received(log))

    # A valid modern call is forwarded as sent (raw: the example server's modern answer
    # lacks resultType, which the SDK would reject — the proxy relays it unchanged).
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log)))
    listed = host.request(7, "tools/list", dict(meta))
    call = {**meta, "name": "get_note", "arguments": {"note_id": "note-1"}}
    answer = host.request("x-8", "tools/call", call)
    code, err = host.finish()
    assert listed["result"]["resultType"] == "complete" and len(listed["result"]["tools"]) == 7
    assert answer["id"] == "x-8" and answer["result"]["isError"] is False
    assert [c["params"] for c in received_calls(log)] == [call]
    assert code == 0, err


def test_modern_era_approval_through_input_required(world: World, tmp_path: Path) -> None:
    """In the 2026 era the proxy cannot send elicitation/create: a call that needs approval
    is answered with an input_required result carrying the question and a requestState
    bound to that call; only the retry with that state and approve: true is forwarded,
    without the proxy's own members. Another call's state, a decline, a replay: denied."""
    log = tmp_path / "up.jsonl"
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log)))
    host.request(1, "tools/list", dict(meta))
    call = {**meta, "name": "delete_note", "arguments": {"note_id": "note-1",
                                                         "dry_run": False}}
    other = {**meta, "name": "delete_note", "arguments": {"note_id": "note-2",
                                                          "dry_run": False}}

    def ask(ident: int, params: dict[str, Any]) -> tuple[dict[str, Any], str]:
        result = host.request(ident, "tools/call", params)["result"]
        assert result["resultType"] == "input_required", result
        question = result["inputRequests"]["approve"]
        assert question["method"] == "elicitation/create"
        assert "delete_note" in question["params"]["message"]
        assert "sha256:" in question["params"]["message"]
        assert "note-1" not in question["params"]["message"]  # never an argument value
        return question, result["requestState"]

    def answer(action: str, approve: bool = True) -> dict[str, Any]:
        reply: dict[str, Any] = {"action": action}
        if action == "accept":
            reply["content"] = {"approve": approve}
        return {"approve": reply}

    _, state = ask(2, call)
    wrong = host.request(3, "tools/call", {**other, "requestState": state,
                                           "inputResponses": answer("accept")})
    declined = host.request(4, "tools/call", {**call, "requestState": state,
                                              "inputResponses": answer("decline")})
    _, state = ask(5, call)
    approved = host.request(6, "tools/call", {**call, "requestState": state,
                                              "inputResponses": answer("accept")})
    replayed = host.request(7, "tools/call", {**call, "requestState": state,
                                              "inputResponses": answer("accept")})
    code, err = host.finish()
    assert code == 0, err
    assert wrong["result"]["isError"] and "not for this call" in json.dumps(wrong)
    assert declined["result"]["isError"] and "declined" in json.dumps(declined)
    assert replayed["result"]["isError"]
    assert approved["result"]["isError"] is False, approved
    # Exactly the approved call reached the server, as the host first sent it.
    assert [c["params"] for c in received_calls(log)] == [call]
