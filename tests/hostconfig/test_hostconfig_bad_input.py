"""Every bad-input class of wrap/unwrap ends in one ``histor-sign: error:`` line, exit 2, no
traceback, and the file (and its directory) exactly as they were: not JSON, an unknown shape,
a symlink loop, a file past the size bound, an unwritable path, and their relatives."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli
from hostconfig_helpers import FIXTURES, make_pins, place, tree

from histor_sign.hostconfig import MAX_HOST_CONFIG_BYTES

WRAP = ("--server-name", "search=io.github.acme/search")


def wrap_and_unwrap(path: Path, root: Path, *extra: str) -> list[str]:
    """Run wrap and unwrap on ``path``; both must fail cleanly, leaving ``root`` as it was.
    Returns the two error lines."""
    pins = make_pins(root.parent / f"{root.name}-pins.json", ["io.github.acme/search"])
    before = tree(root)
    lines = []
    for args in (("wrap", str(path), *WRAP, "--pins", str(pins), *extra),
                 ("unwrap", str(path), *extra)):
        run = run_cli(*args)
        assert_clean_error(run, 2)
        assert run.stdout == ""
        assert tree(root) == before, args
        lines.append(run.stderr.strip())
    return lines


@pytest.mark.parametrize(("content", "message"), [
    (b'{"mcpServers": {"search": {"command": "npx",', "not valid JSON"),
    (b"", "empty file"),
    (b"\xef\xbb\xbf{}", "byte order mark"),
    (b'{"mcpServers": {"search": {"command": "\xff"}}}', "invalid UTF-8"),
    (b'{"mcpServers": {}, "mcpServers": {}}', "duplicate object key"),
    (b'{"mcpServers": {"search": {"command": "x", "n": NaN}}}', "NaN is not a JSON number"),
    (b"[" * 100 + b"]" * 100, "deeper than the limit"),
])
def test_not_json(tmp_path: Path, content: bytes, message: str) -> None:
    root = tmp_path / "cfg"
    root.mkdir()
    path = root / "claude_desktop_config.json"
    path.write_bytes(content)
    for line in wrap_and_unwrap(path, root):
        assert message in line, line


@pytest.mark.parametrize(("name", "content", "message"), [
    ("claude_desktop_config.json", b"[]", "unknown shape: the top level is not a JSON object"),
    ("config.json", b'{"tools": []}', 'unknown shape: expected a top-level "mcpServers"'),
    ("claude_desktop_config.json", b'{"mcpServers": []}',
     "unknown shape: mcpServers is not a JSON object"),
    ("mcp.json", b'{"servers": "x"}', "unknown shape: servers is not a JSON object"),
    ("mcp.json", b'{"servers": {}, "mcpServers": {}}', "which host reads it is unclear"),
    ("settings.json", b'{"mcp": {"servers": {}}}', 'settings.json "mcp" section is not'),
    (".claude.json", b'{"projects": {"/p": {"mcpServers": 3}}}',
     'unknown shape: projects["/p"].mcpServers is not a JSON object'),
])
def test_unknown_shape(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    root = tmp_path / "cfg"
    root.mkdir()
    path = root / name
    path.write_bytes(content)
    for line in wrap_and_unwrap(path, root):
        assert message in line, line


def test_symlink_loop(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    root.mkdir()
    (root / "a.json").symlink_to("b.json")
    (root / "b.json").symlink_to("a.json")
    for line in wrap_and_unwrap(root / "a.json", root):
        assert "cannot read: Too many levels of symbolic links" in line


def test_too_large(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    root.mkdir()
    path = root / "claude_desktop_config.json"
    body = b'{"mcpServers": {"search": {"command": "npx"}}}'
    path.write_bytes(body + b" " * (MAX_HOST_CONFIG_BYTES + 1 - len(body)))
    for line in wrap_and_unwrap(path, root):
        assert line == (f"histor-sign: error: {path}: larger than the limit of "
                        f"{MAX_HOST_CONFIG_BYTES} bytes for a host config file (--max-bytes)")
    # The bound is a bound, not a ban: --max-bytes raises it.
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    run = run_cli("wrap", str(path), *WRAP, "--pins", str(pins), "--max-bytes",
                  str(MAX_HOST_CONFIG_BYTES + 1))
    assert run.code == 0, run.stderr
    # A smaller bound refuses a small file.
    small = root / "small" / "claude_desktop_config.json"
    small.parent.mkdir()
    small.write_bytes(body)
    run = run_cli("wrap", str(small), *WRAP, "--pins", str(pins), "--max-bytes", "10")
    assert_clean_error(run, 2)
    assert "larger than the limit of 10 bytes" in run.stderr


@contextlib.contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` made unwritable: mode 0555, and for root (who ignores modes) the
    immutable attribute."""
    if os.geteuid() != 0:
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(0o755)
        return
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(directory)],
                                        capture_output=True).returncode != 0:
        pytest.skip("root, and this filesystem has no immutable attribute")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(directory)], check=True)


