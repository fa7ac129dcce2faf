"""A stdio MCP server that implements what the MCP conformance suite's server scenarios ask
for (``@modelcontextprotocol/conformance`` 0.1.16: the tools, resources, prompts,
completion and logging each scenario names), built on the official Python SDK's low-level
server. ``python conformance_server.py`` serves it on stdio; test_conformance.py runs the
suite against it through ``http_front.py``, directly and behind ``histor-sign proxy``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

#: A 1x1 red PNG and a minimal WAV (44-byte header, no samples).
PNG = base64.b64encode(bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c49444154"
    "08d763f8cfc000000301010018dd8db00000000049454e44ae426082")).decode()
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00"
                       b"@\x1f\x00\x00\x80>\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00").decode()
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
SCHEMA_2020 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
    "$defs": {"address": {"type": "object", "properties": {
        "street": {"type": "string"}, "city": {"type": "string"}}}},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}
TOOLS: list[dict[str, Any]] = [
    {"name": "test_simple_text", "description": "Returns simple text.", "inputSchema": EMPTY},
    {"name": "test_image_content", "description": "Returns an image.", "inputSchema": EMPTY},
    {"name": "test_audio_content", "description": "Returns audio.", "inputSchema": EMPTY},
    {"name": "test_embedded_resource", "description": "Returns an embedded resource.",
     "inputSchema": EMPTY},
    {"name": "test_multiple_content_types", "description": "Returns mixed content.",
     "inputSchema": EMPTY},
    {"name": "test_tool_with_logging", "description": "Logs while it runs.",
     "inputSchema": EMPTY},
    {"name": "test_error_handling", "description": "Always fails.", "inputSchema": EMPTY},
    {"name": "test_tool_with_progress", "description": "Reports progress.",
     "inputSchema": EMPTY},
    {"name": "test_sampling", "description": "Asks the client's LLM.", "inputSchema": {
        "type": "object", "properties": {"prompt": {"type": "string"}},
        "required": ["prompt"]}},
    {"name": "test_elicitation", "description": "Asks the user.", "inputSchema": {
        "type": "object", "properties": {"message": {"type": "string"}},
        "required": ["message"]}},
    {"name": "test_elicitation_sep1034_defaults", "description": "Elicits with defaults.",
     "inputSchema": EMPTY},
    {"name": "test_elicitation_sep1330_enums", "description": "Elicits with enums.",
     "inputSchema": EMPTY},
    {"name": "json_schema_2020_12_tool", "description": "Tool with JSON Schema 2020-12 features",
     "inputSchema": SCHEMA_2020},
]
DEFAULTS_SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"],
               "default": "active"},
    "verified": {"type": "boolean", "default": True}}}
ENUMS_SCHEMA = {"type": "object", "properties": {
    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "oneOf": [
        {"const": "value1", "title": "First Option"},
        {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}]},
    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "items": {"type": "string",
                                                 "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "items": {"anyOf": [
        {"const": "value1", "title": "First Choice"},
        {"const": "value2", "title": "Second Choice"},
        {"const": "value3", "title": "Third Choice"}]}}}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


async def call(ctx: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The result of tool ``name`` as a JSON object."""
    import anyio
    from mcp import types

    session, request = ctx.session, ctx.request_id
    fixed = {
        "test_simple_text": [text("This is a simple text response for testing.")],
        "test_image_content": [{"type": "image", "data": PNG, "mimeType": "image/png"}],
        "test_audio_content": [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}],
        "test_embedded_resource": [{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}],
        "test_multiple_content_types": [
            text("Multiple content types test:"),
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource", "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123})}}],
    }
    if name in fixed:
        return {"content": fixed[name]}
    if name == "test_error_handling":
        return {"isError": True,
                "content": [text("This tool intentionally returns an error for testing")]}
    if name == "test_tool_with_logging":
        for i, line in enumerate(["Tool execution started", "Tool processing data",
                                  "Tool execution completed"]):
            if i:
                await anyio.sleep(0.05)
            await session.send_log_message("info", line, related_request_id=request)
        return {"content": [text("Logging tool completed")]}
    if name == "test_tool_with_progress":
        meta = ctx.meta or {}  # a TypedDict: the SDK's key names
        token = meta.get("progress_token", meta.get("progressToken"))
        for i, step in enumerate((0, 50, 100)):
            if i:
                await anyio.sleep(0.05)
            if token is not None:
                await session.send_progress_notification(token, step, 100,
                                                         related_request_id=request)
        return {"content": [text("Progress tool completed")]}
    if name == "test_sampling":
        answer = await session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(
                type="text", text=arguments.get("prompt", "")))],
            max_tokens=100, related_request_id=request)
        reply = getattr(answer.content, "text", str(answer.content))
        return {"content": [text(f"LLM response: {reply}")]}
    schemas = {"test_elicitation": {"type": "object", "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"}},
        "required": ["username", "email"]},
        "test_elicitation_sep1034_defaults": DEFAULTS_SCHEMA,
        "test_elicitation_sep1330_enums": ENUMS_SCHEMA}
    if name in schemas:
        message = arguments.get("message", f"{name} asks")
        result = await session.elicit_form(message, schemas[name], related_request_id=request)
        prefix = "User response" if name == "test_elicitation" else "Elicitation completed"
        return {"content": [text(f"{prefix}: action={result.action}, "
                                 f"content={json.dumps(result.content)}")]}
    return {"isError": True, "content": [text(f"unknown tool {name}")]}


