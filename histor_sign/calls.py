"""Import completed tool calls from provider traces, as normalized :class:`ObservedCall`.

Supported shapes (whole JSON documents, a JSON array of them, or JSONL mixes):

* OpenAI Responses: ``output[]`` items with ``type: "function_call"``, ``name`` and
  JSON-encoded ``arguments`` (a bare output item is accepted too);
* OpenAI Chat Completions: ``choices[].message.tool_calls[].function`` (``name``, JSON-encoded
  ``arguments``);
* Anthropic: ``content[]`` blocks ``tool_use`` / ``mcp_tool_use`` with an ``input`` object;
* MCP: JSON-RPC ``tools/call`` requests (``params.name``, optional ``params.arguments``).

Streaming deltas, tool results and other envelopes are not reconstructed. String arguments
are decoded with the strict I-JSON parser and must be an object (1 MiB bound each). Call ids
are never kept, and error messages never quote argument values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from histor_sign.canonical import canonical_bytes, parse_json, read_bytes, sha256_digest
from histor_sign.errors import InputError, LimitExceeded

DEFAULT_MAX_ARGUMENT_BYTES = 1024 * 1024
DEFAULT_MAX_CALLS = 4096
DEFAULT_MAX_TRACE_BYTES = 32 * 1024 * 1024

OPENAI_RESPONSES = "openai-responses"
OPENAI_CHAT = "openai-chat"
ANTHROPIC = "anthropic"
ANTHROPIC_MCP = "anthropic-mcp"
MCP = "mcp"

_SHORT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LONG_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


@dataclass(frozen=True)
class ObservedCall:
    """One completed call: where it was, which tool was selected, its argument object."""

    source: str
    index: int  # zero-based within its source file
    name: str
    arguments: dict[str, Any]
    provider: str
    line: int | None = None  # 1-based JSONL line, when the trace is JSONL

    @property
    def arguments_digest(self) -> str:
        """``sha256:`` of the RFC 8785 canonical argument object (safe to print)."""
        return sha256_digest(canonical_bytes(self.arguments))


def _redact(message: str) -> str:
    """Drop quoted strings and number text from a parser message (they may be secrets)."""
    message = re.sub(r'"(?:[^"\\]|\\.)*"', '"…"', message)
    message = re.sub(r"\b(number|integer) \S+", r"\1 …", message)
    return re.sub(r" \(becomes [^)]*\)", "", message)


class _Importer:
    def __init__(self, source: str, max_argument_bytes: int) -> None:
        self.source = source
        self.max_argument_bytes = max_argument_bytes
        self.calls: list[ObservedCall] = []
        self.line: int | None = None

    def where(self) -> str:
        return f"{self.source} line {self.line}" if self.line is not None else self.source

    def fail(self, message: str) -> InputError:
        return InputError(f"{self.where()}: call {len(self.calls)}: {message}")

    def add(self, provider: str, name: Any, arguments: Any, encoded: bool) -> None:
        pattern, limit = ((_LONG_NAME, 128) if provider in (MCP, ANTHROPIC_MCP)
                          else (_SHORT_NAME, 64))
        if not isinstance(name, str):
            raise self.fail("tool name is missing or not a string")
        if not pattern.fullmatch(name):
            allowed = "A-Z a-z 0-9 _ - ." if limit == 128 else "A-Z a-z 0-9 _ -"
            raise self.fail(f"tool name is not 1-{limit} ASCII characters from {allowed}")
        if encoded:
            if not isinstance(arguments, str):
                raise self.fail(f"arguments of {name!r} must be a JSON-encoded string")
            data = arguments.encode("utf-8", "surrogatepass")
            if len(data) > self.max_argument_bytes:
                raise LimitExceeded(
                    f"{self.where()}: call {len(self.calls)}: arguments of {name!r} exceed "
                    f"{self.max_argument_bytes} bytes")
            try:
                arguments = parse_json(data, "arguments", max_bytes=self.max_argument_bytes)
            except InputError as exc:
                detail = _redact(str(exc)).removeprefix("arguments: ")
                raise self.fail(f"arguments of {name!r} are not strict JSON: {detail}") from None
        if not isinstance(arguments, dict):
            raise self.fail(f"arguments of {name!r} must decode to a JSON object")
        if not encoded and len(canonical_bytes(arguments)) > self.max_argument_bytes:
            raise LimitExceeded(
                f"{self.where()}: call {len(self.calls)}: arguments of {name!r} exceed "
                f"{self.max_argument_bytes} bytes")
        self.calls.append(ObservedCall(self.source, len(self.calls), name, arguments, provider,
                                       self.line))

    def document(self, doc: Any, nested: bool = False) -> None:
        if isinstance(doc, list) and not nested:
            for item in doc:
                self.document(item, nested=True)
            return
        if not isinstance(doc, dict):
            raise InputError(f"{self.where()}: not a supported provider object")
        kind = doc.get("type")
        if isinstance(doc.get("output"), list):
            for item in doc["output"]:
                if isinstance(item, dict) and item.get("type") == "function_call":
                    self._responses_item(item)
        elif isinstance(doc.get("choices"), list):
            for choice in doc["choices"]:
                message = choice.get("message") if isinstance(choice, dict) else None
                calls = message.get("tool_calls") if isinstance(message, dict) else None
                for call in calls if isinstance(calls, list) else []:
                    if not isinstance(call, dict) or call.get("type", "function") != "function":
                        continue
                    fn = call.get("function")
                    if not isinstance(fn, dict):
                        raise self.fail("tool_calls entry without a function object")
                    self.add(OPENAI_CHAT, fn.get("name"), fn.get("arguments"), encoded=True)
        elif isinstance(doc.get("content"), list):
            for block in doc["content"]:
                if isinstance(block, dict):
                    self._anthropic_block(block)
        elif kind == "function_call":
            self._responses_item(doc)
        elif kind in ("tool_use", "mcp_tool_use"):
            self._anthropic_block(doc)
        elif "jsonrpc" in doc:
            if doc.get("method") == "tools/call":
                params = doc.get("params")
                if not isinstance(params, dict):
                    raise self.fail("tools/call request without params")
                self.add(MCP, params.get("name"), params.get("arguments", {}), encoded=False)
            # other requests, responses and notifications carry no completed call
        else:
            raise InputError(
                f"{self.where()}: not a supported provider object (expected a Responses "
                "output, Chat Completions choices, Anthropic content, or an MCP tools/call)")

    def _responses_item(self, item: dict[str, Any]) -> None:
        status = item.get("status")
        if status is not None and status != "completed":
            return  # only completed calls are replayed
        self.add(OPENAI_RESPONSES, item.get("name"), item.get("arguments"), encoded=True)

    def _anthropic_block(self, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "tool_use":
            self.add(ANTHROPIC, block.get("name"), block.get("input"), encoded=False)
        elif kind == "mcp_tool_use":
            self.add(ANTHROPIC_MCP, block.get("name"), block.get("input"), encoded=False)


def _is_jsonl(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    import json

    try:
        json.loads(lines[0])
    except ValueError:
        return False
    return True


def calls_from_bytes(
    data: bytes, source: str, *, max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
) -> list[ObservedCall]:
    """All completed calls in one trace (a JSON document or JSONL), in order."""
    importer = _Importer(source, max_argument_bytes)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: invalid UTF-8 at byte {exc.start}") from None
    if _is_jsonl(text):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            importer.line = number
            where = f"{source} line {number}"
            try:
                doc = parse_json(line.encode("utf-8", "surrogatepass"), where)
            except InputError as exc:
                raise InputError(_redact(str(exc))) from None
            importer.document(doc)
    else:
        try:
            doc = parse_json(data, source)
        except InputError as exc:
            raise InputError(_redact(str(exc))) from None
        importer.document(doc)
    return importer.calls


def calls_from_document(doc: Any, source: str = "<call>", *,
                        max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
                        ) -> list[ObservedCall]:
    """Calls in an already parsed provider object (or a list of them)."""
    importer = _Importer(source, max_argument_bytes)
    importer.document(doc)
    return importer.calls


def load_calls(
    paths: Sequence[str],
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_trace_bytes: int = DEFAULT_MAX_TRACE_BYTES,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
) -> list[ObservedCall]:
    """Read trace files (``-`` = stdin once) with aggregate byte and call bounds."""
    if sum(1 for p in paths if p == "-") > 1:
        raise InputError("standard input (-) can be read only once")
    calls: list[ObservedCall] = []
    used = 0
    for path in paths:
        remaining = max_trace_bytes - used
        try:
            data = read_bytes(path, max_bytes=max(remaining, 0))
        except LimitExceeded:
            raise LimitExceeded(
                f"{path}: traces exceed --max-trace-bytes {max_trace_bytes}") from None
        used += len(data)
        calls.extend(calls_from_bytes(data, path, max_argument_bytes=max_argument_bytes))
        if len(calls) > max_calls:
            raise LimitExceeded(f"{len(calls)} observed calls is more than --max-calls {max_calls}")
    return calls
