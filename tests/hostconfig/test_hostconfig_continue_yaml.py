"""Continue's YAML (issue 37): ``~/.continue/config.yaml`` and ``.continue/mcpServers/*.yaml``
hold ``mcpServers`` as a list of ``{name, command, args, env}``. Each named server is
wrapped by a minimal textual edit at the positions PyYAML's composer gives — block or flow
``args``, comments, quoting and line endings kept — and unwrap gives the file back byte for
byte. An entry that cannot be edited in place (an alias, an anchor, a tag, a multi-line
scalar) is named and left; YAML is never re-serialized, and a YAML file that is not
Continue's is refused."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
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

CONFIG = DATA / "continue" / ".continue" / "config.yaml"
BLOCK = DATA / "continue" / ".continue" / "mcpServers" / "playwright-mcp.yaml"
STDIO = {"SQLite MCP": "io.github.acme/sqlite", "Memory": "io.github.acme/memory",
         "Time": "io.github.acme/time"}


def _place(tmp_path: Path, text: str | None = None, source: Path = CONFIG) -> Path:
    path = tmp_path / source.relative_to(DATA / "continue")
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is None:
        shutil.copyfile(source, path)
    else:
        path.write_bytes(text.encode())
    return path


def _expected(document: dict[str, Any], servers: dict[str, str], pins: Path,
              command: str) -> dict[str, Any]:
    expected = copy.deepcopy(document)
    for entry in expected["mcpServers"]:
        if entry["name"] in servers:
            entry["args"] = ["proxy", "--server", servers[entry["name"]], "--pins", str(pins),
                             "--", entry["command"], *entry.get("args", [])]
            entry["command"] = command
    return expected


def _variants() -> dict[str, str]:
    text = CONFIG.read_text()
    return {
        "as documented": text,
        "crlf": text.replace("\n", "\r\n"),
        "no final newline": text.rstrip("\n"),
        "four spaces": text.replace("\n  ", "\n    ").replace("\n    - \"", "\n        - \""),
        "comments between items": text.replace('      - "-y"\n',
                                               '      # the flag\n      - "-y"  # yes\n'),
        "empty flow args": text.replace('[mcp-server-memory, "--store", ~/notes.json]', "[]"),
        "dash on the key": text.replace("  - name: Time\n    command: uvx",
                                        "  - command: uvx\n    name: Time"),
    }


@pytest.mark.parametrize("variant", list(_variants()), ids=list(_variants()))
def test_continue_round_trip_is_byte_exact(variant: str, tmp_path: Path) -> None:
    path = _place(tmp_path, _variants()[variant])
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", list(STDIO.values()))
    change = wrap_config(path, STDIO, pins=pins)
    assert change.format is HostFormat.CONTINUE and change.exact_unwrap
    assert {e.name: e.status for e in change.entries} == dict.fromkeys(
        STDIO, EntryStatus.WRAPPED)
    wrapped = path.read_bytes().decode()
    assert yaml.safe_load(wrapped) == _expected(yaml.safe_load(original.decode()), STDIO, pins,
                                                "histor-sign")
    assert ("\r\n" in wrapped) == (b"\r\n" in original)
    assert unwrap_config(path).written
    assert path.read_bytes() == original


def test_continue_block_file_through_the_cli(tmp_path: Path) -> None:
    path = _place(tmp_path, source=BLOCK)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/browser"])
    run = run_cli("wrap", str(path), "--server-name", "Browser search=io.github.acme/browser",
                  "--pins", str(pins))
    assert run.code == 0, run.stderr
    assert "Continue config" in run.stderr
    assert "wrapped mcpServers[0] (Browser search): runs npx @playwright/mcp@latest" in (
        run.stderr)
    text = path.read_text()
    assert f'    command: "{proxy_executable()}"\n    args:\n      - "proxy"\n' in text
    assert '      - npx\n      - "@playwright/mcp@latest"\n' in text
    found = host_servers(path)
    assert found[0].proxy_args == ("--server", "io.github.acme/browser", "--pins", str(pins),
                                   "--", "npx", "@playwright/mcp@latest")
    assert run_cli("unwrap", str(path)).code == 0
    assert path.read_bytes() == original


@pytest.mark.parametrize("entry", [
    "  - name: A\n    command: &runner npx\n    args: [x]\n",
    "  - name: A\n    command: !!str npx\n",
    "  - name: A\n    command: >\n      npx\n",
    "  - name: A\n    command: npx\n    args: *shared\n",
    "  - name: A\n    command: npx\n    args:\n      - [nested]\n",
], ids=["anchor", "tag", "folded", "alias", "nested"])
def test_an_entry_not_editable_in_place_is_named_and_left(entry: str, tmp_path: Path) -> None:
    text = "shared: &shared [a]\nmcpServers:\n" + entry
    path = _place(tmp_path, text)
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/a"])
    run = run_cli("wrap", str(path), "--server-name", "A=io.github.acme/a", "--pins", str(pins))
    assert run.code == 1, run.stderr
    assert "skipped mcpServers[0] (A): " in run.stderr and "no minimal edit" in run.stderr
    assert path.read_bytes() == text.encode()


def test_a_yaml_file_that_is_not_continues_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "servers.yaml"
    path.write_text("mcpServers:\n  - name: A\n    command: npx\n")
    before = path.read_bytes()
    for argv in (["wrap", str(path), "--server-name", "A=io.github.acme/a"],
                 ["unwrap", str(path)]):
        run = run_cli(*argv)
        assert run.code == 2 and run.stderr.count("\n") == 1, run.stderr
        assert "a YAML file that is not Continue's documented config" in run.stderr
    bad = _place(tmp_path, "mcpServers: [\n")
    run = run_cli("wrap", str(bad), "--server-name", "A=io.github.acme/a")
    assert run.code == 2 and "not valid YAML" in run.stderr and "Traceback" not in run.stderr
    assert path.read_bytes() == before
