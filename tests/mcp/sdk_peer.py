"""A real MCP server built on the official ``mcp`` SDK low-level API, used as a test peer.

It serves the tool definitions in ``--defs`` (a JSON array) in pages of ``--page`` with an
opaque base64 cursor, over stdio or Streamable HTTP on 127.0.0.1. Pagination is the
handler's job in the SDK, exactly as a real server author would write it.

With ``--surface FILE`` (``{"instructions": ..., "prompts": [...], "resourceTemplates":
[...]}``) it also serves the rest of the surface through the SDK: the instructions in its
initialize result, and prompts and resource templates, paginated the same way.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--defs", required=True)
    parser.add_argument("--page", type=int, default=3)
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--stateless", action="store_true")
    parser.add_argument("--surface", help="JSON file: instructions, prompts, resourceTemplates")
    parser.add_argument("--empty-cursor-first", action="store_true",
                        help="use the empty string as the cursor of page 2")
    args = parser.parse_args()

    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    with open(args.defs, encoding="utf-8") as fh:
        defs: list[dict[str, Any]] = json.load(fh)
    tools = [types.Tool.model_validate(d) for d in defs]
    page = args.page

    def encode(offset: int) -> str:
        if args.empty_cursor_first and offset == page:
            return ""
        return base64.urlsafe_b64encode(f"off={offset}".encode()).decode()

    def decode(cursor: str) -> int:
        if args.empty_cursor_first and cursor == "":
            return page
        try:
            return int(base64.urlsafe_b64decode(cursor).decode().split("=")[1])
        except Exception:
            raise MCPError(-32602, "Invalid cursor") from None

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        off = decode(params.cursor) if params and params.cursor is not None else 0
        nxt = encode(off + page) if off + page < len(tools) else None
        return types.ListToolsResult(tools=tools[off:off + page], next_cursor=nxt)

    surface: dict[str, Any] = {}
    if args.surface:
        with open(args.surface, encoding="utf-8") as fh:
            surface = json.load(fh)
    prompts = [types.Prompt.model_validate(p) for p in surface.get("prompts", [])]
    templates = [types.ResourceTemplate.model_validate(r)
                 for r in surface.get("resourceTemplates", [])]

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        off = decode(params.cursor) if params and params.cursor is not None else 0
        nxt = encode(off + page) if off + page < len(prompts) else None
        return types.ListPromptsResult(prompts=prompts[off:off + page], next_cursor=nxt)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        off = decode(params.cursor) if params and params.cursor is not None else 0
        nxt = encode(off + page) if off + page < len(templates) else None
        return types.ListResourceTemplatesResult(
            resource_templates=templates[off:off + page], next_cursor=nxt
        )

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[])

    handlers: dict[str, Any] = {}
    if "prompts" in surface:
        handlers["on_list_prompts"] = list_prompts
    if "resourceTemplates" in surface:
        # The SDK offers the resources capability only with a resources/list handler.
        handlers["on_list_resources"] = list_resources
        handlers["on_list_resource_templates"] = list_templates
    server = Server("pager-peer", version="0.1.0", instructions=surface.get("instructions"),
                    on_list_tools=list_tools, **handlers)

    if args.transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def run() -> None:
            async with stdio_server() as (r, w):
                await server.run(r, w, server.create_initialization_options())

        anyio.run(run)
        return

    import uvicorn

    app = server.streamable_http_app(
        json_response=args.json_response, stateless_http=args.stateless, host="127.0.0.1"
    )
    sys.stderr.write(f"listening on {args.port}\n")
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
