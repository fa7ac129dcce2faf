"""The proxy session: verify, compare, then relay — deciding every tools/call first.

One :class:`Proxy` serves one host session. Before anything is served the pinned
publisher's latest revision is verified for use (:func:`histor_sign.pins.latest_for_use`,
freshness included) in a worker thread; the host's first request waits for it, and a
refusal is one JSON-RPC error to that request. The upstream is started only after a
revision verified. Its complete tools/list is walked with the fetch's own guards
(:func:`histor_sign.mcp._walk.walk_list`) over the live session and compared with the
signed definitions; then:

* ``tools/list`` is answered by the proxy, from the signed snapshot's tool objects;
* ``tools/call`` is decided by the guard before it is forwarded; a denial is an MCP tool
  error result naming reason codes, never server text or argument values; a call the
  guard would let a person approve is put to the user through elicitation when the host
  declared it;
* a ``list_changed`` notification from the server makes the proxy walk and compare again
  before it is forwarded, and tools/list and tools/call wait for that;
* everything else is relayed, request ids mapped each way.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._call_import import shown_name
from histor_sign._escape import printable
from histor_sign._limits import DEFAULT_MAX_PENDING_NOTICES, DEFAULT_TIMEOUT
from histor_sign.canonical import canonical_bytes, sha256_digest
from histor_sign.errors import HistorError
from histor_sign.mcp._jsonrpc import (
    LIST_CHANGED_NOTIFICATIONS,
    Channel,
    Era,
    encode,
    notification,
    same_id,
)
from histor_sign.proxy._audit import AuditFailed, AuditLog
from histor_sign.proxy._contract import Blocked, Contract, OnDrift, build_contract
from histor_sign.proxy._notices import Notices
from histor_sign.proxy._wire import (
    NO_ID,
    ByteSink,
    ByteSource,
    LineReader,
    LineWriter,
    Oversized,
    Upstream,
    WireError,
    open_upstream,
)

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.guard import Decision, Policy
    from histor_sign.lock import LockedRevision
    from histor_sign.mcp._target import Target
    from histor_sign.models import Risk
    from histor_sign.pins import PinnedRevision, PinStore

#: Default bound on one JSON-RPC message either way.
DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
#: JSON-RPC error codes the proxy answers with.
REFUSED = -32001
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SESSION_ENDED = -32000
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
PREFIX = "histor-sign proxy"
#: How a modern-era approval's ``requestState`` begins (the rest: nonce and HMAC).
APPROVAL_STATE = "histor-sign-proxy/approval/1:"
#: What the server may send before the host has its initialize answer, held for it.
MAX_HELD_MESSAGES = 256
MAX_HELD_BYTES = 16 * 1024 * 1024
#: A server's stderr line is passed on clipped to this many characters.
STDERR_LINE_CHARS = 2000
#: Modern-era approvals the proxy remembers while the host asks the user.
MAX_OPEN_APPROVALS = 1024


@dataclass(frozen=True)
class ProxyOutcome:
    """How a session ended. ``status``: ``ended`` (the host closed it), ``refused``
    (verification, freshness, a pin or ``block`` said no: exit 1) or ``failed`` (a fault:
    a peer broke the protocol or went away, a timeout; exit 2). ``message`` is one
    printable line."""

    status: str
    message: str


@dataclass
class _Pending:
    """A request in flight: forwarded for a peer (``peer_id``) or the proxy's own."""

    peer_id: Any = None
    future: asyncio.Future[dict[str, Any]] | None = None
    method: str = ""


@dataclass
class _State:
    era: Era | None = None
    protocol_version: str | None = None
    host_caps: dict[str, Any] = field(default_factory=dict)
    swallow_initialized: bool = False
    host_name: str = "the host"


def _pollable(fd: int, *, write: bool = False) -> bool:
    """The event loop can wait on ``fd`` (a pipe, socket or terminal; not a regular file
    or /dev/null, which epoll refuses)."""
    import selectors

    with selectors.DefaultSelector() as selector:
        try:
            selector.register(fd, selectors.EVENT_WRITE if write else selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


def _read_in_thread(fd: int, reader: asyncio.StreamReader,
                    loop: asyncio.AbstractEventLoop) -> None:
    """Feed ``reader`` from ``fd`` with blocking reads in a daemon thread, then EOF."""
    import threading

    def pump() -> None:
        try:
            while chunk := os.read(fd, 1 << 16):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError:
            pass
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is reading
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, daemon=True, name="histor-sign stdin").start()


