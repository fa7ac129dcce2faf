"""``fetch``: connect, negotiate, walk every page, shut down — always shut down.

Any failure is one :class:`~histor_sign.errors.HistorError` (exit 2) whose message has
every secret value scrubbed, and the server process / HTTP session is closed on every
path, including cancellation.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from histor_sign.errors import FetchError, HistorError, LimitExceeded
from histor_sign.mcp._http_channel import SessionExpired
from histor_sign.mcp._jsonrpc import Channel, RequestTimeout, ServerGone, clip
from histor_sign.mcp._session import Session, open_session, renew_session
from histor_sign.mcp._target import FetchOptions, Target
from histor_sign.mcp._walk import (
    PROMPTS,
    RESOURCE_TEMPLATES,
    ListKind,
    NotServed,
    Walk,
    walk_list,
    walk_tools,
)
from histor_sign.models import NOT_SERVED, SURFACE_CAPTURED, Snapshot, not_served_json

#: New legacy sessions started after the server expired ours mid-walk.
MAX_SESSION_RENEWALS = 1


def fetch(target: Target, options: FetchOptions | None = None) -> Snapshot:
    """Fetch the complete tools/list of ``target``, every page, as served.

    Blocking (runs its own event loop). Any failure is one
    :class:`~histor_sign.errors.HistorError` with secrets scrubbed; the server process or
    HTTP session is closed on every path.
    """
    return asyncio.run(fetch_async(target, options or FetchOptions()))


async def fetch_async(target: Target, options: FetchOptions | None = None) -> Snapshot:
    """Async form of :func:`fetch`, for callers that already run an event loop."""
    options = options or FetchOptions()
    try:
        return await _fetch(target, options)
    except HistorError as exc:
        _scrub(exc, target.secrets())
        raise


def _channel(target: Target, options: FetchOptions) -> Channel:
    if target.command is not None:
        from histor_sign.mcp._stdio_channel import StdioChannel
        from histor_sign.mcp._target import child_environment, refuse_untrusted_server

        refuse_untrusted_server(target, os.environ)
        env = child_environment(
            os.environ, extra=target.env, withhold=target.withhold_env,
            guarded=target.guarded_secrets,
        )
        return StdioChannel(
            target.command, max_bytes=options.max_bytes, cwd=target.cwd, env=env,
            shutdown_grace=options.shutdown_grace,
        )
    from histor_sign.mcp._http_channel import HttpChannel

    assert target.url is not None
    return HttpChannel(
        target.url, headers=target.headers, bearer_token=target.bearer_token,
        max_bytes=options.max_bytes, timeout=options.timeout,
    )


async def _fetch(target: Target, options: FetchOptions) -> Snapshot:
    channel = _channel(target, options)
    notes: list[str] = []
    try:
        try:
            async with asyncio.timeout(options.total_timeout):
                await channel.start()
                try:
                    session = await open_session(channel, options)
                except (ServerGone, RequestTimeout) as exc:
                    if not (channel.probe_unanswered and options.protocol == "auto"):
                        raise
                    # The server broke on the server/discover probe (early Python SDK
                    # servers crash on a method they do not know, and then answer nothing):
                    # start it again and speak the handshake at once.
                    # (Its warnings are in ``exc``'s message; the new start has its own.)
                    await asyncio.shield(channel.aclose())
                    channel = _channel(target, options)
                    await channel.start()
                    session = await open_session(channel, replace(options, protocol="legacy"))
                    notes.append(
                        "the MCP server stopped answering after the server/discover probe "
                        f"({exc.message}); it was started again and asked with the initialize "
                        "handshake (forcing the legacy protocol skips the probe)"
                    )
                session, walk, renewals = await _walk_with_renewal(session, options)
                surface = await _walk_surface(session, options)
        except TimeoutError:
            raise LimitExceeded(
                f"fetching tools/list from {target.label()} took longer than "
                f"`total_timeout` {options.total_timeout:g} s",
                limit="total_timeout", value=options.total_timeout,
            ) from None
    finally:
        await asyncio.shield(channel.aclose())
    capture: dict[str, Any] = {
        "target": target.describe(),
        "transport": target.transport,
        "era": session.era,
        "protocolVersion": session.protocol_version,
        "clientCapabilities": session.client_capabilities,
        "serverInfo": session.server_info,
        "serverCapabilities": session.server_capabilities,
        "pages": len(walk.page_sizes),
        "pageSizes": walk.page_sizes,
        "restarts": walk.restarts,
        "fetchedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        SURFACE_CAPTURED: True,
    }
    if renewals:
        capture["sessionRenewals"] = renewals
    if walk.duplicates:
        capture["duplicates"] = walk.duplicates
    if surface.not_served:
        capture[NOT_SERVED] = not_served_json(
            {e.kind.member: e.code for e in surface.not_served})
    snapshot = Snapshot(
        tools=walk.tools, capture=capture, source=target.label(),
        instructions=session.instructions if isinstance(session.instructions, str) else None,
        prompts=surface.lists.get(PROMPTS), resource_templates=surface.lists.get(
            RESOURCE_TEMPLATES),
        warnings=(*notes, *channel.warnings(), *_not_served_warning(surface.not_served)),
    )
    _refuse_echoed_secrets(snapshot, target.secrets())
    return snapshot


#: Shorter header values (a flag, a version number) are not credentials and match by chance.
MIN_SECRET_ECHO_LENGTH = 8


def _refuse_echoed_secrets(snapshot: Snapshot, secrets: list[str]) -> None:
    """A server that reflects our credential into its tools or server info would have us
    write it into the snapshot and publish it with a release: refuse instead."""
    needles = [s for s in secrets if len(s) >= MIN_SECRET_ECHO_LENGTH]
    if not needles:
        return
    stack: list[Any] = [snapshot.to_json()]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if any(secret in node for secret in needles):
                raise FetchError(
                    "the MCP server echoed a credential (a `headers`, `bearer_token` or "
                    "`identity_token` value) back in its tools/list or server info; "
                    "refusing to record it",
                    param="headers", alternatives=("bearer_token", "identity_token"),
                )
        elif isinstance(node, dict):
            stack.extend(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


@dataclass
class _Surface:
    #: The walked lists, by kind (absent: the capability is not offered, or not served).
    lists: dict[ListKind, list[dict[str, Any]]] = field(default_factory=dict)
    #: The lists the server advertised but answered with a JSON-RPC error.
    not_served: list[NotServed] = field(default_factory=list)


#: Each optional list and the server capability that offers it.
_SURFACE_LISTS: tuple[tuple[ListKind, str], ...] = (
    (PROMPTS, "prompts"), (RESOURCE_TEMPLATES, "resources"),
)


async def _walk_surface(session: Session, options: FetchOptions) -> _Surface:
    """Prompts and resource templates, each only when the server's capabilities offer it.

    Both are optional parts of the surface: a JSON-RPC error answering one (real servers
    advertise ``prompts`` or ``resources`` and answer ``-32601 Method not found``) records
    that list as not served, and the fetch goes on. Any other failure stays an error."""
    caps = session.server_capabilities if isinstance(session.server_capabilities, dict) else {}
    surface = _Surface()
    for kind, capability in _SURFACE_LISTS:
        if not isinstance(caps.get(capability), dict):
            continue
        try:
            surface.lists[kind] = (await walk_list(session, options, kind)).tools
        except NotServed as gap:
            surface.not_served.append(gap)
    return surface


def _not_served_warning(gaps: list[NotServed]) -> list[str]:
    """One line for every list the server advertised but did not serve (or none)."""
    if not gaps:
        return []
    what = "; ".join(
        f"{gap.kind.method} with JSON-RPC error {gap.code}"
        + (f" ({clip(gap.error.text, 60)})" if gap.error.text else "")
        for gap in gaps
    )
    return [
        f"the MCP server advertises {' and '.join(_capability(g.kind) for g in gaps)} but "
        f"answered {what}: recorded as not served (capture.{NOT_SERVED}); the tools and the "
        "rest of the surface were fetched"
    ]


def _capability(kind: ListKind) -> str:
    return dict(_SURFACE_LISTS)[kind]


async def _walk_with_renewal(session: Session, options: FetchOptions) -> tuple[Session, Walk, int]:
    """Walk; if the server expires our legacy session, start a new one and walk again.

    A cursor from the old session means nothing in the new one (the spec says not to
    persist cursors across sessions), so the walk restarts from the first page.
    """
    renewals = 0
    while True:
        try:
            return session, await walk_tools(session, options), renewals
        except SessionExpired as exc:
            if renewals >= MAX_SESSION_RENEWALS:
                raise FetchError(
                    f"{exc.message}; it expired the new session too, so the list cannot be "
                    "fetched in one session"
                ) from None
            renewals += 1
            session = await renew_session(session, options)


def _scrub(exc: HistorError, secrets: list[str]) -> None:
    """Belt and braces: no secret value survives in an error message."""
    message = exc.message
    for secret in secrets:
        if secret:
            message = message.replace(secret, "***")
    exc.message = message
    exc.args = (message,)