def test_unwritable_path(tmp_path: Path) -> None:
    fixture = next(f for f in FIXTURES if f.id == "claude-desktop")
    path = place(fixture, tmp_path / "home")
    root = path.parent
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    assert run_cli("wrap", str(path), *WRAP, "--pins", str(pins)).code == 0
    before = tree(root)
    with unwritable(root):
        for args in (("wrap", str(path), "--server-name", "sqlite=io.github.acme/search",
                      "--pins", str(pins)), ("unwrap", str(path))):
            run = run_cli(*args)
            assert_clean_error(run, 2)
            assert f"cannot keep a backup of {path}" in run.stderr
            assert "it was left as it is" in run.stderr
            assert tree(root) == before
        # --dry-run needs no write.
        assert run_cli("unwrap", str(path), "--dry-run").code == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only file")
def test_read_only_file(tmp_path: Path) -> None:
    fixture = next(f for f in FIXTURES if f.id == "claude-desktop")
    path = place(fixture, tmp_path)
    path.chmod(0o444)
    for line in wrap_and_unwrap(path, path.parent):
        assert "it is read-only" in line


def test_read_only_file_in_the_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same refusal, judged by ``os.access`` (which says yes to root for any file)."""
    import histor_sign.hostconfig as hostconfig

    fixture = next(f for f in FIXTURES if f.id == "claude-desktop")
    path = place(fixture, tmp_path / "cfg")
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/search"])
    before = tree(tmp_path / "cfg")
    monkeypatch.setattr(hostconfig.os, "access", lambda p, mode: Path(p) != path)
    with pytest.raises(hostconfig.OperationalError, match="it is read-only; it was left"):
        hostconfig.wrap_config(path, {"search": "io.github.acme/search"}, pins=pins)
    assert tree(tmp_path / "cfg") == before


def test_not_a_regular_file_and_missing(tmp_path: Path) -> None:
    root = tmp_path / "cfg"
    root.mkdir()
    (root / "dir.json").mkdir()
    os.mkfifo(root / "fifo.json")
    for name, message in [("dir.json", "is a directory"), ("fifo.json", "is not a regular file"),
                          ("missing.json", "no such file")]:
        for line in wrap_and_unwrap(root / name, root):
            assert message in line, line
    run = run_cli("wrap", "-", *WRAP)
    assert_clean_error(run, 2)
    assert "name the file, not -" in run.stderr


def test_comments_outside_vscode_are_refused(tmp_path: Path) -> None:
    """JSON with comments is VS Code's; Claude Desktop, Cursor and Claude Code read strict
    JSON, so a comment there is refused (the host itself would not read the file)."""
    for fixture_id in ("claude-desktop", "cursor", "claude-code-project"):
        fixture = next(f for f in FIXTURES if f.id == fixture_id)
        path = place(fixture, tmp_path / "commented")
        text = path.read_text()
        path.write_text(text.replace('"command": "npx",', '"command": "npx", // runner', 1))
        line_no = text[:text.index('"npx"')].count("\n") + 1
        for line in wrap_and_unwrap(path, path.parent):
            assert line.endswith(
                f"a comment or trailing comma at line {line_no}; a {fixture.format.label} is "
                "strict JSON (only VS Code's mcp.json, Zed's settings.json and opencode.json "
                "may have comments)"), line
        path.write_text(re.sub(r"\}(\s*\}\s*)\Z", r"},\1", text))
        assert re.search(r"\},\s*\}\s*\Z", path.read_text())
        for line in wrap_and_unwrap(path, path.parent):
            assert "a comment or trailing comma at line" in line, line
        shutil.rmtree(tmp_path / "commented")


def test_unterminated_comment_and_unknown_server(tmp_path: Path) -> None:
    root = tmp_path / ".vscode"
    root.mkdir()
    path = root / "mcp.json"
    path.write_text('{"servers": {"search": {"command": "x"}}} /* open')
    for line in wrap_and_unwrap(path, root):
        assert "unterminated /* comment at line 1" in line
    path.write_text('{"servers": {"search": {"command": "x"}, "other": {"command": "y"}}}')
    run = run_cli("wrap", str(path), "--server-name", "serch=io.github.acme/search")
    assert_clean_error(run, 2)
    assert (f"{path} (VS Code MCP config (mcp.json: servers)) has no server named serch; its "
            "servers: other, search") in run.stderr


def test_a_bad_pin_file_is_bad_input(tmp_path: Path) -> None:
    fixture = next(f for f in FIXTURES if f.id == "cursor")
    path = place(fixture, tmp_path / "cfg")
    pins = tmp_path / "pins.json"
    pins.write_text('{"version": 2, "servers": []}')
    before = tree(tmp_path)
    run = run_cli("wrap", str(path), "--server-name", "time=io.github.acme/time",
                  "--pins", str(pins))
    assert_clean_error(run, 2)
    assert "servers must be a JSON object" in run.stderr
    assert tree(tmp_path) == before
