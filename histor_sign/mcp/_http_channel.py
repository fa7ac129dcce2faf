"""Streamable HTTP transport on httpx (imported lazily: the CLI's help must stay fast).

One POST per client message. A response is ``application/json`` (one message) or
``text/event-stream`` (SSE: notifications and server requests may come first, then our
response; a stream that ends early is resumed with GET + ``Last-Event-ID``). 202 bodies are
never read. Redirects are not followed (they could carry the bearer token elsewhere), and
every message names the URL without userinfo or query values.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from histor_sign._escape import printable
from histor_sign._version import __version__
from histor_sign.errors import FetchError, HistorError
from histor_sign.mcp._jsonrpc import (
    Channel,
    Era,
    clip,
    encode,
    notification,
    reply_to_server_request,
    rpc_error,
)
from histor_sign.mcp._sse import SSEParser
from histor_sign.mcp._target import safe_url

if TYPE_CHECKING:
    import ssl

    import httpx

ACCEPT = "application/json, text/event-stream"
#: Times in a row an SSE answer is resumed without delivering an event (progress resets it).
MAX_RESUMES = 3
#: Legacy versions that define the ``MCP-Protocol-Version`` HTTP header.
_VERSION_HEADER_SINCE = "2025-06-18"


class HttpStatusError(FetchError):
    """An HTTP status that is not a JSON-RPC answer (the probe may fall back on it)."""

    def __init__(self, message: str, status: int, *, param: str | None = None) -> None:
        super().__init__(message, param=param)
        self.status = status


class AuthError(HttpStatusError):
    """401/403: never retried under another protocol era."""


class SessionExpired(HttpStatusError):
    """404 on a request carrying our legacy ``Mcp-Session-Id``: the server ended the session.

    The spec says the client MUST then start a new session with a fresh ``initialize``;
    the fetch does that once and restarts the walk from the first page.
    """


#: How much of a GET stream the deprecated-transport probe reads before giving up.
_PROBE_MAX_BYTES = 64 * 1024


class HttpChannel(Channel):
    """A Streamable HTTP endpoint. A legacy session's ``Mcp-Session-Id`` and the negotiated
    ``MCP-Protocol-Version`` live here and are set through the era hooks."""

    def __init__(
        self,
        url: str,
        *,
        headers: tuple[tuple[str, str], ...],
        bearer_token: str | None,
        max_bytes: int,
        timeout: float,
    ) -> None:
        super().__init__(max_bytes)
        self.url = url
        self.shown_url = safe_url(url)
        # Ask for the body as sent: a compressed body is a decompression bomb waiting to
        # happen. A server that compresses anyway gets one bounded gzip/deflate layer.
        self._base_headers = {
            "User-Agent": f"histor-sign/{__version__}", "Accept-Encoding": "identity",
        }
        for name, value in headers:
            self._base_headers[name] = value
        if bearer_token is not None:
            self._base_headers["Authorization"] = f"Bearer {bearer_token}"
        self._has_auth = bearer_token is not None or any(
            n.lower() == "authorization" for n, _ in headers
        )
        self.timeout = timeout
        #: Set by the legacy handshake; echoed on every later request.
        self.session_id: str | None = None
        #: ``MCP-Protocol-Version`` header value for every request (None: don't send).
        self.protocol_header: str | None = None
        self.modern = False
        self._last_headers: dict[str, str] = {}
        self._client: httpx.AsyncClient | None = None

    @property
    def peer(self) -> str:
        return f" from {self.shown_url}"

    def enter_era(self, era: Era) -> None:
        # A fresh negotiation: no session id or version header from an earlier attempt (an
        # expired session, a failed modern probe); modern servers are never answered.
        self.session_id = None
        self.protocol_header = None
        self.modern = era is Era.MODERN

    def on_protocol_negotiated(self, era: Era, version: str) -> None:
        if era is Era.MODERN:
            self.protocol_header = version
            return
        session_id = self._last_headers.get("mcp-session-id")
        if session_id is not None:
            if not session_id or not all(0x21 <= ord(c) <= 0x7E for c in session_id):
                raise FetchError("the server sent an invalid Mcp-Session-Id header")
            self.session_id = session_id
        if version >= _VERSION_HEADER_SINCE:
            self.protocol_header = version

    async def start(self) -> None:
        import httpx

        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout), follow_redirects=False,
            verify=_tls_for(self.url),
        )

    def _headers(self, extra: dict[str, str] | None, *, post: bool = True) -> dict[str, str]:
        headers = dict(self._base_headers)
        headers["Accept"] = ACCEPT if post else "text/event-stream"
        if post:
            headers["Content-Type"] = "application/json"
        if self.session_id is not None and not self.modern:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_header is not None:
            headers["MCP-Protocol-Version"] = self.protocol_header
        if extra:
            headers.update(extra)
        return headers

    # --- requests ------------------------------------------------------------------

    async def _request(
        self, message: dict[str, Any], method: str, extra: dict[str, str] | None
    ) -> dict[str, Any]:
        import httpx

        assert self._client is not None
        msg_id: int = message["id"]
        try:
            async with self._client.stream(
                "POST", self.url, content=encode(message), headers=self._headers(extra)
            ) as resp:
                self._last_headers = {k.lower(): v for k, v in resp.headers.items()}
                kind = await self._check_status(resp, method)
                if kind == "json":
                    return await self._json_answer(resp, msg_id, method)
                parser = SSEParser()
                result = await self._read_stream(self._body(resp), parser, msg_id, method)
            if result is None:
                result = await self._resume_until_answered(parser, msg_id, method)
            return result
        except httpx.TimeoutException:
            raise self.timed_out(method, self.timeout) from None
        except httpx.HTTPError as exc:
            raise FetchError(self._transport_error(exc)) from None

    def _transport_error(self, exc: Exception) -> str:
        import httpx

        reason = clip(str(exc)) or type(exc).__name__
        if isinstance(exc, httpx.ConnectError):
            if "CERTIFICATE" in reason.upper() or "SSL" in reason.upper():
                return f"TLS error connecting to {self.shown_url}: {reason}"
            return f"cannot connect to {self.shown_url}: {reason}"
        return f"HTTP error talking to {self.shown_url}: {reason}"

    async def _resume(self, parser: SSEParser, msg_id: int, method: str) -> dict[str, Any] | None:
        assert self._client is not None
        headers = self._headers(None, post=False)
        headers["Last-Event-ID"] = parser.last_event_id
        async with self._client.stream("GET", self.url, headers=headers) as resp:
            self._check_session_expired(resp.status_code, method)
            if resp.status_code != 200 or _media_type(resp) != "text/event-stream":
                raise FetchError(
                    f"{self.shown_url}: the event stream for {method} ended before its "
                    f"response and resuming it failed (HTTP {resp.status_code})"
                )
            return await self._read_stream(self._body(resp), parser, msg_id, method)

    async def _read_stream(
        self, chunks: AsyncIterator[bytes], parser: SSEParser, msg_id: int, method: str
    ) -> dict[str, Any] | None:
        events = 0
        async for chunk in chunks:
            self.count_bytes(len(chunk))
            for event in parser.feed(chunk):
                events += 1
                if event.type != "message" or not event.data.strip():
                    continue  # priming events, keep-alives, other event types
                source = f"{self.shown_url} ({method} event stream, event {events})"
                message = self.parse(event.data.encode("utf-8", "surrogateescape"), source)
                kind = self.classify(message, source)
                if kind == "notification":
                    self.on_notification(message)
                elif kind == "request":
                    await self._answer_server_request(message)
                else:
                    result = self.match_response(message, msg_id, method, source)
                    if result is not None:
                        return result
        return None

    async def _answer_server_request(self, message: dict[str, Any]) -> None:
        if self.modern:
            return  # modern clients MUST NOT send responses; servers MUST NOT ask
        assert self._client is not None
        with contextlib.suppress(Exception):
            await self._client.post(
                self.url, content=encode(reply_to_server_request(message)),
                headers=self._headers(None),
            )

    async def _body(self, resp: httpx.Response) -> AsyncIterator[bytes]:
        """The decoded body in pieces of at most 64 KiB, whatever the compression ratio.

        httpx would inflate a whole network chunk at once (a 2 KB ``gzip, gzip`` body
        becomes gigabytes before any bound is checked), so the raw bytes are read and
        inflated here in bounded steps; callers count what is yielded against
        `max_bytes`, and the compressed bytes count against it too.
        """
        decoder = _decoder(resp, self.shown_url)
        raw_total = 0
        async for raw in resp.aiter_raw():
            raw_total += len(raw)
            if raw_total > self.max_bytes:  # compressed bytes are bounded too
                self.count_bytes(self.max_bytes + 1)
            if decoder is None:
                yield raw
                continue
            for piece in decoder.feed(raw):
                yield piece
        if decoder is not None:
            for piece in decoder.finish():
                yield piece

    async def _json_answer(self, resp: httpx.Response, msg_id: int,
                           method: str) -> dict[str, Any]:
        """Step: the result of a JSON answer, which must be the response to ``msg_id``."""
        data = await self._read_body(resp)
        source = f"{self.shown_url} ({method} response)"
        message = self.parse(data, source)
        if self.classify(message, source) != "response":
            raise FetchError(f"{source}: expected the JSON-RPC response, got a "
                             "request or notification")
        result = self.match_response(message, msg_id, method, source)
        if result is None:
            raise FetchError(f"{source}: response answers an earlier request")
        return result

    async def _resume_until_answered(self, parser: SSEParser, msg_id: int,
                                     method: str) -> dict[str, Any]:
        """Step: reopen an event stream that ended before the response (``Last-Event-ID``),
        at most :data:`MAX_RESUMES` times in a row without progress."""
        resumes = 0
        result: dict[str, Any] | None = None
        while result is None:
            if not parser.last_event_id or resumes >= MAX_RESUMES:
                raise FetchError(
                    f"{self.shown_url}: the event stream for {method} ended before its "
                    "response" + (f" ({resumes} times in a row without an event)"
                                  if resumes else "")
                )
            resumes += 1
            # The server's ``retry`` is honoured; the request's own timeout bounds it
            # (and the whole exchange), so a longer wait could only end in a timeout.
            await asyncio.sleep(min((parser.retry_ms or 0) / 1000, self.timeout))
            before = parser.last_event_id
            result = await self._resume(parser, msg_id, method)
            if parser.last_event_id != before:
                resumes = 0  # the stream made progress: only idle reopens count
        return result

    async def _read_body(self, resp: httpx.Response) -> bytes:
        parts: list[bytes] = []
        async for chunk in self._body(resp):
            self.count_bytes(len(chunk))
            parts.append(chunk)
        return b"".join(parts)

    async def _check_status(self, resp: httpx.Response, method: str) -> str:
        """``json`` or ``sse`` for a usable response; raises for everything else."""
        status = resp.status_code
        where = self.shown_url
        if status == 200:
            return _content_kind(resp, where, method)
        if status in (401, 403):
            raise self._auth_error(resp, status)
        if status == 202:
            raise FetchError(f"{where}: HTTP 202 Accepted without a response to {method}")
        if 300 <= status < 400:
            location = resp.headers.get("location")
            to = f" to {_shown_location(location)}" if location else ""
            raise HttpStatusError(
                f"{where}: HTTP {status} redirect{to}; redirects are not followed, give the "
                "final URL as `url`", status, param="url",
            )
        self._check_session_expired(status, method)
        raise await self._error_of_body(resp, status, method)

    def _auth_error(self, resp: httpx.Response, status: int) -> AuthError:
        """Step: a 401/403 as an :class:`AuthError` (naming ``bearer_token`` if none was sent)."""
        where = self.shown_url
        challenge = resp.headers.get("www-authenticate")
        shown = f"; WWW-Authenticate: {clip(challenge, 300)}" if challenge else ""
        word = "Unauthorized" if status == 401 else "Forbidden"
        if self._has_auth:
            return AuthError(f"HTTP {status} {word} from {where}{shown}", status)
        return AuthError(
            f"HTTP {status} {word} from {where}{shown} (no credentials were sent: use "
            "`bearer_token`)", status, param="bearer_token",
        )

    async def _error_of_body(self, resp: httpx.Response, status: int,
                             method: str) -> HistorError:
        """Step: the error an error status stands for: the JSON-RPC error its body holds, if any."""
        where = self.shown_url
        # A JSON-RPC error body (400 -32022, modern 404 -32601, ...) is an RPC answer.
        data = await self._read_body(resp)
        if _media_type(resp) == "application/json" and data.strip():
            try:
                message = self.parse(data, f"{where} (HTTP {status})")
            except HistorError:
                message = None
            if isinstance(message, dict) and isinstance(message.get("error"), dict):
                return rpc_error(method, message["error"], where, status)
        if status == 404:
            return HttpStatusError(
                f"HTTP 404 Not Found from {where}: no MCP endpoint at this URL", status
            )
        if status == 405:
            return HttpStatusError(
                f"HTTP 405 Method Not Allowed from {where}: the URL does not accept POST; it is "
                "not a Streamable HTTP MCP endpoint (the deprecated HTTP+SSE transport is not "
                "supported)", status
            )
        text = data.decode("utf-8", "replace")
        detail = f": {clip(text)}" if text.strip() else ""
        return HttpStatusError(f"HTTP {status} from {where} for {method}{detail}", status)

    def _check_session_expired(self, status: int, method: str) -> None:
        # Checked before any body: the TS SDK sends 404 with a JSON-RPC error (-32001
        # "Session not found"), which must still mean "start a new session".
        if status == 404 and self.session_id is not None and not self.modern:
            raise SessionExpired(
                f"{self.shown_url}: HTTP 404 during {method}: the server ended the session "
                "(Mcp-Session-Id no longer valid)", status
            )

    async def refuse_deprecated_transport(self, status: int | None) -> None:
        """After a POST failed with 400/404/405 (no JSON-RPC body), tell an HTTP+SSE server apart.

        The spec's backwards-compatibility rule: GET the URL; a stream whose first event is
        ``endpoint`` is the deprecated HTTP+SSE transport (2024-11-05), which histor-sign does
        not speak — say so in one clear error instead of a bare 404/405.
        """
        if status not in (400, 404, 405) or not await self._speaks_deprecated_sse():
            return
        raise FetchError(
            f"{self.shown_url} only speaks the deprecated HTTP+SSE transport (2024-11-05: "
            "POST is refused and GET opens an event stream announcing an 'endpoint'); "
            "histor-sign supports Streamable HTTP only: point `url` at the server's "
            "Streamable HTTP endpoint (often /mcp) or run the server over stdio (`command`)",
            param="url", alternatives=("command",),
        )

    async def _speaks_deprecated_sse(self) -> bool:
        """True if a GET on the URL opens an SSE stream whose first event is ``endpoint``.

        That is how the deprecated HTTP+SSE transport (2024-11-05) greets a client, and it
        is the spec's backwards-compatibility test after a POST failed with 400/404/405.
        Only the first event is read (bounded in bytes and time); any failure means no.
        """
        import httpx

        assert self._client is not None
        headers = dict(self._base_headers)
        headers["Accept"] = "text/event-stream"
        parser = SSEParser()
        received = 0
        try:
            async with asyncio.timeout(min(self.timeout, 5.0)):
                async with self._client.stream("GET", self.url, headers=headers) as resp:
                    if resp.status_code != 200 or _media_type(resp) != "text/event-stream":
                        return False
                    async for chunk in self._body(resp):
                        received += len(chunk)
                        for event in parser.feed(chunk):
                            if event.type == "message" and not event.data:
                                continue  # a priming event, not a greeting
                            return event.type == "endpoint"
                        if received > _PROBE_MAX_BYTES:
                            return False
        except (TimeoutError, httpx.HTTPError, HistorError):
            return False
        return False

    # --- notifications and teardown ------------------------------------------------

    async def notify(self, method: str) -> None:
        import httpx

        assert self._client is not None
        try:
            async with asyncio.timeout(self.timeout):
                async with self._client.stream(
                    "POST", self.url, content=encode(notification(method)),
                    headers=self._headers(None),
                ) as resp:
                    # 202 Accepted: the body (if any) is never read.
                    if not 200 <= resp.status_code < 300:
                        await self._check_status(resp, method)
        except TimeoutError:
            raise self.timed_out(method, self.timeout) from None
        except httpx.HTTPError as exc:
            raise FetchError(self._transport_error(exc)) from None

    async def aclose(self) -> None:
        client = self._client
        if client is None:
            return
        self._client = None
        try:
            if self.session_id is not None and not self.modern:
                # End the session; 400/404/405 and errors are all fine here.
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(min(self.timeout, 5.0)):
                        await client.delete(self.url, headers=self._headers(None, post=False))
        finally:
            with contextlib.suppress(Exception):
                await client.aclose()


def _tls_for(url: str) -> ssl.SSLContext | bool:
    """TLS settings for the client of ``url``: certificate verification with the default
    trust store for https; for a plain-http target (no redirects are followed, so no TLS
    connection can follow) a bare context with no CA loaded, which refuses every
    certificate. httpx otherwise loads the whole CA bundle (about 0.1 s) for nothing."""
    if url[:8].lower() == "https://" or any(
            k.lower() in ("http_proxy", "all_proxy") for k in os.environ):
        return True  # an https proxy for a plain-http target is verified as usual
    import ssl

    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, hostname check, no CAs


def _content_kind(resp: httpx.Response, where: str, method: str) -> str:
    """Step: ``json`` or ``sse`` from a 200 answer's content type; anything else fails."""
    media = _media_type(resp)
    if media == "application/json":
        return "json"
    if media == "text/event-stream":
        return "sse"
    raise FetchError(
        f"{where}: {method} response has content type {clip(media or 'none', 60)!r}, "
        "expected application/json or text/event-stream"
    )


