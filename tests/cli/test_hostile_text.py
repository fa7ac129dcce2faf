"""Untrusted text is data, never control: a sweep over every command and every slot that
carries text a server, a file or a model chose.

Each hostile string below is put into one slot (catalog tool names, keys and descriptions;
envelope fields; call files; policy files; server responses, headers and stderr; flags), and
the whole of what the run produced — stdout, stderr, summary.md, the SARIF report,
``$GITHUB_STEP_SUMMARY`` and ``$GITHUB_OUTPUT`` — must be inert: no control character but
our own line breaks (so no ESC sequence, no CR to overwrite a line), no line that starts with
``::`` (a GitHub workflow command, after leading spaces as the runner trims them), and no
``##[`` (the runner's legacy command form, read anywhere in a line). Errors keep their
contract: the documented exit code, exactly one ``histor-sign: error:`` line, no traceback.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Run, read_github_output
from raw_http_server import Reply, Seen, json_reply, serve
from sigstore_testkit import TOOLS_V1, WF_ALICE, SignedSet, make_signed_set, run_main

from histor_sign.sigstore_dev import LocalSigstore

SERVER = "io.github.alice/docs"

#: One of each class: cursor/screen control, line overwrite, a forged line holding a
#: workflow command, a printable workflow command at the start, the legacy form, C1
#: controls, Unicode line separators and a bidi override.
HOSTILE = {
    "esc-repaint": "\x1b[2J\x1b[1;1HVERIFIED io.github.alice/docs pass",
    "cr-overwrite": "x\rVERIFIED pass",
    "lf-workflow": "x\n::warning file=a.py::pwned",
    "leading-workflow": "::add-mask::pwned",
    "indented-workflow": "  ::stop-commands::tok",
    "legacy-workflow": "x ##[error]pwned",
    "c1-controls": "x\x9b2J\x85::warning::pwned\x9d0;title\x9c",
    "separators": "x\u2028::warning::pwned\u2029\u0085",
    "bidi": "\u202eVERIFIED\u202c",
}
KINDS = sorted(HOSTILE)


def assert_inert(*texts: str) -> None:
    """No control character but LF, no line starting with ``::``, no ``##[``."""
    for text in texts:
        bad = [c for c in text if c != "\n" and not c.isprintable()]
        assert not bad, (bad, text[:400])
        for line in text.split("\n"):
            assert not line.lstrip().startswith("::"), (line, text[:400])
        assert "##[" not in text, text[:400]


def assert_contract(run: Run, codes: tuple[int, ...]) -> None:
    """Exit code; on failure exactly one error line (warnings may precede); no traceback."""
    assert run.code in codes, (run.code, run.stdout[-400:], run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert_inert(run.stdout, run.stderr)
    lines = [line for line in run.stderr.split("\n") if line]
    errors = [line for line in lines if line.startswith("histor-sign: error: ")]
    if run.code == 2:
        assert len(errors) == 1 and lines[-1] == errors[0], run.stderr
    # Besides warnings and the error: the fetch summary line (issue 26), server name inert.
    assert all(line.startswith(("histor-sign: warning: ", "histor-sign: error: ",
                                "histor-sign: fetched "))
               for line in lines), run.stderr
    assert len(errors) <= 1, run.stderr


def esc(text: str) -> str:
    """``text`` as the inside of a JSON string literal."""
    return json.dumps(text)[1:-1]


class World:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.ss: SignedSet = make_signed_set(base / "signed")
        self.n = 0

    def file(self, content: str | bytes | Any, suffix: str = ".json") -> str:
        self.n += 1
        path = self.base / f"f{self.n}{suffix}"
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
        return str(path)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("hostile-text"))


