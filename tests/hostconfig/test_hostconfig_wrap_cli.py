"""The wrap/unwrap contract through the CLI: --dry-run writes nothing, an unpinned server is
named and not wrapped (exit 1, with the command that pins it), wrapping is idempotent, an
existing backup is never overwritten, a symlinked config keeps its link, unwrap of single
entries, and what a hand-edited wrapped entry gets."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_harness import run_cli
from hostconfig_helpers import FIXTURES, make_pins, place, plain, tree

from histor_sign.hostconfig import (
    BACKUP_SUFFIX,
    EntryStatus,
    proxy_executable,
    unwrap_config,
    wrap_config,
)

DESKTOP = next(f for f in FIXTURES if f.id == "claude-desktop")


@pytest.fixture
def desktop(tmp_path: Path) -> tuple[Path, Path]:
    """The Claude Desktop fixture and a pin file pinning io.github.acme/search only."""
    return place(DESKTOP, tmp_path), make_pins(tmp_path / "pins.json", ["io.github.acme/search"])


def test_dry_run_shows_the_diff_and_writes_nothing(
    desktop: tuple[Path, Path], tmp_path: Path
) -> None:
    path, pins = desktop
    before, mtime = tree(tmp_path), path.stat().st_mtime_ns
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/search",
                  "--pins", str(pins), "--dry-run")
    assert run.code == 0, run.stderr
    assert '-      "command": "npx",' in run.stdout
    assert f'+      "command": "{proxy_executable()}",' in run.stdout
    assert ('+      "args": ["proxy", "--server", "io.github.acme/search", "--pins", '
            f'"{pins}", "--", "npx", "-y", "@acme/search-mcp"],') in run.stdout
    assert "dry run: would wrap 1 server(s); nothing written" in run.stderr
    assert "backup" not in run.stderr
    assert tree(tmp_path) == before and path.stat().st_mtime_ns == mtime

    change = wrap_config(path, {"search": "io.github.acme/search"}, pins=pins, dry_run=True)
    assert change.changed and not change.written and change.backup is None
    assert tree(tmp_path) == before

    wrap_config(path, {"search": "io.github.acme/search"}, pins=pins)
    wrapped = tree(tmp_path)
    run = run_cli("unwrap", str(path), "--dry-run")
    assert run.code == 0 and '+      "command": "npx",' in run.stdout
    assert tree(tmp_path) == wrapped


def test_unpinned_server_is_named_not_wrapped_and_exits_1(
    desktop: tuple[Path, Path], tmp_path: Path
) -> None:
    path, pins = desktop
    original = plain(path.read_text())
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/search",
                  "--server-name", "filesystem=io.github.acme/filesystem", "--pins", str(pins))
    assert run.code == 1, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.splitlines()
    assert (f"histor-sign: not wrapped mcpServers.filesystem: io.github.acme/filesystem is not "
            f"pinned in {pins}; pin it with 'histor-sign trust add io.github.acme/filesystem "
            f"--repository OWNER/REPO --pins {pins}', then run wrap again") in lines
    assert lines[-1] == ("histor-sign: error: 1 requested server entry was not wrapped: "
                         "filesystem (not-pinned)")
    # The pinned one was wrapped; the unpinned one is exactly as it was.
    now = plain(path.read_text())
    assert now["mcpServers"]["filesystem"] == original["mcpServers"]["filesystem"]
    assert now["mcpServers"]["search"]["command"] == proxy_executable()
    assert "filesystem" not in run.stdout


def test_nothing_pinned_writes_nothing_and_says_so(tmp_path: Path) -> None:
    path = place(DESKTOP, tmp_path)
    before = tree(tmp_path)
    run = run_cli("wrap", str(path), "--server-name", "sqlite=io.github.acme/sqlite")
    assert run.code == 1 and run.stdout == ""
    default = Path(os.environ["XDG_CONFIG_HOME"]) / "histor-sign" / "pins.json"
    assert (f"io.github.acme/sqlite is not pinned in {default}; pin it with 'histor-sign trust "
            "add io.github.acme/sqlite --repository OWNER/REPO', then run wrap again"
            ) in run.stderr
    assert "nothing to wrap" in run.stderr
    assert tree(tmp_path) == before


def test_a_name_outside_io_github_cannot_be_pinned_and_says_so(tmp_path: Path) -> None:
    path = place(DESKTOP, tmp_path)
    run = run_cli("wrap", str(path), "--server-name", "sqlite=com.example/sqlite")
    assert run.code == 1
    assert "outside io.github.*, so 'trust add' cannot pin it" in run.stderr


def test_wrap_is_idempotent(desktop: tuple[Path, Path], tmp_path: Path) -> None:
    path, pins = desktop
    args = ("wrap", str(path), "--server-name", "search=io.github.acme/search", "--pins",
            str(pins))
    assert run_cli(*args).code == 0
    after_first = tree(tmp_path)
    run = run_cli(*args)
    assert run.code == 0, run.stderr
    assert run.stdout == ""
    assert ("histor-sign: already wrapped mcpServers.search: runs through the proxy as "
            "io.github.acme/search") in run.stderr.splitlines()
    assert "nothing to wrap" in run.stderr
    assert tree(tmp_path) == after_first  # no rewrite, no second backup

    # Asking for another registry name (or another pin file) is not silently ignored.
    make_pins(pins, ["io.github.acme/other"])
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/other",
                  "--pins", str(pins))
    assert run.code == 1
    assert ("not wrapped mcpServers.search: runs through the proxy as io.github.acme/search "
            "already; unwrap it first to change it") in run.stderr
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/search")
    assert run.code == 1 and f"with pins {pins} already" in run.stderr

    # unwrap is idempotent too: a second one has nothing to do.
    assert run_cli("unwrap", str(path)).code == 0
    unwrapped = tree(tmp_path)
    run = run_cli("unwrap", str(path))
    assert run.code == 0 and run.stdout == "" and "nothing to unwrap" in run.stderr
    run = run_cli("unwrap", str(path), "--server-name", "search")
    assert run.code == 0
    assert "left alone mcpServers.search: does not run through the proxy" in run.stderr
    assert tree(tmp_path) == unwrapped


def test_an_existing_backup_is_never_overwritten(
    desktop: tuple[Path, Path], tmp_path: Path
) -> None:
    path, pins = desktop
    original = path.read_bytes()
    first = path.with_name(path.name + BACKUP_SUFFIX)
    first.write_bytes(b"someone else's backup\n")
    (tmp_path / "claude-desktop" / (path.name + BACKUP_SUFFIX + ".1")).symlink_to("nowhere")
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/search",
                  "--pins", str(pins))
    assert run.code == 0, run.stderr
    second = path.with_name(path.name + BACKUP_SUFFIX + ".2")
    assert f"backup: {second}" in run.stderr
    assert first.read_bytes() == b"someone else's backup\n"
    assert second.read_bytes() == original
    assert os.readlink(path.with_name(path.name + BACKUP_SUFFIX + ".1")) == "nowhere"
    # A backup that already holds these bytes is reused rather than copied again.
    unwrap_config(path)
    change = wrap_config(path, {"search": "io.github.acme/search"}, pins=pins)
    assert change.backup == second
    assert not [n for n in os.listdir(path.parent) if n.startswith(".")]  # no stage left


def test_a_symlinked_config_keeps_its_link(tmp_path: Path) -> None:
    path = place(DESKTOP, tmp_path)
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    link = dotfiles / "claude_desktop_config.json"
    link.symlink_to(path)
    original = path.read_bytes()
    run = run_cli("wrap", str(link), "--server-name", "search=io.github.acme/search",
                  "--pins", str(pins))
    assert run.code == 0, run.stderr
    assert link.is_symlink() and Path(os.readlink(link)) == path
    assert plain(path.read_text())["mcpServers"]["search"]["command"] == proxy_executable()
    assert (dotfiles / (link.name + BACKUP_SUFFIX)).read_bytes() == original
    assert run_cli("unwrap", str(link)).code == 0
    assert path.read_bytes() == original and link.is_symlink()


def test_unwrap_only_the_named_entries(tmp_path: Path) -> None:
    path = place(DESKTOP, tmp_path)
    original = path.read_bytes()
    servers = {n: f"io.github.acme/{n}" for n in ("search", "sqlite", "local-notes")}
    pins = make_pins(tmp_path / "pins.json", list(servers.values()))
    wrap_config(path, servers, pins=pins)
    run = run_cli("unwrap", str(path), "--server-name", "sqlite")
    assert run.code == 0, run.stderr
    doc = plain(path.read_text())["mcpServers"]
    assert doc["sqlite"] == {"command": "uvx",
                             "args": ["mcp-server-sqlite", "--db-path", "/Users/username/test.db"]}
    assert doc["search"]["command"] == doc["local-notes"]["command"] == "histor-sign"
    run = run_cli("unwrap", str(path), "--server-name", "nope")
    assert run.code == 2 and "has no server named nope" in run.stderr
    assert run_cli("unwrap", str(path)).code == 0
    assert path.read_bytes() == original


def test_hand_edited_wrapped_entries(tmp_path: Path) -> None:
    """A wrapped entry someone wrote by hand: restored from the args after --, or named when
    there is nothing after --."""
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {
        "a": {"command": "/opt/bin/histor-sign",
              "args": ["proxy", "--server=io.github.acme/a", "--", "node", "a.js"]},
        "b": {"command": "histor-sign", "args": ["proxy", "--server", "io.github.acme/b"]},
        "c": {"command": "histor-sign", "args": ["demo"]},
    }}, indent=2) + "\n")
    run = run_cli("unwrap", str(path), "--server-name", "a", "--server-name", "b",
                  "--server-name", "c")
    assert run.code == 1, run.stderr
    assert ("skipped mcpServers.b: runs the proxy with no command after --: nothing to "
            "restore") in run.stderr
    assert "left alone mcpServers.c: does not run through the proxy" in run.stderr
    doc = plain(path.read_text())["mcpServers"]
    assert doc["a"] == {"command": "node", "args": ["a.js"]}
    assert doc["b"]["args"] == ["proxy", "--server", "io.github.acme/b"]


def test_library_outcomes_for_every_kind_of_entry(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "ok": {"type": "stdio", "command": "srv"},
        "remote": {"type": "sse", "url": "https://example.com/sse"},
        "typed": {"type": "websocket", "command": "x"},
        "nocmd": {"env": {}},
        "badargs": {"command": "x", "args": "--flag"},
        "notobj": ["x"],
        "unpinned": {"command": "x"},
    }}, indent=4))
    pins = make_pins(tmp_path / "pins.json", [f"io.github.acme/{n}" for n in (
        "ok", "remote", "typed", "nocmd", "badargs", "notobj")])
    names = ["ok", "remote", "typed", "nocmd", "badargs", "notobj", "unpinned"]
    change = wrap_config(path, {n: f"io.github.acme/{n}" for n in names}, pins=pins)
    assert [(e.name, e.status) for e in change.entries] == [
        ("ok", EntryStatus.WRAPPED), ("remote", EntryStatus.REMOTE),
        ("typed", EntryStatus.MALFORMED), ("nocmd", EntryStatus.MALFORMED),
        ("badargs", EntryStatus.MALFORMED), ("notobj", EntryStatus.MALFORMED),
        ("unpinned", EntryStatus.NOT_PINNED),
    ]
    assert [e.name for e in change.skipped] == names[1:]
    assert [e.detail for e in change.entries][2:6] == [
        'type "websocket" is not stdio', "has no command", "args is not an array of strings",
        "not a JSON object"]
    assert plain(path.read_text())["mcpServers"]["ok"] == {
        "type": "stdio", "command": "histor-sign",
        "args": ["proxy", "--server", "io.github.acme/ok", "--pins", str(pins), "--", "srv"]}


def test_a_relative_pins_path_is_written_absolute(tmp_path: Path) -> None:
    path = place(DESKTOP, tmp_path)
    make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/search",
                  "--pins", "pins.json", cwd=tmp_path)
    assert run.code == 0, run.stderr
    args = plain(path.read_text())["mcpServers"]["search"]["args"]
    assert args[:6] == ["proxy", "--server", "io.github.acme/search", "--pins",
                        str(tmp_path / "pins.json"), "--"]
    # Without --pins the proxy uses its own default pin file: no --pins in the entry.
    make_pins(Path(os.environ["XDG_CONFIG_HOME"]) / "histor-sign" / "pins.json",
              ["io.github.acme/sqlite"])
    run = run_cli("wrap", str(path), "--server-name", "sqlite=io.github.acme/sqlite")
    assert run.code == 0, run.stderr
    assert plain(path.read_text())["mcpServers"]["sqlite"]["args"][:4] == [
        "proxy", "--server", "io.github.acme/sqlite", "--"]


def test_the_file_changed_meanwhile_is_left_as_it_is(
    desktop: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program (the host itself) wrote the file between the read and the write: the
    write is refused rather than losing that program's change."""
    import histor_sign.hostconfig as hostconfig

    path, pins = desktop
    reads = []
    real = hostconfig._read

    def read(p: Path, max_bytes: int) -> bytes:
        reads.append(p)
        if len(reads) == 2:  # the host writes just before wrap does
            path.write_text(path.read_text().replace("Ctrl+Space", "Alt+Space"))
        return real(p, max_bytes)

    monkeypatch.setattr(hostconfig, "_read", read)
    with pytest.raises(hostconfig.OperationalError, match="changed while it was being"):
        wrap_config(path, {"search": "io.github.acme/search"}, pins=pins)
    assert "Alt+Space" in path.read_text() and '"npx"' in path.read_text()
    assert not path.with_name(path.name + BACKUP_SUFFIX).exists()


def test_server_name_arguments(desktop: tuple[Path, Path]) -> None:
    path, pins = desktop
    for bad, message in [
        ("search=not a name", "invalid server name"),
        ("=io.github.acme/search", "expected NAME=REGISTRY_NAME"),
        ("search", "invalid server name"),
    ]:
        run = run_cli("wrap", str(path), "--server-name", bad, "--pins", str(pins))
        assert run.code == 2 and message in run.stderr, (bad, run.stderr)
    run = run_cli("wrap", str(path), "--server-name", "search=io.github.acme/a",
                  "--server-name", "search=io.github.acme/b")
    assert run.code == 2 and "search is given twice" in run.stderr
    run = run_cli("wrap", str(path), "--pins", str(pins))
    assert run.code == 2 and "--server-name" in run.stderr
    # A bare registry name that is also the entry's name.
    path.write_text('{"mcpServers": {"io.github.acme/search": {"command": "s"}}}')
    run = run_cli("wrap", str(path), "--server-name", "io.github.acme/search", "--pins",
                  str(pins))
    assert run.code == 0, run.stderr
    assert 'wrapped mcpServers["io.github.acme/search"]' in run.stderr
