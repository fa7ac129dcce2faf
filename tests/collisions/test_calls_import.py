"""Call import: every provider shape, JSONL mixes, strict argument decoding, name limits,
and the single-call import the guard decides with."""

from __future__ import annotations

import json
from typing import Any

import pytest

from histor_sign._call_import import (
    CallError,
    CallProblem,
    calls_from_bytes,
    calls_from_document,
    import_call,
    import_call_bytes,
)
from histor_sign.errors import InputError, LimitExceeded
from histor_sign.models import ObservedCall

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


# --- the single-call import the guard uses (same importer, same shapes) -----------------

def one(doc: Any) -> ObservedCall:
    call = import_call(doc)
    assert isinstance(call, ObservedCall), call
    return call


def problem(doc: Any) -> CallProblem:
    result = import_call(doc)
    assert isinstance(result, CallProblem), result
    assert "SECRET" not in result.message
    return result


def test_single_call_reads_every_replay_shape_and_the_plain_one() -> None:
    for doc in (RESPONSES, CHAT, MCP_CALL, ANTHROPIC["content"][1]):
        assert one(doc).arguments == ARGS
    chat_call = CHAT["choices"][0]["message"]["tool_calls"][0]
    message = CHAT["choices"][0]["message"]
    assert one(chat_call).provider == one(message).provider == "openai-chat"
    plain = one({"name": "lookup.customer", "arguments": json.dumps(ARGS)})
    assert (plain.provider, plain.arguments) == ("plain", ARGS)
    # Replay reads the same extra shapes: one importer, one set of shapes.
    assert names([chat_call, message, {"name": "lookup.customer", "arguments": ARGS}]) == [
        ("openai-chat", "lookup_customer", 0), ("openai-chat", "lookup_customer", 1),
        ("plain", "lookup.customer", 2)]


def test_single_call_decodes_json_text_in_any_shape_replay_stays_strict() -> None:
    text = json.dumps(ARGS)
    mcp = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "lookup", "arguments": text}}
    assert one(mcp).arguments == ARGS
    assert one({"type": "tool_use", "name": "lookup", "input": text}).arguments == ARGS
    assert one(item("lookup", ARGS)).arguments == ARGS
    assert one({"type": "function_call", "name": "lookup"}).arguments == {}  # absent = {}
    assert "JSON object" in _bad(mcp)
    assert "JSON-encoded string" in _bad(item("lookup", ARGS))


@pytest.mark.parametrize(("doc", "code"), [
    ({"name": "f", "arguments": '{"token": "sk-SECRET",'}, "arguments-malformed"),
    ({"name": "f", "arguments": '{"a": "SECRET", "a": 1}'}, "arguments-malformed"),
    ({"name": "f", "arguments": {"x": float("nan")}}, "arguments-malformed"),
    ({"name": "f", "arguments": '["SECRET"]'}, "arguments-not-object"),
    ({"name": "f", "arguments": None}, "arguments-not-object"),
    ({"name": "f", "arguments": json.dumps({"x": "a" * (1024 * 1024)})}, "arguments-too-large"),
    ({"name": "f", "arguments": {"x": "a" * (1024 * 1024)}}, "arguments-too-large"),
    ({"name": 5}, "call-malformed"),
    ({"name": "bad name"}, "call-malformed"),
    ({"arguments": {}}, "call-malformed"),
    ({"name": "f", "arguments": {}, "description": "a tool definition"}, "call-malformed"),
    ({"tool_calls": []}, "call-malformed"),
    ({"output": [item("a", "{}"), item("b", "{}")]}, "call-malformed"),
    ({"output": [{**item("a", "{}"), "status": "incomplete"}]}, "call-malformed"),
    ([], "call-malformed"),
    ("SECRET", "call-malformed"),
])
def test_single_call_problems_are_values_not_exceptions(doc: Any, code: str) -> None:
    found = problem(doc)
    assert found.code == code, found
    if code.startswith("arguments"):
        assert found.tool == "f"


def test_same_problem_is_an_input_error_for_replay() -> None:
    with pytest.raises(CallError) as info:
        calls_from_document({"name": "f", "arguments": "[1]"}, "t")
    assert isinstance(info.value, InputError)
    assert info.value.problem.code == "arguments-not-object"
    assert str(info.value).startswith("t: call 0: arguments of 'f'")
    with pytest.raises(LimitExceeded) as too_large:
        calls_from_document({"name": "f", "arguments": {"x": "a" * (1024 * 1024)}})
    assert isinstance(too_large.value, CallError)


def test_single_call_from_bytes() -> None:
    assert isinstance(import_call_bytes(json.dumps(MCP_CALL).encode()), ObservedCall)
    broken = import_call_bytes(b'{"name": "f", "arguments": {"token": "sk-SECRET"', "c.json")
    assert isinstance(broken, CallProblem) and broken.code == "call-malformed"
    assert "SECRET" not in broken.message and "not a strict JSON document" in broken.message
    dup = import_call_bytes(b'{"name": "f", "name": "sk-SECRET"}')
    assert isinstance(dup, CallProblem) and "SECRET" not in dup.message


def test_jsonl_splits_on_line_feed_only() -> None:
    # U+2028, U+2029 and U+0085 are legal raw inside JSON strings; str.splitlines breaks
    # lines there. CRLF line ends stay fine.
    odd = {"name": "lookup.customer", "arguments": {"note": "a\u2028b\u2029c\u0085d"}}
    call = {**MCP_CALL, "params": odd}
    line = json.dumps(call, ensure_ascii=False)
    data = (line + "\r\n" + line + "\n").encode()
    calls = calls_from_bytes(data, "trace.jsonl")
    assert [c.line for c in calls] == [1, 2]
    assert calls[0].arguments == odd["arguments"]


def test_hostile_jsonl_lines_are_input_errors() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(InputError, match=r"trace\.jsonl line 1: JSON nesting"):
        calls_from_bytes(deep + b"\n" + json.dumps(MCP_CALL).encode(), "trace.jsonl")
    huge = b'{"n": ' + b"9" * 5000 + b"}"
    with pytest.raises(InputError, match=r"trace.jsonl line 2: integer … is outside.* at /n"):
        calls_from_bytes(json.dumps(MCP_CALL).encode() + b"\n" + huge, "trace.jsonl")
    with pytest.raises(InputError, match=r"integer … is outside.* at /params/arguments/n"):
        calls_from_bytes(json.dumps(MCP_CALL).replace('"cus_1"', "9" * 5000).encode()
                         .replace(b'"customer_id"', b'"n"'), "call.json")
    msg = _bad(item("f", '{"n": ' + "9" * 5000 + "}"))
    assert "not strict JSON" in msg and "999" not in msg
