"""Issue 27: what real servers do that the official SDK client tolerates.

* They advertise ``prompts``/``resources`` and answer ``prompts/list`` or
  ``resources/templates/list`` with ``-32601 Method not found`` (mcp-server-sqlite,
  @executeautomation/database-server, …): the fetch goes on, the list is recorded as not
  served (``capture.notServed``) and the caller is warned once.
* They print a human banner on stdout before serving (chroma-mcp): the line is skipped,
  counted and never recorded.

Raw servers (tests/mcp/raw_stdio_server.py, raw_http_server.py) play both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from mcp_helpers import assert_all_gone, raw_command
from raw_http_server import Reply, Seen, json_reply, serve

from histor_sign.errors import InputError
from histor_sign.mcp import FetchOptions, Target, fetch
from histor_sign.models import Snapshot
from histor_sign.revision import surface_digests, surface_json

pytestmark = pytest.mark.slow

NOT_SERVED = {"prompts": {"code": -32601}, "resourceTemplates": {"code": -32601}}
TOOL_NAMES = ["search", "fetch", "write"]
BANNER_TEXT = ("Server starting", "ready", "latin-1", "page 2 requested")


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("histor-sign: warning: ")]


def _fetch_cli(tmp_path: Path, scenario: str, *flags: str) -> tuple[Any, dict[str, Any]]:
    pidfile = tmp_path / f"{scenario}.pids"
    out = tmp_path / f"{scenario}.snapshot.json"
    run = run_cli("fetch", "--stdio", raw_command(scenario, pidfile), "-o", str(out), *flags)
    assert run.code == 0, run.stderr
    assert_all_gone(pidfile)
    return run, json.loads(out.read_text(encoding="utf-8"))


def test_lists_answered_with_method_not_found_are_recorded_and_the_fetch_goes_on(
    tmp_path: Path,
) -> None:
    run, doc = _fetch_cli(tmp_path, "not-served")
    _, reference = _fetch_cli(tmp_path, "legacy")
    # Every tool, byte for byte what a server without the gap serves.
    assert [t["name"] for t in doc["tools"]] == TOOL_NAMES
    assert doc["tools"] == reference["tools"]
    # The gap is named in the snapshot, with the error code; the lists are absent.
    assert doc["capture"]["notServed"] == NOT_SERVED
    assert doc["capture"]["serverCapabilities"]["prompts"] == {}
    assert "prompts" not in doc and "resourceTemplates" not in doc
    # One warning, inert: the server's message is escaped.
    (warning,) = _warnings(run.stderr)
    assert "advertises prompts and resources" in warning
    assert "prompts/list with JSON-RPC error -32601" in warning
    assert "resources/templates/list with JSON-RPC error -32601" in warning
    assert "\x1b" not in run.stderr and "Method not found\\u001b[2J" in warning


def test_one_list_not_served_the_other_served(tmp_path: Path) -> None:
    run, doc = _fetch_cli(tmp_path, "not-served-prompts")
    assert doc["capture"]["notServed"] == {"prompts": {"code": -32601}}
    assert doc["resourceTemplates"] == [] and "prompts" not in doc
    (warning,) = _warnings(run.stderr)
    assert "advertises prompts but" in warning and "resources/templates" not in warning


def test_a_banner_is_skipped_counted_and_never_recorded(tmp_path: Path) -> None:
    run, doc = _fetch_cli(tmp_path, "banner", "--protocol", "auto")
    _, reference = _fetch_cli(tmp_path, "legacy")
    assert doc["tools"] == reference["tools"] and doc["capture"]["pages"] == 2
    (warning,) = _warnings(run.stderr)
    # Four lines: three before serving (one not UTF-8), one between two responses.
    assert "skipped 4 non-JSON lines (96 bytes) on the MCP server's standard output" in warning
    assert "the first: 'Server starting on stdio...'" in warning
    assert "\x1b" not in run.stderr and "\u202e" not in run.stderr
    snapshot_text = json.dumps(doc)
    assert not [t for t in BANNER_TEXT if t in snapshot_text]


def test_log_records_with_no_json_rpc_member_are_skipped_like_a_banner(tmp_path: Path) -> None:
    """An OpenTelemetry record on stdout (the Elasticsearch server's preamble) is JSON but
    no message: skipped, counted apart from text lines, never recorded; the tools are those
    of the same server without it, byte for byte."""
    run, doc = _fetch_cli(tmp_path, "log-records")
    _, reference = _fetch_cli(tmp_path, "legacy")
    assert doc["tools"] == reference["tools"]
    (warning,) = _warnings(run.stderr)
    assert "skipped 2 JSON objects with no JSON-RPC member" in warning
    assert "non-JSON" not in warning and "\x1b" not in run.stderr
    assert "service.name" in warning  # the first one, clipped and escaped
    assert "telemetry" not in json.dumps(doc) and "tools/list page 2" not in json.dumps(doc)


def test_banner_and_lists_not_served_together(tmp_path: Path) -> None:
    run, doc = _fetch_cli(tmp_path, "banner-not-served")
    assert [t["name"] for t in doc["tools"]] == TOOL_NAMES
    assert doc["capture"]["notServed"] == NOT_SERVED
    warnings = _warnings(run.stderr)
    assert len(warnings) == 2
    assert "skipped 4 non-JSON lines" in warnings[0] and "notServed" in warnings[1]


def test_the_library_returns_the_warnings_and_the_gap() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        snap = fetch(Target.stdio(raw_command("banner-not-served", Path(tmp) / "pids")),
                     FetchOptions(timeout=20))
    assert [t["name"] for t in snap.tools] == TOOL_NAMES
    assert snap.not_served == {"prompts": -32601, "resourceTemplates": -32601}
    assert snap.prompts is None and snap.resource_templates is None
    assert len(snap.warnings) == 2 and all("\x1b" not in w for w in snap.warnings)
    # The document holds the gap, never the warnings; it reads back the same.
    again = Snapshot.from_json(json.loads(snap.to_bytes()))
    assert again.not_served == snap.not_served and again.warnings == ()
    assert "warnings" not in snap.to_json()
    # The attestation's surface carries it.
    assert surface_json(again) == {"instructions": None, "prompts": {},
                                   "resourceTemplates": {}, "notServed": NOT_SERVED}
    assert dict(surface_digests(again).not_served) == snap.not_served


@pytest.mark.parametrize("bad", [
    {"notServed": []},
    {"notServed": {"tools": {"code": -32601}}},
    {"notServed": {"prompts": {"code": "x"}}},
    {"notServed": {"prompts": {"code": True}}},
    {"notServed": {"prompts": {"code": -32601, "message": "extra"}}},
    {"notServed": {"prompts": -32601}},
])
def test_a_malformed_not_served_record_is_refused(bad: dict[str, Any]) -> None:
    doc = {"type": "histor.snapshot/v1", "capture": {"surfaceCaptured": True, **bad},
           "tools": []}
    with pytest.raises(InputError, match="notServed"):
        Snapshot.from_json(doc)


def test_a_list_both_served_and_not_served_is_refused() -> None:
    doc = {"type": "histor.snapshot/v1", "tools": [], "prompts": [],
           "capture": {"surfaceCaptured": True, "notServed": {"prompts": {"code": -32601}}}}
    with pytest.raises(InputError, match="both listed and recorded as not served"):
        Snapshot.from_json(doc)


def test_over_streamable_http_too() -> None:
    """The same gap over HTTP: a JSON-RPC error in a 200 answer, and one in a 404 answer
    (as some frameworks send for an unknown method)."""

    def behaviour(req: Seen) -> Reply:
        msg = req.body
        method = msg.get("method") if isinstance(msg, dict) else None
        if req.method != "POST":
            return Reply(405)
        if method == "server/discover":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                               "error": {"code": -32601, "message": "Method not found"}})
        if method == "initialize":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
                "serverInfo": {"name": "raw-http", "version": "3"}}})
        if "id" not in msg:
            return Reply(202)
        if method == "tools/list":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "tools": [{"name": "alpha", "inputSchema": {"type": "object"}}]}})
        if method == "prompts/list":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                               "error": {"code": -32601, "message": "Method not found"}})
        return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32602, "message": "no templates"}}, 404)

    with serve(behaviour) as (url, _seen):
        snap = fetch(Target.http(url), FetchOptions(timeout=10))
    assert [t["name"] for t in snap.tools] == ["alpha"]
    assert snap.not_served == {"prompts": -32601, "resourceTemplates": -32602}
    assert len(snap.warnings) == 1 and "error -32602 (no templates)" in snap.warnings[0]


@pytest.mark.parametrize("scenario", ["probe-crash", "probe-exit"])
def test_a_server_that_breaks_on_the_probe_is_started_again_with_the_handshake(
    tmp_path: Path, scenario: str,
) -> None:
    """Servers on early Python SDKs (chroma-mcp 0.2.6 on mcp 1.6) crash on the unknown
    ``server/discover``: then answer nothing (-crash) or exit (-exit). The fetch starts the
    server again, speaks the handshake, and says so."""
    pidfile = tmp_path / "pids"
    out = tmp_path / "snap.json"
    run = run_cli("fetch", "--stdio", raw_command(scenario, pidfile), "-o", str(out),
                  "--timeout", "2")
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert doc["capture"]["era"] == "legacy"
    assert [t["name"] for t in doc["tools"]] == TOOL_NAMES
    (warning,) = _warnings(run.stderr)
    assert "stopped answering after the server/discover probe" in warning
    assert "started again and asked with the initialize handshake" in warning
    assert len(pidfile.read_text().split()) == 2  # two starts, both gone
    assert_all_gone(pidfile)


def test_forcing_a_protocol_never_restarts(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    run = run_cli("fetch", "--stdio", raw_command("probe-exit", pidfile),
                  "--protocol", "modern", "--timeout", "2")
    assert run.code == 2 and "exited with code 1 before answering server/discover" in run.stderr
    assert len(pidfile.read_text().split()) == 1
    assert_all_gone(pidfile)
