"""Turn one call document of any provider shape into ``(tool name, arguments)``.

The guard decides model output, so a call that cannot be understood is a *deny* with a
reason, not a crash and not an exit-2 "bad input": :class:`CallRejected` carries the
reason code. Shapes: ``{"name", "arguments"}``; MCP ``tools/call`` requests; OpenAI
Responses ``function_call`` items (or a response holding one in ``output``); Chat
Completions ``tool_calls`` (a tool call, a message, or a completion); Anthropic
``tool_use`` / ``mcp_tool_use`` blocks (or a message holding one).

TODO(integration): unify with ``histor_sign.calls`` (the replay importer) so both accept
exactly the same shapes; this module covers the single-call case only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from histor_sign.canonical import JsonValue, parse_json
from histor_sign.errors import InputError


class CallRejected(Exception):
    """The call document is not a decidable call; ``code`` is the deny reason code."""

    def __init__(self, code: str, message: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.tool = tool


@dataclass(frozen=True)
class Call:
    name: str
    arguments: Mapping[str, Any]
    shape: str


def normalize_call(document: JsonValue) -> Call:
    """Find the single tool call in ``document`` and decode its arguments."""
    name, raw_args, shape = _locate(document)
    return Call(name=name, arguments=decode_arguments(raw_args, name), shape=shape)


def decode_arguments(raw: Any, tool: str | None = None) -> Mapping[str, Any]:
    """Arguments as an object; a JSON string is decoded strictly (I-JSON) first."""
    if isinstance(raw, str):
        try:
            raw = parse_json(raw.encode("utf-8", "surrogatepass"), "arguments")
        except InputError as exc:
            raise CallRejected(
                "arguments-malformed",
                "arguments string is not valid strict JSON" + _where(exc.message),
                tool,
            ) from None
    if not isinstance(raw, dict):
        raise CallRejected(
            "arguments-not-object", f"arguments must be a JSON object, got {json_type(raw)}", tool
        )
    return raw


def _where(message: str) -> str:
    """Keep only the location of a parse error — its text may quote argument values."""
    marker = message.rfind(" at ")
    return "" if marker < 0 else message[marker:]


def _locate(doc: Any) -> tuple[str, Any, str]:
    if not isinstance(doc, dict):
        raise CallRejected("call-malformed", f"a call must be a JSON object, got {json_type(doc)}")
    kind = doc.get("type")
    # MCP JSON-RPC tools/call request.
    if doc.get("method") == "tools/call":
        params = doc.get("params")
        if not isinstance(params, dict):
            raise CallRejected("call-malformed", "tools/call request has no params object")
        return _name(params), params.get("arguments", {}), "mcp-tools-call"
    # OpenAI Responses: a function_call item, or a response whose output holds one.
    if kind == "function_call":
        return _name(doc), doc.get("arguments", {}), "openai-responses"
    if isinstance(doc.get("output"), list):
        items = [
            i for i in doc["output"] if isinstance(i, dict) and i.get("type") == "function_call"
        ]
        return _locate(_single(items, "function_call items"))
    # Chat Completions: a tool call, an assistant message, or a whole completion.
    if kind == "function" and isinstance(doc.get("function"), dict):
        fn = doc["function"]
        return _name(fn), fn.get("arguments", {}), "openai-chat"
    if isinstance(doc.get("tool_calls"), list):
        return _locate(_single(doc["tool_calls"], "tool_calls"))
    if isinstance(doc.get("choices"), list):
        choice = _single(doc["choices"], "choices")
        message = choice.get("message") if isinstance(choice, dict) else None
        return _locate(message)
    # Anthropic: a tool_use / mcp_tool_use block, or a message holding one.
    if kind in ("tool_use", "mcp_tool_use", "server_tool_use"):
        return _name(doc), doc.get("input", {}), "anthropic"
    if isinstance(doc.get("content"), list):
        blocks = [
            b
            for b in doc["content"]
            if isinstance(b, dict) and b.get("type") in ("tool_use", "mcp_tool_use")
        ]
        return _locate(_single(blocks, "tool_use blocks"))
    # The plain shape (also MCP tools/call params).
    if "name" in doc:
        return _name(doc), doc.get("arguments", {}), "plain"
    raise CallRejected(
        "call-malformed",
        "not a tool call: expected {\"name\", \"arguments\"} or a provider call shape",
    )


def _single(items: list[Any], what: str) -> Any:
    if len(items) != 1:
        raise CallRejected(
            "call-malformed",
            f"expected exactly one call, found {len(items)} {what}; guard decides one call",
        )
    return items[0]


def _name(holder: Mapping[str, Any]) -> str:
    name = holder.get("name")
    if not isinstance(name, str) or not name:
        raise CallRejected("call-malformed", "the call has no tool name string")
    return name


def json_type(value: Any) -> str:
    """JSON type name of a value (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
