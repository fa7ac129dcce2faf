"""Tool catalogs: import every supported shape, project tools, reject duplicate names.

Shapes (auto-detected, never rewritten): MCP ``{"tools": [...]}`` and JSON-RPC
``{"result": {"tools": [...]}}``; OpenAI Responses and Chat Completions function tools;
Anthropic tools; a plain JSON array of any of these; a ``histor-sign fetch`` snapshot.
Each tool keeps its source and index so every message can point at it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from histor_sign._internal.limits import DEFAULT_MAX_FILE_BYTES
from histor_sign.canonical import JsonValue, pointer, read_json_file
from histor_sign.errors import InputError, LimitExceeded

#: The seven fields a tool is projected onto for digests, in the order MCP defines them.
PROJECTED_FIELDS: tuple[str, ...] = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
)

SNAPSHOT_TYPE = "histor.snapshot/v1"


class Provider(StrEnum):
    """The API shape a tool definition or an observed call came in.

    Catalogs yield the first four; ``ANTHROPIC_MCP`` (``mcp_tool_use`` blocks) and ``PLAIN``
    (a bare ``{"name", "arguments"}`` object) exist only for observed calls.
    """

    MCP = "mcp"
    OPENAI_RESPONSES = "openai-responses"
    OPENAI_CHAT = "openai-chat"
    ANTHROPIC = "anthropic"
    ANTHROPIC_MCP = "anthropic-mcp"
    PLAIN = "plain"


@dataclass(frozen=True, slots=True)
class ToolRef:
    """Where a tool is — name, source, index, JSON pointer — without its content: what a
    finding keeps of each tool it is about."""

    name: str
    source: str
    index: int
    pointer: str = ""


@dataclass(frozen=True)
class Tool:
    """One imported tool: the object as found (evidence) plus where it came from."""

    name: str
    raw: Mapping[str, Any]
    source: str
    index: int
    pointer: str
    provider: str
    input_schema: JsonValue = None
    has_input_schema: bool = False

    @cached_property
    def ref(self) -> ToolRef:
        """This tool's :class:`ToolRef`, made once: a large scan's findings share it."""
        return ToolRef(self.name, self.source, self.index, self.pointer)

    @property
    def location(self) -> str:
        """``file#/json/pointer`` — how messages name this tool."""
        return f"{self.source}#{self.pointer}"

    @property
    def description(self) -> str:
        """The description if it is a string, else ``""`` (never trusted, never None)."""
        value = self.raw.get("description")
        return value if isinstance(value, str) else ""

    @property
    def annotations(self) -> Mapping[str, Any]:
        """MCP annotations if the tool has an object of them, else an empty mapping."""
        value = self.raw.get("annotations") if self.provider == Provider.MCP else None
        return value if isinstance(value, dict) else {}

    def projected(self) -> dict[str, Any]:
        """The seven-field projection used for digests (only keys the server sent)."""
        if self.provider == Provider.MCP:
            return {k: self.raw[k] for k in PROJECTED_FIELDS if k in self.raw}
        # Non-MCP tools are scanned, not signed; map their schema key for comparison.
        out: dict[str, Any] = {"name": self.name}
        if self.description or "description" in self.raw:
            out["description"] = self.raw.get("description")
        if self.has_input_schema:
            out["inputSchema"] = self.input_schema
        return out


@dataclass(frozen=True)
class Catalog:
    """Tools imported from one document, in document order.

    ``shape`` says which layout was found (``tools``, ``jsonrpc``, ``array``, ``snapshot``,
    ``python``); ``capture`` is a fetch snapshot's capture context, else None.
    """

    source: str
    tools: tuple[Tool, ...]
    shape: str
    capture: Mapping[str, Any] | None = None

    @property
    def providers(self) -> set[str]:
        """Every provider shape present (``mcp``, ``openai-chat``, ...)."""
        return {t.provider for t in self.tools}


