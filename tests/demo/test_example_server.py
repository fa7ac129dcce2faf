"""The bundled example MCP server, spoken to over stdio with plain JSON lines."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from cli_harness import cli_env

from histor_sign.catalog import tools_from_dicts
from histor_sign.drift import compare
from histor_sign.guard import Guard, lint_catalog
from histor_sign.revision import build_statement

MODERN = "2026-07-28"
META = "io.modelcontextprotocol/protocolVersion"


class Client:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        assert self.proc.stdout is not None
        response = json.loads(self.proc.stdout.readline())
        assert response["id"] == self.next_id
        return response

    def raw(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())


@contextmanager
def server(*args: str, env: dict[str, str] | None = None) -> Iterator[Client]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign.demo.example_server", *args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env=cli_env(env),
    )
    try:
        yield Client(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def initialize(client: Client, version: str = "2025-11-25") -> dict[str, Any]:
    result = client.request("initialize", {"protocolVersion": version, "capabilities": {},
                                           "clientInfo": {"name": "test", "version": "0"}})
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return result


def walk(client: Client, meta: dict[str, Any] | None = None) -> tuple[list[Any], list[Any]]:
    tools: list[Any] = []
    cursors: list[Any] = []
    cursor = None
    while True:
        params: dict[str, Any] = {} if meta is None else {"_meta": meta}
        if cursor is not None:
            params["cursor"] = cursor
        result = client.request("tools/list", params)["result"]
        tools += result["tools"]
        cursor = result.get("nextCursor")
        if cursor is None:
            return tools, cursors
        cursors.append(cursor)


def list_tools(*args: str, env: dict[str, str] | None = None) -> list[Any]:
    with server(*args, env=env) as client:
        initialize(client)
        return walk(client)[0]


@pytest.mark.parametrize(("asked", "answered"), [
    ("2025-03-26", "2025-03-26"), ("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"),
    ("2024-11-05", "2025-11-25"), ("2099-01-01", "2025-11-25"),
])
def test_legacy_version_negotiation(asked: str, answered: str) -> None:
    with server() as client:
        result = initialize(client, asked)["result"]
        assert result["protocolVersion"] == answered
        assert result["serverInfo"]["name"] == "example-notes"
        assert result["capabilities"] == {
            "tools": {"listChanged": False}, "prompts": {"listChanged": False},
            "resources": {"listChanged": False},
        }


def test_legacy_pagination_and_call() -> None:
    with server() as client:
        initialize(client)
        tools, cursors = walk(client)
        assert [t["name"] for t in tools] == [
            "search_notes", "get_note", "list_notebooks", "create_note", "update_note",
            "delete_note", "export_notebook"]
        assert len(cursors) == 2 and len(set(cursors)) == 2
        assert all(not c.isdigit() for c in cursors)  # opaque, not bare offsets
        page = client.request("tools/list")["result"]
        assert len(page["tools"]) == 3 and "resultType" not in page
        call = client.request("tools/call", {"name": "delete_note",
                                             "arguments": {"note_id": "note-1", "dry_run": True}})
        assert call["result"]["structuredContent"] == {"deleted": False, "dry_run": True}
        assert "nothing was changed" in call["result"]["content"][0]["text"]
        unknown = client.request("tools/call", {"name": "drop_all"})
        assert unknown["error"]["code"] == -32602
        assert client.request("server/discover")["error"]["code"] == -32601


def test_modern_era() -> None:
    with server() as client:
        discover = client.request("server/discover", {"_meta": {META: MODERN}})["result"]
        assert discover["supportedVersions"] == [MODERN]
        assert discover["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "1.4.2"
        tools, cursors = walk(client, {META: MODERN,
                                       "io.modelcontextprotocol/clientCapabilities": {}})
        assert len(tools) == 7 and len(cursors) == 2
        page = client.request("tools/list", {"_meta": {META: MODERN}})["result"]
        assert (page["resultType"], page["ttlMs"], page["cacheScope"]) == \
            ("complete", 0, "public")
        bad = client.request("tools/list", {"_meta": {META: "2030-01-01"}})["error"]
        assert bad["code"] == -32022
        assert bad["data"] == {"supported": [MODERN], "requested": "2030-01-01"}
        # The era is fixed by the first request: no legacy handshake afterwards.
        late = client.request("initialize", {"protocolVersion": "2025-11-25"})["error"]
        assert late["code"] == -32022


def test_modern_unsupported_version_first() -> None:
    with server() as client:
        error = client.request("server/discover", {"_meta": {META: "2025-11-25"}})["error"]
        assert error["code"] == -32022 and error["data"]["supported"] == [MODERN]


def test_protocol_errors() -> None:
    with server() as client:
        assert client.request("tools/list")["error"]["code"] == -32000  # no era yet
        assert client.raw("{not json")["error"]["code"] == -32700
        assert client.raw('{"jsonrpc": "2.0", "id": 9}')["error"]["code"] == -32600
        initialize(client)
        assert client.request("tools/list", {"cursor": "bm9wZQ=="})["error"]["code"] == -32602
        assert client.request("tools/list", {"cursor": "!!"})["error"]["code"] == -32602
        assert client.request("ping")["result"] == {}


def test_page_size_flag_and_env() -> None:
    with server("--page-size", "2") as client:
        initialize(client)
        tools, cursors = walk(client)
        assert len(tools) == 7 and len(cursors) == 3
    with server(env={"HISTOR_DEMO_PAGE_SIZE": "10"}) as client:
        initialize(client)
        assert walk(client)[1] == []


def test_bad_option_exits_2() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "histor_sign.demo.example_server", "--description", "nope=x"],
        capture_output=True, text=True, env=cli_env(), timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "TOOL=TEXT" in proc.stderr


def test_drift_and_collision_options() -> None:
    release = {"server": "io.github.example/notes", "server_version": "1.4.2",
               "identity": "https://github.com/example/notes/.github/workflows/s.yml@refs/heads/main"}
    signed = list_tools()
    statement = build_statement(tools=signed, **release)
    assert compare(statement, list_tools()).status == "match"
    drifted = list_tools(env={"HISTOR_DEMO_DESCRIPTION":
                              "search_notes=Search the private notes of every user."})
    result = compare(statement, drifted, signed_tools=signed)
    assert [(t.name, t.change, t.fields) for t in result.tools] == \
        [("search_notes", "changed", ("description",))]
    assert list_tools("--description", "get_note=Get one note.") != signed
    collided = {t["name"]: t for t in list_tools("--collision")}
    assert collided["fetch_note"]["annotations"]["readOnlyHint"] is True
    assert collided["fetch-note"]["annotations"]["destructiveHint"] is True
    assert collided["fetch_note"]["inputSchema"] == collided["fetch-note"]["inputSchema"]


def test_example_tools_pass_the_contract_lint_and_guard() -> None:
    tools = tools_from_dicts(list_tools())
    assert lint_catalog(tools) == []
    guard = Guard.from_catalog(tools)
    assert guard.check({"name": "delete_note",
                        "arguments": {"note_id": "note-7", "dry_run": True}}).allowed
    denied = guard.check({"name": "delete_note",
                          "arguments": {"note_id": "note-7", "dry_run": False}})
    assert [r.code for r in denied.reasons] == ["dry-run-required"]
