"""Import tool calls from provider traces, as normalized :class:`ObservedCall`.

One importer serves ``replay`` (every completed call in a trace) and ``guard`` (exactly one
call to decide). Supported shapes (whole JSON documents, a JSON array of them, or JSONL):

* OpenAI Responses: ``output[]`` items with ``type: "function_call"``, ``name`` and
  JSON-encoded ``arguments`` (a bare output item is accepted too); only ``completed`` items;
* OpenAI Chat Completions: ``choices[].message.tool_calls[].function`` (``name``, JSON-encoded
  ``arguments``); an assistant message or a single tool call is accepted too;
* Anthropic: ``content[]`` blocks ``tool_use`` / ``mcp_tool_use`` with an ``input`` object
  (a bare block is accepted too);
* MCP: JSON-RPC ``tools/call`` requests (``params.name``, optional ``params.arguments``);
* plain ``{"name", "arguments"}`` (the guard's call file; arguments an object or JSON text).

Streaming deltas, tool results and other envelopes are not reconstructed. String arguments
are decoded with the strict I-JSON parser and must be an object (1 MiB bound each). Call ids
are never kept, and messages never quote argument values: a call that cannot be imported
raises :class:`CallError` (an ``InputError``) whose ``code`` says why, and
:func:`import_call` returns that as a :class:`CallProblem` instead, for the guard to deny.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from histor_sign._escape import printable as printable  # the one escaper
from histor_sign._limits import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_TRACE_BYTES,
)
from histor_sign.canonical import (
    JsonValue,
    canonical_bytes,
    fits_json_bound,
    is_json_syntax,
    parse_json,
    pointer,
    read_bytes,
)
from histor_sign.errors import InputError, LimitExceeded
from histor_sign.models import ObservedCall, Provider

# Why a call cannot be imported (the guard's deny reason codes).
CALL_MALFORMED = "call-malformed"
ARGUMENTS_MALFORMED = "arguments-malformed"
ARGUMENTS_NOT_OBJECT = "arguments-not-object"
ARGUMENTS_TOO_LARGE = "arguments-too-large"

_SHORT_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_LONG_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_LONG_NAME_PROVIDERS = (Provider.MCP, Provider.ANTHROPIC_MCP, Provider.PLAIN)
_PLAIN_KEYS = frozenset({"name", "arguments", "_meta"})
#: What a plain ``{"name", "arguments"}`` call's tool name must look like.
PLAIN_NAME = _LONG_NAME
SHOWN_CHARACTERS = 64  # of a model-chosen name or pointer segment in a message
_ABSENT: Any = object()  # an argument member the call does not have


@dataclass(frozen=True)
class CallProblem:
    """Why a document is not one decidable call: a reason ``code`` (``call-malformed``,
    ``arguments-malformed``, ``arguments-not-object``, ``arguments-too-large``), a
    value-free ``message``, and the tool name when it was readable."""

    code: str
    message: str
    tool: str | None = None


class CallError(InputError):
    """A call that cannot be imported. ``str()`` names the place; ``problem`` does not."""

    def __init__(self, where: str, problem: CallProblem) -> None:
        super().__init__(f"{where}: {problem.message}")
        self.problem = problem


class CallTooLarge(CallError, LimitExceeded):
    """A call's arguments exceed the per-call byte bound."""


# ---------------------------------------------------------------- safe display
def shown_name(name: object) -> str:
    """A model-chosen *name* (argument or tool) for a message: clipped, quoted, escaped."""
    text = str(name)
    clipped = text[:SHOWN_CHARACTERS]
    return json.dumps(clipped, ensure_ascii=True) + ("…" if len(text) > SHOWN_CHARACTERS else "")


def shown_pointer(parts: Iterable[str | int]) -> str:
    """The JSON pointer of ``parts``, each segment clipped and non-printables escaped.

    Exact (RFC 6901) unless a key is longer than ``SHOWN_CHARACTERS`` or not printable:
    keys are chosen by the model, and a pointer is printed as it is.
    """
    clipped = [
        p if isinstance(p, int) or len(p) <= SHOWN_CHARACTERS else p[:SHOWN_CHARACTERS] + "…"
        for p in parts
    ]
    return printable(pointer(clipped), limit=len(clipped) * (SHOWN_CHARACTERS + 2) + 16)


