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
import functools
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from histor_sign._atomic import locked_beside, process_alive, stage_copy, write_atomic
from histor_sign._escape import printable
from histor_sign.canonical import parse_json, read_bytes
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
    """Which host's file it is, told from its shape and name."""

    CLAUDE_DESKTOP = "claude-desktop"
    VSCODE = "vscode"
    CURSOR = "cursor"
    CLAUDE_CODE_PROJECT = "claude-code-project"
    CLAUDE_CODE_USER = "claude-code-user"
    #: ``{"mcpServers": …}`` under a name none of the hosts uses.
    MCP_SERVERS = "mcp-servers"

    @property
    def label(self) -> str:
        return _TITLES[self]


_TITLES = {
    HostFormat.CLAUDE_DESKTOP: "Claude Desktop config (claude_desktop_config.json: mcpServers)",
    HostFormat.VSCODE: "VS Code MCP config (mcp.json: servers)",
    HostFormat.CURSOR: "Cursor MCP config (.cursor/mcp.json: mcpServers)",
    HostFormat.CLAUDE_CODE_PROJECT: "Claude Code project config (.mcp.json: mcpServers)",
    HostFormat.CLAUDE_CODE_USER: "Claude Code user config (~/.claude.json: mcpServers and "
    "projects.<path>.mcpServers)",
    HostFormat.MCP_SERVERS: "an mcpServers config (the Claude Desktop, Cursor and Claude Code "
    "layout)",
}


class EntryStatus(StrEnum):
    """What happened to one server entry."""

    WRAPPED = "wrapped"
    ALREADY_WRAPPED = "already-wrapped"
    UNWRAPPED = "unwrapped"
    #: unwrap: the entry does not run through the proxy; nothing to do.
    NOT_WRAPPED = "not-wrapped"
    NOT_PINNED = "not-pinned"
    #: An HTTP (url) server: there is no stdio command to put behind the proxy.
    REMOTE = "remote"
    #: Wrapped already, for another registry name or pin file.
    WRAPPED_OTHERWISE = "wrapped-otherwise"
    MALFORMED = "malformed"

    @property
    def skipped(self) -> bool:
        """A requested entry that was left as it was for a reason the user must act on."""
        return self in (EntryStatus.NOT_PINNED, EntryStatus.REMOTE,
                        EntryStatus.WRAPPED_OTHERWISE, EntryStatus.MALFORMED)


