"""MCP host configuration files: run chosen stdio servers through ``histor-sign proxy``.

:func:`wrap_config` rewrites the named stdio server entries of a host's configuration file
(Claude Desktop, VS Code, Cursor, Claude Code) so that each one starts

    histor-sign proxy --server REGISTRY_NAME [--pins FILE] -- ORIGINAL_COMMAND ORIGINAL_ARGS…

and :func:`unwrap_config` puts the original command back. Only servers pinned in the pin
store are wrapped; every other requested entry (not pinned, an HTTP server, malformed) is
named in the result and left as it was, never wrapped silently.

**Byte-exact round trip.** A host file is never re-serialized. The rewrite is a minimal
textual edit of each wrapped entry, so every other byte of the file (indentation, key order,
the trailing newline, comments in a VS Code file) stays as it was:

* the ``command`` string is replaced by ``"histor-sign"``;
* the ``args`` array gets the proxy's arguments and the original command's string literal
  (exactly as it was spelled, escapes included) inserted in front of its first element, in
  the array's own layout; the original elements and everything after them stay verbatim;
* an entry without ``args`` gets an ``"args": […]`` member right after ``command``, spelled
  ``["proxy", "--server", …, "--", CMD]`` (one space after each comma, nothing else), which
  a wrapped empty array never is (``[]`` becomes ``["proxy","--server",…]``, ``[ ]`` keeps
  its space before ``]``), so unwrap knows to remove the member again.

:func:`unwrap_config` reverses these edits from the text alone: the original command is the
literal after ``--``, the original array is the text around the inserted elements. Before
anything is written, the new text is parsed back and compared with the intended change, and
a wrap is unwrapped in memory and compared byte for byte with the file it came from
(:attr:`HostConfigChange.exact_unwrap`); a backup of the file is kept beside it anyway.

The library never prints: the CLI (``histor-sign wrap``/``unwrap``) shows the diff and the
outcome of each entry.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import difflib
import errno
import fnmatch
import functools
import json
import os
import re
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from histor_sign._atomic import locked_beside, process_alive, stage_copy, write_atomic
from histor_sign._escape import printable
from histor_sign.canonical import json_text, parse_json, read_bytes
from histor_sign.errors import InputError, LimitExceeded, OperationalError, UsageError
from histor_sign.models import validate_server_name

#: A host configuration file read by wrap/unwrap. Claude Code's ``~/.claude.json`` keeps
#: per-project history and grows, but stays far below this.
MAX_HOST_CONFIG_BYTES = 4 * 1024 * 1024
#: Nesting depth of a host configuration file (they are shallow).
MAX_HOST_CONFIG_DEPTH = 64
#: The command a wrapped entry runs.
PROXY_COMMAND = "histor-sign"
#: The proxy subcommand, the first argument of a wrapped entry.
PROXY_SUBCOMMAND = "proxy"
#: Beside ``FILE``: ``FILE.histor-backup`` (then ``.1``, ``.2`` … when it exists already).
BACKUP_SUFFIX = ".histor-backup"
MAX_BACKUPS = 1000
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK,
                            errno.ENOSYS})


class _ChangedMeanwhile(OperationalError):
    """The host config changed between reading it and writing it."""


_T = TypeVar("_T")
_P = ParamSpec("_P")
#: How often a change is computed again when other runs keep writing the file meanwhile.
_MERGE_ATTEMPTS = 8


def _merging(change: Callable[_P, _T]) -> Callable[_P, _T]:
    """Run ``change`` (read, edit, write) again when the file changed under it, so that two
    runs editing different entries both land; after a few attempts the last error stands."""

    @functools.wraps(change)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        for _ in range(_MERGE_ATTEMPTS - 1):
            try:
                return change(*args, **kwargs)
            except _ChangedMeanwhile:
                continue
        return change(*args, **kwargs)

    return run


_REMOTE_TYPES = frozenset({"http", "sse", "streamable-http", "streamableHttp", "ws"})


class HostFormat(StrEnum):
    """Which host's file it is, told from its documented name and its shape."""

    CLAUDE_DESKTOP = "claude-desktop"
    VSCODE = "vscode"
    CURSOR = "cursor"
    CLAUDE_CODE_PROJECT = "claude-code-project"
    CLAUDE_CODE_USER = "claude-code-user"
    GEMINI_CLI = "gemini-cli"
    WINDSURF = "windsurf"
    CLINE = "cline"
    ROO_CODE = "roo-code"
    ZED = "zed"
    OPENCODE = "opencode"
    CODEX = "codex"
    CONTINUE = "continue"
    #: ``{"mcpServers": …}`` under a name none of the hosts uses.
    MCP_SERVERS = "mcp-servers"

    @property
    def label(self) -> str:
        return HOSTS[self].title


@dataclass(frozen=True)
class HostSpec:
    """One host's documented configuration file, as data: where its documentation says the
    file is (``files``: each a file name, or ``FOLDER/NAME`` for a name that is the host's
    only in that folder), the key of its server table, its syntax, how an entry names its
    command, and which remote entries can become ``proxy --url``. ``paths`` and ``source``
    say where the layout was documented (docs/wrap.md lists them)."""

    title: str
    files: tuple[str, ...]
    table: str
    #: ``json`` (strict), ``jsonc`` (comments and trailing commas), ``toml``
    syntax: str = "json"
    #: ``command`` is an array of the program and its arguments (no ``args``).
    command_array: bool = False
    #: The key of a remote entry's URL that the proxy can serve (``proxy --url``), None when
    #: the documentation does not say its remote entries are Streamable HTTP.
    url_key: str | None = None
    #: The ``type`` such an entry must declare (turned into ``"stdio"`` while wrapped), None
    #: when ``url_key`` alone says Streamable HTTP.
    url_type: str | None = None
    #: The member holding an entry's environment.
    env_key: str = "env"
    paths: str = ""
    source: str = ""


HOSTS: dict[HostFormat, HostSpec] = {
    HostFormat.CLAUDE_DESKTOP: HostSpec(
        "Claude Desktop config (claude_desktop_config.json: mcpServers)",
        ("claude_desktop_config.json",), "mcpServers",
        paths="~/Library/Application Support/Claude/, %APPDATA%\\Claude\\, ~/.config/Claude/",
        source="the MCP user quickstart's layout as server projects document it"),
    HostFormat.VSCODE: HostSpec(
        "VS Code MCP config (mcp.json: servers)", ("mcp.json",), "servers", "jsonc",
        url_key="url", url_type="http", paths=".vscode/mcp.json, the user profile's mcp.json",
        source="code.visualstudio.com/docs/copilot/reference/mcp-configuration"),
    HostFormat.CURSOR: HostSpec(
        "Cursor MCP config (.cursor/mcp.json: mcpServers)", (".cursor/mcp.json",),
        "mcpServers", paths="~/.cursor/mcp.json, .cursor/mcp.json",
        source="cursor.com/docs/mcp (url entries name no transport: not turned into --url)"),
    HostFormat.CLAUDE_CODE_PROJECT: HostSpec(
        "Claude Code project config (.mcp.json: mcpServers)", (".mcp.json",), "mcpServers",
        url_key="url", url_type="http", paths=".mcp.json", source="code.claude.com/docs/en/mcp"),
    HostFormat.CLAUDE_CODE_USER: HostSpec(
        "Claude Code user config (~/.claude.json: mcpServers and projects.<path>.mcpServers)",
        (".claude.json",), "mcpServers", url_key="url", url_type="http",
        paths="~/.claude.json", source="code.claude.com/docs/en/mcp"),
    HostFormat.GEMINI_CLI: HostSpec(
        "Gemini CLI settings (.gemini/settings.json: mcpServers)", (".gemini/settings.json",),
        "mcpServers", url_key="httpUrl",
        paths="~/.gemini/settings.json (user), .gemini/settings.json (project)",
        source="github.com/google-gemini/gemini-cli docs/tools/mcp-server.md (command, args, "
        "env, cwd; httpUrl is Streamable HTTP, url is SSE)"),
    HostFormat.WINDSURF: HostSpec(
        "Windsurf MCP config (mcp_config.json: mcpServers)",
        ("windsurf/mcp_config.json", ".codeium/mcp_config.json"), "mcpServers",
        paths="~/.codeium/windsurf/mcp_config.json (%USERPROFILE%\\.codeium\\windsurf\\ on "
        "Windows)", source="docs.windsurf.com/windsurf/cascade/mcp (the Claude Desktop "
        "schema; serverUrl or url for remote servers, whose transport it does not name)"),
    HostFormat.CLINE: HostSpec(
        "Cline MCP settings (cline_mcp_settings.json: mcpServers)",
        ("cline_mcp_settings.json",), "mcpServers",
        paths="opened from Cline's MCP Servers panel (Configure MCP Servers); it lives in VS "
        "Code's globalStorage/saoudrizwan.claude-dev/settings/",
        source="docs.cline.bot/mcp/configuring-mcp-servers"),
    HostFormat.ROO_CODE: HostSpec(
        "Roo Code MCP settings (mcp_settings.json or .roo/mcp.json: mcpServers)",
        ("mcp_settings.json", ".roo/mcp.json"), "mcpServers", url_key="url",
        url_type="streamable-http",
        paths="mcp_settings.json (global, opened with Edit Global MCP), .roo/mcp.json "
        "(project)", source="docs.roocode.com/features/mcp/using-mcp-in-roo"),
    HostFormat.ZED: HostSpec(
        "Zed settings (settings.json: context_servers)",
        ("zed/settings.json", "Zed/settings.json", ".zed/settings.json"), "context_servers",
        "jsonc", paths="~/.config/zed/settings.json, %APPDATA%\\Zed\\settings.json, "
        ".zed/settings.json (project)",
        source="zed.dev/docs (context_servers: command, args, env; settings are JSON with "
        "// comments)"),
    HostFormat.OPENCODE: HostSpec(
        "OpenCode config (opencode.json: mcp)", ("opencode.json", "opencode.jsonc"), "mcp",
        "jsonc", command_array=True, env_key="environment",
        paths="opencode.json(c) in the project, ~/.config/opencode/opencode.json",
        source="opencode.ai/docs/mcp-servers (type local with a command array, or remote)"),
    HostFormat.CODEX: HostSpec(
        "Codex config (.codex/config.toml: [mcp_servers.NAME])", (".codex/config.toml",),
        "mcp_servers", "toml", url_key="url",
        paths="~/.codex/config.toml, .codex/config.toml (trusted projects)",
        source="developers.openai.com/codex/mcp and openai/codex docs/config.md "
        "([mcp_servers.NAME]: command, args, env; url for Streamable HTTP)"),
    HostFormat.CONTINUE: HostSpec(
        "Continue config (config.yaml or a .continue/mcpServers/ block: mcpServers list)",
        (".continue/config.yaml", ".continue/config.yml", ".continue/mcpServers/*.yaml",
         ".continue/mcpServers/*.yml"), "mcpServers", "yaml",
        paths="~/.continue/config.yaml (%USERPROFILE%\\.continue\\config.yaml), "
        ".continue/mcpServers/*.yaml (workspace blocks)",
        source="docs.continue.dev/customize/deep-dives/mcp (mcpServers: a list of {name, "
        "type, command, args, env}; blocks in .continue/mcpServers/)"),
    HostFormat.MCP_SERVERS: HostSpec(
        "mcpServers config (the Claude Desktop, Cursor and Claude Code layout)", (),
        "mcpServers"),
}


