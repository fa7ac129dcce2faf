"""An example MCP server for the offline demo: a small "docs & notes" workspace over stdio.

Run it with ``python -m histor_sign.demo.example_server``. It needs nothing but the
standard library and speaks raw JSON-RPC, one message per line, in both protocol eras:

* legacy (2025-03-26 … 2025-11-25): ``initialize`` → ``notifications/initialized``; the
  client's protocol version is echoed when supported, else the latest legacy one is offered;
* modern (2026-07-28): no handshake; ``server/discover``; every request carries
  ``params._meta["io.modelcontextprotocol/protocolVersion"]``; an unsupported version is
  answered with -32022 and the supported list.

The era is fixed by the first request of a connection (as the official Python SDK does).
``tools/list`` is paginated (default 3 tools per page) with opaque cursors; ``tools/call``
returns a harmless canned result — this server never changes anything.

Options (flag, or environment variable):
  --page-size N           HISTOR_DEMO_PAGE_SIZE     tools per page (default 3)
  --description TOOL=TEXT HISTOR_DEMO_DESCRIPTION   replace one tool's description
                                                    (simulates a "rug pull" drift)
  --collision             HISTOR_DEMO_COLLISION=1   add a confusable tool pair with
                                                    contradictory hints (fails the scan gate)
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

SERVER_INFO = {"name": "example-notes", "title": "Example Notes", "version": "1.4.2"}
LEGACY_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# JSON-RPC / MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
NOT_INITIALIZED = -32000
UNSUPPORTED_VERSION = -32022

_NOTE_ID = {"type": "string", "pattern": "^note-[0-9]{1,9}$", "description": "A note id."}
_NOTE = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "body": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["id", "title"],
}


def _tool(name: str, title: str, description: str, properties: dict[str, Any],
          required: list[str], output: dict[str, Any], **hints: bool) -> dict[str, Any]:
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
        "outputSchema": output,
        "annotations": {"title": title, **hints},
        "_meta": {"com.example.notes/category": "read" if hints.get("readOnlyHint") else "write"},
    }


def base_tools() -> list[dict[str, Any]]:
    """The tools the example serves, in served order."""
    read_only = {"readOnlyHint": True, "openWorldHint": False}
    return [
        _tool("search_notes", "Search notes",
              "Search the workspace's notes by keywords and optional tags.",
              {"query": {"type": "string", "minLength": 1, "maxLength": 200},
               "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
               "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}},
              ["query"],
              {"type": "object", "properties": {"results": {"type": "array", "items": _NOTE}},
               "required": ["results"]},
              **read_only),
        _tool("get_note", "Get a note", "Get one note by id, with its full body.",
              {"note_id": _NOTE_ID}, ["note_id"], _NOTE, **read_only),
        _tool("list_notebooks", "List notebooks", "List the notebooks in the workspace.",
              {}, [],
              {"type": "object", "properties": {"notebooks": {"type": "array",
                                                              "items": {"type": "string"}}},
               "required": ["notebooks"]},
              **read_only),
        _tool("create_note", "Create a note", "Create a note in a notebook.",
              {"notebook": {"type": "string", "minLength": 1, "maxLength": 100},
               "title": {"type": "string", "minLength": 1, "maxLength": 200},
               "body": {"type": "string", "maxLength": 100000}},
              ["notebook", "title"], _NOTE,
              readOnlyHint=False, destructiveHint=False, idempotentHint=False,
              openWorldHint=False),
        _tool("update_note", "Update a note",
              "Replace a note's title or body. Sending the same update twice has no "
              "further effect.",
              {"note_id": _NOTE_ID,
               "title": {"type": "string", "minLength": 1, "maxLength": 200},
               "body": {"type": "string", "maxLength": 100000}},
              ["note_id"], _NOTE,
              readOnlyHint=False, destructiveHint=False, idempotentHint=True,
              openWorldHint=False),
        _tool("delete_note", "Delete a note",
              "Delete a note permanently. Call with dry_run: true first to see what "
              "would be deleted.",
              {"note_id": _NOTE_ID, "dry_run": {"type": "boolean", "default": True}},
              ["note_id", "dry_run"],
              {"type": "object", "properties": {"deleted": {"type": "boolean"},
                                                "dry_run": {"type": "boolean"}},
               "required": ["deleted", "dry_run"]},
              readOnlyHint=False, destructiveHint=True, idempotentHint=True,
              openWorldHint=False),
        _tool("export_notebook", "Export a notebook",
              "Export a whole notebook as Markdown or HTML text.",
              {"notebook": {"type": "string", "minLength": 1, "maxLength": 100},
               "format": {"enum": ["markdown", "html"], "default": "markdown"}},
              ["notebook"],
              {"type": "object", "properties": {"content": {"type": "string"}},
               "required": ["content"]},
              **read_only),
    ]


def collision_tools() -> list[dict[str, Any]]:
    """A confusable pair: same schema, near-identical names, contradictory effect hints."""
    schema = {"note_id": _NOTE_ID}
    out = {"type": "object"}
    return [
        _tool("fetch_note", "Fetch a note", "Fetch a note by id.", schema, ["note_id"], out,
              readOnlyHint=True),
        _tool("fetch-note", "Fetch a note", "Fetch a note by id and remove it afterwards.",
              schema, ["note_id"], out, readOnlyHint=False, destructiveHint=True),
    ]


def build_tools(description: str | None = None, collision: bool = False) -> list[dict[str, Any]]:
    """The served tool list for the given options (``description`` is ``TOOL=TEXT``)."""
    tools = base_tools() + (collision_tools() if collision else [])
    if description:
        name, sep, text = description.partition("=")
        matches = [t for t in tools if t["name"] == name]
        if not sep or not matches:
            raise ValueError(f"the description must be TOOL=TEXT for a served tool, got {name!r}")
        matches[0]["description"] = text
    return tools


def canned_result(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """A harmless answer shaped like the tool's output schema; nothing is executed."""
    name = tool["name"]
    structured: dict[str, Any]
    if name == "search_notes":
        structured = {"results": [{"id": "note-1", "title": "Welcome"}]}
    elif name == "list_notebooks":
        structured = {"notebooks": ["inbox", "projects"]}
    elif name == "delete_note":
        structured = {"deleted": False, "dry_run": True}
    elif name == "export_notebook":
        structured = {"content": "# inbox\n"}
    else:
        structured = {"id": "note-1", "title": "Welcome", "body": "This is an example note."}
    text = f"(example server) {name} answered with canned data; nothing was changed."
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
            "isError": False}


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


