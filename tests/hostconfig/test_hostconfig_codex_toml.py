"""Codex's ``config.toml`` (issue 37): each ``[mcp_servers.NAME]`` table is wrapped by a
minimal textual edit — comments, layout, quoting, CRLF and every other table stay byte for
byte — and unwrap gives the file back exactly. A server written otherwise (an inline table,
dotted keys) is named and left: no TOML is ever re-serialized."""

from __future__ import annotations

import copy
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from hostconfig_helpers import DATA, make_pins

from histor_sign.hostconfig import (
    EntryStatus,
    HostFormat,
    host_servers,
    proxy_executable,
    unwrap_config,
    wrap_config,
)

FIXTURE = DATA / "codex" / ".codex" / "config.toml"
STDIO = {"context7": "io.github.acme/context7", "server_name": "io.github.acme/server-name",
         "docs": "io.github.acme/docs"}


def _place(tmp_path: Path, text: str | None = None) -> Path:
    folder = tmp_path / ".codex"
    folder.mkdir()
    path = folder / "config.toml"
    if text is None:
        shutil.copyfile(FIXTURE, path)
    else:
        path.write_bytes(text.encode())
    return path


def _expected(document: dict[str, Any], pins: Path, command: str) -> dict[str, Any]:
    expected = copy.deepcopy(document)
    for name, server in STDIO.items():
        entry = expected["mcp_servers"][name]
        entry["args"] = ["proxy", "--server", server, "--pins", str(pins), "--",
                         entry["command"], *entry.get("args", [])]
        entry["command"] = command
    return expected


def _variants() -> dict[str, str]:
    text = FIXTURE.read_text()
    return {
        "as documented": text,
        "crlf": text.replace("\n", "\r\n"),
        "no final newline": text.rstrip("\n"),
        "tabs and empty args": text.replace('args = ["-y", "@upstash/context7-mcp"]',
                                            "\targs\t=\t[ ]").replace("command = \"npx\"\n",
                                                                      "\tcommand=\"npx\"\n", 1),
        "quoted keys": text.replace('[mcp_servers.docs]\ncommand', '[mcp_servers."docs"]\n'
                                    '"command"'),
        "comments in the array": text.replace('"-y", "@upstash', '# first\n  "-y",  # flag\n'
                                              '  "@upstash').replace('-mcp"]', '-mcp",\n]'),
    }


@pytest.mark.parametrize("variant", list(_variants()), ids=list(_variants()))
def test_codex_round_trip_is_byte_exact(variant: str, tmp_path: Path) -> None:
    path = _place(tmp_path, _variants()[variant])
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", [*STDIO.values(), "io.github.acme/inline"])
    change = wrap_config(path, {**STDIO, "inline": "io.github.acme/inline"}, pins=pins)
    assert change.format is HostFormat.CODEX and change.exact_unwrap
    status = {e.name: e.status for e in change.entries}
    assert status == {**dict.fromkeys(STDIO, EntryStatus.WRAPPED),
                      "inline": EntryStatus.MALFORMED}
    wrapped = path.read_bytes().decode()
    assert tomllib.loads(wrapped) == _expected(tomllib.loads(original.decode()), pins,
                                               "histor-sign")
    assert ("\r\n" in wrapped) == (b"\r\n" in original)
    assert unwrap_config(path).written
    assert path.read_bytes() == original


def test_codex_through_the_cli_and_check_all_reading(tmp_path: Path) -> None:
    path = _place(tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", list(STDIO.values()))
    args = [a for name, server in STDIO.items() for a in ("--server-name", f"{name}={server}")]
    run = run_cli("wrap", str(path), *args, "--pins", str(pins))
    assert run.code == 0, run.stderr
    assert "Codex config (.codex/config.toml: [mcp_servers.NAME])" in run.stderr
    assert '+command = "/' in run.stdout  # the absolute path, as a TOML string
    wrapped = tomllib.loads(path.read_text())["mcp_servers"]
    assert wrapped["context7"]["command"] == proxy_executable()
    # Comments and the other tables are where they were.
    text = path.read_text()
    for kept in ('command = "' + proxy_executable() + '"   # the runner\n',
                 '    "mcp-server", # the package\n]\n',
                 "[mcp_servers.docs.env]\nDOCS_ROOT = \"/srv/docs\"\n",
                 "mcp_servers.inline = { command = \"uvx\", args = [\"inline-mcp\"] }\n"):
        assert kept in text, kept
    found = {s.name: s for s in host_servers(path)}
    assert found["context7"].proxy_args == ("--server", "io.github.acme/context7", "--pins",
                                            str(pins), "--", "npx", "-y",
                                            "@upstash/context7-mcp")
    assert found["server_name"].env == {"API_KEY": "value"}
    assert found["figma"].proxy_args is None
    run = run_cli("unwrap", str(path))
    assert run.code == 0, run.stderr
    assert path.read_bytes() == original


def test_codex_refusals(tmp_path: Path) -> None:
    path = _place(tmp_path, 'model = "x"\n[mcp_servers.a\ncommand = "npx"\n')
    run = run_cli("wrap", str(path), "--server-name", "a=io.github.acme/a")
    assert run.code == 2 and run.stderr.count("\n") == 1
    assert "not valid TOML" in run.stderr and "Traceback" not in run.stderr
    path.write_text('mcp_servers = "nope"\n')
    run = run_cli("wrap", str(path), "--server-name", "a=io.github.acme/a")
    assert run.code == 2 and "mcp_servers is not a table" in run.stderr
    path.write_text('[mcp_servers.a]\ncommand = "npx"\nargs = ["x", 1]\n')
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/a"])
    before = path.read_bytes()
    run = run_cli("wrap", str(path), "--server-name", "a=io.github.acme/a", "--pins", str(pins))
    assert run.code == 1 and "skipped mcp_servers.a" in run.stderr
    assert path.read_bytes() == before


def test_codex_url_entry_runs_proxy_url(tmp_path: Path) -> None:
    """Codex documents a ``url`` server as Streamable HTTP: ``url = U`` becomes ``command =
    HISTOR_SIGN`` and a new ``args = [… "--url", U]`` line (U as spelled), and back; one with
    a bearer token (a header) is named and left."""
    path = _place(tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/remote", "io.github.acme/figma"])
    change = wrap_config(path, {"remote": "io.github.acme/remote",
                                "figma": "io.github.acme/figma"}, pins=pins)
    assert {e.name: e.status for e in change.entries} == {
        "remote": EntryStatus.WRAPPED, "figma": EntryStatus.REMOTE}
    text = path.read_text()
    assert ('[mcp_servers.remote]\ncommand = "histor-sign"\nargs = ["proxy", "--server", '
            f'"io.github.acme/remote", "--pins", "{pins}", "--url", '
            '"https://mcp.example.com/mcp"]  # Streamable HTTP\n') in text
    remote = tomllib.loads(text)["mcp_servers"]["remote"]
    assert "url" not in remote and remote["enabled_tools"] == ["search"]
    assert unwrap_config(path).written
    assert path.read_bytes() == original