_PHRASES = {
    EntryStatus.WRAPPED: "wrapped",
    EntryStatus.ALREADY_WRAPPED: "already wrapped",
    EntryStatus.UNWRAPPED: "unwrapped",
    EntryStatus.NOT_WRAPPED: "left alone",
    EntryStatus.NOT_PINNED: "not wrapped",
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
        """``mcpServers.search``, ``projects["/home/me/app"].mcpServers.search`` (escaped)."""
        return location(self.where)

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

    def entries(self) -> Iterator[_Entry]:
        for where, obj in self.containers:
            values = _at(self.document, where)
            for member in obj.members:
                yield _Entry(member.key, (*where, member.key), member, values[member.key])


def _at(document: Any, where: Sequence[str]) -> Any:
    for part in where:
        document = document[part]
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
    # The bytes are judged as parse_json would judge them before comments are looked for.
    if data.startswith(b"\xef\xbb\xbf"):
        raise InputError(f"{source}: starts with a UTF-8 byte order mark; JSON must not")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: invalid UTF-8 at byte {exc.start}") from None
    plain, comment_line = _as_json(text, source)
    document = parse_json(plain.encode("utf-8"), source, max_depth=MAX_HOST_CONFIG_DEPTH,
                          max_bytes=max_bytes)
    host, paths = _detect(document, path, source)
    if comment_line is not None and host is not HostFormat.VSCODE:
        raise InputError(
            f"{source}: not valid JSON: a comment or trailing comma at line {comment_line}; "
            f"a {host.label} is strict JSON (only VS Code's mcp.json may have comments)"
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

    def table(where: tuple[str, ...]) -> tuple[str, ...]:
        if not isinstance(_at(document, where), dict):
            raise InputError(f"{source}: unknown shape: {location(where)} is not a JSON object")
        return where

    name, parent = path.name, path.parent.name
    if "servers" in document and "mcpServers" in document:
        raise InputError(f"{source}: unknown shape: it has both \"servers\" (VS Code) and "
                         "\"mcpServers\" (Claude Desktop, Cursor, Claude Code); which host "
                         "reads it is unclear")
    if "servers" in document:
        return HostFormat.VSCODE, [table(("servers",))]
    projects = document.get("projects")
    project_tables = [
        ("projects", key, "mcpServers") for key, value in (
            projects.items() if isinstance(projects, dict) else ())
        if isinstance(value, dict) and "mcpServers" in value
    ]
    if name == ".claude.json" or project_tables:
        paths = [("mcpServers",)] if "mcpServers" in document else []
        return HostFormat.CLAUDE_CODE_USER, [table(p) for p in [*paths, *project_tables]]
    by_name = {
        "claude_desktop_config.json": HostFormat.CLAUDE_DESKTOP,
        ".mcp.json": HostFormat.CLAUDE_CODE_PROJECT,
    }.get(name)
    if by_name is None and name == "mcp.json":
        by_name = HostFormat.CURSOR if parent == ".cursor" else HostFormat.VSCODE
    if "mcpServers" in document:
        host = by_name if by_name not in (None, HostFormat.VSCODE) else HostFormat.MCP_SERVERS
        return host, [table(("mcpServers",))]
    if by_name is not None:  # the host's file, with no server table yet
        return by_name, []
    mcp = document.get("mcp")
    if isinstance(mcp, dict) and "servers" in mcp:
        raise InputError(f"{source}: a VS Code settings.json \"mcp\" section is not "
                         "supported; VS Code keeps MCP servers in mcp.json (MCP: Open User "
                         "Configuration)")
    raise InputError(f"{source}: unknown shape: {expected}")


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


def _stdio(value: Any) -> _Stdio | tuple[EntryStatus, str]:
    """The entry's command and args, or why it has none to wrap."""
    if not isinstance(value, dict):
        return EntryStatus.MALFORMED, "not a JSON object"
    kind = value.get("type")
    if "command" not in value:
        if "url" in value or kind in _REMOTE_TYPES:
            url = value.get("url")
            shown = f" {printable(url, 200)}" if isinstance(url, str) else ""
            return (EntryStatus.REMOTE, f"an HTTP server (url{shown}): only stdio servers "
                    "can be wrapped yet")
        return EntryStatus.MALFORMED, "has no command"
    if kind is not None and kind != "stdio":
        return (EntryStatus.MALFORMED,
                f"type {printable(json.dumps(kind, ensure_ascii=False), 80)} is not stdio")
    command = value["command"]
    if not isinstance(command, str) or not command:
        return EntryStatus.MALFORMED, "command is not a non-empty string"
    args = value.get("args")
    if "args" in value and (not isinstance(args, list)
                            or not all(isinstance(a, str) for a in args)):
        return EntryStatus.MALFORMED, "args is not an array of strings"
    return _Stdio(command, args)


@dataclass(frozen=True)
class _ProxyArgs:
    server: str | None
    pins: str | None
    separator: int | None  # index of "--" in args


def _proxy_args(args: Sequence[str]) -> _ProxyArgs:
    server = pins = None
    i = 1
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return _ProxyArgs(server, pins, i)
        for flag in ("--server", "--pins"):
            value = None
            if arg == flag and i + 1 < len(args):
                value = args[i + 1]
                i += 1
            elif arg.startswith(flag + "="):
                value = arg[len(flag) + 1:]
            if value is not None:
                if flag == "--server":
                    server = value
                else:
                    pins = value
        i += 1
    return _ProxyArgs(server, pins, None)


def proxy_arguments(server: str, pins: str | None) -> list[str]:
    """The arguments a wrapped entry runs before the original command."""
    return [PROXY_SUBCOMMAND, "--server", server, *(["--pins", pins] if pins else []), "--"]


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
    return json.dumps(value, ensure_ascii=False)


def _inserted_array(items: Sequence[str]) -> str:
    """How an ``args`` member wrap adds (the entry had none) spells its array."""
    return "[" + ", ".join(items) + "]"


def _member_space(loaded: _Loaded, command: _Member) -> str:
    return _space_before(loaded.text, command.key_start) or " "


def _wrap_edits(loaded: _Loaded, entry: _Entry, prefix: Sequence[str]) -> list[_Edit]:
    text, plain = loaded.text, loaded.plain
    obj = _object(plain, entry.member.value_start)
    command = obj.get("command")
    assert command is not None
    original = text[command.value_start:command.value_end]
    items = [*map(_literal, prefix), original]
    edits: list[_Edit] = [(command.value_start, command.value_end, _literal(PROXY_COMMAND))]
    args = obj.get("args")
    if args is None:
        colon = plain[command.key_end:command.value_start]
        member = f',{_member_space(loaded, command)}"args"{colon}{_inserted_array(items)}'
        edits.append((command.value_end, command.value_end, member))
        return edits
    array = _array(plain, args.value_start)
    if array.elements:
        first = array.elements[0][0]
        lead = text[array.start + 1:first]
        joiner = _joiner(text, array, lead)
        new = "[" + lead + joiner.join(items) + joiner + text[first:array.end]
    else:
        inside = text[array.start + 1:array.end - 1]
        new = "[" + ("," if inside == "" else ", ").join(items) + inside + "]"
    edits.append((array.start, array.end, new))
    return edits


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
    text, plain = loaded.text, loaded.plain
    obj = _object(plain, entry.member.value_start)
    command, args = obj.get("command"), obj.get("args")
    assert command is not None and args is not None
    array = _array(plain, args.value_start)
    if separator + 1 >= len(array.elements):
        return None
    cmd_start, cmd_end = array.elements[separator + 1]
    edits: list[_Edit] = [(command.value_start, command.value_end, text[cmd_start:cmd_end])]
    last = separator + 2 == len(array.elements)
    colon = plain[command.key_end:command.value_start]
    inserted = (
        last and args.key_start > command.value_end
        and text[command.value_end:args.key_start] == "," + _member_space(loaded, command)
        and text[args.key_start:args.key_end] == '"args"'
        and text[args.key_end:args.value_start] == colon
        and text[array.start:array.end] == _inserted_array(
            [text[s:e] for s, e in array.elements])
    )
    if inserted:
        edits.append((command.value_end, args.value_end, ""))
        return edits, True
    if not last:
        lead = text[array.start + 1:array.elements[0][0]]
        new = "[" + lead + text[array.elements[separator + 2][0]:array.end]
    else:
        rest = text[cmd_end:array.end]
        comma = _skip_ws(text, cmd_end)
        if text[comma] == ",":  # a trailing comma (JSON with comments) after the command
            rest = text[cmd_end:comma] + text[comma + 1:array.end]
        new = "[" + rest
    edits.append((array.start, array.end, new))
    return edits, False


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


@_merging
def wrap_config(
    path: str | Path,
    servers: Mapping[str, str],
    *,
    pins: str | Path | None = None,
    dry_run: bool = False,
    max_bytes: int = MAX_HOST_CONFIG_BYTES,
) -> HostConfigChange:
    """Run each named stdio server of a host config file through ``histor-sign proxy``.

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
    from histor_sign.pins import PinStore

    if not servers:
        raise UsageError("name at least one server to wrap (NAME=REGISTRY_NAME)")
    for name, server in servers.items():
        try:
            validate_server_name(server)
        except InputError as exc:
            raise UsageError(f"server {printable(name, 80)}: {printable(exc.message)}") from None
    path = Path(path)
    loaded = _load(path, max_bytes)
    _requested(loaded, servers)
    pins_arg = os.path.abspath(os.path.expanduser(str(pins))) if pins is not None else None
    store = PinStore.load(pins_arg)
    outcomes: list[EntryOutcome] = []
    edits: list[_Edit] = []
    expected = copy.deepcopy(loaded.document)
    wrapped: list[tuple[str, ...]] = []
    for entry in loaded.entries():
        if entry.name not in servers:
            continue
        server = servers[entry.name]

        def outcome(status: EntryStatus, detail: str, entry: _Entry = entry,
                    server: str | None = server) -> None:
            outcomes.append(EntryOutcome(entry.name, entry.where, status, server, detail))

        stdio = _stdio(entry.value)
        if isinstance(stdio, tuple):
            outcome(*stdio)
            continue
        if stdio.wrapped:
            assert stdio.args is not None
            current = _proxy_args(stdio.args)
            if current.server == server and current.pins == pins_arg:
                note = "" if server in store else (
                    f"; but {server} is not pinned in {_shown(store.path)}, so the proxy will "
                    "refuse to start it")
                outcome(EntryStatus.ALREADY_WRAPPED, f"runs through the proxy as {server}{note}")
            else:
                was = printable(current.server or "no --server", 200)
                if current.pins != pins_arg:
                    was += f" with pins {printable(current.pins or 'the default', 300)}"
                outcome(EntryStatus.WRAPPED_OTHERWISE,
                        f"runs through the proxy as {was} already; unwrap it first to change it",
                        server=current.server)
            continue
        if server not in store:
            outcome(EntryStatus.NOT_PINNED, f"{server} is not pinned in {_shown(store.path)}")
            continue
        prefix = proxy_arguments(server, pins_arg)
        edits += _wrap_edits(loaded, entry, prefix)
        target = _at(expected, entry.where)
        target["command"] = PROXY_COMMAND
        target["args"] = [*prefix, stdio.command, *(stdio.args or [])]
        shown = printable(" ".join([stdio.command, *(stdio.args or [])]), 200)
        outcome(EntryStatus.WRAPPED, f"runs {shown} through the proxy as {server}")
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
        stdio = _stdio(entry.value)
        if isinstance(stdio, tuple) or not stdio.wrapped:
            if names is not None:
                outcomes.append(EntryOutcome(entry.name, entry.where, EntryStatus.NOT_WRAPPED,
                                             None, "does not run through the proxy"))
            continue
        assert stdio.args is not None
        proxy = _proxy_args(stdio.args)
        undo = None if proxy.separator is None else _unwrap_edits(loaded, entry, proxy.separator)
        if undo is None or proxy.separator is None:
            outcomes.append(EntryOutcome(
                entry.name, entry.where, EntryStatus.MALFORMED, proxy.server,
                "runs the proxy with no command after --: nothing to restore"))
            continue
        entry_edits, removes_args = undo
        edits += entry_edits
        original = stdio.args[proxy.separator + 1:]
        if expected is not None:
            value = _at(expected, entry.where)
            value["command"] = original[0]
            if removes_args:
                del value["args"]
            else:
                value["args"] = original[1:]
        outcomes.append(EntryOutcome(
            entry.name, entry.where, EntryStatus.UNWRAPPED, proxy.server,
            f"runs {printable(' '.join(original), 200)} again (was wrapped as "
            f"{printable(proxy.server or 'no --server', 200)})"))
    return _apply(loaded.text, edits), outcomes


def _load_text(loaded: _Loaded, text: str) -> _Loaded:
    """``loaded`` with another text of the same file (already checked by :func:`_check`)."""
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
    plain, _ = _as_json(after, source)
    try:
        document = parse_json(plain.encode("utf-8"), source, max_depth=MAX_HOST_CONFIG_DEPTH,
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
        try:
            try:
                os.link(stage, candidate)  # never replaces an existing file
            except FileExistsError:
                continue
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
    """A stdio server entry of a host config, as ``check --all --host-config`` reads it:
    the registry name it runs through the proxy as (None for an entry not wrapped, or not
    a stdio server: then ``detail`` says why), and the original command to fetch it with."""

    name: str
    where: tuple[str, ...]
    server: str | None
    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    detail: str = ""

    @property
    def location(self) -> str:
        return location(self.where)


def host_servers(path: str | Path, *, max_bytes: int = MAX_HOST_CONFIG_BYTES) -> list[HostServer]:
    """Every server entry of a host config file, in file order. A wrapped stdio entry gives
    its registry name (``--server``) and the original command after ``--``; any other entry
    has ``server`` None and a ``detail`` (not wrapped, an HTTP server, malformed): only
    ``wrap`` says which registry name a plain entry is, so none is guessed here."""
    loaded = _load(Path(path), max_bytes)
    found: list[HostServer] = []
    for entry in loaded.entries():
        stdio = _stdio(entry.value)
        if isinstance(stdio, tuple):
            found.append(HostServer(entry.name, entry.where, None, detail=stdio[1]))
            continue
        if not stdio.wrapped:
            found.append(HostServer(entry.name, entry.where, None, detail="not wrapped: "
                                    "'histor-sign wrap' names its registry name"))
            continue
        assert stdio.args is not None
        proxy = _proxy_args(stdio.args)
        if proxy.server is None or proxy.separator is None:
            found.append(HostServer(entry.name, entry.where, None,
                                    detail="runs through the proxy without --server or --"))
            continue
        env = entry.value.get("env") if isinstance(entry.value, dict) else None
        env_map = ({k: v for k, v in env.items() if isinstance(v, str)}
                   if isinstance(env, dict) else {})
        found.append(HostServer(entry.name, entry.where, proxy.server,
                                tuple(stdio.args[proxy.separator + 1:]), env_map))
    return found
