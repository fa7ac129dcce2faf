"""Shared pieces of the host-config tests: the fixture files (modelled on each host's
documented examples), a pin file pinning chosen registry names, and file-tree snapshots."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histor_sign.hostconfig import HostFormat
from histor_sign.pins import PinEntry, PinStore

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Fixture:
    """A host config file under ``data/``: its path there, the format it must be detected
    as, the stdio entries to wrap (entry name -> registry name) and its HTTP entries."""

    id: str
    path: str
    format: HostFormat
    stdio: dict[str, str]
    remote: tuple[str, ...] = ()
    #: entry name -> how many entries of that name the file holds (Claude Code's user file)
    copies: dict[str, int] = field(default_factory=dict)
    #: the file has comments or trailing commas (JSON with comments)
    comments: bool = False


def registry(name: str) -> str:
    return f"io.github.acme/{name}"


FIXTURES = [
    Fixture("claude-desktop", "claude-desktop/claude_desktop_config.json",
            HostFormat.CLAUDE_DESKTOP,
            {n: registry(n) for n in ("filesystem", "search", "sqlite", "local-notes")}),
    Fixture("claude-desktop-windows", "claude-desktop-windows/claude_desktop_config.json",
            HostFormat.CLAUDE_DESKTOP, {n: registry(n) for n in ("search", "memory")}),
    Fixture("vscode", "vscode/.vscode/mcp.json", HostFormat.VSCODE,
            {n: registry(n) for n in ("memory", "perplexity")}, remote=("github",)),
    Fixture("vscode-jsonc", "vscode-jsonc/.vscode/mcp.json", HostFormat.VSCODE,
            {n: registry(n) for n in ("fetch", "search")}, comments=True),
    Fixture("cursor", "cursor/.cursor/mcp.json", HostFormat.CURSOR,
            {"server-name": registry("server"), "time": registry("time")},
            remote=("remote-docs",)),
    Fixture("claude-code-project", "claude-code-project/.mcp.json",
            HostFormat.CLAUDE_CODE_PROJECT, {n: registry(n) for n in ("airtable", "search")},
            remote=("sentry",)),
    Fixture("claude-code-user", "claude-code-user/.claude.json", HostFormat.CLAUDE_CODE_USER,
            {"search": registry("search")}, remote=("notion",), copies={"search": 2}),
    Fixture("generic", "generic/servers.json", HostFormat.MCP_SERVERS,
            {"search": registry("search")}),
    # Issue 37: each modelled on the example of the host's own documentation (docs/wrap.md).
    Fixture("gemini-cli", "gemini-cli/.gemini/settings.json", HostFormat.GEMINI_CLI,
            {"serverName": registry("server"), "pythonTools": registry("python-tools")},
            remote=("httpServer",)),
    Fixture("windsurf", "windsurf/.codeium/windsurf/mcp_config.json", HostFormat.WINDSURF,
            {"github": registry("github")}, remote=("figma",)),
    Fixture("cline", "cline/cline_mcp_settings.json", HostFormat.CLINE,
            {"local-server": registry("local-server")}),
    Fixture("roo-code", "roo-code/.roo/mcp.json", HostFormat.ROO_CODE,
            {"server1": registry("server1")}, remote=("remote-server",)),
    Fixture("roo-code-global", "roo-code-global/mcp_settings.json", HostFormat.ROO_CODE,
            {"puppeteer": registry("puppeteer")}),
    Fixture("zed", "zed/zed/settings.json", HostFormat.ZED,
            {"hexdocs-mcp": registry("hexdocs"), "kagi": registry("kagi")}, comments=True),
    Fixture("opencode", "opencode/opencode.jsonc", HostFormat.OPENCODE,
            {"my-local-mcp-server": registry("local"), "mcp_everything": registry("everything")},
            remote=("my-remote-mcp",), comments=True),
]


def place(fixture: Fixture, root: Path) -> Path:
    """Copy the fixture (with its directory, e.g. ``.vscode/``) under ``root``."""
    source = DATA / fixture.path
    target = root / fixture.id / Path(fixture.path).relative_to(fixture.path.split("/")[0])
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


DIGEST = "sha256:" + "ab" * 32


def make_pins(path: Path, servers: list[str] | set[str] | tuple[str, ...]) -> Path:
    """A pin file pinning each registry name (as ``trust add`` would leave it)."""
    store = PinStore.load(path)
    for server in sorted(set(servers)):
        owner, _, name = server.removeprefix("io.github.").partition("/")
        store = store.add(PinEntry(
            server=server, repository=f"{owner}/{name}-mcp",
            location=f"https://example.org/{name}/latest.envelope.json", revision=3,
            manifest_digest=DIGEST,
            signer=f"https://github.com/{owner}/{name}-mcp/.github/workflows/sign.yml"
            "@refs/tags/v1.0.0",
            workflow=".github/workflows/sign.yml", owner_id="11", repository_id="22",
            ref_pattern="refs/tags/**",
        ), replace_existing=True)
    return path


def tree(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under ``root``: file bytes (or link target) and mode."""
    out: dict[str, tuple[bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            if path.is_symlink():
                out[rel] = (os.readlink(path), st.st_mode)
            elif path.is_file():
                out[rel] = (path.read_bytes(), st.st_mode)
            else:
                out[rel] = ("<dir>", st.st_mode)
    return out


_TOKENS = re.compile(
    r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/'
    r"|,(?=(?:\s|//[^\n]*(?:\n|\Z)|/\*.*?\*/)*[\]}])", re.S)


def strip_jsonc(text: str) -> str:
    """JSON with comments (VS Code) as plain JSON: comments and trailing commas dropped."""
    return _TOKENS.sub(lambda m: m.group() if m.group().startswith('"') else "", text)


def pairs(text: str) -> Any:
    """Parse JSON (or JSON with comments) keeping each object's keys in file order: every
    object becomes a list of (key, value) pairs."""
    return json.loads(strip_jsonc(text), object_pairs_hook=lambda p: [(k, v) for k, v in p])


def plain(text: str) -> Any:
    return json.loads(strip_jsonc(text))