def named_host(path: Path) -> HostFormat | None:
    """The host whose documented file ``path`` is, by its name (and its folder's, where the
    name alone is not the host's), among the hosts told by name first; None otherwise."""
    for host in _BY_NAME:
        for documented in HOSTS[host].files:
            folder, _, name = documented.rpartition("/")
            folders = tuple(folder.split("/")) if folder else ()
            if fnmatch.fnmatchcase(path.name, name) and (
                    not folders or path.absolute().parent.parts[-len(folders):] == folders):
                return host
    return None


#: Hosts told by their file's name before its shape is looked at (the older hosts keep
#: their shape-first rules in :func:`_detect`).
_BY_NAME = (HostFormat.GEMINI_CLI, HostFormat.WINDSURF, HostFormat.CLINE, HostFormat.ROO_CODE,
            HostFormat.ZED, HostFormat.OPENCODE, HostFormat.CODEX, HostFormat.CONTINUE)


class EntryStatus(StrEnum):
    """What happened to one server entry."""

    WRAPPED = "wrapped"
    ALREADY_WRAPPED = "already-wrapped"
    UNWRAPPED = "unwrapped"
    #: unwrap: the entry does not run through the proxy; nothing to do.
    NOT_WRAPPED = "not-wrapped"
    NOT_PINNED = "not-pinned"
    #: wrap --lock: the lock file has no entry of that name.
    NOT_LOCKED = "not-locked"
    #: An HTTP (url) server: there is no stdio command to put behind the proxy.
    REMOTE = "remote"
    #: Wrapped already, for another registry name or pin file.
    WRAPPED_OTHERWISE = "wrapped-otherwise"
    MALFORMED = "malformed"

    @property
    def skipped(self) -> bool:
        """A requested entry that was left as it was for a reason the user must act on."""
        return self in (EntryStatus.NOT_PINNED, EntryStatus.NOT_LOCKED, EntryStatus.REMOTE,
                        EntryStatus.WRAPPED_OTHERWISE, EntryStatus.MALFORMED)


_PHRASES = {
    EntryStatus.WRAPPED: "wrapped",
    EntryStatus.ALREADY_WRAPPED: "already wrapped",
    EntryStatus.UNWRAPPED: "unwrapped",
    EntryStatus.NOT_WRAPPED: "left alone",
    EntryStatus.NOT_PINNED: "not wrapped",
    EntryStatus.NOT_LOCKED: "not wrapped",
    EntryStatus.REMOTE: "not wrapped",
    EntryStatus.WRAPPED_OTHERWISE: "not wrapped",
    EntryStatus.MALFORMED: "skipped",
}


@dataclass(frozen=True)
class EntryOutcome:
    """One server entry: where it is (``where``, the JSON path of the entry), what was done,
    the registry name it runs (or would run) under, and one escaped line saying why."""

    name: str
    where: tuple[str, ...]
    status: EntryStatus
    server: str | None
    detail: str

    @property
    def location(self) -> str:
        """``mcpServers.search``, ``projects["/home/me/app"].mcpServers.search``, an item of
        a list with its name: ``mcpServers[0] (SQLite MCP)`` (escaped)."""
        where = location(self.where)
        if self.where and re.fullmatch(r"\[[0-9]+\]", self.where[-1]):
            where += f" ({printable(self.name, 200)})"
        return where

    def line(self) -> str:
        """``wrapped mcpServers.search: …``, ``not wrapped mcpServers.x: … is not pinned …``
        — one line, every untrusted part escaped."""
        return f"{_PHRASES[self.status]} {self.location}: {self.detail}"


@dataclass(frozen=True)
class HostConfigChange:
    """The outcome of a wrap or unwrap: the file's bytes before and after, each entry's
    outcome, the backup kept (None when nothing was written) and whether it was written."""

    action: str
    path: Path
    format: HostFormat
    before: bytes
    after: bytes
    entries: tuple[EntryOutcome, ...]
    dry_run: bool
    written: bool
    backup: Path | None
    #: The file has comments or trailing commas (VS Code's JSON with comments).
    jsonc: bool
    #: Unwrapping the result gives back the file byte for byte (checked in memory).
    exact_unwrap: bool = True

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def skipped(self) -> tuple[EntryOutcome, ...]:
        """Requested entries left as they were for a reason the user must act on."""
        return tuple(e for e in self.entries if e.status.skipped)

    def diff(self) -> str:
        """A unified diff from the old file to the new one ('' when nothing changes).

        The text is the file's own: a caller that shows it on a terminal makes it inert
        (the CLI's output does)."""
        if not self.changed:
            return ""
        before = [_display(line) for line in self.before.decode("utf-8").split("\n")]
        after = [_display(line) for line in self.after.decode("utf-8").split("\n")]
        label = str(self.path)
        return "\n".join(difflib.unified_diff(
            before, after, fromfile=label, tofile=f"{label} ({self.action}ped)", lineterm="",
        )) + "\n"


def _display(line: str) -> str:
    return line[:-1] if line.endswith("\r") else line


def location(where: Sequence[str]) -> str:
    """A JSON path for people: dotted names, bracketed JSON strings for any other key."""
    out: list[str] = []
    for part in where:
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]{0,80}", part):
            out.append(("." if out else "") + part)
        elif re.fullmatch(r"\[[0-9]{1,9}\]", part):  # an item of a list (Continue)
            out.append(part)
        else:
            out.append(f"[{printable(json.dumps(part, ensure_ascii=False), 200)}]")
    return "".join(out)


# ---------------------------------------------------------------------- text structure
_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_STRING_AT = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


@dataclass(frozen=True)
class _Member:
    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class _Object:
    start: int
    end: int
    members: tuple[_Member, ...]

    def get(self, key: str) -> _Member | None:
        for member in self.members:
            if member.key == key:
                return member
        return None


@dataclass(frozen=True)
class _Array:
    start: int
    end: int
    elements: tuple[tuple[int, int], ...]


def _skip_ws(text: str, i: int) -> int:
    match = _WS.match(text, i)
    return match.end() if match else i


def _string_end(text: str, i: int) -> int:
    match = _STRING_AT.match(text, i)
    assert match is not None  # a valid JSON text
    return match.end()


def _value_end(text: str, i: int) -> int:
    if text[i] == '"':
        return _string_end(text, i)
    end: int = _DECODER.raw_decode(text, i)[1]
    return end


def _object(text: str, i: int) -> _Object:
    """The members of the object at ``i`` of a valid JSON text, with their positions."""
    members: list[_Member] = []
    j = _skip_ws(text, i + 1)
    if text[j] == "}":
        return _Object(i, j + 1, ())
    while True:
        key_end = _string_end(text, j)
        key: str = json.loads(text[j:key_end])
        colon = _skip_ws(text, key_end)
        start = _skip_ws(text, colon + 1)
        end = _value_end(text, start)
        members.append(_Member(key, j, key_end, start, end))
        after = _skip_ws(text, end)
        if text[after] == "}":
            return _Object(i, after + 1, tuple(members))
        j = _skip_ws(text, after + 1)


def _array(text: str, i: int) -> _Array:
    """The element positions of the array at ``i`` of a valid JSON text."""
    elements: list[tuple[int, int]] = []
    j = _skip_ws(text, i + 1)
    if text[j] == "]":
        return _Array(i, j + 1, ())
    while True:
        end = _value_end(text, j)
        elements.append((j, end))
        after = _skip_ws(text, end)
        if text[after] == "]":
            return _Array(i, after + 1, tuple(elements))
        j = _skip_ws(text, after + 1)


# ---------------------------------------------------------------------- JSON with comments
_STRING = r'"(?:[^"\\\n]|\\.)*"'
_COMMENTS = re.compile(_STRING + r"|//[^\n]*|/\*.*?\*/|/\*", re.S)
_TRAILING_COMMAS = re.compile(_STRING + r"|,(?=[ \t\n\r]*[\]}])", re.S)
_STRINGS = re.compile(_STRING)
_TRAILING = re.compile(r",[ \t\n\r]*[\]}]")


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def _as_json(text: str, source: str) -> tuple[str, int | None]:
    """``text`` with comments and trailing commas (JSON with comments, as VS Code reads it)
    turned into spaces — every position and line kept — and the line of the first one
    (None when the text had none)."""
    first: list[int] = []

    def comment(match: re.Match[str]) -> str:
        token = match.group()
        if token.startswith('"'):
            return token
        if token == "/*":
            line = text.count("\n", 0, match.start()) + 1
            raise InputError(f"{source}: not valid JSON: unterminated /* comment at line {line}")
        first.append(match.start())
        return _blank(match)

    def comma(match: re.Match[str]) -> str:
        if match.group().startswith('"'):
            return match.group()
        first.append(match.start())
        return " "

    outside = _STRINGS.sub('""', text)  # what is outside the strings (at C speed)
    if "/" not in outside and not _TRAILING.search(outside):
        return text, None
    plain = text
    if "/" in text:
        plain = _COMMENTS.sub(comment, plain)
    if "," in plain:
        plain = _TRAILING_COMMAS.sub(comma, plain)
    if not first:
        return plain, None
    return plain, text.count("\n", 0, min(first)) + 1