def _classify(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any], str | None]:
    """Return (provider, the object holding name/description, schema key or None)."""
    fn = obj.get("function")
    if obj.get("type") == "function" and isinstance(fn, dict):
        return Provider.OPENAI_CHAT, fn, "parameters"
    if obj.get("type") == "function":
        return Provider.OPENAI_RESPONSES, obj, "parameters"
    if "input_schema" in obj and "inputSchema" not in obj:
        return Provider.ANTHROPIC, obj, "input_schema"
    return Provider.MCP, obj, "inputSchema"


def tool_from_object(obj: Any, source: str, index: int, ptr: str) -> Tool:
    """Import one tool object, checking only what every later step relies on."""
    where = f"{source}#{ptr}"
    if not isinstance(obj, dict):
        raise InputError(f"{where}: a tool must be a JSON object, got {_type_name(obj)}")
    provider, holder, schema_key = _classify(obj)
    name = holder.get("name")
    if not isinstance(name, str):
        missing = "missing" if name is None and "name" not in holder else _type_name(name)
        raise InputError(f"{where}: tool name must be a string, got {missing}")
    if name == "":
        raise InputError(f"{where}: tool name must not be empty")
    has_schema = schema_key is not None and schema_key in holder
    if provider == Provider.MCP and not has_schema:
        nested = (" (it looks like a server entry with its tools nested inside)"
                  if "tools" in obj else "")
        raise InputError(
            f"{where}: {name!r} is not an MCP tool: it has no \"inputSchema\"{nested}; expected "
            "a tool list: {\"tools\": [{\"name\": ..., \"inputSchema\": {...}}]}, a JSON-RPC "
            "result or fetch snapshot holding one, or an array of MCP, OpenAI or Anthropic tools"
        )
    schema = holder.get(schema_key) if has_schema and schema_key else None
    return Tool(
        name=name,
        raw=obj,
        source=source,
        index=index,
        pointer=ptr,
        provider=provider,
        input_schema=schema,
        has_input_schema=has_schema,
    )


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def parse_catalog(document: JsonValue, source: str, *, max_tools: int | None = None) -> Catalog:
    """Import tools from a parsed document of any supported shape."""
    capture: Mapping[str, Any] | None = None
    items: Any
    if isinstance(document, list):
        items, base, shape = document, [], "array"
    elif isinstance(document, dict):
        if document.get("type") == SNAPSHOT_TYPE:
            items, base, shape = document.get("tools"), ["tools"], "snapshot"
            raw_capture = document.get("capture")
            capture = raw_capture if isinstance(raw_capture, dict) else None
        elif "tools" in document:
            items, base, shape = document["tools"], ["tools"], "tools"
        elif isinstance(document.get("result"), dict) and "tools" in document["result"]:
            items, base, shape = document["result"]["tools"], ["result", "tools"], "jsonrpc"
        elif "error" in document and "jsonrpc" in document:
            raise InputError(f"{source}: is a JSON-RPC error response, not a tool list")
        else:
            raise InputError(
                f"{source}: not a tool catalog: expected a \"tools\" array, a JSON-RPC "
                "result with tools, a fetch snapshot, or a JSON array of tools"
            )
    else:
        raise InputError(
            f"{source}: not a tool catalog: the document is {_type_name(document)}"
        )
    if not isinstance(items, list):
        raise InputError(f"{source}#{pointer(base)}: \"tools\" must be an array")
    if max_tools is not None and len(items) > max_tools:
        raise LimitExceeded(
            f"{source}: {len(items)} tools is more than `max_tools` {max_tools}",
            limit="max_tools", value=max_tools,
        )
    tools = tuple(
        tool_from_object(obj, source, i, pointer([*base, i])) for i, obj in enumerate(items)
    )
    return Catalog(source=source, tools=tools, shape=shape, capture=capture)