class _FileSink:
    """The host's stream when stdout is a regular file (or /dev/null): written directly."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view):]

    async def drain(self) -> None:
        return None


def _dropped_notices(count: int) -> str:
    return (f"{PREFIX}: {count} notice(s) not shown: they came faster than they were read "
            "(an audit log records every decision)")


class _Ended(Exception):
    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Proxy:
    """Put the pinned, signed contract of ``server`` between a host and its upstream.

    ``store`` is the pin store (a :class:`~histor_sign.pins.PinStore`, its file, or None for
    the per-user file); ``trust`` a Sigstore trust root the caller names (it must be the
    one the pin was made under; None: the pin's own), ``offline`` verifies production or
    staging without a TUF refresh;
    ``upstream`` the server (:class:`~histor_sign.mcp.Target`, stdio or Streamable HTTP).
    ``on_drift``/``fail_on`` say what a served tool that is not the signed one does
    (:class:`OnDrift`); ``policy`` adds the guard's policy; ``audit`` names a JSON-lines
    file. ``notice`` receives one line per event for the operator (stderr in the CLI); the
    library never prints. It is called from one writer thread, in order, never from the
    event loop: a ``notice`` that blocks (an unread pipe) holds up nothing but later
    notices; beyond ``max_pending_notices`` waiting, lines are dropped and counted
    (:mod:`histor_sign.proxy._notices`). ``locked``, a lock file's entry (trust on first use, see
    :mod:`histor_sign.lock`), replaces the pinned revision as the baseline: nothing is
    verified, and it is served exactly as a pinned one.
    """

    def __init__(
        self,
        *,
        server: str,
        upstream: Target,
        trust: Trust | None = None,
        store: PinStore | str | Path | None = None,
        offline: bool = False,
        on_drift: OnDrift | str = OnDrift.WITHHOLD,
        fail_on: Risk | str | None = None,
        policy: Policy | None = None,
        audit: str | Path | None = None,
        notice: Callable[[str], None] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        shutdown_grace: float = 2.0,
        locked: LockedRevision | None = None,
        max_pending_notices: int = DEFAULT_MAX_PENDING_NOTICES,
    ) -> None:
        from histor_sign.mcp._target import FetchOptions
        from histor_sign.models import Risk

        self.server = server
        self.target = upstream
        self.trust = trust
        self.offline = offline
        self.store = store
        self.on_drift = OnDrift(on_drift)
        self.fail_on = Risk(fail_on) if fail_on is not None else None
        self.policy = policy
        self.audit = AuditLog(audit)
        #: Never blocks the session: lines go out from a writer thread (:mod:`._notices`).
        self.notice = Notices(notice or (lambda _line: None), _dropped_notices,
                              max_pending=max_pending_notices)
        self.options = FetchOptions(timeout=timeout, max_bytes=1 << 62)
        self.max_message_bytes = max_message_bytes
        self.shutdown_grace = shutdown_grace
        self.contract: Contract | None = None
        self.locked = locked
        self._revision: PinnedRevision | LockedRevision | None = None
        #: ``list_changed`` notices heard after the first walk, and how many of them the
        #: installed contract accounts for; one refresher walks until they are equal.
        self._heard = 0
        self._decided = 0
        self._refreshed = asyncio.Condition()
        self._refresher: asyncio.Task[None] | None = None
        self._to_forward: dict[str, dict[str, Any]] = {}
        self._refresh_lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._up_pending: dict[int, _Pending] = {}
        self._host_pending: dict[int, _Pending] = {}
        self._host_to_up: dict[tuple[str, Any], int] = {}
        self._server_to_host: dict[tuple[str, Any], int] = {}
        self._approvals: dict[tuple[str, Any], asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._held: list[dict[str, Any]] | None = None
        self._held_bytes = 0
        self._held_dropped = 0
        self._stopped_reading: asyncio.Task[None] | None = None
        self._state = _State()
        self._upstream: Upstream | None = None
        self._host: LineWriter | None = None
        self._failure: _Ended | None = None
        self._host_task: asyncio.Task[None] | None = None
        self._warned: set[str] = set()
        self._approval_key = os.urandom(32)
        #: Modern-era approvals asked and not yet answered (bounded: oldest forgotten).
        self._approval_nonces: dict[str, None] = {}
        #: Host requests not yet answered (by key): each gets an error if the session fails.
        self._owed: dict[tuple[str, Any], Any] = {}
        self._relay = _RelayChannel(self)
        #: The host said ``notifications/initialized``: it may be sent requests now.
        self._host_initialized = asyncio.Event()

    # ------------------------------------------------------------------ entry points
    def run_stdio(self) -> ProxyOutcome:
        """Serve the host on this process's stdin/stdout until it disconnects (blocking)."""
        return asyncio.run(self._run_stdio())

    async def _run_stdio(self) -> ProxyOutcome:
        import signal
        import sys

        loop = asyncio.get_running_loop()
        # A host (or a service manager) stops a server with SIGTERM: end the session as if
        # it had closed, so every open request is answered and `session-end` is recorded.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, self._fail, _Ended(
                "ended", "the proxy was stopped (SIGTERM)"))
        reader = asyncio.StreamReader(limit=1 << 16)
        if _pollable(sys.stdin.fileno()):
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                         sys.stdin)
        else:  # a file or /dev/null: the event loop cannot wait on it, a thread reads it
            _read_in_thread(sys.stdin.fileno(), reader, loop)
        if not _pollable(sys.stdout.fileno(), write=True):  # a file: writes never wait
            return await self.serve(reader, _FileSink(sys.stdout.fileno()))
        transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, sys.stdout)
        writer = asyncio.StreamWriter(transport, protocol, None, loop)
        try:
            return await self.serve(reader, writer)
        finally:
            with contextlib.suppress(Exception):
                transport.close()

    async def serve(self, host_in: ByteSource, host_out: ByteSink) -> ProxyOutcome:
        """Serve one host session on the given byte streams (newline-delimited JSON-RPC,
        as MCP's stdio transport); returns when the host or the upstream ends it."""
        self._host = LineWriter(host_out, "the host")
        reader = LineReader(host_in, self.max_message_bytes, "the host")
        verifying = asyncio.create_task(asyncio.to_thread(self._verify))
        host_task = self._host_task = asyncio.create_task(self._host_loop(reader, verifying))
        try:
            await host_task
            outcome = ProxyOutcome("ended", "the host closed the session")
        except _Ended as ended:
            outcome = ProxyOutcome(ended.status, ended.message)
        except (WireError, AuditFailed) as exc:
            outcome = ProxyOutcome("failed", exc.message)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if self._failure is None or (task is not None and task.cancelling()):
                raise
            outcome = ProxyOutcome(self._failure.status, self._failure.message)
        finally:
            if not verifying.done():
                verifying.cancel()
        if self._failure is not None and outcome.status == "ended":
            outcome = ProxyOutcome(self._failure.status, self._failure.message)
        try:
            await self._answer_unanswered(outcome, reader)
        finally:
            await self._shutdown()
        outcome = self._record_end(outcome)
        self.audit.close()
        await asyncio.to_thread(self.notice.flush, self.shutdown_grace)
        return outcome

    async def _answer_unanswered(self, outcome: ProxyOutcome, reader: LineReader) -> None:
        """Step: a session that failed answers every request owed, read or only buffered."""
        if outcome.status != "ended" or self._failure is not None:  # (SIGTERM)
            for message in reader.buffered():  # sent, read, not yet taken
                if "id" in message and "method" in message:
                    self._owed[_key(message["id"])] = message["id"]
            await self._answer_owed(outcome)

    def _record_end(self, outcome: ProxyOutcome) -> ProxyOutcome:
        """Step: audit the session's end; an end that cannot be recorded fails the session."""
        try:
            self.audit.record("session-end", status=outcome.status, reason=outcome.message)
        except AuditFailed as exc:
            if outcome.status == "ended":  # the end itself could not be recorded: say so
                return ProxyOutcome("failed", exc.message)
        return outcome

    # ------------------------------------------------------------------ verification
    def _verify(self) -> PinnedRevision | LockedRevision:
        """The baseline: a lock file's entry when given, else the pinned server's latest
        revision, verified for use, with its signed tools. The one place the proxy obtains
        what it enforces (runs in a worker thread). A verification of the very same inputs
        recorded beside the pin file is reused (:mod:`histor_sign._verified_cache`: why
        that is sound); freshness is judged every time."""
        from histor_sign._verified_cache import VerifiedCache, using
        from histor_sign.pins import PinStore, use_pinned

        if self.locked is not None:
            self.locked.require_package(self.target.command, self.target.cwd)
            return self.locked
        store = self.store if isinstance(self.store, PinStore) else PinStore.load(self.store)
        entry = store.get(self.server)
        if entry is not None:
            warning = entry.trust_for_use(self.trust).warning()
            if warning is not None:
                self.notice(f"{PREFIX}: warning: {warning}")
        with using(VerifiedCache(store.path)):
            pinned = use_pinned(store, self.server, trust=self.trust, offline=self.offline,
                                signed_tools=True)
        if pinned.awaiting is not None:
            self.notice(f"{PREFIX}: {printable(self.server, 200)} {pinned.awaiting.summary()}"
                        f"; serving revision {pinned.revision}'s tools where the server still "
                        "serves them exactly (accept it with histor-sign trust update)")
        return pinned

    async def _verified(self, verifying: asyncio.Task[PinnedRevision | LockedRevision]
                        ) -> PinnedRevision | LockedRevision:
        from histor_sign.pins import NotPinned

        try:
            return await verifying
        except NotPinned as exc:
            reason = (f"{printable(exc.server, 200)} is not pinned in {exc.store_path}: pin "
                      "its publisher first (histor-sign trust add)")
        except HistorError as exc:
            reason = exc.message
        except Exception as exc:  # a fault below us: one line, never a traceback
            reason = f"verification failed unexpectedly ({type(exc).__name__})"
        raise _Ended("refused", f"refused to serve {printable(self.server, 200)}: "
                                f"{printable(reason, 600)}")

    # ------------------------------------------------------------------ host side
    async def _host_loop(self, reader: LineReader,
                         verifying: asyncio.Task[PinnedRevision | LockedRevision]) -> None:
        assert self._host is not None
        while True:
            message = await self._next_host(reader)
            if message is None:
                return
            method = message.get("method")
            if self._state.era is None and "id" in message and method not in (None, "ping"):
                try:
                    if await self._negotiate(message, verifying):
                        continue
                except _Ended as ended:
                    # Not noticed here: the outcome carries the one line (the CLI's exit
                    # line), so a refusal is said once, like every other ending.
                    self.audit.record("session-refused", server=self.server,
                                      reason=ended.message)
                    await self._reply_error(message, REFUSED, f"{PREFIX}: {ended.message}")
                    raise
            await self._from_host(message)

    async def _negotiate(self, message: dict[str, Any],
                         verifying: asyncio.Task[PinnedRevision | LockedRevision]) -> bool:
        """A host request before the session's era is settled. The era is the one the host
        ends up choosing, as it would be talking to the server directly: a
        ``server/discover`` is relayed to the upstream as it is (its answer, an error
        included, goes back unchanged, and the host decides), and the first other request
        opens the session — ``initialize`` the handshake era, a request carrying a protocol
        version the modern one. True when ``message`` was fully handled here."""
        if self._revision is None:
            self._revision = await self._verified(verifying)
        if self._upstream is None:
            await self._start_upstream()
        if message["method"] == "server/discover":
            await self._forward_request(message)
            return True
        return await self._open(message)

    async def _next_host(self, reader: LineReader) -> dict[str, Any] | None:
        """The host's next message. A failure elsewhere cancels the host task (`_fail`),
        so no per-message race of two waits is needed."""
        if self._failure is not None:
            raise self._failure
        while True:
            try:
                message = await reader.message()
                break
            except Oversized as exc:
                await self._host_oversized(exc)
        if message is not None and "id" in message and "method" in message:
            self._owed[_key(message["id"])] = message["id"]
        return message

    async def _answer_owed(self, outcome: ProxyOutcome) -> None:
        """Answer every host request still open with a JSON-RPC error, so a host never
        waits on a request the session can no longer answer. The text is the proxy's own
        (never the server's); bounded by the shutdown grace, as the host may not read."""
        owed, self._owed = list(self._owed.values()), {}
        if not owed or self._host is None:
            return
        why = ("refused" if outcome.status == "refused"
               else "the audit log cannot be written, so the call was not made"
               if self.audit.failure is not None
               else "the proxy was stopped" if outcome.status == "ended"
               else "the upstream server or the connection failed")
        text = (f"{PREFIX}: the session ended before this request was answered ({why}; "
                "the proxy's stderr says why)")
        with contextlib.suppress(TimeoutError, WireError):
            async with asyncio.timeout(self.shutdown_grace):
                for ident in owed:
                    await self._host.send({"jsonrpc": "2.0", "id": ident,
                                           "error": {"code": SESSION_ENDED, "message": text}})

    async def _start_upstream(self) -> None:
        """Start the upstream and hear it; what it sends before the host has its
        initialize answer is held (a host may ignore it before)."""
        try:
            self._upstream = open_upstream(
                self.target, max_message_bytes=self.max_message_bytes,
                timeout=self.options.timeout, shutdown_grace=self.shutdown_grace,
                on_stderr=self._server_stderr)
            await self._upstream.start()
        except HistorError as exc:
            raise _Ended("failed", exc.message) from None
        # What the comparison and the guard run on, imported while the server starts (a
        # process start takes far longer): else the host's first answer would wait on it.
        import histor_sign.drift
        import histor_sign.guard  # noqa: F401
        self._held = []
        self._spawn(self._upstream_loop())

    def _server_stderr(self, line: str) -> None:
        """Each line of a stdio server's stderr, passed on to the operator (the host's
        server log) escaped and prefixed — never holding the session up (:class:`Notices`:
        bounded, dropped lines counted)."""
        self.notice(f"{PREFIX}: server stderr: {printable(line, STDERR_LINE_CHARS)}")

    async def _open(self, first: dict[str, Any]) -> bool:
        """Run the host's handshake through the started upstream, walk and compare. True
        when ``first`` was answered here (``initialize``). An ``initialize`` the upstream
        answers with an error (a modern-only server's -32022) is relayed as it is and the
        era stays open: the host decides, as it would talking to the server directly."""
        assert self._upstream is not None and self._revision is not None
        method = first["method"]
        params = first.get("params") if isinstance(first.get("params"), dict) else {}
        assert isinstance(params, dict)
        if method == "initialize":
            answer = await self._legacy_handshake(first, params)
            if answer is None:
                return True
        else:
            self._modern_handshake(method, params)
            answer = None
        await self._refresh(initial=True)
        revision = self._revision
        self._announce_session(revision)
        if answer is not None:
            await self._send_host({"jsonrpc": "2.0", "id": first["id"], "result": answer})
        await self._release_held()
        self._maybe_offer_acceptance(revision)
        return answer is not None

    async def _legacy_handshake(self, first: dict[str, Any],
                                params: dict[str, Any]) -> dict[str, Any] | None:
        """Step: relay the host's ``initialize`` upstream; the result to answer, or None
        when the upstream's error was relayed to the host as it is."""
        assert self._upstream is not None
        caps = params.get("capabilities")
        self._state.host_caps = caps if isinstance(caps, dict) else {}
        info = params.get("clientInfo")
        name = info.get("name") if isinstance(info, dict) else None
        if isinstance(name, str):
            self._state.host_name = printable(name, 100)
        result = await self._internal_request("initialize", params, timeout=True,
                                              raw_error=True)
        if "error" in result:
            await self._send_host({**result, "id": first["id"]})
            return None
        answer = result["result"]
        version = answer.get("protocolVersion") if isinstance(answer, dict) else None
        if not isinstance(version, str):
            raise _Ended("failed", "the upstream server's initialize result has no "
                                   "protocolVersion")
        self._state.era, self._state.protocol_version = Era.LEGACY, version
        self._upstream.negotiated(version)
        await self._upstream.send(notification("notifications/initialized"))
        self._upstream.listen()
        self._state.swallow_initialized = True
        assert isinstance(answer, dict)
        return answer

    def _modern_handshake(self, method: str, params: dict[str, Any]) -> None:
        """Step: take the era, version and capabilities from a modern first request."""
        assert self._upstream is not None
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        assert isinstance(meta, dict)
        version = meta.get(META_VERSION)
        if not isinstance(version, str):
            raise _Ended("failed", f"the host's first request ({printable(method, 80)}) "
                         "is neither initialize nor a modern request with a protocol "
                         "version")
        caps = meta.get(META_CAPS)
        self._state.host_caps = caps if isinstance(caps, dict) else {}
        self._state.era, self._state.protocol_version = Era.MODERN, version
        self._upstream.negotiated(version)

    def _announce_session(self, revision: PinnedRevision | LockedRevision) -> None:
        """Step: audit the session's start and tell the user what is served."""
        assert self._state.era is not None
        self.audit.record(
            "session-start", server=self.server, **_baseline_record(revision),
            upstream=self.target.describe(),
            era=self._state.era.value, protocolVersion=self._state.protocol_version,
            onDrift=self.on_drift.value,
        )
        assert self.contract is not None
        self.notice(f"{PREFIX}: serving {revision.headline()}: "
                    f"{len(self.contract.offered)} tool(s) offered"
                    + (f", {len(self.contract.withheld)} withheld" if self.contract.withheld
                       else ""))
        self._wire_warnings()

    async def _release_held(self) -> None:
        """Step: pass the host what the server sent before the session started."""
        held, self._held = self._held, None
        self._held_bytes = 0
        if self._held_dropped:
            self.notice(f"{PREFIX}: {self._held_dropped} message(s) the server sent before the "
                        f"session started were dropped (at most {MAX_HELD_MESSAGES} messages "
                        f"and {MAX_HELD_BYTES} bytes wait for the host)")
        for message in held or []:
            await self._send_host(message)

    def _maybe_offer_acceptance(self, revision: PinnedRevision | LockedRevision) -> None:
        """Step: a pinned revision awaiting acceptance is offered to a host that elicits."""
        from histor_sign.pins import PinnedRevision

        if (isinstance(revision, PinnedRevision) and revision.awaiting is not None
                and self._state.era is Era.LEGACY
                and isinstance(self._state.host_caps.get("elicitation"), dict)):
            self._spawn(self._offer_acceptance(revision))

    async def _offer_acceptance(self, revision: PinnedRevision) -> None:
        """Ask the user (through the host's elicitation) whether the revision waiting for
        acceptance may be used; accepted, the pin follows it and the session serves it
        (:mod:`._acceptance`)."""
        from histor_sign.proxy import _acceptance

        awaiting = revision.awaiting
        assert awaiting is not None
        await self._host_initialized.wait()
        reply = await self._host_request(
            "elicitation/create", _acceptance.question(self.server, awaiting,
                                                        revision.revision))
        record = {"revision": awaiting.revision, "manifestDigest": awaiting.manifest_digest,
                  "risk": awaiting.risk, "by": f"the user, through {self._state.host_name}"}
        if not _acceptance.accepted(reply):
            self.audit.record("revision-not-accepted", **record)
            return
        try:
            now = await asyncio.to_thread(_acceptance.accept, revision, store=self.store,
                                          trust=self.trust, offline=self.offline)
        except HistorError as exc:
            self.audit.record("revision-not-accepted", **record, reason=exc.message)
            self.notice(f"{PREFIX}: not accepted: {printable(exc.message, 400)}")
            return
        self.audit.record("revision-accepted", **record)
        self._revision = now
        self.notice(f"{PREFIX}: accepted: serving {now.headline()}")
        # Like a list_changed from the server: the one refresher walks and compares under
        # the accepted revision, then tells the host its list changed.
        self._heard += 1
        self._to_forward.setdefault("notifications/tools/list_changed",
                                    notification("notifications/tools/list_changed"))
        if self._refresher is None:
            self._refresher = self._spawn(self._refresh_loop())

    async def _from_host(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            await self._host_response(message)
            return
        if "id" not in message:
            await self._host_notification(message)
            return
        if self._upstream is None:
            if method == "ping":
                await self._send_host({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                return
            await self._reply_error(message, INVALID_PARAMS, f"{PREFIX}: no session yet")
            return
        if method in ("tools/list", "tools/call"):
            await self._current()
        if method == "tools/list":
            await self._answer_tools_list(message)
        elif method == "tools/call":
            await self._tools_call(message)
        elif method == "initialize":
            await self._reply_error(message, INVALID_PARAMS,
                                    f"{PREFIX}: the session is already initialized")
        else:
            await self._forward_request(message)

    async def _host_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "notifications/initialized" and self._state.swallow_initialized:
            self._state.swallow_initialized = False
            self._host_initialized.set()
            return
        if self._upstream is None:
            return
        if method == "notifications/cancelled":
            params = message.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            key = _key(request_id)
            task = self._approvals.pop(key, None)
            if task is not None:
                task.cancel()
                return
            up_id = self._host_to_up.get(key)
            if up_id is None:
                return  # answered already, or never forwarded
            message = {**message, "params": {**_obj(params), "requestId": up_id}}
        await self._to_upstream(message)

    async def _host_response(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool):
            return
        pending = self._host_pending.pop(ident, None)
        if pending is None:
            return
        if pending.future is not None:
            if not pending.future.done():
                pending.future.set_result(message)
            return
        self._server_to_host.pop(_key(pending.peer_id), None)
        assert self._upstream is not None
        await self._to_upstream({**message, "id": pending.peer_id})

    async def _forward_request(self, message: dict[str, Any]) -> None:
        assert self._upstream is not None
        up_id = next(self._ids)
        self._up_pending[up_id] = _Pending(peer_id=message["id"], method=message["method"])
        self._host_to_up[_key(message["id"])] = up_id
        await self._to_upstream({**message, "id": up_id})

    async def _answer_tools_list(self, message: dict[str, Any]) -> None:
        params = message.get("params")
        if isinstance(params, dict) and params.get("cursor") is not None:
            await self._reply_error(message, INVALID_PARAMS, "Invalid cursor")
            return
        assert self.contract is not None
        result: dict[str, Any] = {"tools": list(self.contract.offered)}
        if self._state.era is Era.MODERN:
            result.update({"resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
        await self._send_host({"jsonrpc": "2.0", "id": message["id"], "result": result})

    # ------------------------------------------------------------------ tools/call
    async def _tools_call(self, message: dict[str, Any]) -> None:
        contract = self.contract
        assert contract is not None
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        name = params.get("name")
        arguments = params.get("arguments", {})
        decision = _call_decision(contract, name, arguments)
        if decision.allowed:
            if contract.on_drift is OnDrift.WARN and name in {
                    w.name for w in contract.differences}:
                self.audit.record("call-warned", tool=name,
                                  argumentsDigest=_arguments_digest(arguments),
                                  reason="the tool differs from the signed revision")
            await self._forward_request(message)
            return
        await self._hold_or_deny(message, params, decision, _arguments_digest(arguments))

    async def _hold_or_deny(self, message: dict[str, Any], params: dict[str, Any],
                            decision: Decision, digest: str | None) -> None:
        """Step: a call the guard did not allow is put to the user when it may be, else denied."""
        if decision.needs_approval and self._can_elicit(params):
            if self._state.era is Era.MODERN:
                await self._approve_modern(message, params, decision, digest)
                return
            key = _key(message["id"])
            task = self._spawn(self._approve(message, decision, digest))
            self._approvals[key] = task
            return
        await self._deny(message, decision, digest)

    def _can_elicit(self, params: dict[str, Any]) -> bool:
        """The host can be asked: it declared ``elicitation`` (in the modern era, in this
        request's own capabilities, else the session's first)."""
        caps = self._state.host_caps
        if self._state.era is Era.MODERN:
            meta = params.get("_meta")
            own = meta.get(META_CAPS) if isinstance(meta, dict) else None
            caps = own if isinstance(own, dict) else caps
        return isinstance(caps.get("elicitation"), dict)

    @staticmethod
    def _question(decision: Decision, digest: str | None) -> dict[str, Any]:
        """The elicitation put to the user: the tool, the reasons, the arguments' digest
        (never their values, never server text); one boolean to answer."""
        tool = decision.tool or ""
        reasons = "; ".join(f"{r.code}: {r.message}" for r in decision.reasons)
        text = (f"{PREFIX}: approve the call to {shown_name(tool)}? It needs approval — "
                f"{reasons}. Arguments digest {digest or 'unavailable'}. "
                "It is forwarded only if you accept.")
        schema = {"type": "object", "properties": {"approve": {
            "type": "boolean", "title": "Forward this call to the server",
            "default": False}}, "required": ["approve"]}
        return {"message": text, "requestedSchema": schema}

    def _approval_state(self, tool: str, digest: str | None, nonce: str) -> str:
        """The ``requestState`` that binds a modern-era approval to one call: a nonce and
        an HMAC (a key of this session only) over the nonce, the tool and the digest of
        its arguments, so an answer can approve only the call it was asked for, once."""
        import hashlib
        import hmac

        mac = hmac.new(self._approval_key, f"{nonce}\n{tool}\n{digest}".encode(),
                       hashlib.sha256).hexdigest()
        return f"{APPROVAL_STATE}{nonce}.{mac}"

    async def _approve_modern(self, message: dict[str, Any], params: dict[str, Any],
                              decision: Decision, digest: str | None) -> None:
        """Approval in the modern era, where a server sends no requests: the call is
        answered with an ``input_required`` result holding the elicitation and a bound
        ``requestState``; the host asks the user and retries the call with the answer
        (``inputResponses``). The retry is forwarded — without those two members, which
        are the proxy's — only with a valid state for this very call and ``approve: true``.
        """
        tool = decision.tool or ""
        state = params.get("requestState")
        responses = params.get("inputResponses")
        if not (isinstance(state, str) and state.startswith(APPROVAL_STATE)):
            await self._ask_modern(message, decision, digest)
            return
        nonce = self._open_nonce(state, tool, digest)
        if nonce is None:
            await self._deny(message, decision, digest, approval="not for this call")
            return
        self._approval_nonces.pop(nonce, None)  # one answer approves one call
        how = _not_approved(responses.get("approve") if isinstance(responses, dict) else None)
        if how is not None:
            await self._deny(message, decision, digest, approval=how)
            return
        self.audit.record("call-approved", tool=tool, argumentsDigest=digest,
                          reasons=[r.code for r in decision.reasons])
        own = {"requestState", "inputResponses"}
        await self._forward_request({**message, "params": {
            k: v for k, v in params.items() if k not in own}})

    def _open_nonce(self, state: str, tool: str, digest: str | None) -> str | None:
        """Step: the open nonce of a ``requestState`` bound to this very call, else None."""
        import hmac

        nonce = state[len(APPROVAL_STATE):].partition(".")[0]
        if nonce not in self._approval_nonces or not hmac.compare_digest(
                state, self._approval_state(tool, digest, nonce)):
            return None
        return nonce

    async def _ask_modern(self, message: dict[str, Any], decision: Decision,
                          digest: str | None) -> None:
        """Step (modern era): answer the call with the question and a fresh bound state."""
        import secrets

        nonce = secrets.token_hex(16)
        self._approval_nonces[nonce] = None
        while len(self._approval_nonces) > MAX_OPEN_APPROVALS:
            del self._approval_nonces[next(iter(self._approval_nonces))]
        result = {"resultType": "input_required",
                  "inputRequests": {"approve": {"method": "elicitation/create", "params": {
                      "mode": "form", **self._question(decision, digest)}}},
                  "requestState": self._approval_state(decision.tool or "", digest, nonce)}
        await self._send_host({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _deny(self, message: dict[str, Any], decision: Decision, digest: str | None,
                    approval: str | None = None) -> None:
        tool = decision.tool
        self.audit.record(
            "call-denied", tool=tool, argumentsDigest=digest,
            reasons=[{"code": r.code, "pointer": r.pointer, "message": r.message}
                     for r in decision.reasons],
            **({"approval": approval} if approval else {}),
        )
        shown = shown_name(tool) if tool is not None else "(no tool)"
        self.notice(f"{PREFIX}: denied a call to {shown}: "
                    + ", ".join(sorted({r.code for r in decision.reasons})))
        lines = [f"{PREFIX} denied this call to {shown} before it reached the server:"]
        lines += [f"- {r.code}" + (f" at {r.pointer}" if r.pointer else "") + f": {r.message}"
                  for r in decision.reasons]
        if decision.needs_approval:
            lines.append(
                "A person may approve this call: use a host that supports MCP elicitation, "
                "or allow it in the proxy's guard policy (require_dry_run = false, or a larger "
                "max_effect for the tool)." if approval is None else
                f"The user did not approve it ({approval}).")
        result: dict[str, Any] = {"content": [{"type": "text", "text": "\n".join(lines)}],
                                  "isError": True}
        if self._state.era is Era.MODERN:
            result["resultType"] = "complete"
        await self._send_host({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _approve(self, message: dict[str, Any], decision: Decision,
                       digest: str | None) -> None:
        key = _key(message["id"])
        tool = decision.tool or ""
        try:
            reply = await self._host_request("elicitation/create",
                                             self._question(decision, digest))
        except asyncio.CancelledError:
            self.audit.record("call-cancelled", tool=tool, argumentsDigest=digest)
            return
        finally:
            self._approvals.pop(key, None)
        how = _not_approved(reply.get("result"))
        if how is not None:
            await self._deny(message, decision, digest, approval=how)
            return
        assert self.contract is not None
        if tool not in self.contract.offered_names:  # the list changed while asking
            from histor_sign.guard import Decision as _D
            from histor_sign.guard import Reason

            await self._deny(message, _D(False, tool, [Reason(
                "not-offered", f"tool {shown_name(tool)} is no longer offered")]), digest)
            return
        self.audit.record("call-approved", tool=tool, argumentsDigest=digest,
                          reasons=[r.code for r in decision.reasons])
        await self._forward_request(message)

    async def _host_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        host_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._host_pending[host_id] = _Pending(future=future, method=method)
        await self._send_host({"jsonrpc": "2.0", "id": host_id, "method": method,
                               "params": params})
        return await future

    # ------------------------------------------------------------------ upstream side
    async def _upstream_loop(self) -> None:
        assert self._upstream is not None
        try:
            while True:
                try:
                    message = await self._upstream.receive()
                except Oversized as exc:
                    await self._upstream_oversized(exc)
                    continue
                if message is None:
                    raise _Ended("failed", await self._upstream.gone())
                await self._from_upstream(message)
        except _Ended as ended:
            self._fail(ended)
        except WireError as exc:
            self._fail(_Ended("failed", exc.message))
        except HistorError as exc:
            self._fail(_Ended("failed", exc.message))

    async def _upstream_oversized(self, exc: Oversized) -> None:
        """A server message over the limit was dropped: the request it answers (when its
        id names one in flight) gets a JSON-RPC error instead, and the session goes on."""
        self.notice(f"{PREFIX}: {exc.message}")
        ident = exc.ident
        if not isinstance(ident, int) or isinstance(ident, bool) or ident not in self._up_pending:
            return
        await self._upstream_response({"jsonrpc": "2.0", "id": ident, "error": {
            "code": INTERNAL_ERROR, "message": f"{PREFIX}: the server's answer was over the "
            f"limit of {self.max_message_bytes} bytes (max_message_bytes) and was not "
            "relayed"}})

    async def _host_oversized(self, exc: Oversized) -> None:
        """A host message over the limit was dropped: a request gets a JSON-RPC error, an
        answer to a server request is an error to the server; the session goes on."""
        self.notice(f"{PREFIX}: {exc.message}")
        ident = exc.ident
        if ident is NO_ID:
            return
        text = (f"{PREFIX}: the message was over the limit of {self.max_message_bytes} bytes "
                "(max_message_bytes) and was not relayed")
        pending = self._host_pending.get(ident) if isinstance(ident, int) else None
        if pending is not None and pending.future is None:  # the host answered the server
            await self._host_response({"jsonrpc": "2.0", "id": ident, "error": {
                "code": INTERNAL_ERROR, "message": text}})
            return
        await self._reply_error({"id": ident}, INVALID_REQUEST, text)

    def _fail(self, ended: _Ended) -> None:
        if self._failure is None:
            self._failure = ended
        for pending in self._up_pending.values():
            if pending.future is not None and not pending.future.done():
                pending.future.set_exception(ended)
        if self._host_task is not None and not self._host_task.done():
            self._host_task.cancel()

    async def _from_upstream(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:
            await self._upstream_response(message)
        elif "id" in message:
            host_id = next(self._ids)
            self._host_pending[host_id] = _Pending(peer_id=message["id"], method=method)
            self._server_to_host[_key(message["id"])] = host_id
            await self._to_host_in_order({**message, "id": host_id})
        elif method in LIST_CHANGED_NOTIFICATIONS:
            if self._held is not None:
                self._relay.on_notification(message)
                return  # the first walk restarts itself; the host sees its result
            self._heard += 1
            self._to_forward.setdefault(method, message)
            if self._refresher is None:
                self._refresher = self._spawn(self._refresh_loop())
        else:
            if method == "notifications/cancelled":
                params = message.get("params")
                request_id = params.get("requestId") if isinstance(params, dict) else None
                mapped = self._server_to_host.get(_key(request_id))
                if mapped is None:
                    return
                message = {**message, "params": {**_obj(params), "requestId": mapped}}
            await self._to_host_in_order(message)

    async def _to_host_in_order(self, message: dict[str, Any]) -> None:
        """Server requests and notifications wait until the host has its initialize
        answer (a host may ignore them before), then go in the order they came. At most
        :data:`MAX_HELD_MESSAGES` and :data:`MAX_HELD_BYTES` wait: beyond, a notification
        is dropped and a request is answered with an error (the server never waits on
        it); the count is said once."""
        if self._held is None:
            await self._send_host(message)
            return
        size = len(encode(message))
        if len(self._held) < MAX_HELD_MESSAGES and self._held_bytes + size <= MAX_HELD_BYTES:
            self._held.append(message)
            self._held_bytes += size
            return
        self._held_dropped += 1
        ident = message.get("id")
        pending = self._host_pending.pop(ident, None) if isinstance(ident, int) else None
        if pending is not None and self._upstream is not None:
            self._server_to_host.pop(_key(pending.peer_id), None)
            await self._to_upstream({"jsonrpc": "2.0", "id": pending.peer_id, "error": {
                "code": INTERNAL_ERROR, "message": f"{PREFIX}: the host has not started the "
                "session yet and too much is waiting for it"}})

    async def _upstream_response(self, message: dict[str, Any]) -> None:
        ident = message.get("id")
        if not isinstance(ident, int) or isinstance(ident, bool):
            return  # not an id the proxy sent: dropped
        pending = self._up_pending.pop(ident, None)
        if pending is None:
            return
        if pending.future is not None:
            if not pending.future.done():
                pending.future.set_result(message)
            return
        self._host_to_up.pop(_key(pending.peer_id), None)
        await self._send_host({**message, "id": pending.peer_id})

    async def _current(self) -> None:
        """Wait until the contract accounts for every ``list_changed`` heard so far: at
        most the walk under way and one more, however many notices keep coming."""
        target = self._heard
        async with self._refreshed:
            await self._refreshed.wait_for(lambda: self._decided >= target)

    async def _refresh_loop(self) -> None:
        """The one refresher: walk, compare, install, then forward each kind of notice
        heard once — again while notices came meanwhile. A storm of notices therefore
        costs one walk at a time and never queues a walk per notice."""
        try:
            while self._decided < self._heard:
                target = self._heard
                forward, self._to_forward = self._to_forward, {}
                try:
                    await self._refresh()
                except _Ended as ended:
                    if ended.status != "failed" or self._heard == target:
                        raise
                    # The list changed under the walk (pages that no longer fit): the
                    # next walk reads the new one.
                    self._to_forward = {**forward, **self._to_forward}
                    continue
                self._decided = target
                async with self._refreshed:
                    self._refreshed.notify_all()
                for message in forward.values():
                    await self._send_host(message)
        except _Ended as ended:
            self._fail(ended)
        finally:
            self._refresher = None

    async def _refresh(self, *, initial: bool = False) -> None:
        """Walk the served tools, compare, and install the new contract."""
        from histor_sign.mcp._session import Session
        from histor_sign.mcp._walk import TOOLS, walk_list

        assert self._revision is not None and self._state.era is not None
        assert self._state.protocol_version is not None
        async with self._refresh_lock:
            # The walk declares the host's own capabilities (modern era; in the handshake
            # era the host's initialize did): the list compared is the one this host is
            # offered.
            session = Session(channel=self._relay, era=self._state.era,
                              protocol_version=self._state.protocol_version,
                              timeout=self.options.timeout,
                              client_capabilities=dict(self._state.host_caps))
            try:
                walk = await walk_list(session, self.options, TOOLS)
                contract = build_contract(self._revision, walk.tools, on_drift=self.on_drift,
                                          fail_on=self.fail_on, policy=self.policy)
            except Blocked as exc:
                raise _Ended("refused", exc.message) from None
            except _Ended:
                raise
            except HistorError as exc:
                raise _Ended("failed", f"cannot compare the served tools: {exc.message}") \
                    from None
            previous = self.contract
            self.contract = contract
            self._report(previous, contract, initial)

    def _report(self, previous: Contract | None, contract: Contract, initial: bool) -> None:
        if not initial:
            before = previous.offered_names if previous is not None else frozenset()
            self.audit.record("tools-changed", offered=sorted(contract.offered_names),
                              added=sorted(contract.offered_names - before),
                              removed=sorted(before - contract.offered_names))
        old = {(w.name, w.change) for w in previous.differences} if previous else set()
        event = "tool-warned" if contract.on_drift is OnDrift.WARN else "tool-withheld"
        verb = "differs (offered: on_drift is warn)" if event == "tool-warned" else "withheld"
        for item in contract.differences:
            if (item.name, item.change) in old:
                continue
            self.audit.record(event, revision=contract.revision.revision, **item.to_json())
            self.notice(f"{PREFIX}: {verb}: {item.line()}")

    async def _internal_request(self, method: str, params: dict[str, Any] | None, *,
                                timeout: bool, raw_error: bool = False) -> dict[str, Any]:
        """Send the proxy's own request upstream; the whole response message."""
        assert self._upstream is not None
        up_id = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._up_pending[up_id] = _Pending(future=future, method=method)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": up_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            async with asyncio.timeout(self.options.timeout if timeout else None):
                await self._upstream.send(message)
                return await future
        except TimeoutError:
            self._up_pending.pop(up_id, None)
            raise _Ended("failed", f"the upstream server did not answer {method} within "
                                   f"{self.options.timeout:g} s (the proxy's timeout)") from None

    # ------------------------------------------------------------------ plumbing
    async def _send_host(self, message: dict[str, Any]) -> None:
        assert self._host is not None
        if "method" not in message:
            self._owed.pop(_key(message.get("id")), None)
        try:
            await self._host.send(message)
        except WireError as exc:
            self._fail(_Ended("ended", exc.message))

    async def _reply_error(self, message: dict[str, Any], code: int, text: str) -> None:
        if "id" in message and self._host is not None:
            await self._send_host({"jsonrpc": "2.0", "id": message["id"],
                                   "error": {"code": code, "message": text}})

    async def _to_upstream(self, message: dict[str, Any]) -> None:
        """Relay ``message`` to the server. A server that stopped reading (it exited) may
        still have answers on its way: the upstream loop reads them, and says how the server
        ended, before the session fails; if the server does not end, the session fails
        after the shutdown grace. The message stays owed to the host meanwhile."""
        assert self._upstream is not None
        try:
            await self._upstream.send(message)
        except WireError as exc:
            if self._stopped_reading is None:
                self._stopped_reading = self._spawn(self._fail_after(exc.message))

    async def _fail_after(self, message: str) -> None:
        await asyncio.sleep(self.shutdown_grace)
        self._fail(_Ended("failed", message))

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(self._audit_failed)
        return task

    def _audit_failed(self, task: asyncio.Task[Any]) -> None:
        """A task whose audit record failed ends the session (the call it decided was not
        made), as a failure in the host loop does."""
        failure = None if task.cancelled() else task.exception()
        if isinstance(failure, AuditFailed):
            self._fail(_Ended("failed", failure.message))

    def _wire_warnings(self) -> None:
        """Say what the wire skipped (banner lines), once per new count."""
        if self._upstream is None:
            return
        for line in self._upstream.warnings():
            if line not in self._warned:
                self._warned.add(line)
                self.notice(f"{PREFIX}: warning: {line}")

    async def _shutdown(self) -> None:
        self._wire_warnings()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        if self._upstream is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._upstream.aclose())


class _RelayChannel(Channel):
    """The proxy's own requests (the tools/list walk) over the live upstream session, so
    the fetch's walk runs unchanged: its ids come from the proxy's id space."""

    def __init__(self, proxy: Proxy) -> None:
        super().__init__(max_bytes=1 << 62)
        self.proxy = proxy

    def new_id(self) -> int:
        return next(self.proxy._ids)

    async def _request(self, message: dict[str, Any], method: str,
                       headers: dict[str, str] | None) -> dict[str, Any]:
        proxy = self.proxy
        assert proxy._upstream is not None
        msg_id = message["id"]
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        proxy._up_pending[msg_id] = _Pending(future=future, method=method)
        try:
            await proxy._upstream.send(message)
            answer = await future
        finally:
            proxy._up_pending.pop(msg_id, None)
        result = self.match_response(answer, msg_id, method, "the upstream server")
        assert result is not None
        return result

    async def start(self) -> None:
        return

    async def notify(self, method: str) -> None:
        assert self.proxy._upstream is not None
        await self.proxy._upstream.send(notification(method))

    async def aclose(self) -> None:
        return


def _baseline_record(revision: PinnedRevision | LockedRevision) -> dict[str, Any]:
    """The session-start audit members that say what the contract is: who signed which
    revision, or the lock file it came from (signed by nobody)."""
    if revision.revision is None:
        return revision.audit_json()
    return {"revision": revision.revision,
            "manifestDigest": revision.envelope.statement.manifest_digest,
            "signer": {"issuer": revision.envelope.issuer, "identity": revision.signer},
            "freshness": revision.freshness.value}


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _key(ident: Any) -> tuple[str, Any]:
    return (type(ident).__name__, ident)


def _not_approved(answer: Any) -> str | None:
    """Step: None when an elicitation answer approves the call, else how it did not."""
    action = answer.get("action") if isinstance(answer, dict) else None
    content = answer.get("content") if isinstance(answer, dict) else None
    if action == "accept" and isinstance(content, dict) and content.get("approve") is True:
        return None
    return "declined" if action in ("decline", "cancel") else "not accepted"


def _call_decision(contract: Contract, name: Any, arguments: Any) -> Decision:
    """Step: the guard's decision on a ``tools/call`` (malformed or not offered: denied)."""
    from histor_sign.guard import Decision, Reason

    if not isinstance(name, str):
        return Decision(False, None, [Reason("malformed-call",
                                             "tools/call has no string name")])
    if not isinstance(arguments, dict):
        # MCP arguments are an object. JSON text is not decoded here: what the guard
        # checks must be exactly what the server receives.
        return Decision(False, name, [Reason(
            "malformed-call", "tools/call arguments are not a JSON object")])
    if name not in contract.offered_names:
        return Decision(False, name, [Reason(
            "not-offered", f"tool {shown_name(name)} is not offered: it is not a tool of "
            "the signed revision served as signed")])
    return contract.guard.check_arguments(name, arguments)


def _arguments_digest(arguments: Any) -> str | None:
    """SHA-256 of the canonical arguments (never the values), None if not canonical."""

    try:
        return sha256_digest(canonical_bytes(arguments))
    except (HistorError, TypeError, ValueError):
        return None


__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "Proxy", "ProxyOutcome", "same_id"]