# ---------------------------------------------------------------------- TOML (Codex)
# A TOML file is read with tomllib; the text is only *scanned*, for the positions of each
# server's ``command`` and ``args`` in its own ``[mcp_servers.NAME]`` table (the layout the
# Codex documentation shows). Anything else (dotted keys, inline tables, a non-string
# element) is left as it was and named: an edit is made only where it can be minimal.
_TOML_STRING = (r'"""(?:[^\\]|\\.)*?"""(?!")|\'\'\'.*?\'\'\'(?!\')'
                r'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')
_TOML_TOKENS = re.compile(_TOML_STRING + r"|#[^\n]*", re.S)
_TOML_STRING_AT = re.compile(_TOML_STRING, re.S)
_TOML_HEADER = re.compile(r"^[ \t]*\[(\[?)([^\n]*?)\]\]?[ \t]*\r?$", re.M)
_TOML_KEY = re.compile(r'[ \t]*(?:([A-Za-z0-9_-]+)|"((?:[^"\\\n]|\\.)*)"|\'([^\'\n]*)\')[ \t]*')
_TOML_MEMBER = re.compile(r"^([ \t]*)(command|args|url|\"command\"|\"args\"|\"url\")"
                          r"([ \t]*=[ \t]*)", re.M)


def _parse_toml(text: str, source: str) -> Any:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{source}: not valid TOML: {printable(str(exc), 200)}") from None


def _toml_plain(text: str) -> str:
    """``text`` with its comments turned into spaces (every position kept)."""
    return _TOML_TOKENS.sub(lambda m: m.group() if m.group()[0] in "\"'" else _blank(m), text)


def _toml_key_path(spelled: str) -> tuple[str, ...] | None:
    """The dotted key of a table header (None for one this scanner does not read)."""
    parts: list[str] = []
    i = 0
    while True:
        match = _TOML_KEY.match(spelled, i)
        if match is None:
            return None
        bare, basic, literal = match.groups()
        try:
            parts.append(bare if bare is not None else literal if literal is not None
                         else json.loads(f'"{basic}"'))
        except ValueError:
            return None
        i = match.end()
        if i == len(spelled):
            return tuple(parts)
        if spelled[i] != ".":
            return None
        i += 1


def _toml_array(plain: str, i: int) -> _Array | None:
    """The element positions of the array of strings at ``i`` (None for anything else)."""
    elements: list[tuple[int, int]] = []
    j = _skip_ws(plain, i + 1)
    while plain[j:j + 1] != "]":
        match = _TOML_STRING_AT.match(plain, j)
        if match is None:
            return None
        elements.append((j, match.end()))
        j = _skip_ws(plain, match.end())
        if plain[j:j + 1] == ",":
            j = _skip_ws(plain, j + 1)
        elif plain[j:j + 1] != "]":
            return None
    return _Array(i, j + 1, tuple(elements))


def _toml_entry(plain: str, start: int, end: int, value: Any) -> _Object | None:
    """The ``command``, ``args`` and ``url`` of one server table (its body from ``start`` to
    ``end``), or None when a member the document has is not a plain key with a string (or an
    array of strings) here."""
    members: list[_Member] = []
    for match in _TOML_MEMBER.finditer(plain, start, end):
        key = match.group(2).strip('"')
        at = match.end()
        stop = _toml_value_end(plain, key, at)
        if stop is None:
            return None
        members.append(_Member(key, match.start(2), match.end(2), at, stop))
    present = {m.key for m in members}
    wanted = {k for k in ("command", "args", "url") if k in value}
    return _Object(start, end, tuple(members)) if present == wanted and len(members) == len(
        present) else None


def _toml_value_end(plain: str, key: str, at: int) -> int | None:
    """Step: where a member's plain string (``command``, ``url``) or string array ends."""
    if key in ("command", "url"):
        found = _TOML_STRING_AT.match(plain, at)
        return found.end() if found else None
    array = _toml_array(plain, at) if plain[at:at + 1] == "[" else None
    return array.end if array else None


def _load_toml(path: Path, data: bytes, text: str) -> _Loaded:
    """A Codex ``config.toml``: the document, and each server table's members located."""
    source = _shown(path)
    document = _parse_toml(text, source)
    key = HOSTS[HostFormat.CODEX].table
    table = document.get(key, {})
    if not isinstance(table, dict):
        raise InputError(f"{source}: unknown shape: {key} is not a table")
    plain = _toml_plain(text)
    objects, members = _toml_servers(plain, key, table)
    located = {m.key for m in members}
    members += [_Member(name, -1, -1, -1, -1) for name in table if name not in located]
    ordered = tuple(sorted(members, key=lambda m: m.key_start))
    return _Loaded(path, data, text, plain, document, HostFormat.CODEX, False,
                   (((key,), _Object(0, len(plain), ordered)),) if key in document else (),
                   objects)


def _toml_servers(plain: str, key: str, table: dict[str, Any],
                  ) -> tuple[dict[tuple[str, ...], _Object], list[_Member]]:
    """Step: each ``[key.NAME]`` server table located (a member per table) and the members
    of those that can be edited in place."""
    headers = list(_TOML_HEADER.finditer(plain))
    objects: dict[tuple[str, ...], _Object] = {}
    members: list[_Member] = []
    for n, header in enumerate(headers):
        where = None if header.group(1) else _toml_key_path(header.group(2))
        if where is None or len(where) != 2 or where[0] != key or where[1] not in table:
            continue
        end = headers[n + 1].start() if n + 1 < len(headers) else len(plain)
        entry = _toml_entry(plain, header.end(), end, table[where[1]])
        members.append(_Member(where[1], header.start(), header.end(), header.end(), end))
        if entry is not None and isinstance(table[where[1]], dict):
            objects[where] = entry
    return objects, members


# ---------------------------------------------------------------------- YAML (Continue)
# A YAML file is read with PyYAML's safe loader; the positions of each server's ``command``
# and ``args`` come from the composed nodes (their marks). Only what can be edited in place
# is edited: a one-line plain or quoted ``command`` right after ``command:``, and ``args`` as
# a flow (``[a, b]``) or block (``- a``) sequence of one-line scalars; an alias, anchor, tag
# or multi-line scalar leaves the entry as it was (named).
_YAML_SEPARATOR = re.compile(r":[ \t]+")


def _yaml() -> Any:
    """PyYAML, imported when a YAML file is read (it has no type stubs here)."""
    import yaml  # type: ignore[import-untyped]

    return yaml


def _parse_yaml(text: str, source: str) -> Any:
    yaml = _yaml()

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{source}: not valid YAML: "
                         f"{printable(' '.join(str(exc).split()), 200)}") from None


def _yaml_scalar(text: str, node: Any) -> bool:
    """A one-line plain or quoted scalar, spelled where its node says."""
    yaml = _yaml()

    if not (isinstance(node, yaml.ScalarNode) and node.style in (None, "'", '"')
            and node.tag == "tag:yaml.org,2002:str"
            and node.start_mark.line == node.end_mark.line
            and node.end_mark.index > node.start_mark.index):
        return False
    first = text[node.start_mark.index]
    # The span is the scalar itself: no anchor (&), tag (!) or alias (*) in front of it.
    return first == node.style if node.style else first not in "&!*|>"


def _yaml_array(text: str, node: Any) -> _Array | None:
    """A flow or block sequence of one-line scalars: its span and its elements'; for a block
    sequence the span runs from the first ``-`` to the end of the last element."""
    yaml = _yaml()

    if not isinstance(node, yaml.SequenceNode) or not all(
            _yaml_scalar(text, item) for item in node.value):
        return None
    elements = tuple((i.start_mark.index, i.end_mark.index) for i in node.value)
    if node.flow_style:
        return _Array(node.start_mark.index, node.end_mark.index, elements)
    if not elements or any(not re.fullmatch(r"-[ ]+", text[
            text.rfind("-", 0, start):start]) for start, _ in elements):
        return None
    return _Array(text.rfind("-", 0, elements[0][0]), elements[-1][1], elements)


def _yaml_entry(text: str, node: Any, value: Any) -> tuple[_Object, dict[int, _Array]] | None:
    """The located ``command`` and ``args`` of one server mapping, or None."""
    yaml = _yaml()

    if not isinstance(node, yaml.MappingNode) or not isinstance(value, dict):
        return None
    members: list[_Member] = []
    arrays: dict[int, _Array] = {}
    keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    for key, item in node.value:
        if key.value not in ("command", "args"):
            continue
        member = _yaml_member(text, key, item, keys, arrays)
        if member is None:
            return None
        members.append(member)
    if not _located_all(members, value, ("command", "args")):
        return None
    return _Object(node.start_mark.index, node.end_mark.index, tuple(members)), arrays


def _located_all(members: list[_Member], value: dict[str, Any], keys: tuple[str, ...]) -> bool:
    """Step: each of ``keys`` the entry has was located, and nothing else."""
    return {m.key for m in members} == {k for k in keys if k in value}


def _yaml_member(text: str, key: Any, item: Any, keys: list[Any],
                 arrays: dict[int, _Array]) -> _Member | None:
    """Step: one ``command`` or ``args`` member located, or None when it cannot be edited."""
    if keys.count(key.value) != 1 or not _yaml_separated(text, key, item):
        return None
    end = _yaml_value_end(text, key.value, item, arrays)
    if end is None:
        return None
    start = arrays[max(arrays)].start if key.value == "args" else item.start_mark.index
    return _Member(key.value, key.start_mark.index, key.end_mark.index, start, end)


def _yaml_separated(text: str, key: Any, item: Any) -> bool:
    """Step: key and value are separated plainly (``args`` may also start on a new line)."""
    between = text[key.end_mark.index:item.start_mark.index]
    return bool(_YAML_SEPARATOR.fullmatch(between) or (key.value == "args" and re.fullmatch(
        r":[ \t]*(?:#[^\n]*)?(?:\r?\n[ \t]*(?:#[^\n]*)?)*", between)))


