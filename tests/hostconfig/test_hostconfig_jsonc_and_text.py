"""VS Code's JSON with comments is supported (comments and trailing commas kept where they
are, round trip byte-exact); everything untrusted a config file holds (server names,
commands, arguments, project paths) reaches the terminal escaped."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import run_cli
from hostconfig_helpers import FIXTURES, make_pins, place, plain

from histor_sign.hostconfig import proxy_executable, unwrap_config, wrap_config

PINS_FOR = ["io.github.acme/search", "io.github.acme/fetch", "io.github.acme/x"]


def test_vscode_comments_and_trailing_commas_stay_where_they_are(tmp_path: Path) -> None:
    fixture = next(f for f in FIXTURES if f.id == "vscode-jsonc")
    path = place(fixture, tmp_path)
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", PINS_FOR)
    run = run_cli("wrap", str(path), "--server-name", "fetch=io.github.acme/fetch",
                  "--server-name", "search=io.github.acme/search", "--pins", str(pins))
    assert run.code == 0, run.stderr
    assert "VS Code MCP config (mcp.json: servers) (JSON with comments)" in run.stderr
    text = path.read_text()
    for kept in ("\t// Workspace MCP servers (VS Code reads this file as JSON with comments).\n",
                 f'\t\t\t"command": "{proxy_executable()}", // from PyPI\n',
                 "\t\t\t\t/* the server package */\n\t\t\t\t\"proxy\",\n",
                 '\t\t\t\t"--user-agent=acme // not a comment",\n\t\t\t],\n\t\t},\n',
                 '"env": { "SEARCH_URL": "https://search.example/*/v1" },\n\t\t},\n\t},\n'):
        assert kept in text, kept
    assert plain(text)["servers"]["fetch"]["args"] == [
        "proxy", "--server", "io.github.acme/fetch", "--pins", str(pins), "--", "uvx",
        "mcp-server-fetch", "--user-agent=acme // not a comment"]
    assert run_cli("unwrap", str(path)).code == 0
    assert path.read_bytes() == original


def test_comments_inside_the_rewritten_entry(tmp_path: Path) -> None:
    folder = tmp_path / ".vscode"
    folder.mkdir()
    path = folder / "mcp.json"
    original = (
        b'{"servers": {\n'
        b'  "a": {"command" /* c1 */ : /* c2 */ "x", "args" /* c3 */ : [ /* none */ ]},\n'
        b'  "b": {"command": "y", "args": [\n    // first\n    "1", /* mid */ "2", // end\n  ]},\n'
        b'  "c": {/* only */ "command": "z" // tail\n  },\n'
        b"}}\n")
    path.write_bytes(original)
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/x"])
    change = wrap_config(path, {n: "io.github.acme/x" for n in "abc"}, pins=pins)
    assert change.exact_unwrap and change.jsonc
    doc = plain(path.read_text())["servers"]
    assert doc["a"]["args"][-1] == "x" and doc["b"]["args"][-3:] == ["y", "1", "2"]
    assert doc["c"]["args"][-2:] == ["--", "z"]
    text = path.read_text()
    assert "/* c1 */ : /* c2 */" in text and "// first" in text and "// tail" in text
    unwrap_config(path)
    assert path.read_bytes() == original


def test_hand_written_trailing_comma_after_the_command(tmp_path: Path) -> None:
    folder = tmp_path / ".vscode"
    folder.mkdir()
    path = folder / "mcp.json"
    path.write_text('{"servers": {"a": {"command": "histor-sign", '
                    '"args": ["proxy", "--server", "io.github.acme/x", "--", "node" , ]}}}')
    unwrap_config(path)
    assert path.read_text() == '{"servers": {"a": {"command": "node", "args": [  ]}}}'


HOSTILE_NAME = "evil\x1b]0;pwned\x07\u202e\r\nhistor-sign: wrote"
HOSTILE_COMMAND = "npx\x1b[2J\u2028::warning::x"


def test_untrusted_text_reaches_the_terminal_escaped(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {
        HOSTILE_NAME: {"command": HOSTILE_COMMAND, "args": ["\x1b[31mred"]},
        "remote\x1b": {"url": "https://x/\x1b[1m", "headers": {"X-Key": "\x1b[2J"}},
    }}, indent=2, ensure_ascii=False) + "\n")
    original = path.read_bytes()
    pins = make_pins(tmp_path / "pins.json", ["io.github.acme/x"])
    run = run_cli("wrap", str(path), "--server-name", f"{HOSTILE_NAME}=io.github.acme/x",
                  "--server-name", "remote\x1b=io.github.acme/x", "--pins", str(pins))
    assert run.code == 1, run.stderr
    for stream in (run.stdout, run.stderr):
        assert "\x1b" not in stream and "\u202e" not in stream and "\r" not in stream
        assert "\x07" not in stream and "\u2028" not in stream
        assert not any(line.lstrip().startswith("::") for line in stream.splitlines())
    assert "\\u001b]0;pwned\\u0007\\u202e\\r\\nhistor-sign: wrote" in run.stderr
    assert '-      "command": "npx\\u001b[2J\\u2028::warning::x",' in run.stdout
    assert all(line.startswith("histor-sign: ") for line in run.stderr.splitlines())
    # Unknown names are escaped in the error line too.
    run = run_cli("wrap", str(path), "--server-name", "n\x1b[0m=io.github.acme/x")
    assert run.code == 2 and "\x1b" not in run.stderr and "n\\u001b[0m" in run.stderr
    assert run_cli("unwrap", str(path)).code == 0
    assert path.read_bytes() == original
