# ruff: noqa: UP031  (percent formatting keeps hand-built JSON braces readable)
"""A hand-written JSON-RPC stdio MCP server for byte-exact and hostile test cases.

``python raw_stdio_server.py SCENARIO PIDFILE``. It writes its PID (and any helper's) to
PIDFILE so tests can check that nothing is left running, then answers line by line with
hand-built strings the SDK could never produce.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

SCENARIO = sys.argv[1]
PIDFILE = sys.argv[2]
MODERN = "2026-07-28"


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def tool(name: str, extra: str = "") -> str:
    return ('{"name":"%s","inputSchema":{"type":"object"}%s}' % (name, extra))


def page(msg_id: object, tools: list[str], nxt: object = None, extra: str = "") -> str:
    cursor = "" if nxt is None else ',"nextCursor":' + json.dumps(nxt)
    return '{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]%s%s}}' % (
        json.dumps(msg_id), ",".join(tools), cursor, extra)


def main() -> None:
    pids = [os.getpid()]
    if SCENARIO == "stubborn":
        # Ignore stdin EOF and SIGTERM, and leave a helper in our process group.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        pids.append(helper.pid)
    if SCENARIO in ("setsid-legacy", "setsid-hang", "hold-stdout"):
        # A helper that leaves our session (setsid), as daemonizing servers do; the
        # hold-stdout one keeps our stdout open after we exit.
        helper = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True,
            stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            stdout=None if SCENARIO == "hold-stdout" else subprocess.DEVNULL,
        )
        pids.append(helper.pid)
    if SCENARIO.startswith("probe-"):  # started twice: keep every start's PID
        with open(PIDFILE, "a") as fh:
            fh.write(" ".join(map(str, pids)) + " ")
    else:
        with open(PIDFILE + ".tmp", "w") as fh:
            fh.write(" ".join(map(str, pids)))
        os.replace(PIDFILE + ".tmp", PIDFILE)

    if SCENARIO == "stderr-flood":
        sys.stderr.write("x" * 2_000_000 + "\n")
        sys.stderr.flush()
    if SCENARIO in ("banner", "banner-not-served"):
        # What chroma-mcp and others print before serving: human text, a terminal escape,
        # a line that is not UTF-8, and a blank line.
        out("Server starting on stdio...")
        out("\x1b[31m::warning::\x1b[0m ready \u202e")
        sys.stdout.flush()
        sys.stdout.buffer.write(b"caf\xe9 latin-1\n\n")
        sys.stdout.buffer.flush()
    if SCENARIO == "non-json":
        for n in range(101):  # one more than is skipped
            out(f"log line {n}")
    if SCENARIO == "log-records":
        # What @elastic/mcp-server-elasticsearch prints before serving: an OpenTelemetry
        # record, one JSON object per line with no JSON-RPC member.
        out('{"resource":{"attributes":{"service.name":"es-mcp"}},"severityText":"INFO",'
            '"body":"telemetry \\u001b[2J started"}')
    if SCENARIO == "log-records-flood":
        for n in range(101):  # one more than is skipped
            out(f'{{"level":"info","msg":"record {n}"}}')
    if SCENARIO == "claims-message":
        out('{"id":7,"msg":"not a log record: it claims to be a message"}')
    if SCENARIO == "non-json-long":
        out("x" * 70_000)  # more bytes than are skipped
    walks = 0
    surface_walks: dict[str, int] = {}
    for raw in sys.stdin:
        msg = json.loads(raw)
        method, msg_id = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if method == "server/discover":
            if SCENARIO in ("modern", "modern-list-changed"):
                meta = params.get("_meta", {})
                assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN, meta
                out('{"jsonrpc":"2.0","id":%d,"result":{"supportedVersions":["%s"],'
                    '"capabilities":{"tools":{}},"resultType":"complete","ttlMs":0,'
                    '"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":'
                    '{"name":"raw","version":"9"}}}}' % (msg_id, MODERN))
            elif SCENARIO == "version-error":
                out('{"jsonrpc":"2.0","id":%d,"error":{"code":-32022,"message":"Unsupported",'
                    '"data":{"supported":["2025-06-18"],"requested":"%s"}}}' % (msg_id, MODERN))
            elif SCENARIO in ("hang-all", "hang-probe"):
                continue
            elif SCENARIO in ("probe-crash", "probe-exit"):
                # What servers on early Python SDKs (mcp 1.6) do with a method they do not
                # know: a traceback, then nothing is answered (-crash) or the process ends.
                sys.stderr.write("pydantic_core.ValidationError: 24 validation errors for "
                                 "ClientRequest\n")
                sys.stderr.flush()
                if SCENARIO == "probe-exit":
                    os._exit(1)
                sys.stdin.readline()
                os._exit(1)
            else:
                out('{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"Method not found"}}'
                    % msg_id)
            continue
        if method == "initialize":
            if SCENARIO == "hang-all":
                continue
            requested = params["protocolVersion"]
            if SCENARIO == "version-error":
                assert requested == "2025-06-18", requested
            caps = '{"tools":{"listChanged":true}}'
            if SCENARIO in NOT_SERVED or SCENARIO == "served-empty":
                caps = '{"tools":{},"prompts":{},"resources":{"subscribe":false}}'
            if SCENARIO.startswith("surface-changed"):
                caps = ('{"tools":{},"prompts":{"listChanged":true},'
                        '"resources":{"listChanged":true}}')
            for _ in range(2 if SCENARIO == "init-twice" else 1):  # -twice: a second answer
                out('{"jsonrpc":"2.0","id":%d,"result":{"protocolVersion":"%s","capabilities":'
                    '%s,"serverInfo":{"name":"raw","version":"1"}}}' % (msg_id, requested, caps))
            continue
        if method is not None and msg_id is None:
            continue  # notifications
        if method is None:
            continue  # replies to our own requests
        if method in ("prompts/list", "resources/templates/list") and (
            SCENARIO in NOT_SERVED or SCENARIO == "served-empty"
        ):
            not_served(msg_id, method, params.get("cursor"))
            continue
        if method in ("prompts/list", "resources/templates/list"):
            surface_walks[method] = surface_walks.get(method, 0) + (
                params.get("cursor") is None)
            surface_list(msg_id, method, params.get("cursor"), surface_walks[method])
            continue
        assert method == "tools/list", method
        if SCENARIO.startswith("modern"):
            meta = params["_meta"]
            assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN
            assert sorted(meta["io.modelcontextprotocol/clientCapabilities"]) == [
                "elicitation", "roots", "sampling"]
        cursor = params.get("cursor")
        handle(msg_id, cursor, walks)
        if cursor is None:
            walks += 1


#: Scenarios that advertise prompts and resources but do not serve their lists.
NOT_SERVED = ("not-served", "banner-not-served", "not-served-bad-code", "not-served-page-2",
              "not-served-prompts")


def not_served(msg_id: int, method: str, cursor: str | None) -> None:
    """-32601 for both lists, as mcp-server-sqlite and others answer; ``served-empty``
    serves both, empty; ``-bad-code`` answers with a non-integer code; ``-page-2`` serves
    the first page of prompts and fails the second; ``-prompts`` fails prompts only."""
    s = SCENARIO
    if s == "served-empty" or (s == "not-served-prompts" and method != "prompts/list"):
        member = "prompts" if method == "prompts/list" else "resourceTemplates"
        out(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {member: []}}))
    elif s == "not-served-page-2" and method == "prompts/list" and cursor is None:
        out(json.dumps({"jsonrpc": "2.0", "id": msg_id,
                        "result": {"prompts": [{"name": "p1"}], "nextCursor": "2"}}))
    else:
        code = '"oops"' if s == "not-served-bad-code" else "-32601"
        out('{"jsonrpc":"2.0","id":%d,"error":{"code":%s,"message":"Method not found'
            '\\u001b[2J"}}' % (msg_id, code))


def surface_list(msg_id: int, method: str, cursor: str | None, walk: int) -> None:
    """Prompts or templates in two pages. ``surface-changed-prompts``: before page 2 of the
    first prompts walk the server says its prompts changed, and on the restarted walk (a
    decoy) that its tools and resources did; ``-always``: prompts change on every walk."""
    prompts = method == "prompts/list"
    member, key = ("prompts", "name") if prompts else ("resourceTemplates", "uriTemplate")
    if cursor is None:
        items = [{key: "p1" if prompts else "t://{a}"}]
        nxt: str | None = "2"
    else:
        changed = ["prompts"] if walk == 1 or SCENARIO.endswith("-always") else []
        if prompts:  # decoys on the restarted walk: other lists' notifications
            for kind in changed or ["tools", "resources"]:
                out('{"jsonrpc":"2.0","method":"notifications/%s/list_changed"}' % kind)
        items = [{key: f"p2-walk{walk}" if prompts else "t://{b}"}]
        nxt = None
    result: dict[str, object] = {member: items}
    if nxt is not None:
        result["nextCursor"] = nxt
    out(json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}))


def handle(msg_id: int, cursor: str | None, walks: int) -> None:
    s = SCENARIO
    if s in ("legacy", "modern", "banner", "log-records", "version-error", "stderr-flood",
             "stubborn",
             "setsid-legacy", "served-empty", "probe-crash", "probe-exit", *NOT_SERVED):
        # Unknown fields, odd key order, raw UTF-8, and "" as a real cursor.
        if cursor is None:
            out(page(msg_id, [
                '{"inputSchema":{"type":"object","properties":{"q":{"type":"string"}}},'
                '"name":"search","description":"Sök \\u00e9 ✓","futureField":{"z":1,"a":[1.5,2]}}',
                tool("fetch", ',"annotations":{"readOnlyHint":true,"vendorHint":2}'),
            ], nxt="", extra=',"resultType":"complete","ttlMs":0,"cacheScope":"public"'))
        elif cursor == "":
            if s in ("banner", "banner-not-served"):
                out("tools/list page 2 requested")  # a log line between messages
            if s == "log-records":
                out('{"severityText":"DEBUG","body":"tools/list page 2 requested"}')
            out(page(msg_id, [tool("write", ',"_meta":{"com.example/x":1}')]))
        if s == "stubborn":
            pass
    elif s == "cycle":
        nxt = {None: "a", "a": "b", "b": "a"}[cursor]
        out(page(msg_id, [tool(f"t_{cursor}")], nxt=nxt))
    elif s == "endless":
        n = 0 if cursor is None else int(cursor)
        out(page(msg_id, [tool(f"t{n}")], nxt=str(n + 1)))
    elif s in ("hang", "setsid-hang"):
        return
    elif s == "hold-stdout":
        sys.stdout.flush()
        os._exit(4)
    elif s == "hang-probe":
        out(page(msg_id, [tool("only")]))
    elif s in ("non-json", "non-json-long", "log-records-flood", "claims-message"):
        out(page(msg_id, [tool("a")]))
    elif s == "crash":
        if cursor is None:
            out(page(msg_id, [tool("a")], nxt="2"))
        else:
            sys.stderr.write("fatal: boom\n")
            sys.stderr.flush()
            os._exit(3)
    elif s == "node-crash":  # what a crashing Node server prints: the cause, then its version
        sys.stderr.write("node:internal/modules/cjs/loader:1228\n  throw err;\n  ^\n\n"
                         "Error: Cannot find module '/app/dist/index.js'\x1b[2J\n"
                         "    at Module._resolveFilename (node:internal/modules:1225:15)\n"
                         "  code: 'MODULE_NOT_FOUND',\n}\n\nNode.js v20.20.2\n")
        sys.stderr.flush()
        os._exit(1)
    elif s == "oversized":
        out(page(msg_id, [tool("big", ',"description":"%s"' % ("x" * 300_000))]))
    elif s == "answer-twice":  # page 1 answered twice, the second with other tools
        if cursor is None:
            out(page(msg_id, [tool("a")], nxt="2"))
            out(page(msg_id, [tool("evil")], nxt="2"))
        else:
            out(page(msg_id, [tool("b")]))
    elif s == "init-twice":
        out(page(msg_id, [tool("a")]))
    elif s == "wrong-id":
        out(page(msg_id + 100, [tool("a")]))
    elif s == "rpc-error":
        out('{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"database down"}}' % msg_id)
    elif s == "tool-not-object":
        out(page(msg_id, [tool("a"), "[1,2]"]))
    elif s == "name-not-string":
        out(page(msg_id, [tool("a"), '{"name":5,"inputSchema":{}}']))
    elif s == "duplicate":
        if cursor is None:
            out(page(msg_id, [tool("a"), tool("b")], nxt="p2"))
        else:
            out(page(msg_id, [tool("c"), tool("a")]))
    elif s == "dup-keys":
        out(page(msg_id, ['{"name":"a","name":"b","inputSchema":{}}']))
    elif s == "huge-int":  # past int()'s 4,300-digit limit
        out(page(msg_id, [tool("a", ',"n":' + "9" * 5000)]))
    elif s == "bad-cursor-type":
        out(page(msg_id, [tool("a")], nxt=7))
    elif s.startswith("surface-changed"):
        out(page(msg_id, [tool("a")]))
    elif s in ("list-changed", "list-changed-always", "modern-list-changed"):
        if cursor is None:
            out(page(msg_id, [tool("a")], nxt="p2"))
            return
        # Before answering page 2: a log notification, server requests of the declared
        # capabilities (wait for each answer: no roots, a clean refusal), then list_changed.
        out('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info",'
            '"data":"hi"}}')
        out('{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}')
        reply = json.loads(sys.stdin.readline())
        assert reply["id"] == "srv-1" and reply["result"] == {"roots": []}, reply
        out('{"jsonrpc":"2.0","id":"srv-2","method":"sampling/createMessage","params":{}}')
        reply = json.loads(sys.stdin.readline())
        assert reply["id"] == "srv-2" and reply["error"]["code"] == -1, reply
        if walks == 1 or s == "list-changed-always":
            out('{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}')
        names = ["b"] if walks == 1 else ["b", "c"]
        out(page(msg_id, [tool(n) for n in names]))
    else:
        raise SystemExit(f"unknown scenario {s}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        pass
    if SCENARIO == "stubborn":
        time.sleep(60)  # ignore stdin EOF too