def _yaml_value_end(text: str, key: str, item: Any, arrays: dict[int, _Array]) -> int | None:
    """Step: where an editable ``command`` scalar or ``args`` sequence ends (an ``args``
    sequence joins ``arrays``); None when it cannot be edited in place."""
    if key == "command":
        return item.end_mark.index if _yaml_scalar(text, item) else None
    array = _yaml_array(text, item)
    if array is None:
        return None
    arrays[array.start] = array
    return array.end


def _load_yaml(path: Path, data: bytes, text: str) -> _Loaded:
    """Continue's config: its document, and each server of ``mcpServers`` located."""
    source = _shown(path)
    document = _parse_yaml(text, source)
    key = HOSTS[HostFormat.CONTINUE].table
    if not isinstance(document, dict) or not isinstance(document.get(key, []), list):
        raise InputError(f"{source}: unknown shape: expected a mapping with an {key} list")
    items = _yaml_server_nodes(text, key)
    objects: dict[tuple[str, ...], _Object] = {}
    arrays: dict[int, _Array] = {}
    members: list[_Member] = []
    for n, (node, value) in enumerate(zip(items, document.get(key) or [], strict=True)):
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            continue
        index = f"[{n}]"
        members.append(_Member(index, node.start_mark.index, node.start_mark.index,
                               node.start_mark.index, node.end_mark.index))
        located = _yaml_entry(text, node, value)
        if located is not None:
            objects[(key, index)] = located[0]
            arrays.update(located[1])
    return _Loaded(path, data, text, text, document, HostFormat.CONTINUE, False,
                   (((key,), _Object(0, len(text), tuple(members))),) if key in document
                   else (), objects, arrays)


def _yaml_server_nodes(text: str, key: str) -> list[Any]:
    """Step: the composed nodes of the ``key`` list's items (their marks locate them)."""
    yaml = _yaml()

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    nodes = {k.value: v for k, v in root.value} if isinstance(root, yaml.MappingNode) else {}
    items: list[Any] = nodes[key].value if key in nodes else []
    return items


# ---------------------------------------------------------------------- reading a host file
@dataclass(frozen=True)
class _Entry:
    name: str
    where: tuple[str, ...]
    member: _Member
    value: Any


@dataclass(frozen=True)
class _Loaded:
    path: Path
    data: bytes
    text: str
    plain: str
    document: Any
    format: HostFormat
    jsonc: bool
    containers: tuple[tuple[tuple[str, ...], _Object], ...]
    #: TOML: each entry's members located in its ``[mcp_servers.NAME]`` table (an entry
    #: written otherwise has none and is never edited); None for JSON, scanned on demand.
    objects: Mapping[tuple[str, ...], _Object] | None = None
    #: YAML: each located sequence by its start (flow or block).
    arrays: Mapping[int, _Array] | None = None

    def entries(self) -> Iterator[_Entry]:
        for where, obj in self.containers:
            values = _at(self.document, where)
            for member in obj.members:
                value = _at(values, (member.key,))
                # A list of servers (Continue) names each by its "name".
                name = value.get("name") if isinstance(values, list) else member.key
                yield _Entry(name, (*where, member.key), member, value)


def _array_at(loaded: _Loaded, i: int) -> _Array:
    """The element positions of the array of strings at ``i``."""
    if loaded.arrays is not None:
        return loaded.arrays[i]
    if loaded.objects is not None:
        array = _toml_array(loaded.plain, i)
        assert array is not None  # located by _toml_entry
        return array
    return _array(loaded.plain, i)


def _entry_object(loaded: _Loaded, entry: _Entry) -> _Object:
    """The entry's members with their positions in the text."""
    if loaded.objects is not None:
        return loaded.objects[entry.where]
    return _object(loaded.plain, entry.member.value_start)


def _not_located(loaded: _Loaded) -> str:
    """Why an entry the scanner could not locate is left as it is."""
    if loaded.arrays is not None:
        return ("its command is not a one-line string, or its args not a sequence of "
                "one-line strings, written in place (no alias, anchor or tag): it is left as "
                "it is, as no minimal edit is sure; edit it by hand")
    return ("not written as its own [mcp_servers.NAME] table with command and args as "
            "plain keys (the layout the Codex documentation shows): it is left as it is, "
            "as no minimal edit is sure; edit it by hand")


def _unlocated(loaded: _Loaded, entry: _Entry) -> bool:
    """A TOML entry not written as its own ``[mcp_servers.NAME]`` table with ``command`` (and
    ``args``) as plain keys there: it cannot be edited minimally, so it is never edited."""
    return loaded.objects is not None and entry.where not in loaded.objects


def _at(document: Any, where: Sequence[str]) -> Any:
    """The value at ``where``; in a list, a part ``[N]`` is its N-th item."""
    for part in where:
        document = document[int(part[1:-1])] if isinstance(document, list) else document[part]
    return document


def _shown(path: Path) -> str:
    return printable(str(path))


def _read(path: Path, max_bytes: int) -> bytes:
    if str(path) == "-":
        raise UsageError("a host config file is rewritten in place: name the file, not -")
    try:
        return read_bytes(str(path), max_bytes=max_bytes)
    except LimitExceeded:
        raise LimitExceeded(
            f"{_shown(path)}: larger than the limit of {max_bytes} bytes for a host config "
            "file (`max_bytes`)", limit="max_bytes", value=max_bytes,
        ) from None
    except InputError as exc:
        raise InputError(printable(exc.message)) from None


def _load(path: Path, max_bytes: int) -> _Loaded:
    data = _read(path, max_bytes)
    source = _shown(path)
    yaml_host = named_host(path) is HostFormat.CONTINUE
    if path.suffix.lower() in (".yaml", ".yml") and not yaml_host:
        raise InputError(
            f"{source}: a YAML file that is not Continue's documented config "
            "(~/.continue/config.yaml, .continue/mcpServers/*.yaml): which host reads it, "
            "and how, is not known; it was left as it is")
    # The bytes are judged as parse_json would judge them before comments are looked for.
    text = json_text(data, source)
    if named_host(path) is HostFormat.CODEX:
        return _load_toml(path, data, text)
    if yaml_host:
        return _load_yaml(path, data, text)
    plain, comment_line = _as_json(text, source)
    document = parse_json(plain.encode("utf-8"), source, max_depth=MAX_HOST_CONFIG_DEPTH,
                          max_bytes=max_bytes)
    host, paths = _detect(document, path, source)
    if comment_line is not None and HOSTS[host].syntax != "jsonc":
        raise InputError(
            f"{source}: not valid JSON: a comment or trailing comma at line {comment_line}; "
            f"a {host.label} is strict JSON (only VS Code's mcp.json, Zed's settings.json "
            "and opencode.json may have comments)"
        )
    return _Loaded(path, data, text, plain, document, host, comment_line is not None,
                   _tables(plain, paths))


def _tables(plain: str, paths: Iterable[tuple[str, ...]]) -> tuple[
        tuple[tuple[str, ...], _Object], ...]:
    """The server tables at ``paths``, in file order (each object on the way is scanned
    once)."""
    scanned: dict[tuple[str, ...], _Object] = {(): _object(plain, _skip_ws(plain, 0))}

    def at(where: tuple[str, ...]) -> _Object:
        if where not in scanned:
            member = at(where[:-1]).get(where[-1])
            assert member is not None  # _detect found it in the parsed document
            scanned[where] = _object(plain, member.value_start)
        return scanned[where]

    return tuple(sorted(((where, at(where)) for where in paths), key=lambda t: t[1].start))


def _detect(document: Any, path: Path, source: str) -> tuple[HostFormat, list[tuple[str, ...]]]:
    """The host format and the JSON paths of its server tables."""
    expected = ('expected a top-level "mcpServers" object (Claude Desktop, Cursor, Claude '
                'Code) or "servers" object (VS Code mcp.json)')
    if not isinstance(document, dict):
        raise InputError(f"{source}: unknown shape: the top level is not a JSON object; "
                         f"{expected}")
    named = named_host(path)
    if named is not None:
        key = HOSTS[named].table
        return named, [_table(document, (key,), source)] if key in document else []
    if "servers" in document and "mcpServers" in document:
        raise InputError(f"{source}: unknown shape: it has both \"servers\" (VS Code) and "
                         "\"mcpServers\" (Claude Desktop, Cursor, Claude Code); which host "
                         "reads it is unclear")
    if "servers" in document:
        return HostFormat.VSCODE, [_table(document, ("servers",), source)]
    return _detect_mcp_servers(document, path, source, expected)


def _detect_mcp_servers(document: dict[str, Any], path: Path, source: str,
                        expected: str) -> tuple[HostFormat, list[tuple[str, ...]]]:
    """Step: the host of a document without a ``servers`` table, by its tables and name."""
    project_tables = _project_tables(document)
    if path.name == ".claude.json" or project_tables:
        paths = [("mcpServers",)] if "mcpServers" in document else []
        return HostFormat.CLAUDE_CODE_USER, [_table(document, p, source)
                                             for p in [*paths, *project_tables]]
    by_name = _format_by_name(path)
    if "mcpServers" in document:
        host = by_name if by_name not in (None, HostFormat.VSCODE) else HostFormat.MCP_SERVERS
        return host, [_table(document, ("mcpServers",), source)]
    if by_name is not None:  # the host's file, with no server table yet
        return by_name, []
    raise _unknown_shape(document, source, expected)


def _table(document: dict[str, Any], where: tuple[str, ...], source: str) -> tuple[str, ...]:
    """Step: ``where`` when the document holds a JSON object there; else unknown shape."""
    if not isinstance(_at(document, where), dict):
        raise InputError(f"{source}: unknown shape: {location(where)} is not a JSON object")
    return where


def _project_tables(document: dict[str, Any]) -> list[tuple[str, ...]]:
    """Step: the per-project ``mcpServers`` tables of a Claude Code user file."""
    projects = document.get("projects")
    return [
        ("projects", key, "mcpServers") for key, value in (
            projects.items() if isinstance(projects, dict) else ())
        if isinstance(value, dict) and "mcpServers" in value
    ]


