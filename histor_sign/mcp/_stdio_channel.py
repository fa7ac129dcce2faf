"""stdio transport: the server is our subprocess, one JSON-RPC message per line.

Hygiene the spec asks for and real servers need: stderr is drained concurrently (a full
pipe would deadlock the server), notifications and server requests met while waiting are
handled, a line that is not JSON at all (a start-up banner) or a JSON object with no
JSON-RPC member (a log record) is skipped — counted, bounded, never recorded — as the
official SDKs do, and shutdown is close stdin → wait → SIGTERM →
wait → SIGKILL, sent to the server's own process group so helpers it spawned go too.
:meth:`aclose` runs on every exit path, including cancellation (Ctrl-C), and falls back to
a synchronous SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import signal
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from histor_sign._limits import MAX_SKIPPED_STDOUT_BYTES, MAX_SKIPPED_STDOUT_LINES
from histor_sign.canonical import is_json_syntax
from histor_sign.errors import FetchError, InputError, LimitExceeded
from histor_sign.mcp._jsonrpc import (
    Channel,
    RequestTimeout,
    ServerGone,
    clip,
    encode,
    is_foreign_object,
    notification,
    reply_to_server_request,
)

_CHUNK = 1 << 16
#: The end of a longer stderr line is kept (a line is never held whole).
_STDERR_LINE_BYTES = 4096


class _Skipped:
    """Lines of one kind skipped on the server's stdout: how many, their bytes, and the
    first (clipped and escaped when said)."""

    __slots__ = ("bytes", "first", "lines", "plural", "singular")

    def __init__(self, singular: str, plural: str) -> None:
        self.singular, self.plural = singular, plural
        self.lines = self.bytes = 0
        self.first: str | None = None

    def add(self, line: bytes) -> None:
        self.lines += 1
        self.bytes += len(line)
        if self.first is None:
            self.first = line.decode("utf-8", "replace")

    def _counted(self) -> str:
        return f"{self.lines} {self.singular if self.lines == 1 else self.plural}"

    def note(self) -> str:
        """What an error adds (empty when nothing was skipped)."""
        if not self.lines:
            return ""
        return (f"; {self._counted()} on its standard output "
                f"{'was' if self.lines == 1 else 'were'} skipped, the first: "
                f"{clip(self.first or '', 80)!r}")

    def warning(self) -> str:
        return (f"skipped {self._counted()} ({self.bytes} bytes) on the MCP server's standard "
                f"output, the first: {clip(self.first or '', 80)!r}; only JSON-RPC messages "
                "are read or recorded")


class StdioChannel(Channel):
    """A server started as our subprocess; no per-session state, so the era hooks are no-ops."""

    #: A handshake-era server may ignore ``server/discover`` and stay silent.
    unanswered_probe_means_legacy = True

    def __init__(
        self,
        argv: tuple[str, ...],
        *,
        max_bytes: int,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        shutdown_grace: float = 2.0,
    ) -> None:
        super().__init__(max_bytes)
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.shutdown_grace = shutdown_grace
        self.proc: asyncio.subprocess.Process | None = None
        self._buf = bytearray()
        self._eof = False
        self._line_no = 0
        self._stderr_tail: deque[str] = deque(maxlen=5)
        #: Called with every line the server writes on its stderr (untrusted text: escape
        #: it before showing it); None keeps only the tail quoted in errors.
        self.on_stderr: Callable[[str], None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        #: What was skipped on stdout: text that is not JSON (a banner), and JSON objects
        #: that are no JSON-RPC message (log records).
        self._text = _Skipped("non-JSON line", "non-JSON lines")
        self._records = _Skipped("JSON object with no JSON-RPC member",
                                 "JSON objects with no JSON-RPC member")

    async def start(self) -> None:
        argv = self.argv
        try:
            if _KEEPER:
                # The keeper execs the server itself, so spawn errors are found here first.
                _check_command(argv[0], self.cwd, self.env)
                # -S: the keeper is stdlib only, so no site-packages (and none of their
                # .pth start-up hooks) on a path every server start waits on.
                argv = (sys.executable, "-I", "-S", "-c", _keeper_source(), str(os.getpid()),
                        *argv)
            self.proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise FetchError(
                f"cannot start the MCP server: no such command {self.argv[0]!r}"
            ) from None
        except PermissionError:
            raise FetchError(
                f"cannot start the MCP server: {self.argv[0]!r} is not executable"
            ) from None
        except OSError as exc:
            raise FetchError(f"cannot start the MCP server: {exc.strerror or exc}") from None
        self._stderr_task = asyncio.create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        pending = b""
        while True:
            chunk = await self.proc.stderr.read(_CHUNK)
            if not chunk:
                break
            pending = (pending + chunk)[-_STDERR_LINE_BYTES:]
            *lines, pending = pending.split(b"\n")
            for line in lines:
                self._stderr_line(line)
        self._stderr_line(pending)

    def _stderr_line(self, raw: bytes) -> None:
        if not raw.strip():
            return
        line = raw.rstrip(b"\r").decode("utf-8", "replace")
        self._stderr_tail.append(line)
        if self.on_stderr is not None:
            self.on_stderr(line)

    # --- reading -------------------------------------------------------------------

    async def _read_line(self) -> bytes | None:
        """Next non-empty stdout line, or None at end of output."""
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            idx = self._buf.find(b"\n")
            if idx >= 0:
                line = bytes(self._buf[:idx])
                del self._buf[: idx + 1]
                self._line_no += 1
                if line.strip():
                    return line.rstrip(b"\r")
                continue
            if self._eof:
                if self._buf.strip():
                    line = bytes(self._buf)
                    self._buf.clear()
                    self._line_no += 1
                    return line
                return None
            chunk = await self.proc.stdout.read(_CHUNK)
            if not chunk:
                self._eof = True
                continue
            self.count_bytes(len(chunk))
            self._buf += chunk

    async def _gone(self, method: str) -> ServerGone:
        assert self.proc is not None
        code: int | None = None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(min(self.shutdown_grace, 1.0)):
                code = await self.proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError, Exception):
                async with asyncio.timeout(0.2):
                    await asyncio.shield(self._stderr_task)
        how = exit_how(code)
        tail = _stderr_tail(list(self._stderr_tail))
        return ServerGone(f"the MCP server {how} before answering {method}{tail}"
                          f"{self._skipped_note()}")

    # --- non-JSON output (a start-up banner) -------------------------------------------

    def _skip(self, line: bytes, source: str, error: InputError | None) -> None:
        """Skip ``line`` if the bounds allow, else raise. ``error`` is why the strict reader
        refused it; such a line is skipped only if it is not JSON at all (not UTF-8, or not
        JSON by the grammar). ``None`` means it parsed as a JSON object sharing no member
        name with a JSON-RPC message (:func:`is_foreign_object`: a log record).

        Only parsed JSON-RPC messages are ever used or recorded, so skipping what is not
        one cannot change what a snapshot holds. JSON that breaks I-JSON (duplicate keys,
        numbers out of range, a byte order mark) is never skipped: that is a message, and a
        hostile one; nor is JSON that claims to be a message and is malformed.
        """
        if error is None:
            self._records.add(line)
            reason = f"{source}: a JSON object that is not a JSON-RPC message"
        else:
            self._refuse_json(line, error)
            self._text.add(line)
            reason = error.message
        kinds = (self._text, self._records)
        if (sum(k.lines for k in kinds) > MAX_SKIPPED_STDOUT_LINES
                or sum(k.bytes for k in kinds) > MAX_SKIPPED_STDOUT_BYTES):
            raise FetchError(
                f"{reason}; the server wrote more non-JSON output on its standard "
                f"output than is skipped (at most {MAX_SKIPPED_STDOUT_LINES} lines and "
                f"{MAX_SKIPPED_STDOUT_BYTES} bytes: a start-up banner is skipped, a stream "
                "that is not JSON-RPC is not)"
            )

    @staticmethod
    def _refuse_json(line: bytes, error: InputError) -> None:
        """Raise ``error`` unless ``line`` is not JSON at all (only such text is a banner)."""
        if isinstance(error, LimitExceeded):
            raise error
        try:
            text: str | None = line.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and is_json_syntax(text.lstrip("\ufeff")):
            raise error

    def _skipped_note(self) -> str:
        return self._text.note() + self._records.note()

    def warnings(self) -> list[str]:
        return [k.warning() for k in (self._text, self._records) if k.lines]

    def timed_out(self, method: str, timeout: float) -> RequestTimeout:
        base = super().timed_out(method, timeout)
        note = self._skipped_note()
        return RequestTimeout(base.message + note, param="timeout") if note else base

    async def _write(self, message: dict[str, Any], method: str) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(encode(message) + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise await self._gone(method) from None

    # --- Channel ----------------------------------------------------------------------

    async def _request(
        self, message: dict[str, Any], method: str, headers: dict[str, str] | None
    ) -> dict[str, Any]:
        await self._write(message, method)
        msg_id = message["id"]
        while True:
            line = await self._read_line()
            if line is None:
                raise await self._gone(method)
            source = f"server stdout line {self._line_no}"
            try:
                message = self.parse(line, source)
            except InputError as error:
                self._skip(line, source, error)
                continue
            if is_foreign_object(message):
                self._skip(line, source, None)
                continue
            kind = self.classify(message, source)
            if kind == "notification":
                self.on_notification(message)
            elif kind == "request":
                await self._write(reply_to_server_request(message), method)
            else:
                result = self.match_response(message, msg_id, method, source)
                if result is not None:
                    return result

    async def notify(self, method: str) -> None:
        await self._write(notification(method), method)

    async def aclose(self) -> None:
        proc = self.proc
        if proc is None:
            return
        try:
            await self._shutdown(proc)
        except BaseException:
            # Cancelled (Ctrl-C) or failed mid-shutdown: kill the group, then still reap the
            # server while the loop runs, or the loop closes with a live child and asyncio
            # prints warnings and finalizer tracebacks after our one error line.
            self._kill_group(signal.SIGKILL)
            await self._reap(proc)
            raise
        finally:
            if self._stderr_task is not None and not self._stderr_task.done():
                self._stderr_task.cancel()

    async def _shutdown(self, proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is None and proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
            if not await self._wait(proc):
                self._kill_group(signal.SIGTERM)
                if not await self._wait(proc):
                    self._kill_group(signal.SIGKILL)
                    await proc.wait()
        # The server is gone; take down anything it left in its process group.
        self._kill_group(signal.SIGKILL)
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError, Exception):
                async with asyncio.timeout(0.5):
                    await self._stderr_task
        # Close the pipes now, while the loop runs (unread stdout would otherwise make the
        # transport's finalizer complain after the loop closed).
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()

    async def _reap(self, proc: asyncio.subprocess.Process) -> None:
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(1.0):
                await proc.wait()
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(proc.pid, signal.SIGKILL)
        transport = getattr(proc, "_transport", None)
        if transport is not None:
            transport.close()

    async def _wait(self, proc: asyncio.subprocess.Process) -> bool:
        try:
            async with asyncio.timeout(self.shutdown_grace):
                await proc.wait()
            return True
        except TimeoutError:
            return False

    def _kill_group(self, sig: int) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if _KEEPER:
                if self.proc.returncode is not None:
                    return  # the keeper swept everything before it exited
                # SIGTERM is forwarded to the server's group; SIGHUP makes the keeper kill
                # every descendant (setsid ones too) and exit. SIGKILL would stop only it.
                os.kill(self.proc.pid, signal.SIGHUP if sig == signal.SIGKILL else sig)
            else:
                os.killpg(self.proc.pid, sig)


def exit_how(code: int | None) -> str:
    """How a server process ended, for a message: ``exited with code N``, ``was killed by
    signal 9 (SIGKILL)`` (a negative return code), or ``closed its standard output``."""
    if code is None:
        return "closed its standard output"
    if code < 0:
        try:
            name = f" ({signal.Signals(-code).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {-code}{name}"
    return f"exited with code {code}"


#: Linux: the server runs under a keeper (``_reaper``): a subreaper with PR_SET_PDEATHSIG.
_KEEPER = sys.platform == "linux"


#: Lines of a dead server's stderr quoted in the error (a Node crash ends with its version
#: line; the cause is above it).
STDERR_TAIL_LINES = 5


def _stderr_tail(lines: list[str]) -> str:
    """`` (last stderr line: X)``, or `` (last N stderr lines: A | B | …)``, each clipped and
    inert; empty without stderr."""
    last = [clip(line, 160) for line in lines[-STDERR_TAIL_LINES:]]
    if not last:
        return ""
    if len(last) == 1:
        return f" (last stderr line: {last[0]})"
    return f" (last {len(last)} stderr lines: {' | '.join(last)})"


@functools.cache
def _keeper_source() -> str:
    return (Path(__file__).with_name("_reaper.py")).read_text(encoding="utf-8")


def _check_command(command: str, cwd: str | None, env: dict[str, str] | None) -> None:
    """Raise what exec would: FileNotFoundError or PermissionError for ``command``."""
    if os.sep in command:
        path: str | None = os.path.join(cwd or "", command)
    else:
        search = (env if env is not None else os.environ).get("PATH", os.defpath)
        path = shutil.which(command, mode=os.F_OK, path=search)
    if path is None or not os.path.exists(path):
        raise FileNotFoundError(command)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise PermissionError(command)

