"""wrap/unwrap on a real-looking config file of every host format (Claude Desktop on macOS and
Windows, VS Code with and without comments, Cursor, Claude Code's project and user files, an
mcpServers file under another name): the format is detected, exactly the named stdio entries
are rewritten (command, args; env and every other member, the file's other content and its
key order untouched), and unwrap gives the file back byte for byte — through the library and
through the CLI."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from hostconfig_helpers import FIXTURES, Fixture, make_pins, pairs, place, plain

from histor_sign.hostconfig import (
    BACKUP_SUFFIX,
    HOSTS,
    EntryStatus,
    HostFormat,
    proxy_executable,
    unwrap_config,
    wrap_config,
)

IDS = [f.id for f in FIXTURES]


def entry_paths(document: dict[str, Any], names: set[str]) -> list[tuple[str, ...]]:
    """Where the entries named ``names`` are, in any host's layout."""
    found: list[tuple[str, ...]] = []
    tables: list[tuple[str, ...]] = [
        (key,) for key in ("mcpServers", "servers", "context_servers", "mcp")
        if isinstance(document.get(key), dict)]
    for project, value in (document.get("projects") or {}).items():
        if isinstance(value, dict) and isinstance(value.get("mcpServers"), dict):
            tables.append(("projects", project, "mcpServers"))
    for where in tables:
        table = at(document, where)
        found += [(*where, name) for name in table if name in names]
    return found


def at(value: Any, where: tuple[str, ...]) -> Any:
    for part in where:
        value = value[part]
    return value


def expected_wrap(document: dict[str, Any], fixture: Fixture, pins: str,
                  command: str = "histor-sign") -> dict[str, Any]:
    expected = copy.deepcopy(document)
    for where in entry_paths(document, set(fixture.stdio)):
        entry = at(expected, where)
        prefix = ["proxy", "--server", fixture.stdio[where[-1]], "--pins", pins, "--"]
        if HOSTS[fixture.format].command_array:  # OpenCode: one array, program first
            entry["command"] = [command, *prefix, *entry["command"]]
            continue
        entry["args"] = [*prefix, entry["command"], *entry.get("args", [])]
        entry["command"] = command
    return expected


def key_tree(value: Any) -> Any:
    """The keys of every object in file order (``value`` from :func:`pairs`, where an
    object is a list of pairs); arrays of strings count as empty."""
    if isinstance(value, list) and value and all(isinstance(p, tuple) for p in value):
        return [(key, key_tree(item)) for key, item in value]
    if isinstance(value, list):
        return [key_tree(item) for item in value if isinstance(item, list)]
    return None


def expected_keys(before: Any, wrapped: list[tuple[str, ...]], path: tuple[str, ...] = (),
                  *, args: bool = True) -> Any:
    """The key tree after wrap: the same, with ``args`` right after ``command`` in a wrapped
    entry that had none (unless the host's command is an array: ``args`` False)."""
    if not isinstance(before, list) or not before or not isinstance(before[0], tuple):
        return before
    keys = [(key, expected_keys(item, wrapped, (*path, key), args=args)) for key, item in before]
    names = [key for key, _ in keys]
    if args and path in wrapped and "args" not in names:
        keys.insert(names.index("command") + 1, ("args", []))
    return keys