def load_catalog(
    path: str | Path, *, max_tools: int | None = None, max_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> Catalog:
    """Read a catalog file (``-`` for stdin) strictly and import its tools."""
    source = str(path)
    return parse_catalog(read_json_file(source, max_bytes=max_bytes), source, max_tools=max_tools)


def load_catalogs(
    paths: Sequence[str | Path], *, max_tools: int | None = None
) -> list[Catalog]:
    """Load several catalogs; ``max_tools`` bounds the total across all of them."""
    if sum(1 for p in paths if str(p) == "-") > 1:
        raise InputError("standard input (-) can be read only once")
    catalogs: list[Catalog] = []
    total = 0
    for path in paths:
        catalog = load_catalog(path)
        total += len(catalog.tools)
        if max_tools is not None and total > max_tools:
            raise LimitExceeded(
                f"{total} imported tools is more than `max_tools` {max_tools}",
                limit="max_tools", value=max_tools,
            )
        catalogs.append(catalog)
    return catalogs


def find_duplicates(tools: Iterable[Tool]) -> list[tuple[Tool, Tool]]:
    """Every (first, later) pair of tools sharing a name, in input order."""
    first: dict[str, Tool] = {}
    pairs: list[tuple[Tool, Tool]] = []
    for tool in tools:
        if tool.name in first:
            pairs.append((first[tool.name], tool))
        else:
            first[tool.name] = tool
    return pairs


def reject_duplicates(tools: Iterable[Tool]) -> None:
    """Duplicate names are an error, never "last one wins": a client would call whichever
    definition it happened to keep, so a signature over either would be meaningless."""
    pairs = find_duplicates(tools)
    if pairs:
        a, b = pairs[0]
        more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
        raise InputError(
            f"duplicate tool name {a.name!r}: {a.location} and {b.location}{more}"
        )


def require_mcp(tools: Iterable[Tool]) -> None:
    """Only MCP tool definitions are signed as revisions: the projection and digests are
    defined on MCP's fields, so another provider's tool would be signed half-read."""
    for tool in tools:
        if tool.provider != Provider.MCP:
            raise InputError(
                f"{tool.location}: {tool.provider} tool {tool.name!r} is not an MCP tool "
                "definition; only MCP catalogs can be digested or signed (use scan for others)"
            )


def tools_from_dicts(items: Iterable[Any], source: str = "<tools>") -> list[Tool]:
    """Import plain Python tool dicts (the library API's input)."""
    return [tool_from_object(obj, source, i, pointer([i])) for i, obj in enumerate(items)]


class _HasCatalog(Protocol):
    def to_catalog(self) -> Catalog: ...


#: Everything the library accepts where it needs a list of tools.
ToolsLike = Catalog | _HasCatalog | Mapping[str, Any] | Iterable[Any]


def as_tools(value: ToolsLike) -> list[Tool]:
    """The one coercion from what a caller holds to imported tools.

    Accepts a :class:`Catalog`, a fetch ``Snapshot`` (anything with ``to_catalog()``), a
    parsed catalog document (a mapping in any supported shape), or an iterable of
    :class:`Tool` objects and/or plain tool dicts. Tools keep their order; a dict is
    imported with ``<tools>`` as its source. Raises :class:`InputError` for anything else.
    """
    if isinstance(value, Catalog):
        return list(value.tools)
    to_catalog = getattr(value, "to_catalog", None)
    if callable(to_catalog):
        catalog = to_catalog()
        if isinstance(catalog, Catalog):
            return list(catalog.tools)
    if isinstance(value, Mapping):
        return list(parse_catalog(dict(value), "<catalog>").tools)
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise InputError(
            f"expected tools (a Catalog, Snapshot, or list of tools), got {type(value).__name__}"
        )
    items = list(value)
    if all(isinstance(t, Tool) for t in items):
        return items
    return [
        t if isinstance(t, Tool) else tool_from_object(t, "<tools>", i, pointer([i]))
        for i, t in enumerate(items)
    ]