def _format_by_name(path: Path) -> HostFormat | None:
    """Step: the host format a config file's name (and folder) says, if any."""
    name, parent = path.name, path.parent.name
    by_name = {
        "claude_desktop_config.json": HostFormat.CLAUDE_DESKTOP,
        ".mcp.json": HostFormat.CLAUDE_CODE_PROJECT,
    }.get(name)
    if by_name is None and name == "mcp.json":
        by_name = HostFormat.CURSOR if parent == ".cursor" else HostFormat.VSCODE
    return by_name


def _unknown_shape(document: dict[str, Any], source: str, expected: str) -> InputError:
    """Step: the error for a document no host format fits (naming VS Code's settings)."""
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and "servers" in mcp:
        return InputError(f"{source}: a VS Code settings.json \"mcp\" section is not "
                          "supported; VS Code keeps MCP servers in mcp.json (MCP: Open User "
                          "Configuration)")
    return InputError(f"{source}: unknown shape: {expected}")


# ---------------------------------------------------------------------- entries
def _is_proxy_command(command: str) -> bool:
    base = re.split(r"[\\/]", command)[-1].lower()
    return base in (PROXY_COMMAND, PROXY_COMMAND + ".exe")


@dataclass(frozen=True)
class _Stdio:
    """A stdio entry's command and args (None when there is no ``args`` member)."""

    command: str
    args: list[str] | None

    @property
    def wrapped(self) -> bool:
        return (self.args is not None and len(self.args) > 0
                and self.args[0] == PROXY_SUBCOMMAND and _is_proxy_command(self.command))


_URL_KEYS = ("url", "httpUrl", "serverUrl")


def _stdio(value: Any, spec: HostSpec) -> _Stdio | tuple[EntryStatus, str]:
    """The entry's command and args (for a host whose ``command`` is an array: its first
    element and the rest), or why it has none to wrap."""
    if not isinstance(value, dict):
        return EntryStatus.MALFORMED, "not a JSON object"
    kind = value.get("type")
    if "command" not in value:
        return _without_command(value, kind)
    local = "local" if spec.command_array else "stdio"
    if kind is not None and kind != local:
        return (EntryStatus.MALFORMED,
                f"type {printable(json.dumps(kind, ensure_ascii=False), 80)} is not {local}")
    command = value["command"]
    if spec.command_array:
        return _array_command(command)
    return _string_command(value, command)


def _without_command(value: dict[str, Any], kind: Any) -> tuple[EntryStatus, str]:
    """Step: why an entry without ``command`` is not wrapped (remote, or malformed)."""
    if any(key in value for key in _URL_KEYS) or kind in _REMOTE_TYPES or kind == "remote":
        url = next((value[k] for k in _URL_KEYS if isinstance(value.get(k), str)), None)
        shown = f" {printable(url, 200)}" if url is not None else ""
        return (EntryStatus.REMOTE, f"an HTTP server (url{shown}): only stdio servers "
                "can be wrapped, and this host's documentation does not say it is "
                "Streamable HTTP, which proxy --url serves")
    return EntryStatus.MALFORMED, "has no command"


def _string_command(value: dict[str, Any], command: Any) -> _Stdio | tuple[EntryStatus, str]:
    """Step: a ``command`` string and its optional ``args`` array."""
    if not isinstance(command, str) or not command:
        return EntryStatus.MALFORMED, "command is not a non-empty string"
    args = value.get("args")
    if "args" in value and (not isinstance(args, list)
                            or not all(isinstance(a, str) for a in args)):
        return EntryStatus.MALFORMED, "args is not an array of strings"
    return _Stdio(command, args)


def _array_command(command: Any) -> _Stdio | tuple[EntryStatus, str]:
    """Step: a ``command`` array (hosts that give program and arguments as one array)."""
    if (not isinstance(command, list) or not command
            or not all(isinstance(a, str) for a in command) or not command[0]):
        return EntryStatus.MALFORMED, "command is not a non-empty array of strings"
    return _Stdio(command[0], command[1:])


@dataclass(frozen=True)
class _ProxyArgs:
    """What wrap itself wrote into an entry (to tell "already wrapped" from "wrapped
    otherwise" and to find the original command); what an entry *runs* is the proxy's own
    parser's to say (``check --all --host-config``)."""

    server: str | None
    pins: str | None
    lock: str | None
    separator: int | None  # index of "--" in args


_WRITTEN = ("--server", "--pins", "--lock")


def _proxy_args(args: Sequence[str]) -> _ProxyArgs:
    values: dict[str, str] = {}
    i = 1
    while i < len(args):
        arg = args[i]
        if arg == "--":
            break
        for flag in _WRITTEN:
            if arg == flag and i + 1 < len(args):
                values[flag] = args[i + 1]
                i += 1
            elif arg.startswith(flag + "="):
                values[flag] = arg[len(flag) + 1:]
        i += 1
    return _ProxyArgs(values.get("--server"), values.get("--pins"), values.get("--lock"),
                      i if i < len(args) else None)


def proxy_arguments(server: str, pins: str | None, lock: str | None = None) -> list[str]:
    """The arguments a wrapped entry runs before the original command: a pinned server
    (``--server NAME [--pins FILE]``) or a locked one (``--server NAME --lock FILE``)."""
    return [PROXY_SUBCOMMAND, "--server", server, *(["--pins", pins] if pins else []),
            *(["--lock", lock] if lock else []), "--"]


def proxy_executable() -> str:
    """The absolute path of the ``histor-sign`` command of the running installation: the
    console script beside the running interpreter (a virtual environment's ``bin/`` or
    ``Scripts/``), else the one found on ``PATH``. A wrapped entry runs it by this path
    because a desktop host starts its servers with a minimal ``PATH`` (``/usr/bin:/bin``)
    where a ``histor-sign`` installed elsewhere is not found. Raises
    :class:`OperationalError` when there is none."""
    names = [PROXY_COMMAND + ".exe", PROXY_COMMAND] if os.name == "nt" else [PROXY_COMMAND]
    here = Path(os.path.abspath(sys.executable)).parent if sys.executable else None
    for folder in ([here, here / "Scripts"] if here is not None else []):
        for name in names:
            candidate = folder / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    found = shutil.which(PROXY_COMMAND)
    if found is None:
        raise OperationalError(f"cannot find the {PROXY_COMMAND} command of this "
                               "installation (beside the Python running it, or on PATH)")
    return os.path.abspath(found)


# ---------------------------------------------------------------------- edits
_Edit = tuple[int, int, str]


def _apply(text: str, edits: Iterable[_Edit]) -> str:
    pieces: list[str] = []
    at = 0
    for start, end, replacement in sorted(edits):
        pieces += [text[at:start], replacement]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def _space_before(text: str, i: int) -> str:
    """The whitespace right before position ``i``."""
    j = i
    while j > 0 and text[j - 1] in " \t\r\n":
        j -= 1
    return text[j:i]


def _literal(value: str) -> str:
    """A JSON string literal that is a TOML basic string too (DEL escaped, as TOML wants)."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def _inserted_array(items: Sequence[str]) -> str:
    """How an ``args`` member wrap adds (the entry had none) spells its array."""
    return "[" + ", ".join(items) + "]"


def _member_space(loaded: _Loaded, command: _Member) -> str:
    return _space_before(loaded.text, command.key_start) or " "


def _args_member(loaded: _Loaded, after: _Member) -> str:
    """The text wrap puts right after ``after``'s value to add an ``args`` member: JSON
    ``, "args": `` (with the whitespace before ``after`` and its colon spacing), TOML a new
    line ``args = `` with ``after``'s indentation and line ending."""
    text = loaded.text
    colon = loaded.plain[after.key_end:after.value_start]
    if loaded.objects is None:
        return f',{_member_space(loaded, after)}"args"{colon}'
    line = text.rfind("\n", 0, after.key_start) + 1
    eol = "\r\n" if text[max(line - 2, 0):line] == "\r\n" else "\n"
    indent = re.sub(r"\S", " ", text[line:after.key_start])  # a YAML "- " becomes spaces
    return f"{eol}{indent}args{colon}"


def _wrap_edits(loaded: _Loaded, entry: _Entry, prefix: Sequence[str],
                command_name: str = PROXY_COMMAND) -> list[_Edit]:
    text = loaded.text
    obj = _entry_object(loaded, entry)
    command = obj.get("command")
    assert command is not None
    if HOSTS[loaded.format].command_array:
        # ["npx", …] becomes ["/…/histor-sign", "proxy", …, "--", "npx", …] in its layout.
        array = _array_at(loaded, command.value_start)
        return [_insert_before_first(text, array, [_literal(command_name),
                                                   *map(_literal, prefix)])]
    original = text[command.value_start:command.value_end]
    items = [*map(_literal, prefix), original]
    edits: list[_Edit] = [(command.value_start, command.value_end, _literal(command_name))]
    args = obj.get("args")
    if args is None:
        member = _args_member(loaded, command) + _inserted_array(items)
        edits.append((command.value_end, command.value_end, member))
        return edits
    array = _array_at(loaded, args.value_start)
    if array.elements:
        edits.append(_insert_before_first(text, array, items))
        return edits
    else:
        inside = text[array.start + 1:array.end - 1]
        new = "[" + ("," if inside == "" else ", ").join(items) + inside + "]"
    edits.append((array.start, array.end, new))
    return edits


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


def _line_end(text: str, i: int) -> int:
    """The position after the line break that ends the line of ``i`` (or the text's end)."""
    end = text.find("\n", i)
    return len(text) if end < 0 else end + 1


def _insert_before_first(text: str, array: _Array, items: Sequence[str]) -> _Edit:
    """The edit that puts ``items`` (literals) in front of a non-empty array's first element,
    in the array's own layout (for a YAML block sequence: one ``- item`` line each, with
    the first item's indentation and line ending)."""
    first = array.elements[0][0]
    if text[array.start] == "-":
        line = _line_start(text, array.start)
        end = _line_end(text, first)
        eol = "\r\n" if text[:end].endswith("\r\n") else "\n"
        prefix = text[line:first]
        return line, line, "".join(f"{prefix}{item}{eol}" for item in items)
    lead = text[array.start + 1:first]
    joiner = _joiner(text, array, lead)
    return array.start, array.end, "[" + lead + joiner.join(items) + joiner + text[first:array.end]