@pytest.fixture
def ci(world: World, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """A work directory with $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY set, as in CI."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SIGSTORE_IDENTITY_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "github_output"))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step_summary.md"))
    yield tmp_path


def written(work: Path) -> list[str]:
    """Every CI-facing file the run wrote: summaries, SARIF, the output file."""
    names = ("github_output", "step_summary.md", "summary.md", "scan.sarif", "out.sarif")
    return [p.read_text(encoding="utf-8") for p in work.rglob("*") if p.name in names]


# --- 1. files: catalogs, envelopes, calls, policies, in every command ----------------------


def tool(name: str = "search", description: str = "Search the docs.",
         props: dict[str, Any] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if props is not None:
        schema["properties"] = props
    return {"name": name, "description": description, "inputSchema": schema}


def file_cases(w: World, h: str) -> dict[str, list[str]]:
    """Command lines with one hostile slot each (everything else valid)."""
    t, e, tc = str(w.ss.tools_v1), str(w.ss.rev1), str(w.ss.trust_config)
    hk = esc(h)
    name_cat = w.file({"tools": [tool(h)]})
    dup_key = w.file(f'{{"tools": [], "{hk}": 1, "{hk}": 2}}')
    unknown_tool_key = w.file({"tools": [{**tool(), h: 1}]})
    desc_cat = w.file({"tools": [tool("search", h + " search docs", {h: {"type": "string"}}),
                                 tool("find", h + " search docs", {h: {"type": "string"}})]})
    bad_schema = w.file({"tools": [tool("search", props={h: {"type": h}})]})
    env = json.loads(w.ss.rev1.read_text())
    envs = {
        "serverVersion": w.file({**env, "serverVersion": h}),
        "identity": w.file({**env, "identity": h}),
        "server": w.file({**env, "server": h}),
        "unknown-member": w.file({**env, h: 1}),
        "toolDigests-key": w.file({**env, "toolDigests": {h: env["toolDigests"]["search"]}}),
        "issuer": w.file({**env, "signer": {**env["signer"], "issuer": h}}),
        "signer-identity": w.file({**env, "signer": {**env["signer"], "identity": h}}),
    }
    call_name = w.file({"name": h, "arguments": {}})
    call_args = w.file({"name": "search", "arguments": {h: 1, "query": h}})
    call_dup = w.file(f'{{"name": "search", "arguments": {{"{hk}": 1, "{hk}": 2}}}}')
    trace = w.file(json.dumps({"name": "search", "arguments": {h: 1}}) + "\n"
                   + json.dumps({"name": h, "arguments": {}}) + "\n", ".jsonl")
    policy_key = w.file(f'"{hk}" = 1\n', ".toml")
    policy_table = w.file(f'[tools."{hk}"]\nallow = true\n', ".toml")
    policy_value = w.file(f'deny_patterns = ["{hk}"]\n', ".toml")
    cases = {
        "digest name": ["digest", name_cat],
        "digest dup-key": ["digest", dup_key],
        "digest unknown-key": ["digest", unknown_tool_key],
        "build name": ["build", name_cat, "--server", SERVER, "--server-version", "1",
                       "--identity", WF_ALICE],
        "build --previous": ["build", t, "--server", SERVER, "--server-version", "2",
                             "--identity", WF_ALICE, "--previous", envs["serverVersion"]],
        "scan name": ["scan", name_cat],
        "scan description": ["scan", desc_cat],
        "scan sarif": ["scan", desc_cat, "-f", "sarif"],
        "scan sarif -o": ["scan", name_cat, desc_cat, "-f", "sarif", "-o", "out.sarif"],
        "scan schema": ["scan", bad_schema],
        "scan json": ["scan", desc_cat, "-f", "json"],
        "check drift": ["check", desc_cat, "--envelope", e],
        "check drift json": ["check", desc_cat, "--envelope", e, "-f", "json"],
        "check --signed-tools": ["check", desc_cat, "--envelope", e, "--signed-tools", name_cat],
        "guard name": ["guard", call_name, "--catalog", t],
        "guard args": ["guard", call_args, "--catalog", desc_cat],
        "guard args json": ["guard", call_args, "--catalog", desc_cat, "-f", "json"],
        "guard dup-args": ["guard", call_dup, "--catalog", t],
        "guard policy key": ["guard", call_args, "--catalog", t, "--policy", policy_key],
        "guard policy table": ["guard", call_args, "--catalog", t, "--policy", policy_table],
        "guard policy value": ["guard", call_args, "--catalog", t, "--policy", policy_value],
        "guard catalog": ["guard", call_args, "--catalog", name_cat],
        "replay": ["replay", trace, "-c", desc_cat],
        "replay sarif": ["replay", trace, "-c", desc_cat, "-f", "sarif"],
        "release gate": ["release", "--server", SERVER, "--server-version", "1", "--tools",
                         desc_cat, "--fail-on", "warning", "--identity-token", "x",
                         "--trust-config", tc, "--out-dir", "rel"],
        "release name": ["release", "--server", SERVER, "--server-version", "1", "--tools",
                         name_cat, "--identity-token", "x", "--trust-config", tc,
                         "--out-dir", "rel"],
        "release policy": ["release", "--server", SERVER, "--server-version", "1", "--tools",
                           t, "--policy", policy_key, "--identity-token", "x",
                           "--trust-config", tc, "--out-dir", "rel"],
        "release --previous": ["release", "--server", SERVER, "--server-version", "1",
                               "--tools", t, "--previous", envs["identity"],
                               "--identity-token", "x", "--trust-config", tc,
                               "--out-dir", "rel"],
    }
    for field, path in envs.items():
        cases[f"verify {field}"] = ["verify", path, "--trust-config", tc, "--repository", "alice/docs"]
        cases[f"verify -f json {field}"] = ["verify", path, "--trust-config", tc, "--repository", "alice/docs", "-f", "json"]
        cases[f"check --envelope {field}"] = ["check", t, "--envelope", path]
        cases[f"guard --envelope {field}"] = ["guard", call_args, "--catalog", t,
                                              "--envelope", path, "--verify",
                                              "--trust-config", tc]
    return cases


def test_every_command_has_a_hostile_text_case(world: World) -> None:
    commands = {args[0] for args in file_cases(world, "x").values()}
    assert commands >= {"digest", "build", "scan", "check", "guard", "replay", "verify",
                        "release"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_text_in_files(world: World, ci: Path, kind: str) -> None:
    failures = []
    for label, args in file_cases(world, HOSTILE[kind]).items():
        run = run_main(*args)
        try:
            assert_contract(run, (0, 1, 2))
            assert_inert(*written(ci))
            if args[0] == "verify":
                # A tampered envelope never reads as verified, whatever it holds.
                assert run.code != 0, run.stdout
                assert not any(line.startswith("VERIFIED") for line in run.stdout.split("\n"))
        except AssertionError as exc:
            failures.append(f"{label}: {exc}")
    assert not failures, "\n".join(failures[:15])


def test_a_tampered_envelope_cannot_paint_verified(world: World, ci: Path) -> None:
    """The issue's case: ESC/CR in serverVersion or identity of an otherwise valid envelope."""
    env = json.loads(world.ss.rev1.read_text())
    for field in ("serverVersion", "identity"):
        for text in (HOSTILE["esc-repaint"], HOSTILE["cr-overwrite"]):
            path = world.file({**env, field: text})
            run = run_main("verify", path, "--trust-config", str(world.ss.trust_config),
                           "--repository", "alice/docs")
            assert_contract(run, (1, 2))
            assert not any(line.startswith("VERIFIED") for line in run.stdout.split("\n"))
            assert "\x1b" not in run.stderr and "\r" not in run.stderr


# --- 2. flags that carry text into messages --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_text_in_flags(world: World, ci: Path, kind: str) -> None:
    h, t = HOSTILE[kind], str(world.ss.tools_v1)
    build = ["build", t, "--server", SERVER, "--server-version", "1", "--identity", WF_ALICE]
    cases = [
        ["build", t, "--server", SERVER, "--server-version", h, "--identity", WF_ALICE],
        ["build", t, "--server", h, "--server-version", "1", "--identity", WF_ALICE],
        ["build", t, "--server", SERVER + h, "--server-version", "1", "--identity", WF_ALICE],
        ["build", t, "--server", SERVER, "--server-version", "1", "--identity", WF_ALICE + h],
        ["build", t, "--server", SERVER, "--server-version", "1", "--identity", h],
        [*build, "--bogus" + h],
        [h],
        ["digest", t, "--format", h],
        ["digest", "--url", "http://127.0.0.1:1/" + h],
        ["digest", "--url", "http://127.0.0.1:1/mcp", "--header", h],
        ["digest", "--url", "http://127.0.0.1:1/mcp", "--header", "X-A:" + h],
        ["digest", "--url", "http://127.0.0.1:1/mcp", "--header", h + ":v"],
        ["digest", "--stdio", "/nonexistent/" + h],
        ["verify", str(world.ss.rev1), "--trust-config", str(world.ss.trust_config),
         "--cert-identity", h],
        ["verify", str(world.ss.rev1), "--trust-config", str(world.ss.trust_config),
         "--repository", h, "--ref", h],
        ["release", "--server", SERVER, "--server-version", h, "--tools", t,
         "--identity-token", "x", "--out-dir", "rel"],
    ]
    failures = []
    for args in cases:
        run = run_main(*args)
        try:
            # A printable server version is a version (build prints the statement).
            assert_contract(run, (0, 1, 2) if args[0] == "build" else (1, 2))
            assert_inert(*written(ci))
        except AssertionError as exc:
            failures.append(f"{args}: {exc}")
    assert not failures, "\n".join(failures)


def test_server_names_digests_and_identities_match_the_whole_string() -> None:
    from histor_sign.errors import InputError
    from histor_sign.models import validate_identity, validate_server_name, validate_server_version

    for bad in ("io.github.owner/docs\n", "io.github.owner/docs\r", "\nio.github.owner/docs"):
        with pytest.raises(InputError):
            validate_server_name(bad)
    for bad in (WF_ALICE + "\n", "a@b.example\n", "https://example.com/x\x1b[2J",
                "https://example.com/\u202e"):
        with pytest.raises(InputError):
            validate_identity(bad)
    for bad in ("1.0\n", "1.0\x1b[2J", "1\u2028", "\x85", "1.0\t"):
        with pytest.raises(InputError):
            validate_server_version(bad)
    assert validate_server_version("1.0.0-beta+exp.sha.5114f85 ✓") == "1.0.0-beta+exp.sha.5114f85 ✓"


def test_digests_and_log_ids_with_a_final_newline_are_refused(world: World) -> None:
    from histor_sign.errors import InputError
    from histor_sign.models import Statement, parse_envelope

    env = json.loads(world.ss.rev1.read_text())
    for changed in (
        {**env, "manifestDigest": env["manifestDigest"] + "\n"},
        {**env, "toolDigests": {"search": env["toolDigests"]["search"] + "\n"}},
    ):
        with pytest.raises(InputError):
            Statement.from_json(changed)
    log = {**env["transparencyLog"], "logId": env["transparencyLog"]["logId"] + "\n"}
    with pytest.raises(InputError):
        parse_envelope({**env, "transparencyLog": log}, "e")


# --- 3. known crashes at the flag boundary: clean usage errors --------------------------------


@pytest.mark.parametrize(("args", "needle"), [
    (["--url", "http://127.0.0.1:1/mcp", "--header", "X-Key: é"], "--header X-Key"),
    (["--url", "http://127.0.0.1:1/mcp", "--header", "X-Key: a\x1bb"], "--header X-Key"),
    (["--url", "http://127.0.0.1:1/mcp", "--header", "X-K\x1bey: a"], "--header"),
    (["--url", "http://127.0.0.1:99999/mcp"], "--url"),
    (["--url", "http://127.0.0.1:-1/mcp"], "--url"),
    (["--url", "http://127.0.0.1:abc/mcp"], "--url"),
    (["--url", "http://[::zz]/mcp"], "--url"),
    (["--url", "http://[::1/mcp"], "--url"),
    (["--url", "http://127.0.0.1:1/m\x01cp"], "--url"),
    (["--url", "http://127.0.0.1:1/m\ncp"], "--url"),
    (["--url", "http://127.0.0.1:1/m cp"], "--url"),
    (["--url", "http://127.0.0.1:1/m\x85cp"], "--url"),
    (["--url", "http://127.0.0.1:1/m\x7fcp"], "--url"),
])
def test_bad_url_and_header_values_are_usage_errors(
    ci: Path, args: list[str], needle: str
) -> None:
    for command in (["digest"], ["fetch"], ["scan"]):
        run = run_main(*command, *args)
        assert_contract(run, (2,))
        assert needle in run.stderr


def test_a_non_ascii_bearer_token_is_a_usage_error(
    ci: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value in ("tökén", "a\x1bb", "a\nb"):
        monkeypatch.setenv("HS_TEXT_TOKEN", value)
        run = run_main("digest", "--url", "http://127.0.0.1:1/mcp",
                       "--bearer-token-env", "HS_TEXT_TOKEN")
        assert_contract(run, (2,))
        assert "--bearer-token-env" in run.stderr and value not in run.stderr


# --- 4. servers: what an MCP server says, over HTTP and stdio ---------------------------------


def _server(h: str, slot: str) -> Any:
    """A legacy-protocol HTTP endpoint that puts ``h`` into ``slot`` of its answers."""

    def behaviour(req: Seen) -> Reply:
        if req.method != "POST":
            return Reply(405)
        msg = req.body
        method = msg.get("method")
        if method == "server/discover":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                               "error": {"code": -32601, "message": "Method not found"}})
        if slot == "redirect":
            return Reply(307, b"", {"Location": "http://127.0.0.1:1/" + esc(h) + "?t=1"})
        if slot == "http-error-body":
            return Reply(500, h.encode("utf-8", "surrogatepass"), {"Content-Type": "text/plain"})
        if method == "initialize":
            headers = {"Mcp-Session-Id": esc(h)} if slot == "session-id" else {}
            return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": h, "version": h}}}, **headers)
        if "id" not in msg:
            return Reply(202)
        if slot == "rpc-error":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                               "error": {"code": -32603, "message": h, "data": h}})
        if slot == "dup-key":
            hk = esc(h)
            props = f'"{hk}": {{}}, "{hk}": {{}}'
            return json_reply(
                f'{{"jsonrpc": "2.0", "id": {msg["id"]}, "result": {{"tools": [{{"name": "a", '
                f'"inputSchema": {{"type": "object", "properties": {{{props}}}}}}}]}}}}')
        if slot == "cursor":
            return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                               "result": {"tools": [tool("a")], "nextCursor": 7, h: h}})
        tools = [tool(h, h), tool("b", h + " search")] if slot == "tool-name" else [
            tool("search", h + " search docs", {h: {"type": "string"}}),
            tool("find", h + " search docs", {h: {"type": "string"}})]
        return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": tools}})

    return behaviour