def _media_type(resp: httpx.Response) -> str:
    value: str = resp.headers.get("content-type", "")
    return value.split(";", 1)[0].strip().lower()


def _shown_location(location: str) -> str:
    """A redirect's ``Location`` (server-chosen) for a message: no query values, escaped."""
    try:
        shown = safe_url(location)
    except ValueError:  # not even a URL (e.g. a bad IPv6 literal)
        shown = location.partition("?")[0]
    return printable(shown, limit=200)


#: Output of one inflate step: bounds memory however well the body compresses.
_INFLATE_STEP = 1 << 16


class _Inflater:
    """One gzip or deflate layer, inflated at most :data:`_INFLATE_STEP` bytes at a time."""

    def __init__(self, coding: str, where: str) -> None:
        self.gzip = coding in ("gzip", "x-gzip")
        self.where = where
        self._first = True
        self._new()

    def _new(self) -> None:
        # gzip: header + trailer; deflate: the zlib wrapper (raw deflate is tried if the
        # first bytes are not one, as browsers and httpx do).
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS if self.gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data:
            try:
                out = self._z.decompress(data, _INFLATE_STEP)
            except zlib.error:
                if self._first and not self.gzip:
                    self._first = False
                    self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise FetchError(f"{self.where}: the compressed response body is corrupt") \
                    from None
            self._first = False
            if out:
                yield out
            data = self._z.unconsumed_tail
            if self._z.eof:
                data = self._z.unused_data
                if data:
                    self._new()  # gzip allows members back to back

    def finish(self) -> Iterator[bytes]:
        while True:
            out = self._z.flush(_INFLATE_STEP)
            if not out:
                return
            yield out


def _decoder(resp: httpx.Response, where: str) -> _Inflater | None:
    """The inflater for the response's ``Content-Encoding``; refuses what it cannot bound.

    We ask for ``identity``; one gzip or deflate layer is still decoded (some servers
    compress regardless). Stacked codings (``gzip, gzip``) and anything else are refused.
    """
    value = resp.headers.get("content-encoding", "")
    codings = [c.strip().lower() for c in value.split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if not codings:
        return None
    if len(codings) == 1 and codings[0] in ("gzip", "x-gzip", "deflate"):
        return _Inflater(codings[0], where)
    raise FetchError(
        f"{where}: the response has Content-Encoding {clip(value, 60)!r}; histor-sign asks "
        "for identity and decodes at most one gzip or deflate layer"
    )