def _joiner(text: str, array: _Array, lead: str) -> str:
    """What separates the inserted elements: the array's own separator between its first
    two elements when that is a comma and whitespace, else a comma and the first element's
    line break and indentation, else ``", "``."""
    if len(array.elements) >= 2:
        between = text[array.elements[0][1]:array.elements[1][0]]
        if re.fullmatch(r",[ \t\r\n]*", between):
            return between
    newline = re.search(r"\r?\n[ \t]*\Z", lead)
    return "," + newline.group() if newline else ", "


def _unwrap_edits(
    loaded: _Loaded, entry: _Entry, separator: int
) -> tuple[list[_Edit], bool] | None:
    """Edits that restore a wrapped entry's command and args, and whether they remove the
    args member (wrap added it); None when the entry names no command after ``--``."""
    text = loaded.text
    obj = _entry_object(loaded, entry)
    command, args = obj.get("command"), obj.get("args")
    assert command is not None
    if HOSTS[loaded.format].command_array:  # the command array keeps what follows --
        return _unwrap_command_array(loaded, command, separator)
    assert args is not None
    array = _array_at(loaded, args.value_start)
    if separator + 1 >= len(array.elements):
        return None
    cmd_start, cmd_end = array.elements[separator + 1]
    edits: list[_Edit] = [(command.value_start, command.value_end, text[cmd_start:cmd_end])]
    last = separator + 2 == len(array.elements)
    if last and _args_inserted_by_wrap(loaded, command, args, array):
        edits.append((command.value_end, args.value_end, ""))
        return edits, True
    if text[array.start] == "-":  # a YAML block sequence: the inserted lines go again
        stop = (_line_start(text, array.elements[separator + 2][0]) if not last
                else _line_end(text, cmd_end))
        edits.append((_line_start(text, array.start), stop, ""))
        return edits, False
    edits.append((array.start, array.end, _args_after_command(text, array, separator)))
    return edits, False


def _args_inserted_by_wrap(loaded: _Loaded, command: _Member, args: _Member,
                           array: _Array) -> bool:
    """Step: the ``args`` member is exactly the one wrap inserted after ``command``."""
    text = loaded.text
    return (args.key_start > command.value_end
            and text[command.value_end:args.value_start] == _args_member(loaded, command)
            and text[array.start:array.end] == _inserted_array(
                [text[s:e] for s, e in array.elements]))


def _unwrap_command_array(loaded: _Loaded, command: _Member,
                          separator: int) -> tuple[list[_Edit], bool] | None:
    """Step: a command array keeps only what follows ``--`` (None when nothing does)."""
    text = loaded.text
    array = _array_at(loaded, command.value_start)
    if separator + 2 >= len(array.elements):
        return None
    lead = text[array.start + 1:array.elements[0][0]]
    return [(array.start, array.end,
             "[" + lead + text[array.elements[separator + 2][0]:array.end])], False


def _args_after_command(text: str, array: _Array, separator: int) -> str:
    """Step: a flow ``args`` array's text less everything up to the original command."""
    cmd_end = array.elements[separator + 1][1]
    if separator + 2 != len(array.elements):
        lead = text[array.start + 1:array.elements[0][0]]
        return "[" + lead + text[array.elements[separator + 2][0]:array.end]
    rest = text[cmd_end:array.end]
    comma = _skip_ws(text, cmd_end)
    if text[comma] == ",":  # a trailing comma (JSON with comments) after the command
        rest = text[cmd_end:comma] + text[comma + 1:array.end]
    return "[" + rest


# ---------------------------------------------------------------------- URL entries
_STDIO_TYPE = '"stdio"'


def _key(loaded: _Loaded, name: str) -> str:
    """How wrap spells a member's key: a JSON string, a bare TOML key."""
    return name if loaded.objects is not None else _literal(name)


def _remote_url(loaded: _Loaded, entry: _Entry,
                refused: tuple[EntryStatus, str]) -> str | tuple[EntryStatus, str]:
    """The URL of a remote entry that can become ``proxy --url URL`` with a minimal edit
    that unwrap reverses exactly, or why it cannot (``refused`` when the host's
    documentation does not say which of its remote entries are Streamable HTTP; headers
    would have to move into the command line; another transport; a key spelled with
    escapes)."""
    spec, value = HOSTS[loaded.format], entry.value
    if spec.url_key is None:
        return refused
    url = value.get(spec.url_key)
    if not isinstance(url, str) or not url:
        return refused
    shown = printable(url, 200)
    if _has_headers(value):
        return (EntryStatus.REMOTE, f"an HTTP server ({shown}) with headers: not wrapped "
                "(they would have to move into the proxy's command line)")
    other = _other_remote_type(loaded, entry, spec.url_key, spec.url_type, shown)
    return other if other is not None else url


def _other_remote_type(loaded: _Loaded, entry: _Entry, url_key: str, url_type: str | None,
                       shown: str) -> tuple[EntryStatus, str] | None:
    """Step: why a remote entry is not the host's Streamable HTTP kind (its type, or its
    URL key spelled with escapes), or None when it is."""
    text = loaded.text
    obj = _entry_object(loaded, entry)
    member, kind = obj.get(url_key), obj.get("type")
    assert member is not None
    wanted = None if url_type is None else _literal(url_type)
    spelled = None if kind is None else text[kind.value_start:kind.value_end]
    if text[member.key_start:member.key_end] != _key(loaded, url_key) or spelled != wanted:
        return (EntryStatus.REMOTE, f"an HTTP server ({shown}) of type "
                f"{printable(json.dumps(entry.value.get('type')), 80)}: only "
                f"{wanted or 'untyped'} entries are Streamable HTTP here, which proxy --url "
                "serves")
    return None


def _has_headers(value: dict[str, Any]) -> bool:
    """Step: a remote entry sends headers (or a bearer token) the proxy's command line
    would have to carry."""
    return any(key in value for key in ("headers", "http_headers", "env_http_headers",
                                        "bearer_token_env_var"))


def _wrap_url_edits(loaded: _Loaded, entry: _Entry, prefix: Sequence[str],
                    command: str) -> list[_Edit]:
    """``"url": U`` becomes ``"command": CMD, "args": [PREFIX…, U]`` in place (U exactly
    as spelled; the key is the host's URL key), and the type becomes ``"stdio"``."""
    text = loaded.text
    spec = HOSTS[loaded.format]
    assert spec.url_key is not None
    obj = _entry_object(loaded, entry)
    url = obj.get(spec.url_key)
    assert url is not None
    items = [*map(_literal, prefix), text[url.value_start:url.value_end]]
    args = _args_member(loaded, url) + _inserted_array(items)
    edits: list[_Edit] = [(url.key_start, url.key_end, _key(loaded, "command")),
                          (url.value_start, url.value_end, _literal(command) + args)]
    kind = obj.get("type")
    if kind is not None:
        edits.append((kind.value_start, kind.value_end, _STDIO_TYPE))
    return edits


def _expect_url_wrapped(target: dict[str, Any], key: str, command: str,
                        args: list[str]) -> None:
    del target[key]
    target["command"], target["args"] = command, args
    if "type" in target:
        target["type"] = "stdio"


def _unwrap_url(loaded: _Loaded, entry: _Entry, proxy: _ProxyArgs, edits: list[_Edit],
                expected: Any) -> EntryOutcome:
    """Reverse :func:`_wrap_url_edits` (adding to ``edits`` and ``expected``), or name the
    entry when its text is not what wrap wrote (edited by hand)."""
    text = loaded.text
    spec = HOSTS[loaded.format]
    obj = _entry_object(loaded, entry)
    command, args, kind = obj.get("command"), obj.get("args"), obj.get("type")
    assert command is not None and args is not None
    array = _array_at(loaded, args.value_start)
    url_text = text[slice(*array.elements[-1])]
    inserted = _args_member(loaded, command) + _inserted_array(
        [text[s:e] for s, e in array.elements])
    if spec.url_key is None or not _as_url_wrap_wrote(text, command, args, kind, inserted):
        return EntryOutcome(entry.name, entry.where, EntryStatus.MALFORMED, proxy.server,
                            "runs proxy --url, but not as wrap wrote it: restore it by hand")
    assert spec.url_key is not None
    edits += [(command.key_start, command.key_end, _key(loaded, spec.url_key)),
              (command.value_start, args.value_end, url_text)]
    url = json.loads(url_text)
    if kind is not None and spec.url_type is not None:
        edits.append((kind.value_start, kind.value_end, _literal(spec.url_type)))
    if expected is not None:
        _expect_url_restored(_at(expected, entry.where), spec, url, kind is not None)
    return EntryOutcome(entry.name, entry.where, EntryStatus.UNWRAPPED, proxy.server,
                        f"serves {printable(url, 200)} directly again (was wrapped as "
                        f"{printable(proxy.server or 'no --server', 200)})")


def _as_url_wrap_wrote(text: str, command: _Member, args: _Member, kind: _Member | None,
                       inserted: str) -> bool:
    """Step: a ``proxy --url`` entry's text is exactly what wrap wrote (not edited by hand)."""
    return not (args.key_start < command.value_end
                or text[command.value_end:args.value_end] != inserted
                or (kind is not None and text[kind.value_start:kind.value_end] != _STDIO_TYPE))


def _expect_url_restored(value: Any, spec: HostSpec, url: Any, typed: bool) -> None:
    """Step: the expected document's entry serves its URL again (typed as the host types it)."""
    assert spec.url_key is not None
    del value["command"], value["args"]
    value[spec.url_key] = url
    if typed and spec.url_type is not None:
        value["type"] = spec.url_type


# ---------------------------------------------------------------------- wrap and unwrap
def _requested(loaded: _Loaded, names: Iterable[str]) -> None:
    present = {entry.name for entry in loaded.entries()}
    missing = [name for name in names if name not in present]
    if missing:
        listed = ", ".join(printable(n, 80) for n in sorted(present)[:20]) or "none"
        more = " …" if len(present) > 20 else ""
        raise UsageError(
            f"{_shown(loaded.path)} ({loaded.format.label}) has no server named "
            f"{', '.join(printable(n, 80) for n in missing)}; its servers: {listed}{more}"
        )


