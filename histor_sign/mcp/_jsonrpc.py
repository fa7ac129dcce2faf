"""JSON-RPC 2.0 message handling shared by the stdio and HTTP channels.

A channel sends one request at a time and reads until the response with that id arrives;
on the way it may meet notifications (ignored, except the tools, prompts and resources
``list_changed`` ones, counted so the walk of that list can restart) and server→client
requests (answered with an error, or an empty result for ``ping``, as the spec asks).
Every message is parsed with the strict I-JSON reader so hostile bytes fail the same way
as a hostile file.
"""

from __future__ import annotations

import asyncio
import json
from abc import ABC, abstractmethod
from enum import StrEnum
from typing import Any, ClassVar

from histor_sign._escape import printable
from histor_sign.canonical import parse_json
from histor_sign.errors import FetchError, LimitExceeded

LIST_CHANGED = "notifications/tools/list_changed"
#: Every list a fetch walks has its own change notification; each is counted apart.
LIST_CHANGED_NOTIFICATIONS = frozenset({
    LIST_CHANGED,
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
})
METHOD_NOT_FOUND = -32601
UNSUPPORTED_PROTOCOL_VERSION = -32022


class Era(StrEnum):
    """The two protocol eras: stateless ``modern`` and the ``legacy`` initialize handshake."""

    MODERN = "modern"
    LEGACY = "legacy"


class RpcError(FetchError):
    """The server answered a request with a JSON-RPC error object."""

    def __init__(
        self, method: str, code: Any, text: Any, data: Any = None, status: int | None = None
    ) -> None:
        self.method = method
        self.code = code
        self.data = data
        self.status = status
        #: The server's message, when it sent a string (untrusted: print it clipped).
        self.text = text if isinstance(text, str) else None
        shown = clip(text) if isinstance(text, str) else "(no message)"
        via = f" (HTTP {status})" if status is not None else ""
        super().__init__(f"server answered {method} with JSON-RPC error {code}{via}: {shown}")


class RequestTimeout(FetchError):
    """No response within the per-request timeout."""


class ServerGone(FetchError):
    """The stdio server exited or closed its output before answering."""


#: The member names of a JSON-RPC 2.0 message (its envelope and both of its bodies).
_MESSAGE_MEMBERS = frozenset({"jsonrpc", "id", "method", "params", "result", "error"})


def is_foreign_object(value: object) -> bool:
    """True for a JSON object that shares no member name with a JSON-RPC message: a log
    record some stdio servers print before they serve (an OpenTelemetry preamble), which a
    stdio reader may pass over as it passes over a text banner. An object with any of the
    names claims to be a message and is judged as one; arrays and scalars are never
    foreign objects."""
    return isinstance(value, dict) and _MESSAGE_MEMBERS.isdisjoint(value)


def clip(text: str, limit: int = 200) -> str:
    """One printable line of at most ``limit`` characters (for server-controlled text)."""
    return printable(text.strip(), limit=limit)


