"""Catalog import: every supported shape, positions kept, nothing rewritten."""

from __future__ import annotations

from typing import Any

import pytest

from histor_sign.errors import InputError
from histor_sign.models import Provider, parse_catalog
from histor_sign.revision import digests

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


@pytest.mark.parametrize(
    ("doc", "provider", "pointer"),
    [
        ({"tools": [{"name": "read_file", "inputSchema": SCHEMA}]}, Provider.MCP, "/tools/0"),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "read_file", "inputSchema": SCHEMA}]}}, Provider.MCP, "/result/tools/0"),
        ({"tools": [{"type": "function", "name": "read_file", "parameters": SCHEMA, "strict": True}]}, Provider.OPENAI_RESPONSES, "/tools/0"),
        ({"tools": [{"type": "function", "function": {"name": "read_file", "parameters": SCHEMA}}]}, Provider.OPENAI_CHAT, "/tools/0"),
        ({"tools": [{"name": "read_file", "input_schema": SCHEMA}]}, Provider.ANTHROPIC, "/tools/0"),
        ([{"name": "read_file", "input_schema": SCHEMA}], Provider.ANTHROPIC, "/0"),
        ({"type": "histor.snapshot/v1", "capture": {"transport": "stdio"}, "tools": [{"name": "read_file", "inputSchema": SCHEMA}]}, Provider.MCP, "/tools/0"),
    ],
)
def test_shapes(doc: Any, provider: str, pointer: str) -> None:
    catalog = parse_catalog(doc, "c.json")
    [tool] = catalog.tools
    assert (tool.name, tool.provider, tool.pointer, tool.index) == ("read_file", provider, pointer, 0)
    assert tool.input_schema == SCHEMA
    assert tool.projected()["inputSchema"] == SCHEMA


def test_snapshot_keeps_capture_context() -> None:
    doc = {"type": "histor.snapshot/v1", "capture": {"era": "modern"}, "tools": []}
    assert parse_catalog(doc, "s.json").capture == {"era": "modern"}


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        ({"tools": {"name": "x"}}, '"tools" must be an array'),
        ({"tools": [1]}, "a tool must be a JSON object, got a number"),
        ({"tools": [{"name": 5}]}, "tool name must be a string, got a number"),
        ({"tools": [{"description": "x"}]}, "tool name must be a string, got missing"),
        ({"tools": [{"name": ""}]}, "must not be empty"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1}}, "JSON-RPC error response"),
        ({"name": "x"}, "not a tool catalog"),
        ("tools", "the document is a string"),
        # MCP tools need an inputSchema: a list of something else is refused, in every shape
        ({"tools": [{"name": "x", "description": "d"}]}, 'no "inputSchema"; expected a tool list'),
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "x"}]}}, 'no "inputSchema"'),
        ({"type": "histor.snapshot/v1", "tools": [{"name": "x"}]}, 'no "inputSchema"'),
        ([{"name": "srv", "web": "u", "tools": {"srv": {"tools": []}}}],
         "server entry with its tools nested inside"),
        ([{"name": "a", "inputSchema": SCHEMA}, {"name": "b"}], r"c.json#/1: 'b' is not an MCP"),
    ],
)
def test_wrong_shapes(doc: Any, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        parse_catalog(doc, "c.json")


def test_non_mcp_tools_are_not_signed() -> None:
    doc = {"tools": [{"name": "read_file", "input_schema": SCHEMA}]}
    with pytest.raises(InputError, match="not an MCP tool definition"):
        digests(parse_catalog(doc, "c.json").tools)


def test_projection_keeps_only_sent_fields() -> None:
    raw = {"name": "a", "inputSchema": SCHEMA, "_meta": {"x": 1}, "icons": [], "annotations": None}
    [tool] = parse_catalog({"tools": [raw]}, "c").tools
    assert tool.projected() == {"name": "a", "inputSchema": SCHEMA, "annotations": None}
    assert tool.raw is raw


def test_an_imported_tool_equals_one_built_by_its_constructor() -> None:
    import dataclasses

    from histor_sign.models import Tool

    obj = {"name": "t", "inputSchema": {"type": "object"}, "description": "d"}
    catalog = parse_catalog({"result": {"tools": [{"name": "s", "inputSchema": {}}, obj]}}, "f")
    tool = catalog.tools[1]
    assert tool == Tool(name="t", raw=obj, source="f", index=1, pointer="/result/tools/1",
                        provider=Provider.MCP, input_schema={"type": "object"},
                        has_input_schema=True)
    assert tool.ref.pointer == "/result/tools/1" and tool.ref is tool.ref
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.name = "other"  # type: ignore[misc]
