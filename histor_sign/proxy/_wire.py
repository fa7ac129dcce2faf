"""The proxy's two wires: line-framed JSON-RPC to the host, and the upstream server.

Every message is bounded (``max_message_bytes``) and parsed with the strict I-JSON reader;
anything else ends the session (:class:`WireError`), never half-forwarded. The stdio
upstream is started by the same keeper ``fetch`` uses (:class:`StdioChannel`: its own
process group, a subreaper, no signing credentials in its environment, refused where they
are readable); the Streamable HTTP upstream posts each message and reads a JSON or SSE
answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from histor_sign.canonical import parse_json
from histor_sign.errors import FetchError, HistorError, InputError, LimitExceeded
from histor_sign.mcp._http_channel import AuthError, HttpStatusError, SessionExpired
from histor_sign.mcp._jsonrpc import RpcError, clip, encode, is_foreign_object

if TYPE_CHECKING:
    from histor_sign.mcp._http_channel import HttpChannel
    from histor_sign.mcp._sse import SSEParser
    from histor_sign.mcp._stdio_channel import StdioChannel
    from histor_sign.mcp._target import Target

_CHUNK = 1 << 16
#: Times the optional GET stream is reopened in a row without delivering an event.
MAX_STREAM_REOPENS = 5


class WireError(FetchError):
    """A peer sent what the proxy will not forward (not JSON-RPC) or vanished."""


#: No id could be found in an oversized message.
NO_ID: Any = object()
#: Bytes of an oversized message kept at each end to find its id (the rest is dropped).
_PEEK = 4096
_ID_VALUE = rb'(-?\d+|"(?:[^"\\]|\\.)*")'
_HEAD_ID = re.compile(rb'\A\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID_VALUE)
_TAIL_ID = re.compile(rb'[,{]\s*"id"\s*:\s*' + _ID_VALUE + rb'\s*\}\s*\Z')


class Oversized(WireError):
    """One message over ``max_message_bytes``: it was read to its end and dropped, and
    the session goes on. ``ident`` is its JSON-RPC id when one could be found (or
    :data:`NO_ID`), so the request it answers, or that it is, fails alone."""

    def __init__(self, message: str, ident: Any = NO_ID) -> None:
        super().__init__(message)
        self.ident = ident


def peek_id(head: bytes, tail: bytes) -> Any:
    """The top-level ``id`` of a JSON-RPC message known only by its ends, or :data:`NO_ID`.

    Sound for valid JSON: an ``"id"`` member right after the opening brace (after
    ``"jsonrpc":"2.0"`` at most — how the Python SDK writes) or right before the closing
    one (how the TypeScript SDK writes) is a member of the outermost object; inside a
    string its quotes would be escaped. Anything else is not guessed at."""
    import json

    match = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if match is None:
        return NO_ID
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return NO_ID
    return value if isinstance(value, (int, str)) and not isinstance(value, bool) else NO_ID


class ByteSource(Protocol):
    async def read(self, n: int) -> bytes: ...


class ByteSink(Protocol):
    def write(self, data: bytes) -> Any: ...

    async def drain(self) -> None: ...


#: Decides whether a line may be skipped: returns to skip it, raises (a
#: :class:`HistorError`) to end the session. ``(line, where, error)``: ``error`` is why the
#: strict reader refused the line, or None for a JSON object with no JSON-RPC member.
Skipper = Callable[[bytes, str, InputError | None], None]


class LineReader:
    """Newline-framed messages from a byte stream, each at most ``limit`` bytes.

    ``skip`` (the stdio upstream's: :meth:`StdioChannel._skip`, the fetch's own bounded
    rule) lets a line that is not JSON at all — a start-up banner — or a JSON object with no
    JSON-RPC member — a log record — be passed over; without it every line must be one
    strict JSON-RPC message.
    """

    def __init__(self, source: ByteSource, limit: int, peer: str,
                 skip: Skipper | None = None) -> None:
        self.source = source
        self.limit = limit
        self.peer = peer
        self.skip = skip
        self._buf = bytearray()
        self._eof = False
        self.count = 0

    async def message(self) -> dict[str, Any] | None:
        """The next JSON-RPC message (a JSON object with ``jsonrpc: "2.0"``), None at EOF."""
        while True:
            line = await self._line()
            if line is None:
                return None
            self.count += 1
            where = f"{self.peer} {'line' if self.skip else 'message'} {self.count}"
            try:
                value = parse_json(line, where, max_bytes=self.limit)
            except InputError as exc:
                self._skip_unparsed(line, where, exc)
                continue
            except HistorError as exc:
                raise WireError(f"{where} is not strict JSON: {exc.message}") from None
            if self.skip is not None and is_foreign_object(value):
                self._skip_foreign(line, where)
                continue
            return check_message(value, where)

    def _skip_unparsed(self, line: bytes, where: str, exc: InputError) -> None:
        """Step: a line that is not JSON goes to ``skip`` if there is one, else fails."""
        if self.skip is None:
            raise WireError(f"{where} is not strict JSON: {exc.message}") from None
        try:
            self.skip(line, where, exc)
        except HistorError as refused:
            raise WireError(f"{where} is not strict JSON: {refused.message}") from None

    def _skip_foreign(self, line: bytes, where: str) -> None:
        """Step: a JSON object that is no JSON-RPC message is handed to ``skip``."""
        assert self.skip is not None
        try:
            self.skip(line, where, None)
        except HistorError as refused:
            raise WireError(refused.message) from None

    def buffered(self) -> list[dict[str, Any]]:
        """The complete messages already read from the source and not yet taken (no I/O,
        anything unreadable skipped): a session that fails answers the requests among
        them too."""
        found: list[dict[str, Any]] = []
        while (idx := self._buf.find(b"\n")) >= 0:
            line = bytes(self._buf[:idx]).rstrip(b"\r")
            del self._buf[: idx + 1]
            if not line.strip() or idx > self.limit:
                continue
            try:
                found.append(check_message(parse_json(line, self.peer, max_bytes=self.limit),
                                           self.peer))
            except HistorError:
                continue
        return found

    async def _line(self) -> bytes | None:
        while True:
            idx = self._buf.find(b"\n")
            if idx > self.limit:
                line = bytes(self._buf[:idx]).rstrip(b"\r")
                del self._buf[: idx + 1]
                raise self._oversized(line[:_PEEK], line[-_PEEK:], len(line))
            if idx >= 0:
                line = bytes(self._buf[:idx]).rstrip(b"\r")
                del self._buf[: idx + 1]
                if line.strip():
                    return line
                continue
            if len(self._buf) > self.limit:
                await self._drop_rest()
            if self._eof:
                if self._buf.strip():
                    raise WireError(f"{self.peer} closed its stream mid-message")
                return None
            chunk = await self._read()
            if not chunk:
                self._eof = True
                continue
            self._buf += chunk


    async def _read(self) -> bytes:
        """The next chunk of the stream; ``b""`` at its end or when the connection failed."""
        try:
            return await self.source.read(_CHUNK)
        except (ConnectionError, OSError):
            return b""

    async def _drop_rest(self) -> None:
        """The buffer holds the start of a line over the limit: read on to its end keeping
        only both ends (memory stays bounded), then raise :class:`Oversized`."""
        head, tail, size = bytes(self._buf[:_PEEK]), bytes(self._buf[-_PEEK:]), len(self._buf)
        self._buf.clear()
        while True:
            chunk = await self._read()
            if not chunk:
                self._eof = True
                raise WireError(f"{self.peer} closed its stream mid-message")
            idx = chunk.find(b"\n")
            part = chunk if idx < 0 else chunk[:idx]
            size += len(part)
            tail = (tail + part)[-_PEEK:]
            if idx >= 0:
                self._buf += chunk[idx + 1:]
                raise self._oversized(head, tail.rstrip(b"\r"), size)

    def _oversized(self, head: bytes, tail: bytes, size: int) -> Oversized:
        self.count += 1
        where = f"{self.peer} {'line' if self.skip else 'message'} {self.count}"
        return Oversized(f"{where} ({size} bytes) is over the limit of {self.limit} bytes "
                         "(`max_message_bytes`): dropped", peek_id(head, tail))


def check_message(value: Any, where: str) -> dict[str, Any]:
    """``value`` if it is one JSON-RPC 2.0 message with a usable id; else :class:`WireError`."""
    if not isinstance(value, dict):
        what = "a batch (array)" if isinstance(value, list) else "not a JSON object"
        raise WireError(f"{where} is {what}, not one JSON-RPC message")
    if value.get("jsonrpc") != "2.0":
        raise WireError(f"{where} is not JSON-RPC 2.0")
    method = value.get("method")
    if "method" in value and not isinstance(method, str):
        raise WireError(f"{where} has a method that is not a string")
    if "id" in value:
        _check_id(value["id"], method, where)
    if method is None and ("id" not in value or ("result" in value) == ("error" in value)):
        raise WireError(f"{where} is neither a request, a notification nor a response")
    return value


def _check_id(ident: Any, method: Any, where: str) -> None:
    """Step: an id is a string or integer (null only on a response); else :class:`WireError`."""
    ok = ident is None or isinstance(ident, str) or (
        isinstance(ident, int) and not isinstance(ident, bool))
    if not ok or (method is not None and ident is None):
        raise WireError(f"{where} has an id that is not a string or integer")


class LineWriter:
    """Serialised writes of one message per line."""

    def __init__(self, sink: ByteSink, peer: str) -> None:
        self.sink = sink
        self.peer = peer
        self._lock = asyncio.Lock()

    async def send(self, message: dict[str, Any]) -> None:
        data = encode(message) + b"\n"
        async with self._lock:
            try:
                self.sink.write(data)
                await self.sink.drain()
            except (ConnectionError, OSError, RuntimeError):
                raise WireError(f"{self.peer} closed its input") from None


# ---------------------------------------------------------------------- upstream
class Upstream(ABC):
    """The server behind the proxy: messages in, messages out."""

    label: str

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def send(self, message: dict[str, Any]) -> None: ...

    @abstractmethod
    async def receive(self) -> dict[str, Any] | None:
        """The next message from the server; None when it has gone."""

    @abstractmethod
    async def aclose(self) -> None: ...

    async def gone(self) -> str:
        """Why the server's stream ended, for the one stderr line."""
        return f"the upstream server ({self.label}) closed the connection"

    def negotiated(self, version: str, headers_from: Any = None) -> None:
        """The protocol version the session runs on (HTTP needs it in a header)."""
        return

    def warnings(self) -> list[str]:
        """What the operator should know about the wire (skipped banner lines)."""
        return []

    def listen(self) -> None:
        """After the handshake: start hearing what the server sends unasked (HTTP opens
        its optional GET stream; stdio hears everything already)."""
        return