def redacted(error: InputError) -> str:
    """A parser message without quoted strings or number text (they may be secrets)."""
    message = re.sub(r'"(?:[^"\\]|\\.)*"', '"…"', str(error))
    message = re.sub(r"\b(number|integer) \S+", r"\1 …", message)
    return printable(re.sub(r" \(becomes [^)]*\)", "", message), limit=400)


# ---------------------------------------------------------------- arguments
def _decode(arguments: Any, encoded: bool | None, max_bytes: int) -> tuple[dict[str, Any] | None,
                                                                           str, str]:
    """``(object, "", "")`` or ``(None, code, detail)``. ``encoded``: True = must be JSON
    text, False = must be an object, None = either (JSON text is decoded first)."""
    if encoded is None:
        encoded = isinstance(arguments, str)
    if encoded:
        if not isinstance(arguments, str):
            return None, ARGUMENTS_NOT_OBJECT, "must be a JSON-encoded string"
        # inline, not a helper: this is the guard's path for JSON-text arguments
        data = arguments.encode("utf-8", "surrogatepass")
        if len(data) > max_bytes:
            return None, ARGUMENTS_TOO_LARGE, f"exceed {max_bytes} bytes"
        try:
            arguments = parse_json(data, "arguments", max_bytes=max_bytes)
        except InputError as exc:
            detail = redacted(exc).removeprefix("arguments: ")
            return None, ARGUMENTS_MALFORMED, f"are not strict JSON: {detail}"
    if not isinstance(arguments, dict):
        return None, ARGUMENTS_NOT_OBJECT, "must decode to a JSON object"
    if not encoded and not fits_json_bound(arguments, max_bytes):
        return _exact_object(arguments, max_bytes)
    return arguments, "", ""


def _exact_object(arguments: dict[str, Any], max_bytes: int) -> tuple[dict[str, Any] | None,
                                                                      str, str]:
    """An in-memory object the quick bound could not clear: measured exactly, and rebuilt
    as the JSON value itself in exact types (a host may hold str or int subclasses, which
    JSON and the digest read as plain values but a validation engine may refuse)."""
    try:
        canonical = canonical_bytes(arguments)
    except LimitExceeded:
        return None, ARGUMENTS_MALFORMED, "are nested too deeply"
    except InputError:
        return None, ARGUMENTS_MALFORMED, "are not JSON values"
    if len(canonical) > max_bytes:
        return None, ARGUMENTS_TOO_LARGE, f"exceed {max_bytes} bytes"
    return json.loads(canonical), "", ""


def decode_arguments(
    arguments: Any, tool: str, *, max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
) -> dict[str, Any] | CallProblem:
    """A call's arguments as an object (JSON text is decoded strictly first), or the
    problem with them — the guard's semantics for arguments given on their own."""
    value, code, detail = _decode(arguments, None, max_argument_bytes)
    if value is None:
        return CallProblem(code, f"arguments of {shown_name(tool)} {detail}", tool)
    return value