INSTRUCTIONS = "Example notes server for the histor-sign demo."

#: Prompts and resource templates: the rest of the surface that can steer a model.
PROMPTS: list[dict[str, Any]] = [
    {"name": f"prompt_{n}", "title": f"Prompt {n}", "description": f"Summarise note set {n}.",
     "arguments": [{"name": "topic", "description": "What to summarise", "required": True}]}
    for n in range(5)
]
RESOURCE_TEMPLATES: list[dict[str, Any]] = [
    {"uriTemplate": f"notes://{kind}/{{id}}", "name": f"{kind}_note",
     "description": f"A {kind} note by id.", "mimeType": "text/plain"}
    for kind in ("draft", "published", "archived", "shared")
]
CAPABILITIES: dict[str, Any] = {
    "tools": {"listChanged": False}, "prompts": {"listChanged": False},
    "resources": {"listChanged": False},
}


class ExampleServer:
    """One stdio connection: era, negotiated version, and the served tools."""

    def __init__(self, tools: list[dict[str, Any]], page_size: int = 3) -> None:
        if page_size < 1:
            raise ValueError("page size must be at least 1")
        self.tools = tools
        self.page_size = page_size
        self.instructions = INSTRUCTIONS
        self.prompts = [dict(p) for p in PROMPTS]
        self.resource_templates = [dict(t) for t in RESOURCE_TEMPLATES]
        self.era: str | None = None  # "legacy" | "modern", fixed by the first request
        self.version: str | None = None

    # --- message handling --------------------------------------------------------------

    def handle_line(self, line: str) -> dict[str, Any] | None:
        """Answer one incoming line; ``None`` for notifications (no response)."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return _error(None, PARSE_ERROR, "Parse error")
        if not _is_request(message):
            ident = message.get("id") if isinstance(message, dict) else None
            return _error(ident, INVALID_REQUEST, "Invalid Request")
        if "id" not in message:
            return None  # a notification (notifications/initialized, cancelled, ...)
        ident = message["id"]
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return _error(ident, INVALID_PARAMS, "params must be an object")
        try:
            result = self.dispatch(message["method"], params or {})
        except RpcError as exc:
            return _error(ident, exc.code, exc.message, exc.data)
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def dispatch(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        meta = params.get("_meta")
        requested = meta.get(META_VERSION) if isinstance(meta, dict) else None
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        if self.era is None and (method == "server/discover" or requested is not None):
            self.era = "modern"
        if self.era == "modern":
            self._check_modern_version(requested)
            return self._modern(method, params)
        if self.era == "legacy":
            return self._legacy(method, params)
        raise RpcError(
            NOT_INITIALIZED,
            "Server not initialized: send initialize (legacy) or include "
            f"_meta[{META_VERSION!r}] (2026-07-28)",
        )

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.era == "modern":
            raise RpcError(UNSUPPORTED_VERSION, "this connection is serving 2026-07-28",
                           {"supported": list(MODERN_VERSIONS), "requested": "initialize"})
        if self.era == "legacy":
            raise RpcError(INVALID_REQUEST, "already initialized")
        requested = params.get("protocolVersion")
        self.era = "legacy"
        self.version = requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[-1]
        return {
            "protocolVersion": self.version,
            "capabilities": CAPABILITIES,
            "serverInfo": SERVER_INFO,
            "instructions": self.instructions,
        }

    def _check_modern_version(self, requested: Any) -> None:
        if requested not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_VERSION,
                "Unsupported protocol version",
                {"supported": list(MODERN_VERSIONS), "requested": requested},
            )
        self.version = requested

    def _modern(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        extra = {"resultType": "complete", "ttlMs": 0, "cacheScope": "public",
                 "_meta": {META_SERVER_INFO: SERVER_INFO}}
        if method == "server/discover":
            return {"supportedVersions": list(MODERN_VERSIONS), "capabilities": CAPABILITIES,
                    "instructions": self.instructions, **extra}
        if method in self._lists():
            return {**self._list_page(method, params.get("cursor")), **extra}
        if method == "tools/call":
            return self._call(params)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def _legacy(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in self._lists():
            return self._list_page(method, params.get("cursor"))
        if method == "tools/call":
            return self._call(params)
        raise RpcError(METHOD_NOT_FOUND, f"Method not found: {method}")

    # --- tools -------------------------------------------------------------------------

    def _lists(self) -> dict[str, tuple[str, list[dict[str, Any]]]]:
        return {
            "tools/list": ("tools", self.tools),
            "prompts/list": ("prompts", self.prompts),
            "resources/templates/list": ("resourceTemplates", self.resource_templates),
        }

    def _list_page(self, method: str, cursor: Any) -> dict[str, Any]:
        member, items = self._lists()[method]
        offset = 0 if cursor is None else decode_cursor(cursor, len(items))
        end = offset + self.page_size
        page: dict[str, Any] = {member: items[offset:end]}
        if end < len(items):
            page["nextCursor"] = encode_cursor(end)
        return page

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        tool = next((t for t in self.tools if t["name"] == name), None)
        if tool is None:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object")
        return canned_result(tool, arguments)


def encode_cursor(offset: int) -> str:
    """Cursors are opaque to clients; this one is a tagged offset, base64url-encoded."""
    return base64.urlsafe_b64encode(f"example-notes:{offset}".encode()).decode()


def decode_cursor(cursor: Any, total: int) -> int:
    try:
        tag, _, number = base64.urlsafe_b64decode(str(cursor).encode()).decode().partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise RpcError(INVALID_PARAMS, "Invalid cursor") from None
    if not isinstance(cursor, str) or tag != "example-notes" or not 0 < offset < total:
        raise RpcError(INVALID_PARAMS, "Invalid cursor")
    return offset


def _is_request(message: Any) -> bool:
    """Step: a JSON-RPC 2.0 object with a string method (a request or a notification)."""
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0" \
        and isinstance(message.get("method"), str)


def _error(ident: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def serve(server: ExampleServer, stdin: TextIO, stdout: TextIO) -> None:
    """Answer line by line until stdin closes."""
    for line in stdin:
        if not line.strip():
            continue
        response = server.handle_line(line)
        if response is not None:
            stdout.write(json.dumps(response, ensure_ascii=False, separators=(",", ":")) + "\n")
            stdout.flush()


def server_command(*, description: str | None = None) -> list[str]:
    """The argv that starts this server over stdio (``description``: ``TOOL=TEXT``, as
    ``--description`` takes it)."""
    extra = ["--description", description] if description is not None else []
    return [sys.executable, "-m", "histor_sign.demo.example_server", *extra]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(
        prog="python -m histor_sign.demo.example_server",
        description="Example 'docs & notes' MCP server over stdio (legacy and 2026-07-28).",
    )
    parser.add_argument("--page-size", type=int,
                        default=int(env.get("HISTOR_DEMO_PAGE_SIZE", "3")),
                        help="tools per tools/list page (env HISTOR_DEMO_PAGE_SIZE; default 3)")
    parser.add_argument("--description", metavar="TOOL=TEXT",
                        default=env.get("HISTOR_DEMO_DESCRIPTION") or None,
                        help="replace one tool's description, to simulate drift "
                             "(env HISTOR_DEMO_DESCRIPTION)")
    parser.add_argument("--collision", action="store_true",
                        default=env.get("HISTOR_DEMO_COLLISION", "") not in ("", "0"),
                        help="add a confusable tool pair with contradictory effect hints "
                             "(env HISTOR_DEMO_COLLISION=1)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        tools = build_tools(args.description, args.collision)
    except ValueError as exc:
        return _usage_error("--description", exc)
    try:
        server = ExampleServer(tools, args.page_size)
    except ValueError as exc:
        return _usage_error("--page-size", exc)
    sys.stderr.write(f"example-notes: serving {len(server.tools)} tools on stdio\n")
    try:
        serve(server, sys.stdin, sys.stdout)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


def _usage_error(flag: str, exc: ValueError) -> int:
    sys.stderr.write(f"example_server: error: {flag}: {exc}\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
