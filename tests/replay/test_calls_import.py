"""Call import: every provider shape, JSONL mixes, strict argument decoding, name limits."""

from __future__ import annotations

import json
from typing import Any

import pytest

from histor_sign.calls import calls_from_bytes, calls_from_document
from histor_sign.errors import InputError, LimitExceeded

ARGS = {"customer_id": "cus_1"}

RESPONSES = {"object": "response", "output": [
    {"type": "message", "content": []},
    {"type": "function_call", "call_id": "call_SECRET", "name": "lookup_customer",
     "arguments": json.dumps(ARGS), "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "other", "arguments": "{}",
     "status": "in_progress"},
]}
CHAT = {"object": "chat.completion", "choices": [{"message": {"role": "assistant", "tool_calls": [
    {"id": "call_SECRET", "type": "function",
     "function": {"name": "lookup_customer", "arguments": json.dumps(ARGS)}}]}}]}
ANTHROPIC = {"type": "message", "role": "assistant", "content": [
    {"type": "text", "text": "hi"},
    {"type": "tool_use", "id": "toolu_SECRET", "name": "lookup_customer", "input": ARGS},
    {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "crm.lookup", "server_name": "crm",
     "input": ARGS}]}
MCP_CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "lookup.customer", "arguments": ARGS}}


def names(doc: Any) -> list[tuple[str, str, int]]:
    return [(c.provider, c.name, c.index) for c in calls_from_document(doc, "t")]


def test_each_provider_shape() -> None:
    assert names(RESPONSES) == [("openai-responses", "lookup_customer", 0)]
    assert names(CHAT) == [("openai-chat", "lookup_customer", 0)]
    assert names(ANTHROPIC) == [("anthropic", "lookup_customer", 0),
                                ("anthropic-mcp", "crm.lookup", 1)]
    assert names(MCP_CALL) == [("mcp", "lookup.customer", 0)]
    no_args = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ping"}}
    assert calls_from_document(no_args)[0].arguments == {}
    for doc in (RESPONSES, CHAT, ANTHROPIC, MCP_CALL):
        call = calls_from_document(doc)[0]
        assert call.arguments == ARGS
        assert "SECRET" not in repr(call)


def test_jsonl_mix_keeps_order_and_lines() -> None:
    lines = [RESPONSES, {"jsonrpc": "2.0", "id": 3, "result": {"content": []}}, CHAT, ANTHROPIC,
             MCP_CALL]
    data = "\n".join(json.dumps(x) for x in lines).encode() + b"\n\n"
    calls = calls_from_bytes(data, "trace.jsonl")
    assert [(c.index, c.line, c.provider) for c in calls] == [
        (0, 1, "openai-responses"), (1, 3, "openai-chat"), (2, 4, "anthropic"),
        (3, 4, "anthropic-mcp"), (4, 5, "mcp")]
    pretty = json.dumps([RESPONSES, MCP_CALL], indent=2).encode()
    assert len(calls_from_bytes(pretty, "array.json")) == 2


def _bad(doc: Any) -> str:
    with pytest.raises(InputError) as info:
        calls_from_document(doc, "t")
    return str(info.value)


def item(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": arguments}


def test_strict_arguments_without_leaking_values() -> None:
    msg = _bad(item("f", '{"token": "sk-SECRET", "token": "sk-SECRET2"}'))
    assert "not strict JSON" in msg and "SECRET" not in msg and "sk-" not in msg
    msg = _bad(item("f", '{"n": 1e999}'))
    assert "1e999" not in msg
    assert "JSON object" in _bad(item("f", '["sk-SECRET"]'))
    assert "SECRET" not in _bad(item("f", '["sk-SECRET"]'))
    assert "JSON-encoded string" in _bad(item("f", {"a": 1}))
    assert "JSON object" in _bad({"type": "tool_use", "name": "f", "input": "x"})
    with pytest.raises(LimitExceeded):
        calls_from_document(item("f", json.dumps({"x": "a" * (1024 * 1024)})))
    assert "not a supported provider object" in _bad({"hello": "world"})


def test_name_limits_per_provider() -> None:
    assert "1-64" in _bad(item("a" * 65, "{}"))
    assert "1-64" in _bad(item("a.b", "{}"))
    assert names({"type": "mcp_tool_use", "name": "a." + "b" * 126, "input": {}})
    assert "1-128" in _bad({"jsonrpc": "2.0", "method": "tools/call",
                            "params": {"name": "x" * 129}})
    assert "1-128" in _bad({"jsonrpc": "2.0", "method": "tools/call",
                            "params": {"name": "bad name"}})