# ---------------------------------------------------------------- documents
class _Importer:
    """Walks provider documents and collects calls. ``call_file`` is the guard's reading:
    arguments may be an object or JSON text in every shape, and absent arguments are ``{}``."""

    def __init__(self, source: str, max_argument_bytes: int, call_file: bool = False) -> None:
        self.source = source
        self.max_argument_bytes = max_argument_bytes
        self.call_file = call_file
        self.calls: list[ObservedCall] = []
        self.line: int | None = None

    def where(self) -> str:
        return f"{self.source} line {self.line}" if self.line is not None else self.source

    def fail(self, message: str, code: str = CALL_MALFORMED, tool: str | None = None,
             call_index: bool = True) -> CallError:
        where = f"{self.where()}: call {len(self.calls)}" if call_index else self.where()
        error = CallTooLarge if code == ARGUMENTS_TOO_LARGE else CallError
        return error(where, CallProblem(code, message, tool))

    def unsupported(self) -> CallError:
        return self.fail(
            "not a supported provider object (expected a Responses output or function_call, "
            "Chat Completions choices or tool_calls, Anthropic content or tool_use, an MCP "
            'tools/call, or {"name", "arguments"})', call_index=False)

    def add(self, provider: str, name: Any, arguments: Any, encoded: bool | None) -> None:
        pattern, limit = ((_LONG_NAME, 128) if provider in _LONG_NAME_PROVIDERS
                          else (_SHORT_NAME, 64))
        if not isinstance(name, str):
            raise self.fail("tool name is missing or not a string")
        if not pattern.fullmatch(name):
            allowed = "A-Z a-z 0-9 _ - ." if limit == 128 else "A-Z a-z 0-9 _ -"
            raise self.fail(f"tool name is not 1-{limit} ASCII characters from {allowed}")
        if self.call_file:
            encoded = None
            if arguments is _ABSENT:
                arguments = {}
        value, code, detail = _decode(arguments, encoded, self.max_argument_bytes)
        if value is None:
            raise self.fail(f"arguments of {name!r} {detail}", code, name)
        self.calls.append(ObservedCall(self.source, len(self.calls), name, value, provider,
                                       self.line))

    def document(self, doc: Any, nested: bool = False) -> None:
        """The calls of one document (or, at the top, of a list of documents), tried in order
        as a provider's response, one call item, an MCP message, or a plain call."""
        if isinstance(doc, list) and not nested:
            for item in doc:
                self.document(item, nested=True)
            return
        if not isinstance(doc, dict):
            raise self.unsupported()
        if self._response(doc) or self._call_item(doc) or self._mcp_message(doc):
            return
        if "name" in doc and _PLAIN_KEYS.issuperset(doc):
            self.add(Provider.PLAIN, doc["name"], doc.get("arguments", {}), encoded=None)
        else:
            raise self.unsupported()

    def _response(self, doc: dict[str, Any]) -> bool:
        """A provider's response carrying a list of calls (Responses ``output``, Chat
        ``choices`` or ``tool_calls``, Anthropic ``content``); False when it is none."""
        if isinstance(doc.get("output"), list):
            for item in doc["output"]:
                if isinstance(item, dict) and item.get("type") == "function_call":
                    self._responses_item(item)
        elif isinstance(doc.get("choices"), list):
            self._chat_choices(doc["choices"])
        elif isinstance(doc.get("tool_calls"), list):
            self._chat_tool_calls(doc["tool_calls"])
        elif isinstance(doc.get("content"), list):
            for block in doc["content"]:
                if isinstance(block, dict):
                    self._anthropic_block(block)
        else:
            return False
        return True

    def _chat_choices(self, choices: list[Any]) -> None:
        """The tool calls of every choice's message in a Chat Completions response."""
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            calls = message.get("tool_calls") if isinstance(message, dict) else None
            self._chat_tool_calls(calls if isinstance(calls, list) else [])

    def _call_item(self, doc: dict[str, Any]) -> bool:
        """One provider call item by its ``type``; False when it is none."""
        kind = doc.get("type")
        if kind == "function_call":
            self._responses_item(doc)
        elif kind == "function" and "function" in doc:
            self._chat_tool_calls([doc])
        elif kind in ("tool_use", "mcp_tool_use"):
            self._anthropic_block(doc)
        else:
            return False
        return True

    def _mcp_message(self, doc: dict[str, Any]) -> bool:
        """An MCP JSON-RPC message: a ``tools/call`` request is a call, any other message
        carries no completed call; False when it is not one."""
        if "jsonrpc" not in doc and doc.get("method") != "tools/call":
            return False
        if doc.get("method") == "tools/call":
            params = doc.get("params")
            if not isinstance(params, dict):
                raise self.fail("tools/call request without params")
            self.add(Provider.MCP, params.get("name"), params.get("arguments", {}),
                     encoded=False)
        return True

    def _responses_item(self, item: dict[str, Any]) -> None:
        status = item.get("status")
        if status is not None and status != "completed":
            return  # only completed calls are replayed or decided
        self.add(Provider.OPENAI_RESPONSES, item.get("name"), item.get("arguments", _ABSENT),
                 encoded=True)

    def _chat_tool_calls(self, calls: list[Any]) -> None:
        for call in calls:
            if not isinstance(call, dict) or call.get("type", "function") != "function":
                continue
            fn = call.get("function")
            if not isinstance(fn, dict):
                raise self.fail("tool_calls entry without a function object")
            self.add(Provider.OPENAI_CHAT, fn.get("name"), fn.get("arguments", _ABSENT),
                     encoded=True)

    def _anthropic_block(self, block: dict[str, Any]) -> None:
        kind = block.get("type")
        if kind == "tool_use":
            self.add(Provider.ANTHROPIC, block.get("name"), block.get("input", _ABSENT),
                     encoded=False)
        elif kind == "mcp_tool_use":
            self.add(Provider.ANTHROPIC_MCP, block.get("name"), block.get("input", _ABSENT),
                     encoded=False)