SERVER_SLOTS = ["tool-name", "description", "rpc-error", "dup-key", "redirect", "session-id",
                "http-error-body", "cursor"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_text_from_http_servers(world: World, ci: Path, kind: str) -> None:
    h, tc = HOSTILE[kind], str(world.ss.trust_config)
    failures = []
    for slot in SERVER_SLOTS:
        with serve(_server(h, slot)) as (url, _seen):
            target = ["--url", url, "--protocol", "legacy", "--timeout", "10"]
            # One command per renderer of fetched text (the fetch itself is shared code):
            # the snapshot on stdout, SARIF, the drift report, the release summaries.
            for command in (["fetch"], ["scan", "-f", "sarif", "-o", "out.sarif"],
                            ["check", "--envelope", str(world.ss.rev1)],
                            ["release", "--server", SERVER, "--server-version", "1",
                             "--fail-on", "warning", "--identity-token", "x",
                             "--trust-config", tc, "--out-dir", "rel"]):
                run = run_main(*command, *target)
                try:
                    assert_contract(run, (0, 1, 2))
                    assert_inert(*written(ci))
                except AssertionError as exc:
                    failures.append(f"{slot} {command[0]}: {exc}")
    assert not failures, "\n".join(failures[:15])


@pytest.mark.slow
def test_hostile_stdio_server_stderr_and_output(ci: Path) -> None:
    for h in HOSTILE.values():
        for script in (
            f"import sys; sys.stderr.write({h!r}); sys.exit(3)",
            f"import sys; sys.stdout.write({h!r} + '\\n'); sys.stdout.flush()",
        ):
            command = shlex.join([sys.executable, "-c", script])
            run = run_main("digest", "--stdio", command, "--timeout", "10")
            assert_contract(run, (2,))


def test_fetch_stdout_keeps_the_json_value(world: World, ci: Path) -> None:
    """Escaping stdout never changes what a JSON document says: it only writes escapes
    inside its strings."""
    h = "".join(HOSTILE.values())
    with serve(_server(h, "description")) as (url, _seen):
        target = ["--url", url, "--protocol", "legacy"]
        shown = run_main("fetch", *target)
        assert run_main("fetch", *target, "-o", "snap.json").code == 0
    assert shown.code == 0, shown.stderr
    assert_inert(shown.stdout)
    on_disk = json.loads((ci / "snap.json").read_text(encoding="utf-8"))
    printed = json.loads(shown.stdout)
    for document in (printed, on_disk):  # two fetches: their capture times may differ
        document["capture"].pop("fetchedAt")
    assert printed == on_disk
    assert on_disk["tools"][0]["description"].startswith(h)


# --- 5. a real release: summary, step summary and outputs -------------------------------------


def test_release_outputs_are_exact_and_inert(tmp_path: Path, ci: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A signed release whose out-dir holds a newline and a workflow command: the
    delimiter-form $GITHUB_OUTPUT gives back each path exactly and no extra output; stdout
    and the summaries stay inert; revision 1 shows "none" as its previous manifest."""
    import cmarkgfm

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"tools": [
        {**TOOLS_V1[0], "description": "[x](https://evil.example) <img src=x> www.evil.example"},
    ]}))
    out_dir = "rel\n::set-output name=gate::passed\nrevision=99"
    with LocalSigstore(directory=tmp_path / "sigstore") as inst:
        monkeypatch.setenv("SIGSTORE_IDENTITY_TOKEN", inst.mint_token(WF_ALICE))
        run = run_main("release", "--server", SERVER, "--server-version", "1.0 [v](x)",
                       "--tools", str(tools), "--trust-config", str(inst.trust_config_path),
                       "--out-dir", out_dir)
    assert run.code == 0, run.stderr
    assert_inert(run.stdout, run.stderr)
    summary = (ci / out_dir / "summary.md").read_text()
    step = (ci / "step_summary.md").read_text()
    assert_inert(summary, step)
    assert "None" not in summary and "| previous manifest | none |" in summary
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert "<a " not in html and "<img" not in html
    outputs = read_github_output((ci / "github_output").read_text())
    assert outputs["gate"] == "passed" and outputs["revision"] == "1"
    assert outputs["envelope"] == str(Path(out_dir) / "envelope.json")
    assert set(outputs) == {"gate", "revision", "manifest-digest", "log-index", "envelope",
                            "statement", "bundle", "tools", "sarif", "summary", "attestation",
                            "manifest", "registry"}


def test_github_output_delimiter_never_occurs_in_a_value() -> None:
    from histor_sign.cli.release_commands import _github_output_lines

    values = {"a": "x\nEOF\nb=1", "b": "", "c": "histor_sign_"}
    for _ in range(20):
        text = _github_output_lines(values)
        assert read_github_output(text) == values


# --- 6. no tracebacks: the catch-all ----------------------------------------------------------


def _explode(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("boom \x1b[2J\n::warning::pwned")


def test_an_internal_error_is_one_line(world: World, ci: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import histor_sign.catalog

    monkeypatch.setattr(histor_sign.catalog, "load_catalog", _explode)
    run = run_main("scan", str(world.ss.tools_v1))
    assert run.code == 2
    assert_inert(run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    assert run.stderr.count("\n") == 1
    assert run.stderr.startswith("histor-sign: error: internal error: RuntimeError: boom ")
    assert "(please report this; set HISTOR_SIGN_DEBUG=1 or pass --debug for the traceback)" \
        in run.stderr


@pytest.mark.parametrize("how", ["env", "flag"])
def test_the_traceback_on_request(world: World, ci: Path, monkeypatch: pytest.MonkeyPatch,
                                  how: str) -> None:
    import histor_sign.catalog

    monkeypatch.setattr(histor_sign.catalog, "load_catalog", _explode)
    if how == "env":
        monkeypatch.setenv("HISTOR_SIGN_DEBUG", "1")
        run = run_main("scan", str(world.ss.tools_v1))
    else:
        run = run_main("--debug", "scan", str(world.ss.tools_v1))
    assert run.code == 2
    assert "Traceback" in run.stderr and "_explode" in run.stderr
    assert run.stderr.splitlines()[-1].startswith("histor-sign: error: internal error:")
    # Without the request, the next run is quiet again (nothing sticks between runs).
    monkeypatch.delenv("HISTOR_SIGN_DEBUG", raising=False)
    assert "Traceback" not in run_main("scan", str(world.ss.tools_v1)).stderr