class StdioUpstream(Upstream):
    """A stdio server run under the keeper: the process tree dies with the proxy."""

    def __init__(self, target: Target, *, max_message_bytes: int, shutdown_grace: float,
                 on_stderr: Callable[[str], None] | None = None) -> None:
        from histor_sign.mcp._stdio_channel import StdioChannel
        from histor_sign.mcp._target import child_environment, refuse_untrusted_server

        assert target.command is not None
        refuse_untrusted_server(target, os.environ)
        env = child_environment(os.environ, extra=target.env, withhold=target.withhold_env,
                                guarded=target.guarded_secrets)
        self.label = target.label()
        self.channel: StdioChannel = StdioChannel(
            target.command, max_bytes=max_message_bytes, cwd=target.cwd, env=env,
            shutdown_grace=shutdown_grace)
        self.channel.on_stderr = on_stderr
        self.limit = max_message_bytes
        self._reader: LineReader | None = None
        self._writer: LineWriter | None = None

    async def start(self) -> None:
        await self.channel.start()
        proc = self.channel.proc
        assert proc is not None and proc.stdout is not None and proc.stdin is not None
        self._reader = LineReader(proc.stdout, self.limit, "the upstream server",
                                  skip=self.channel._skip)
        self._writer = LineWriter(proc.stdin, "the upstream server")

    async def send(self, message: dict[str, Any]) -> None:
        assert self._writer is not None
        await self._writer.send(message)

    async def receive(self) -> dict[str, Any] | None:
        assert self._reader is not None
        return await self._reader.message()

    async def gone(self) -> str:
        proc = self.channel.proc
        code: int | None = None
        if proc is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    code = await proc.wait()
        from histor_sign.mcp._stdio_channel import exit_how

        how = exit_how(code)
        tail = self.channel._stderr_tail
        last = f" (last stderr line: {clip(tail[-1])})" if tail else ""
        return f"the upstream server {how}{last}"

    def warnings(self) -> list[str]:
        return self.channel.warnings()

    async def aclose(self) -> None:
        await self.channel.aclose()