@dataclass(frozen=True)
class _Baseline:
    """What the wrapped entries are held to: pinned servers (``pins``, None for the per-user
    pin file) or the entries of a lock file (``lock``); ``names`` are those it has."""

    names: frozenset[str]
    path: Path
    pins: str | None
    lock: str | None

    @property
    def absent(self) -> EntryStatus:
        return EntryStatus.NOT_LOCKED if self.lock else EntryStatus.NOT_PINNED

    def missing(self, server: str) -> str:
        kind = "locked" if self.lock else "pinned"
        return f"{printable(server, 200)} is not {kind} in {_shown(self.path)}"


def _baseline(servers: Mapping[str, str], pins: str | Path | None,
              lock: str | Path | None) -> _Baseline:
    """Read the pin file or the lock file the entries will run under (absolute paths: the
    host starts the proxy from its own working directory), checking each name's form."""
    def absolute(value: str | Path) -> str:
        return os.path.abspath(os.path.expanduser(str(value)))

    if lock is not None:
        from histor_sign.lock import LockFile, validate_lock_name

        if pins is not None:
            raise UsageError("a locked server is served from its lock file: a pin file does "
                             "not apply to it", param="pins")
        for name in servers.values():
            validate_lock_name(name)
        locked = LockFile.load(absolute(lock))
        return _Baseline(frozenset(locked.servers), locked.path, None, absolute(lock))
    from histor_sign.pins import PinStore

    for name, server in servers.items():
        try:
            validate_server_name(server)
        except InputError as exc:
            raise UsageError(f"server {printable(name, 80)}: {printable(exc.message)}") from None
    pins_arg = absolute(pins) if pins is not None else None
    store = PinStore.load(pins_arg)
    return _Baseline(frozenset(store.entries), store.path, pins_arg, None)


def _wrap_entry(loaded: _Loaded, entry: _Entry, server: str, baseline: _Baseline,
                command: str, expected: Any) -> tuple[EntryOutcome, list[_Edit]]:
    """One requested entry: its outcome and the edits that wrap it (``expected``, a copy of
    the document, receives the same change)."""
    def outcome(status: EntryStatus, detail: str,
                named: str | None = server) -> tuple[EntryOutcome, list[_Edit]]:
        return EntryOutcome(entry.name, entry.where, status, named, detail), []

    if _unlocated(loaded, entry):
        return outcome(EntryStatus.MALFORMED, _not_located(loaded))
    stdio = _stdio(entry.value, HOSTS[loaded.format])
    if isinstance(stdio, tuple):
        return _wrap_remote(loaded, entry, server, baseline, command, expected, stdio)
    if stdio.wrapped:
        assert stdio.args is not None
        return outcome(*_wrapped_already(_proxy_args(stdio.args), server, baseline))
    if server not in baseline.names:
        return outcome(baseline.absent, baseline.missing(server))
    prefix = proxy_arguments(server, baseline.pins, baseline.lock)
    _expect_wrapped(_at(expected, entry.where), command, [*prefix, stdio.command,
                                                          *(stdio.args or [])],
                    HOSTS[loaded.format].command_array)
    shown = printable(" ".join([stdio.command, *(stdio.args or [])]), 200)
    return (EntryOutcome(entry.name, entry.where, EntryStatus.WRAPPED, server,
                         f"runs {shown} through the proxy as {server}"),
            _wrap_edits(loaded, entry, prefix, command))


def _wrap_remote(loaded: _Loaded, entry: _Entry, server: str, baseline: _Baseline,
                 command: str, expected: Any,
                 refused: tuple[EntryStatus, str]) -> tuple[EntryOutcome, list[_Edit]]:
    """Step: an entry with no command to wrap: a remote one becomes ``proxy --url`` when
    it can, else ``refused`` (why it has none) says what it is."""
    url = _remote_url(loaded, entry, refused) if refused[0] is EntryStatus.REMOTE else refused
    if isinstance(url, tuple):
        return EntryOutcome(entry.name, entry.where, url[0], server, url[1]), []
    if server not in baseline.names:
        return EntryOutcome(entry.name, entry.where, baseline.absent, server,
                            baseline.missing(server)), []
    prefix = [*proxy_arguments(server, baseline.pins, baseline.lock)[:-1], "--url"]
    _expect_url_wrapped(_at(expected, entry.where), str(HOSTS[loaded.format].url_key),
                        command, [*prefix, url])
    return (EntryOutcome(entry.name, entry.where, EntryStatus.WRAPPED, server,
                         f"serves {printable(url, 200)} through the proxy (a stdio entry "
                         f"running proxy --url) as {server}"),
            _wrap_url_edits(loaded, entry, prefix, command))


def _expect_wrapped(target: Any, command: str, args: list[str], command_array: bool) -> None:
    """Step: the expected document's entry runs the proxy with the original command."""
    target["command"] = command
    target["args"] = args
    if command_array:
        target["command"] = [command, *target.pop("args")]


def _wrapped_already(current: _ProxyArgs, server: str,
                     baseline: _Baseline) -> tuple[EntryStatus, str, str | None]:
    """An entry that runs through the proxy already: for this name and baseline (left
    alone), or otherwise (named: unwrap it first)."""
    if (current.server, current.pins, current.lock) == (server, baseline.pins, baseline.lock):
        note = "" if server in baseline.names else (
            f"; but {baseline.missing(server)}, so the proxy will refuse to start it")
        return EntryStatus.ALREADY_WRAPPED, f"runs through the proxy as {server}{note}", server
    was = printable(current.server or "no --server", 200)
    if current.pins != baseline.pins:
        was += f" with pins {printable(current.pins or 'the default', 300)}"
    if current.lock != baseline.lock:
        was += f" with lock {printable(current.lock or 'none', 300)}"
    return (EntryStatus.WRAPPED_OTHERWISE,
            f"runs through the proxy as {was} already; unwrap it first to change it",
            current.server)


@_merging
def wrap_config(
    path: str | Path,
    servers: Mapping[str, str],
    *,
    pins: str | Path | None = None,
    lock: str | Path | None = None,
    command: str = PROXY_COMMAND,
    dry_run: bool = False,
    max_bytes: int = MAX_HOST_CONFIG_BYTES,
) -> HostConfigChange:
    """Run each named stdio server of a host config file through ``histor-sign proxy``.

    ``command`` is the proxy command the entries run (the CLI gives
    :func:`proxy_executable`, an absolute path). With ``lock`` (a lock file), ``servers``
    maps entries to names locked in it and each runs ``proxy --server NAME --lock FILE``
    (trust on first use, not publisher-signed); ``pins`` does not apply then.

    ``servers`` maps an entry's name in the file to its MCP registry name
    (``{"search": "io.github.acme/search"}``); every entry of that name is wrapped (Claude
    Code's ``~/.claude.json`` can hold one per project). ``pins`` is the pin file the proxy
    is told to use (written as an absolute path) and the one checked here; None checks the
    per-user pin file and lets the proxy use its default. An entry whose registry name is
    not pinned, an HTTP server, an entry wrapped for another name and a malformed entry are
    left as they were and reported (:attr:`HostConfigChange.skipped`); an entry wrapped
    already is left alone. A name the file does not have raises :class:`UsageError` before
    anything is written; a file that cannot be read, is not JSON, has an unknown shape or
    is larger than ``max_bytes`` raises :class:`InputError`.

    Unless ``dry_run``, a changed file is written atomically after a backup of it is kept
    beside it (``FILE.histor-backup``; an existing backup is never overwritten).
    """
    if not servers:
        raise UsageError("name at least one server to wrap (NAME=REGISTRY_NAME)")
    baseline = _baseline(servers, pins, lock)
    path = Path(path)
    loaded = _load(path, max_bytes)
    _requested(loaded, servers)
    outcomes: list[EntryOutcome] = []
    edits: list[_Edit] = []
    expected = copy.deepcopy(loaded.document)
    wrapped: list[tuple[str, ...]] = []
    for entry in loaded.entries():
        if entry.name not in servers:
            continue
        done, entry_edits = _wrap_entry(loaded, entry, servers[entry.name], baseline,
                                        command, expected)
        outcomes.append(done)
        edits += entry_edits
        if done.status is EntryStatus.WRAPPED:
            wrapped.append(entry.where)
    after = _apply(loaded.text, edits)
    _check(loaded, after, expected)
    exact = True
    if edits:
        rewrapped = _load_text(loaded, after)
        undone, _ = _unwrap_text(rewrapped, None, only=set(wrapped))
        exact = undone == loaded.text
    return _finish("wrap", loaded, after, outcomes, dry_run=dry_run, exact=exact)


@_merging
def unwrap_config(
    path: str | Path,
    names: Iterable[str] | None = None,
    *,
    dry_run: bool = False,
    max_bytes: int = MAX_HOST_CONFIG_BYTES,
) -> HostConfigChange:
    """Restore the original command and args of wrapped entries (every wrapped entry, or
    those named). The command and args come from the wrapped args after ``--``; a file
    :func:`wrap_config` wrote comes back byte for byte. A named entry that is not wrapped is
    left alone (:attr:`EntryStatus.NOT_WRAPPED`); a wrapped entry with nothing after ``--``
    is reported malformed. Writes like :func:`wrap_config`."""
    path = Path(path)
    loaded = _load(path, max_bytes)
    wanted = None if names is None else set(names)
    if wanted is not None:
        _requested(loaded, wanted)
    expected = copy.deepcopy(loaded.document)
    after, outcomes = _unwrap_text(loaded, wanted, expected=expected)
    _check(loaded, after, expected)
    return _finish("unwrap", loaded, after, outcomes, dry_run=dry_run, exact=True)


def _unwrap_text(
    loaded: _Loaded, names: set[str] | None, *, only: set[tuple[str, ...]] | None = None,
    expected: Any = None,
) -> tuple[str, list[EntryOutcome]]:
    """The text with the wrapped entries named (every one for None; only those at the paths
    in ``only`` when given) unwrapped, and their outcomes; ``expected`` (a copy of the
    document) receives the same change."""
    outcomes: list[EntryOutcome] = []
    edits: list[_Edit] = []
    for entry in loaded.entries():
        if (names is not None and entry.name not in names) or (
                only is not None and entry.where not in only):
            continue
        stdio = _stdio(entry.value, HOSTS[loaded.format])
        if isinstance(stdio, tuple) or not stdio.wrapped:
            if names is not None:
                outcomes.append(EntryOutcome(entry.name, entry.where, EntryStatus.NOT_WRAPPED,
                                             None, "does not run through the proxy"))
            continue
        outcomes.append(_unwrap_entry(loaded, entry, stdio, edits, expected))
    return _apply(loaded.text, edits), outcomes


