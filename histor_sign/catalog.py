"""Tool catalogs: import every supported shape, project tools, reject duplicate names.

Shapes (auto-detected, never rewritten): MCP ``{"tools": [...]}`` and JSON-RPC
``{"result": {"tools": [...]}}``; OpenAI Responses and Chat Completions function tools;
Anthropic tools; a plain JSON array of any of these; a ``histor-sign fetch`` snapshot.
Each tool keeps its source and index so every message can point at it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from histor_sign._limits import DEFAULT_MAX_FILE_BYTES
from histor_sign.canonical import JsonValue, pointer, read_bytes
from histor_sign.errors import InputError, LimitExceeded
from histor_sign.models import (
    Catalog,
    Provider,
    Snapshot,
    Tool,
    parse_catalog,
    parse_catalog_bytes,
    tool_from_object,
)


def load_catalog(
    path: str | Path, *, max_tools: int | None = None, max_bytes: int = DEFAULT_MAX_FILE_BYTES
) -> Catalog:
    """Read a catalog file (``-`` for stdin) strictly and import its tools."""
    source = str(path)
    return parse_catalog_bytes(
        read_bytes(source, max_bytes=max_bytes), source, max_tools=max_tools, max_bytes=max_bytes
    )


def load_tools(path: str | Path, *, max_tools: int | None = None) -> Catalog:
    """Read a tool catalog file (``-`` for stdin) in any supported shape.

    MCP ``tools/list`` results, JSON-RPC responses, OpenAI and Anthropic tool lists, plain
    arrays and ``fetch`` snapshots are recognised; the file is read as strict I-JSON and
    duplicate names are kept (the scan reports them; signing refuses them).
    """
    return load_catalog(path, max_tools=max_tools)


def load_catalogs(
    paths: Sequence[str | Path], *, max_tools: int | None = None,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> list[Catalog]:
    """Load several catalogs; ``max_tools`` bounds the total across all of them and
    ``max_bytes`` each file (a registry-scale catalog need not be split to fit)."""
    if sum(1 for p in paths if str(p) == "-") > 1:
        raise InputError("standard input (-) can be read only once")
    catalogs: list[Catalog] = []
    total = 0
    for path in paths:
        catalog = load_catalog(path, max_bytes=max_bytes)
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
    catalog = _catalog_of(value)
    if catalog is not None:
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


def _catalog_of(value: Any) -> Catalog | None:
    """``value`` itself when it is a :class:`Catalog`, or what its ``to_catalog()`` gives
    when that is one; else None."""
    if isinstance(value, Catalog):
        return value
    to_catalog = getattr(value, "to_catalog", None)
    if callable(to_catalog):
        catalog = to_catalog()
        if isinstance(catalog, Catalog):
            return catalog
    return None


def snapshot_or_catalog(
    document: JsonValue, source: str, *, max_tools: int | None = None
) -> Snapshot | Catalog:
    """A catalog document as read: a fetch snapshot stays a :class:`Snapshot` (so its capture
    context and server surface are kept), any other shape becomes a :class:`Catalog`."""
    catalog = parse_catalog(document, source, max_tools=max_tools)
    return Snapshot.from_json(document, source) if catalog.shape == "snapshot" else catalog