def main() -> None:
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    subscribed: set[str] = set()
    resources = {
        "test://static-text": {"mimeType": "text/plain",
                               "text": "This is the content of the static text resource."},
        "test://static-binary": {"mimeType": "image/png", "blob": PNG},
        "test://watched-resource": {"mimeType": "text/plain", "text": "Watched content."},
    }

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate({"tools": TOOLS})

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        answer = await call(ctx, params.name, params.arguments or {})
        return types.CallToolResult.model_validate(answer)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult.model_validate({"resources": [
            {"uri": uri, "name": uri.removeprefix("test://"), "description": f"The {uri} resource",
             "mimeType": body["mimeType"]} for uri, body in resources.items()]})

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template",
             "description": "Data by id", "mimeType": "application/json"}]})

    async def read_resource(ctx: Any, params: Any) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri in resources:
            return types.ReadResourceResult.model_validate(
                {"contents": [{"uri": uri, **resources[uri]}]})
        ident = uri.removeprefix("test://template/").removesuffix("/data")
        body = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        return types.ReadResourceResult.model_validate({"contents": [
            {"uri": uri, "mimeType": "application/json", "text": json.dumps(body)}]})

    async def subscribe(ctx: Any, params: Any) -> types.EmptyResult:
        subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: Any) -> types.EmptyResult:
        subscribed.discard(str(params.uri))
        return types.EmptyResult()

    prompts = [
        {"name": "test_simple_prompt", "description": "A simple prompt"},
        {"name": "test_prompt_with_arguments", "description": "A prompt with arguments",
         "arguments": [{"name": "arg1", "description": "First test argument", "required": True},
                       {"name": "arg2", "description": "Second test argument",
                        "required": True}]},
        {"name": "test_prompt_with_embedded_resource", "description": "Embeds a resource",
         "arguments": [{"name": "resourceUri", "description": "URI to embed",
                        "required": True}]},
        {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    ]

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult.model_validate({"prompts": prompts})

    async def get_prompt(ctx: Any, params: Any) -> types.GetPromptResult:
        args = params.arguments or {}
        messages: dict[str, list[Any]] = {
            "test_simple_prompt": [text("This is a simple prompt for testing.")],
            "test_prompt_with_arguments": [text(
                f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'")],
            "test_prompt_with_embedded_resource": [
                {"type": "resource", "resource": {
                    "uri": args.get("resourceUri", "test://example-resource"),
                    "mimeType": "text/plain", "text": "Embedded resource content for testing."}},
                text("Please process the embedded resource above.")],
            "test_prompt_with_image": [{"type": "image", "data": PNG, "mimeType": "image/png"},
                                       text("Please analyze the image above.")],
        }
        return types.GetPromptResult.model_validate({"messages": [
            {"role": "user", "content": c} for c in messages.get(params.name, [])]})

    async def complete(ctx: Any, params: Any) -> types.CompleteResult:
        return types.CompleteResult.model_validate(
            {"completion": {"values": [], "total": 0, "hasMore": False}})

    async def set_level(ctx: Any, params: Any) -> types.EmptyResult:
        return types.EmptyResult()

    import warnings

    warnings.simplefilter("ignore")  # logging is deprecated in 2026-07-28; the suite tests it
    server = Server(
        "histor-conformance-peer", version="1.0.0", on_list_tools=list_tools,
        on_call_tool=call_tool, on_list_resources=list_resources,
        on_list_resource_templates=list_templates, on_read_resource=read_resource,
        on_subscribe_resource=subscribe, on_unsubscribe_resource=unsubscribe,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt, on_completion=complete,
        on_set_logging_level=set_level)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