def _unwrap_entry(loaded: _Loaded, entry: _Entry, stdio: _Stdio, edits: list[_Edit],
                  expected: Any) -> EntryOutcome:
    """Step: unwrap one wrapped entry (its edits join ``edits``), or say why it cannot be."""
    assert stdio.args is not None
    proxy = _proxy_args(stdio.args)
    if _unlocated(loaded, entry):
        return EntryOutcome(entry.name, entry.where, EntryStatus.MALFORMED,
                            proxy.server, _not_located(loaded))
    if proxy.separator is None and stdio.args[-2:-1] == ["--url"]:
        return _unwrap_url(loaded, entry, proxy, edits, expected)
    undo = None if proxy.separator is None else _unwrap_edits(loaded, entry, proxy.separator)
    if undo is None or proxy.separator is None:
        return EntryOutcome(
            entry.name, entry.where, EntryStatus.MALFORMED, proxy.server,
            "runs the proxy with no command after --: nothing to restore")
    entry_edits, removes_args = undo
    edits += entry_edits
    original = stdio.args[proxy.separator + 1:]
    if expected is not None:
        _expect_restored(_at(expected, entry.where), original,
                         HOSTS[loaded.format].command_array, removes_args)
    return EntryOutcome(
        entry.name, entry.where, EntryStatus.UNWRAPPED, proxy.server,
        f"runs {printable(' '.join(original), 200)} again (was wrapped as "
        f"{printable(proxy.server or 'no --server', 200)})")


def _expect_restored(value: Any, original: list[str], command_array: bool,
                     removes_args: bool) -> None:
    """Step: the expected document's entry gets its original command back."""
    value["command"] = original[0]
    if command_array:
        value["command"] = original
    elif removes_args:
        del value["args"]
    else:
        value["args"] = original[1:]


def _load_text(loaded: _Loaded, text: str) -> _Loaded:
    """``loaded`` with another text of the same file (already checked by :func:`_check`)."""
    if loaded.arrays is not None:
        return _load_yaml(loaded.path, text.encode("utf-8"), text)
    if loaded.objects is not None:
        return _load_toml(loaded.path, text.encode("utf-8"), text)
    plain, _ = _as_json(text, _shown(loaded.path))
    document = json.loads(plain)
    return _Loaded(loaded.path, text.encode("utf-8"), text, plain, document, loaded.format,
                   loaded.jsonc, _tables(plain, (where for where, _ in loaded.containers)))


def _check(loaded: _Loaded, after: str, expected: Any) -> None:
    """The new text must parse to exactly the intended document (a guard against a wrong
    edit: nothing is written when it does not)."""
    if after == loaded.text:
        return
    source = _shown(loaded.path)
    try:
        if loaded.arrays is not None:
            document = _parse_yaml(after, source)
        elif loaded.objects is not None:
            document = _parse_toml(after, source)
        else:
            plain, _ = _as_json(after, source)
            document = parse_json(plain.encode("utf-8"), source,
                                  max_depth=MAX_HOST_CONFIG_DEPTH,
                                  max_bytes=max(len(after.encode("utf-8")), 1))
    except InputError as exc:
        raise OperationalError(f"{source}: the rewritten text does not parse ({exc.message}); "
                               "nothing was written (please report this)") from None
    if document != expected:
        raise OperationalError(f"{source}: the rewritten text does not hold the intended "
                               "change; nothing was written (please report this)")


def _finish(
    action: str, loaded: _Loaded, after: str, outcomes: list[EntryOutcome], *, dry_run: bool,
    exact: bool,
) -> HostConfigChange:
    new = after.encode("utf-8")
    change = HostConfigChange(
        action=action, path=loaded.path, format=loaded.format, before=loaded.data, after=new,
        entries=tuple(outcomes), dry_run=dry_run, written=False, backup=None,
        jsonc=loaded.jsonc, exact_unwrap=exact,
    )
    if dry_run or not change.changed:
        return change
    return dataclasses.replace(change, written=True, backup=_write(loaded, new))


# ---------------------------------------------------------------------- writing
def _write(loaded: _Loaded, new: bytes) -> Path:
    """Keep a backup of the file as read, then replace the file atomically; the backup is
    removed again when the file cannot be written."""
    path = loaded.path
    source = _shown(path)
    if not os.access(path, os.W_OK):
        raise OperationalError(f"cannot write {source}: it is read-only; it was left as it is")
    # The lock discipline: under the lock, the file must still be what the change was
    # computed from; if another run wrote it meanwhile, the change is computed again from
    # what it wrote (:func:`_merging`), so both land.
    with locked_beside(path):
        try:
            current: bytes | None = _read(path, len(loaded.data))
        except InputError:  # gone, grown, replaced by something else
            current = None
        if current != loaded.data:
            raise _ChangedMeanwhile(f"{source} changed while it was being rewritten (another "
                                    "program wrote it); it was left as it is: run again")
        backup, created = keep_backup(path, loaded.data)
        try:
            write_atomic(path, new)
        except OperationalError:
            if created:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
            raise
    return backup


def backup_path(path: Path, n: int = 0) -> Path:
    """``FILE.histor-backup``, then ``FILE.histor-backup.1`` …"""
    return path.with_name(path.name + BACKUP_SUFFIX + (f".{n}" if n else ""))


def _link_into_place(stage: str, candidate: Path, source: str) -> bool:
    """Step: the staged backup becomes ``candidate`` unless that name was taken meanwhile
    (False); the stage is removed either way."""
    try:
        try:
            os.link(stage, candidate)  # never replaces an existing file
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS or os.path.lexists(candidate):
                raise
            os.rename(stage, candidate)  # a filesystem without hard links
    except OSError as exc:
        raise OperationalError(
            f"cannot keep a backup of {source} at {_shown(candidate)}: "
            f"{exc.strerror or type(exc).__name__}; it was left as it is") from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(stage)
    return True


def keep_backup(path: str | Path, data: bytes) -> tuple[Path, bool]:
    """A backup of ``data`` beside ``path``: an existing ``FILE.histor-backup`` holding the
    same bytes is reused, else the first free name of ``FILE.histor-backup``,
    ``FILE.histor-backup.1`` … is created (``0600``, written through the atomic writer, then
    hard-linked into place, which never replaces an existing file). Returns the backup and
    whether it was created."""
    path = Path(path)
    source = _shown(path)
    _remove_dead_stages(path)
    for n in range(MAX_BACKUPS):
        candidate = backup_path(path, n)
        if os.path.lexists(candidate):
            if _holds(candidate, data):
                return candidate, False
            continue
        try:
            stage = stage_copy(candidate, data, private=True)
        except OSError as exc:
            raise OperationalError(f"cannot keep a backup of {source} (cannot write "
                                   f"{_shown(candidate)}: {exc.strerror}); it was left as it "
                                   "is") from None
        if _link_into_place(stage, candidate, source):
            return candidate, True
    raise OperationalError(f"cannot keep a backup of {source}: {MAX_BACKUPS} backups exist "
                           f"beside it ({_shown(backup_path(path))}…); remove old ones")


def _remove_dead_stages(path: Path) -> None:
    """Remove staged backups a killed run left beside ``path`` (copies of a config that may
    hold API keys): ``.FILE.histor-backup[.N].histor-PID-RANDOM.tmp``, and the
    ``.FILE.histor-backup[.N].PID-RANDOM`` of earlier versions, whose process is gone."""
    pattern = re.compile(re.escape(f".{path.name}{BACKUP_SUFFIX}")
                         + r"(?:\.\d+)?\.(?:histor-)?(\d+)-[0-9a-f]{12}(?:\.tmp)?\Z")
    try:
        entries = os.listdir(path.parent)
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry)
        if match and not process_alive(int(match.group(1))):
            with contextlib.suppress(OSError):
                os.unlink(path.parent / entry)


def _holds(candidate: Path, data: bytes) -> bool:
    try:
        if not candidate.is_file() or candidate.stat().st_size != len(data):
            return False
        with open(candidate, "rb") as fh:
            return fh.read(len(data) + 1) == data
    except OSError:
        return False


@dataclass(frozen=True)
class HostServer:
    """A server entry of a host config, as ``check --all --host-config`` reads it: for an
    entry that runs through the proxy, its whole proxy command line (``proxy_args``, every
    argument after ``proxy``, the original command after ``--`` included) — what the entry
    will actually run, for the proxy's own option parser to read; None for an entry that
    does not run through the proxy (then ``detail`` says why). ``env`` is the entry's
    environment (its string values)."""

    name: str
    where: tuple[str, ...]
    proxy_args: tuple[str, ...] | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    detail: str = ""

    @property
    def location(self) -> str:
        return location(self.where)


def host_servers(path: str | Path, *, max_bytes: int = MAX_HOST_CONFIG_BYTES) -> list[HostServer]:
    """Every server entry of a host config file, in file order. A wrapped entry gives its
    proxy command line, unread here: which options it runs with is the proxy's own parser's
    to say, so no second list of its flags is kept in this module. Any other entry has
    ``proxy_args`` None and a ``detail`` (not wrapped, an HTTP server, malformed): only
    ``wrap`` says which registry name a plain entry is, so none is guessed here."""
    loaded = _load(Path(path), max_bytes)
    found: list[HostServer] = []
    for entry in loaded.entries():
        stdio = _stdio(entry.value, HOSTS[loaded.format])
        if isinstance(stdio, tuple):
            found.append(HostServer(entry.name, entry.where, detail=stdio[1]))
            continue
        if not stdio.wrapped:
            found.append(HostServer(entry.name, entry.where, detail="not wrapped: "
                                    "'histor-sign wrap' names its registry name"))
            continue
        assert stdio.args is not None
        env = entry.value.get(HOSTS[loaded.format].env_key)
        env_map = ({k: v for k, v in env.items() if isinstance(v, str)}
                   if isinstance(env, dict) else {})
        found.append(HostServer(entry.name, entry.where, tuple(stdio.args[1:]), env_map))
    return found