@pytest.mark.parametrize("fixture", FIXTURES, ids=IDS)
def test_wrap_and_unwrap_round_trip_in_the_library(fixture: Fixture, tmp_path: Path) -> None:
    path = place(fixture, tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", list(fixture.stdio.values()))

    change = wrap_config(path, fixture.stdio, pins=pins)
    assert change.format is fixture.format
    assert change.written and change.exact_unwrap and not change.skipped
    assert change.jsonc == fixture.comments
    wrapped = [e for e in change.entries if e.status is EntryStatus.WRAPPED]
    assert len(wrapped) == sum(fixture.copies.get(n, 1) for n in fixture.stdio)
    assert change.backup == path.with_name(path.name + BACKUP_SUFFIX)
    assert change.backup.read_bytes() == original
    assert oct(change.backup.stat().st_mode & 0o777) == "0o600"

    text = path.read_bytes().decode("utf-8")
    assert plain(text) == expected_wrap(plain(original.decode()), fixture, str(pins))
    where = entry_paths(plain(original.decode()), set(fixture.stdio))
    assert key_tree(pairs(text)) == expected_keys(
        key_tree(pairs(original.decode())), where,
        args=not HOSTS[fixture.format].command_array)
    assert original.endswith(b"\n") == text.endswith("\n")
    assert (b"\r\n" in original) == ("\r\n" in text)

    undone = unwrap_config(path)
    assert [e.status for e in undone.entries] == [EntryStatus.UNWRAPPED] * len(wrapped)
    assert path.read_bytes() == original
    # The wrapped file was kept as a second backup; the first one was not overwritten.
    assert change.backup.read_bytes() == original
    assert undone.backup is not None and undone.backup.read_bytes() == text.encode()


@pytest.mark.parametrize("fixture", FIXTURES, ids=IDS)
def test_wrap_and_unwrap_round_trip_through_the_cli(fixture: Fixture, tmp_path: Path) -> None:
    path = place(fixture, tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", list(fixture.stdio.values()))
    args = [a for name, server in fixture.stdio.items()
            for a in ("--server-name", f"{name}={server}")]

    run = run_cli("wrap", str(path), *args, "--pins", str(pins))
    assert run.code == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.stdout.startswith(f"--- {path}\n+++ {path} (wrapped)\n@@ ")
    assert '+        "proxy",' in run.stdout or '"proxy"' in run.stdout
    assert fixture.format.label in run.stderr
    for name, server in fixture.stdio.items():
        assert any(line.startswith("histor-sign: wrapped ") and f".{name}: runs " in line
                   and line.endswith(f" through the proxy as {server}")
                   for line in run.stderr.splitlines()), run.stderr
    assert f"backup: {path}{BACKUP_SUFFIX}" in run.stderr
    # The CLI writes this installation's histor-sign by its absolute path.
    assert plain(path.read_text()) == expected_wrap(plain(original.decode()), fixture, str(pins),
                                                    proxy_executable())

    run = run_cli("unwrap", str(path))
    assert run.code == 0, run.stderr
    assert f"+++ {path} (unwrapped)" in run.stdout
    assert path.read_bytes() == original


@pytest.mark.parametrize("fixture", [f for f in FIXTURES if f.remote], ids=lambda f: f.id)
def test_http_entries_run_behind_proxy_url(fixture: Fixture, tmp_path: Path) -> None:
    """A Streamable HTTP entry becomes a stdio entry running ``proxy --url`` (a ``"type":
    "http"`` becomes ``"stdio"``), and unwrap restores it byte for byte; one with headers
    is named and left (the headers would have to move into the command line), and so is
    every url entry of a host whose documentation names no transport for it (Cursor)."""
    path = place(fixture, tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", [f"io.github.acme/{n}" for n in fixture.remote])
    document = plain(original.decode())
    args = [a for n in fixture.remote for a in ("--server-name", f"{n}=io.github.acme/{n}")]

    run = run_cli("wrap", str(path), *args, "--pins", str(pins))
    remote = {where[-1]: at(document, where) for where in entry_paths(document,
                                                                       set(fixture.remote))}
    untyped = HOSTS[fixture.format].url_key is None
    with_headers = {name for name, entry in remote.items() if "headers" in entry}
    assert run.code == (1 if with_headers or untyped else 0), run.stderr
    wrapped = plain(path.read_text())
    for where in entry_paths(document, set(fixture.remote)):
        before, after = at(document, where), at(wrapped, where)
        name = where[-1]
        url_key = HOSTS[fixture.format].url_key
        url = next(before[k] for k in ("url", "httpUrl", "serverUrl") if k in before)
        if untyped:
            assert after == before
            assert f".{name}: an HTTP server (url {url}): only stdio servers" in run.stderr
            assert "does not say it is Streamable HTTP" in run.stderr
            continue
        if name in with_headers:
            assert after == before
            assert f".{name}: an HTTP server ({url}) with headers" in run.stderr
            continue
        expected = {k: v for k, v in before.items() if k != url_key}
        expected.update(command=proxy_executable(), args=[
            "proxy", "--server", f"io.github.acme/{name}", "--pins", str(pins), "--url",
            url], **({"type": "stdio"} if "type" in before else {}))
        assert after == expected
    run = run_cli("unwrap", str(path))
    assert run.code == 0, run.stderr
    assert path.read_bytes() == original


def test_a_url_entry_of_another_transport_is_named(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text('{"mcpServers": {"legacy": {"type": "sse", "url": "https://x.example/sse"}}}')
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/legacy"])
    run = run_cli("wrap", str(path), "--server-name", "legacy=io.github.acme/legacy",
                  "--pins", str(pins))
    assert run.code == 1 and 'only "http" entries are Streamable HTTP here' in run.stderr
    assert path.read_bytes() == original


def test_claude_code_user_file_wraps_the_entry_in_every_scope(tmp_path: Path) -> None:
    fixture = next(f for f in FIXTURES if f.id == "claude-code-user")
    path = place(fixture, tmp_path)
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    change = wrap_config(path, {"search": "io.github.acme/search"}, pins=pins, dry_run=True)
    assert [e.location for e in change.entries] == [
        'projects["/home/dev/acme-app"].mcpServers.search', "mcpServers.search"]
    assert not change.written and change.backup is None


@pytest.mark.parametrize(("name", "shape", "expected"), [
    ("claude_desktop_config.json", "{}", HostFormat.CLAUDE_DESKTOP),
    (".mcp.json", '{"mcpServers": {}}', HostFormat.CLAUDE_CODE_PROJECT),
    ("mcp.json", '{"servers": {}}', HostFormat.VSCODE),
    ("anything.json", '{"servers": {}}', HostFormat.VSCODE),
    (".claude.json", '{"numStartups": 1}', HostFormat.CLAUDE_CODE_USER),
    ("config.json", '{"projects": {"/p": {"mcpServers": {}}}}', HostFormat.CLAUDE_CODE_USER),
    ("servers.json", '{"mcpServers": {}}', HostFormat.MCP_SERVERS),
])
def test_format_is_told_from_shape_and_name(
    tmp_path: Path, name: str, shape: str, expected: HostFormat
) -> None:
    path = tmp_path / name
    path.write_text(shape)
    with pytest.raises(Exception) as info:  # no such server: the format is in the message
        wrap_config(path, {"x": "io.github.acme/x"}, pins=tmp_path / "pins.json")
    assert expected.label in str(info.value)
    cursor = tmp_path / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text('{"mcpServers": {"s": {"command": "x"}}}')
    assert wrap_config(cursor, {"s": "io.github.acme/s"}, pins=tmp_path / "pins.json",
                       dry_run=True).format is HostFormat.CURSOR
    assert os.listdir(cursor.parent) == ["mcp.json"]