def encode(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, one line (no embedded newlines, as stdio framing requires)."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request(msg_id: int, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method}


#: Server→client requests of the capabilities a fetch declares; refused with this code
#: (the spec's "user rejected" for sampling), never "method not found".
DECLINED = -1
_DECLARED = frozenset({"sampling/createMessage", "elicitation/create"})


def reply_to_server_request(message: dict[str, Any]) -> dict[str, Any]:
    """Our answer to a server→client request during a fetch: ``ping`` succeeds,
    ``roots/list`` is answered with no roots (a fetch exposes none), sampling and
    elicitation — declared so the server offers what a capable host is offered — are
    declined with a JSON-RPC error, anything else is not found."""
    method = message.get("method")
    if method == "ping":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    if method == "roots/list":
        return {"jsonrpc": "2.0", "id": message["id"], "result": {"roots": []}}
    declared = method in _DECLARED
    return {
        "jsonrpc": "2.0",
        "id": message["id"],
        "error": {
            "code": DECLINED if declared else METHOD_NOT_FOUND,
            "message": "histor-sign is listing tools: it declines this request"
            if declared else "histor-sign only lists tools",
        },
    }


def same_id(a: Any, b: Any) -> bool:
    """JSON-RPC ids match by type and value (``true`` is not ``1``, ``"1"`` is not ``1``)."""
    return type(a) is type(b) and a == b


class Channel(ABC):
    """One connection to a server, carrying one request at a time.

    A transport implements :meth:`start`, :meth:`_request`, :meth:`notify` and
    :meth:`aclose`; the session drives the protocol through :meth:`call` and the era hooks
    (:meth:`enter_era`, :meth:`on_protocol_negotiated`, :meth:`refuse_deprecated_transport`),
    which are no-ops unless a transport keeps per-session state.
    """

    #: True when a server of the older era may leave an unknown request unanswered, so a
    #: ``server/discover`` probe that times out means "try the handshake" (stdio). Over HTTP
    #: every POST gets an answer, so a timeout there is a timeout.
    unanswered_probe_means_legacy: ClassVar[bool] = False

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes_received = 0
        #: ``list_changed`` notifications seen, by method (the walk of that list resets it).
        self.changed: dict[str, int] = {}
        #: The ``server/discover`` probe got no answer (timed out, or the server died on it).
        self.probe_unanswered = False
        self._next_id = 0
        self._abandoned: set[int] = set()
        #: Request ids already answered, with their method: a second answer is an error.
        self._answered: dict[int, str] = {}

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def count_bytes(self, n: int) -> None:
        self.bytes_received += n
        if self.bytes_received > self.max_bytes:
            raise LimitExceeded(
                f"the server sent more than `max_bytes` {self.max_bytes} bytes",
                limit="max_bytes", value=self.max_bytes,
            )

    def parse(self, data: bytes, source: str) -> Any:
        return parse_json(data, source, max_bytes=self.max_bytes)

    def classify(self, message: Any, source: str) -> str:
        """``response``, ``request`` or ``notification``; anything else is an error."""
        if not isinstance(message, dict):
            what = "an array (JSON-RPC batches are not allowed)" if isinstance(
                message, list
            ) else "not a JSON object"
            raise FetchError(f"{source}: expected a JSON-RPC message, got {what}")
        if message.get("jsonrpc") != "2.0":
            raise FetchError(f"{source}: not a JSON-RPC 2.0 message (\"jsonrpc\" is not \"2.0\")")
        method = message.get("method")
        if method is not None:
            if not isinstance(method, str):
                raise FetchError(f"{source}: JSON-RPC \"method\" must be a string")
            return "request" if "id" in message else "notification"
        if "id" in message and ("result" in message) != ("error" in message):
            return "response"
        raise FetchError(
            f"{source}: malformed JSON-RPC message (needs a method, or an id with exactly "
            "one of result/error)"
        )

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method in LIST_CHANGED_NOTIFICATIONS:
            self.changed[method] = self.changed.get(method, 0) + 1

    def abandon(self, msg_id: int) -> None:
        """Remember a timed-out request so a late answer to it is skipped, not an error."""
        self._abandoned.add(msg_id)

    def match_response(
        self, message: dict[str, Any], msg_id: int, method: str, source: str
    ) -> dict[str, Any] | None:
        """The result if ``message`` answers ``msg_id``; None for a late abandoned answer."""
        got = message.get("id")
        if not same_id(got, msg_id):
            if isinstance(got, int) and not isinstance(got, bool):
                if got in self._answered:
                    raise FetchError(
                        f"{source}: protocol error: the server answered request id {got} "
                        f"({self._answered[got]}) a second time; the first answer was "
                        "already used, so the fetch stops rather than guess which is meant"
                    )
                if got in self._abandoned:
                    self._abandoned.discard(got)
                    self._answered[got] = "a request that timed out"
                    return None
            raise FetchError(
                f"{source}: response has id {clip(json.dumps(got, ensure_ascii=False), 40)} "
                f"but the pending {method} request has id {msg_id}"
            )
        self._answered[msg_id] = method
        if "error" in message:
            raise rpc_error(method, message["error"], source)
        result = message["result"]
        if not isinstance(result, dict):
            raise FetchError(f"{source}: the result of {method} is not a JSON object")
        return result

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send a request and return its ``result`` object (or raise).

        ``headers`` are extra transport headers for this request (ignored where the
        transport has none). No answer within ``timeout`` seconds raises
        :class:`RequestTimeout`; a late answer to it is then skipped.
        """
        msg_id = self.new_id()
        try:
            async with asyncio.timeout(timeout):
                return await self._request(request(msg_id, method, params), method, headers)
        except TimeoutError:
            self.abandon(msg_id)
            raise self.timed_out(method, timeout) from None

    def timed_out(self, method: str, timeout: float) -> RequestTimeout:
        return RequestTimeout(
            f"no answer to {method}{self.peer} within {timeout:g} s (`timeout`)",
            param="timeout",
        )

    def warnings(self) -> list[str]:
        """What the caller should be told about this connection once the fetch is done
        (each one line; server text in it already clipped and escaped)."""
        return []

    @property
    def peer(self) -> str:
        """`` from <where>`` for messages, or empty when the server needs no naming."""
        return ""

    def enter_era(self, era: Era) -> None:
        """About to negotiate ``era`` from scratch: forget any earlier session's state."""
        return  # no per-session state by default

    def on_protocol_negotiated(self, era: Era, version: str) -> None:
        """The server agreed to ``era``/``version``: adopt what later requests must carry."""
        return  # nothing to carry by default

    async def refuse_deprecated_transport(self, status: int | None) -> None:
        """The first exchange failed with transport ``status``: if the endpoint speaks a
        transport histor-sign does not, raise a :class:`FetchError` that says so."""
        return  # one transport only by default

    @abstractmethod
    async def start(self) -> None:
        """Open the connection (start the process / the HTTP client)."""

    @abstractmethod
    async def _request(
        self, message: dict[str, Any], method: str, headers: dict[str, str] | None
    ) -> dict[str, Any]:
        """Send request ``message`` and return the ``result`` of its response."""

    @abstractmethod
    async def notify(self, method: str) -> None:
        """Send a notification (without parameters: the client sends only
        ``notifications/initialized``)."""

    @abstractmethod
    async def aclose(self) -> None:
        """Release everything (end the session, stop the process). Never raises."""


def rpc_error(method: str, error: Any, source: str, status: int | None = None) -> RpcError:
    if not isinstance(error, dict):
        raise FetchError(f"{source}: JSON-RPC \"error\" of {method} is not an object")
    return RpcError(method, error.get("code"), error.get("message"), error.get("data"), status)