class HttpUpstream(Upstream):
    """A Streamable HTTP server: one POST per message; JSON or SSE answers are queued in
    arrival order. The legacy session id and the protocol version header are carried."""

    def __init__(self, target: Target, *, max_message_bytes: int, timeout: float) -> None:
        from histor_sign.mcp._http_channel import HttpChannel

        assert target.url is not None
        self.label = target.label()
        self.channel: HttpChannel = HttpChannel(
            target.url, headers=target.headers, bearer_token=target.bearer_token,
            max_bytes=max_message_bytes, timeout=timeout)
        self.limit = max_message_bytes
        self._queue: asyncio.Queue[dict[str, Any] | BaseException | None] = asyncio.Queue(256)
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._listening: asyncio.Task[None] | None = None

    async def start(self) -> None:
        import httpx

        await self.channel.start()
        # Requests may stay open as long as a tool runs: no read timeout on them.
        assert self.channel._client is not None
        self.channel._client.timeout = httpx.Timeout(self.channel.timeout, read=None)

    def negotiated(self, version: str, headers_from: Any = None) -> None:
        from histor_sign.mcp._jsonrpc import Era

        era = Era.LEGACY if version < "2026" else Era.MODERN
        if era is Era.MODERN:
            self.channel.enter_era(era)
        self.channel.on_protocol_negotiated(era, version)

    def _headers_for(self, message: dict[str, Any]) -> dict[str, str]:
        extra: dict[str, str] = {}
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(
            meta, dict) else None
        if isinstance(version, str) and version >= "2026":
            extra["MCP-Protocol-Version"] = version
            method = message.get("method")
            if isinstance(method, str):
                _add_method_headers(extra, method, params)
        return extra

    async def send(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            task = asyncio.create_task(self._post(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            # The initialize answer carries the session id every later POST needs; a
            # server that never answers is the caller's timeout (the task goes on alone).
            if message.get("method") == "initialize":
                await asyncio.wait({task}, timeout=self.channel.timeout)
            return
        await self._post(message)

    def listen(self) -> None:
        if self.channel.modern or self._listening is not None:
            return  # the modern era has no session, so no standalone stream
        self._listening = asyncio.create_task(self._listen())
        self._tasks.add(self._listening)
        self._listening.add_done_callback(self._tasks.discard)

    async def _listen(self) -> None:
        """The optional GET stream of a Streamable HTTP session: what the server sends
        outside any request (a ``list_changed`` between requests, its own requests) joins
        the POST answers in the queue, checked the same way. A server that offers no
        stream (405, or any answer but an event stream) is simply not listened to; a
        stream that ends is reopened with ``Last-Event-ID`` (after the server's ``retry``
        or a second), at most :data:`MAX_STREAM_REOPENS` times in a row without an event.
        """
        import httpx

        from histor_sign.mcp._http_channel import _media_type
        from histor_sign.mcp._sse import SSEParser

        channel = self.channel
        assert channel._client is not None
        last_id = ""
        idle_reopens = 0
        while not self._closed and idle_reopens <= MAX_STREAM_REOPENS:
            headers = self._stream_headers(last_id)
            parser = SSEParser()
            events = [0]
            try:
                async with channel._client.stream("GET", channel.url,
                                                  headers=headers) as resp:
                    if resp.status_code != 200 or _media_type(resp) != "text/event-stream":
                        return
                    await self._relay_events(resp, parser,
                                             f"{channel.shown_url} (GET event stream)", events)
            except HistorError as exc:
                await self._queue.put(exc)
                return
            except httpx.HTTPError:
                pass  # the optional stream broke: reopen it as if it had ended
            last_id = parser.last_event_id or last_id
            idle_reopens = 0 if events[0] else idle_reopens + 1
            await asyncio.sleep(_reopen_delay(parser))

    def _stream_headers(self, last_id: str) -> dict[str, str]:
        """Step: a GET stream's headers, resuming after ``last_id`` when there is one."""
        headers = self.channel._headers(None, post=False)
        if last_id:
            headers["Last-Event-ID"] = last_id
        return headers

    async def _post(self, message: dict[str, Any]) -> None:
        import httpx

        channel = self.channel
        assert channel._client is not None
        method = str(message.get("method", "response"))
        try:
            async with channel._client.stream(
                "POST", channel.url, content=encode(message),
                headers=channel._headers(self._headers_for(message)),
            ) as resp:
                self._note_headers(resp, method)
                if (200 <= resp.status_code < 300 and "id" not in message) or (
                        resp.status_code == 202):
                    return
                await self._relay_answer(resp, message, method)
        except (Oversized, LimitExceeded) as exc:  # the answer to this request: it fails alone
            await self._queue.put(self._oversized_answer(exc, message, method))
        except HistorError as exc:
            await self._queue.put(exc)
        except httpx.HTTPError as exc:
            await self._queue.put(WireError(channel._transport_error(exc)))
        except asyncio.CancelledError:
            raise

    def _note_headers(self, resp: Any, method: str) -> None:
        """Step: keep the answer's headers, and an initialize's printable session id."""
        channel = self.channel
        channel._last_headers = {k.lower(): v for k, v in resp.headers.items()}
        if method == "initialize" and resp.status_code == 200:
            session = channel._last_headers.get("mcp-session-id")
            if session and all(0x21 <= ord(c) <= 0x7E for c in session):
                channel.session_id = session

    async def _relay_answer(self, resp: Any, message: dict[str, Any], method: str) -> None:
        """Step: queue what an answering POST carries (a status answer, JSON or events)."""
        channel = self.channel
        try:
            kind = await channel._check_status(resp, method)
        except (RpcError, HttpStatusError) as exc:
            if "id" not in message or isinstance(exc, (AuthError, SessionExpired)):
                raise
            await self._queue.put(_status_answer(message["id"], exc))
            return
        if kind == "json":
            data = await self._bounded_body(resp)
            await self._deliver(data, f"{channel.shown_url} ({method} response)")
            return
        from histor_sign.mcp._sse import SSEParser

        await self._relay_events(resp, SSEParser(),
                                 f"{channel.shown_url} ({method} event stream)", [0])

    async def _relay_events(self, resp: Any, parser: SSEParser, where: str,
                            events: list[int]) -> None:
        """Step: queue each message event of an event stream (counted in ``events[0]``),
        bounded per event."""
        channel = self.channel
        async for chunk in channel._body(resp):
            for event in parser.feed(chunk):
                if event.type != "message" or not event.data.strip():
                    continue
                events[0] += 1
                await self._deliver(event.data.encode("utf-8", "surrogateescape"), where)
            pending = len(parser._buffer) + sum(map(len, parser._data))
            if pending > self.limit:
                raise Oversized(f"{channel.shown_url} sent an event over the limit "
                                f"of {self.limit} bytes (`max_message_bytes`): "
                                "dropped")

    def _oversized_answer(self, exc: Oversized | LimitExceeded, message: dict[str, Any],
                          method: str) -> Oversized:
        """Step: an over-limit answer as the failure of this request alone."""
        request = "id" in message and "method" in message
        text = exc.message if isinstance(exc, Oversized) else (
            f"{self.channel.shown_url} sent an answer to {method} over the limit of "
            f"{self.limit} bytes (`max_message_bytes`): dropped")
        return Oversized(text, message["id"] if request else NO_ID)

    async def _bounded_body(self, resp: Any) -> bytes:
        parts: list[bytes] = []
        total = 0
        async for chunk in self.channel._body(resp):
            total += len(chunk)
            if total > self.limit:
                raise Oversized(f"{self.channel.shown_url} sent a message over the limit of "
                                f"{self.limit} bytes (`max_message_bytes`): dropped")
            parts.append(chunk)
        return b"".join(parts)

    async def _deliver(self, data: bytes, where: str) -> None:
        if len(data) > self.limit:
            raise Oversized(f"{where}: a message over the limit of {self.limit} bytes "
                            "(`max_message_bytes`): dropped")
        try:
            value = parse_json(data, where, max_bytes=self.limit)
        except HistorError as exc:
            raise WireError(f"{where} is not strict JSON: {exc.message}") from None
        await self._queue.put(check_message(value, where))

    async def receive(self) -> dict[str, Any] | None:
        if self._closed:
            return None
        item = await self._queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    async def aclose(self) -> None:
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self.channel.aclose()


def _reopen_delay(parser: SSEParser) -> float:
    """Step: seconds before reopening a GET stream (the server's ``retry``, else one, bounded)."""
    delay = parser.retry_ms / 1000 if parser.retry_ms is not None else 1.0
    return min(max(delay, 0.05), 30.0)


def _add_method_headers(extra: dict[str, str], method: str, params: Any) -> None:
    """Step (modern era): the ``Mcp-Method`` header, and ``Mcp-Name`` where the method has one."""
    extra["Mcp-Method"] = method
    name = params.get("name") if isinstance(params, dict) else None
    if method in ("tools/call", "prompts/get") and isinstance(name, str):
        extra["Mcp-Name"] = name
    uri = params.get("uri") if isinstance(params, dict) else None
    if method == "resources/read" and isinstance(uri, str):
        extra["Mcp-Name"] = uri


def _status_answer(ident: Any, exc: RpcError | HttpStatusError) -> dict[str, Any]:
    """The JSON-RPC answer to request ``ident`` that an HTTP error status stands for, as
    the official SDK clients read it: the JSON-RPC error in the body when there is one
    (400 with -32000 "Server not initialized" from a handshake-era server asked
    ``server/discover``), else 404 before a session as "method not found" and any other
    status as an internal error. The session goes on: one request failed."""
    if isinstance(exc, RpcError):
        error: dict[str, Any] = {"code": exc.code, "message": exc.text or ""}
        if exc.data is not None:
            error["data"] = exc.data
        if not isinstance(exc.code, int) or isinstance(exc.code, bool):
            error["code"] = -32603
    elif exc.status == 404:
        error = {"code": -32601, "message": "Not Found"}
    else:
        error = {"code": -32603, "message": f"Server returned an error response (HTTP "
                                            f"{exc.status})"}
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def open_upstream(target: Target, *, max_message_bytes: int, timeout: float,
                  shutdown_grace: float, on_stderr: Callable[[str], None] | None = None
                  ) -> Upstream:
    """The wire to ``target`` (not started). ``on_stderr`` hears each line a stdio server
    writes on its stderr (server text: escape it)."""
    if target.command is not None:
        return StdioUpstream(target, max_message_bytes=max_message_bytes,
                             shutdown_grace=shutdown_grace, on_stderr=on_stderr)
    return HttpUpstream(target, max_message_bytes=max_message_bytes, timeout=timeout)