def import_call(
    document: JsonValue, source: str = "call", *,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
) -> ObservedCall | CallProblem:
    """Exactly one call from a parsed document, with the guard's semantics: arguments may be
    an object or JSON text in any shape. Anything else is a :class:`CallProblem`, never an
    exception — the guard decides model output, and undecidable output is a deny."""
    importer = _Importer(source, max_argument_bytes, call_file=True)
    try:
        importer.document(document)
    except CallError as exc:
        return exc.problem
    if len(importer.calls) != 1:
        return CallProblem(
            CALL_MALFORMED,
            f"expected exactly one completed tool call, found {len(importer.calls)}; "
            "guard decides one call at a time",
        )
    return importer.calls[0]


def import_call_bytes(
    data: bytes, source: str = "call", *,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
) -> ObservedCall | CallProblem:
    """:func:`import_call` from raw bytes; text that is not strict JSON is a problem too."""
    try:
        document = parse_json(data, source)
    except InputError as exc:
        return CallProblem(CALL_MALFORMED, f"not a strict JSON document: {redacted(exc)}")
    return import_call(document, source, max_argument_bytes=max_argument_bytes)


def _lines(data: bytes) -> list[bytes]:
    """JSONL lines: split on LF only (one trailing CR dropped), never on the other line
    breaks ``str.splitlines`` knows — U+2028, U+2029, U+0085 are legal inside JSON strings."""
    return [line.removesuffix(b"\r") for line in data.split(b"\n")]


def _is_jsonl(lines: list[bytes]) -> bool:
    """Two or more non-blank lines, the first a complete JSON value by itself."""
    filled = [line for line in lines if line.strip()]
    return len(filled) >= 2 and is_json_syntax(filled[0].decode("utf-8"))


def calls_from_bytes(
    data: bytes, source: str, *, max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
) -> list[ObservedCall]:
    """All completed calls in one trace (a JSON document or JSONL), in order."""
    importer = _Importer(source, max_argument_bytes)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: invalid UTF-8 at byte {exc.start}") from None
    lines = _lines(data)
    if _is_jsonl(lines):
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            importer.line = number
            where = f"{source} line {number}"
            try:
                doc = parse_json(line, where)
            except InputError as exc:
                raise InputError(redacted(exc)) from None
            importer.document(doc)
    else:
        try:
            doc = parse_json(data, source)
        except InputError as exc:
            raise InputError(redacted(exc)) from None
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
                f"{path}: traces exceed the bound of {max_trace_bytes} bytes "
                f"(`max_trace_bytes` {max_trace_bytes})",
                limit="max_trace_bytes", value=max_trace_bytes) from None
        used += len(data)
        calls.extend(calls_from_bytes(data, path, max_argument_bytes=max_argument_bytes))
        if len(calls) > max_calls:
            raise LimitExceeded(
                f"{len(calls)} observed calls is more than the bound of {max_calls} "
                f"(`max_calls` {max_calls})",
                limit="max_calls", value=max_calls)
    return calls
