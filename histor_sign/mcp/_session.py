"""Protocol eras: modern (2026-07-28, stateless) and legacy (initialize handshake).

Auto-detection follows the spec's rules for a dual-era client: send ``server/discover``
first. A DiscoverResult, or a recognised modern error such as -32022 (unsupported version,
with the versions the server does support), means modern. Anything else — another error,
an HTTP status without a modern error body, or on stdio a timeout — means a legacy server,
so fall back to ``initialize``. Authentication failures and dead connections are never
"retried" under the other era: they would fail the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from histor_sign._version import __version__
from histor_sign.errors import FetchError
from histor_sign.mcp._http_channel import AuthError, HttpStatusError, SessionExpired
from histor_sign.mcp._jsonrpc import (
    UNSUPPORTED_PROTOCOL_VERSION,
    Channel,
    Era,
    RequestTimeout,
    RpcError,
    ServerGone,
    clip,
)
from histor_sign.mcp._target import FetchOptions

MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
LEGACY_VERSIONS: tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

CLIENT_INFO: dict[str, str] = {"name": "histor-sign", "version": __version__}
#: We declare what a fully capable host declares (as the official Python SDK's client does
#: with every callback set): servers offer some tools only to hosts that can answer roots,
#: sampling or elicitation requests, and the list we sign must be the one such a host is
#: offered. A host that declares less is offered a subset of it (never drift in the proxy).
#: The requests themselves are refused cleanly during a fetch
#: (:func:`~histor_sign.mcp._jsonrpc.reply_to_server_request`).
CLIENT_CAPABILITIES: dict[str, Any] = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {"form": {}, "url": {}},
}

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"


@dataclass
class Session:
    """A negotiated conversation: which era and version, and what the server said."""

    channel: Channel
    era: Era
    protocol_version: str
    timeout: float
    server_info: Any = None
    server_capabilities: Any = None
    #: The server's ``instructions`` (initialize or server/discover result), as served.
    instructions: Any = None
    client_capabilities: dict[str, Any] = field(default_factory=lambda: dict(CLIENT_CAPABILITIES))

    async def call(self, method: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] | None = extra or None
        headers: dict[str, str] | None = None
        if self.era is Era.MODERN:
            params = {"_meta": modern_meta(self.protocol_version, self.client_capabilities),
                      **(extra or {})}
            headers = modern_headers(self.protocol_version, method)
        return await self.channel.call(method, params, timeout=self.timeout, headers=headers)


def modern_meta(version: str, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        META_VERSION: version,
        META_CAPS: dict(CLIENT_CAPABILITIES if capabilities is None else capabilities),
        META_CLIENT: dict(CLIENT_INFO),
    }


def modern_headers(version: str, method: str) -> dict[str, str]:
    return {"MCP-Protocol-Version": version, "Mcp-Method": method}


async def open_session(channel: Channel, options: FetchOptions) -> Session:
    """Negotiate an era (or use the forced one) and return a ready session."""
    try:
        return await _negotiate(channel, options)
    except HttpStatusError as exc:
        if not isinstance(exc, (AuthError, SessionExpired)):
            await channel.refuse_deprecated_transport(exc.status)
        raise
    except _FallBack as fallback:
        # Only a forced modern protocol gets here: auto falls back, legacy never probes.
        if fallback.status is not None:
            await channel.refuse_deprecated_transport(fallback.status)
        raise FetchError(
            f"the server does not speak the modern protocol ({MODERN_VERSIONS[0]}): "
            f"{fallback.reason}; try `protocol` legacy or auto",
            param="protocol",
        ) from None


async def renew_session(session: Session, options: FetchOptions) -> Session:
    """A fresh legacy session after the server expired ours (HTTP 404 + session id).

    The spec says the client MUST start a new session: a new ``initialize`` without the
    old ``Mcp-Session-Id``, asking for the version the old session had negotiated.
    """
    return await _legacy(session.channel, options, session.protocol_version)


async def _negotiate(channel: Channel, options: FetchOptions) -> Session:
    """The official SDKs' rules for ``auto``: probe ``server/discover``; anything that is
    not positive evidence of a modern server we share a version with falls back to the
    handshake. A -32022 naming our modern version is asked again once, and so is a
    -32022 answering the handshake (the server settled on the modern era meanwhile)."""
    if options.protocol == "legacy":
        return await _legacy(channel, options, LEGACY_VERSIONS[0])
    try:
        return await _modern(channel, options)
    except _FallBack as fallback:
        if options.protocol == "modern":
            raise
        try:
            return await _legacy(channel, options, fallback.version or LEGACY_VERSIONS[0])
        except RpcError as exc:
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not set(
                    _supported(exc.data) or ()) & set(MODERN_VERSIONS):
                raise
        return await _modern(channel, options, retried=True)


def _supported(data: Any) -> list[str] | None:
    """The versions a -32022 error's ``data.supported`` names (None when it names none)."""
    supported = data.get("supported") if isinstance(data, dict) else None
    if not isinstance(supported, list):
        return None
    return [v for v in supported if isinstance(v, str)]


class _FallBack(Exception):
    def __init__(
        self, reason: str, version: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.version = version
        self.status = status


async def _discover(channel: Channel, options: FetchOptions, version: str) -> dict[str, Any]:
    """One ``server/discover`` probe at ``version``: its result, or :class:`RpcError`; an
    HTTP status without a JSON-RPC answer and (stdio) silence fall back to the handshake."""
    channel.enter_era(Era.MODERN)
    try:
        return await channel.call(
            "server/discover",
            {"_meta": modern_meta(version)},
            timeout=options.timeout,
            headers=modern_headers(version, "server/discover"),
        )
    except AuthError:
        raise
    except HttpStatusError as exc:
        raise _FallBack(exc.message, status=exc.status) from None
    except RequestTimeout as exc:
        if not channel.unanswered_probe_means_legacy:
            raise
        channel.probe_unanswered = True
        raise _FallBack(exc.message) from None
    except ServerGone:
        # Servers on early Python SDKs crash on a method they do not know; the caller may
        # start the server again and use the handshake (see ``_client``).
        channel.probe_unanswered = channel.unanswered_probe_means_legacy
        raise


async def _modern(channel: Channel, options: FetchOptions, *,
                  retried: bool = False) -> Session:
    version = MODERN_VERSIONS[0]
    while True:
        try:
            result = await _discover(channel, options, version)
            break
        except RpcError as exc:
            _refused_discover(exc, version, retried)
            retried = True  # it names the version we asked for: ask once more
    _check_discovered(result, version)
    channel.on_protocol_negotiated(Era.MODERN, version)
    meta = result.get("_meta")
    server_info = meta.get(META_SERVER) if isinstance(meta, dict) else None
    return Session(
        channel=channel,
        era=Era.MODERN,
        protocol_version=version,
        timeout=options.timeout,
        server_info=server_info,
        server_capabilities=result.get("capabilities"),
        instructions=result.get("instructions"),
    )


def _refused_discover(exc: RpcError, version: str, retried: bool) -> None:
    """Step: what a refused ``server/discover`` means: returns when it is worth asking once
    more, else raises (:class:`_FallBack` to the handshake, or :class:`FetchError`)."""
    if exc.code != UNSUPPORTED_PROTOCOL_VERSION:
        raise _FallBack(f"server/discover failed: {exc.message}") from None
    listed = _supported(exc.data)
    if listed is not None and version in listed and not retried:
        return
    legacy = _handshake_versions(listed)
    if legacy or listed is None:
        raise _FallBack("it supports only handshake-era versions",
                        legacy[0] if legacy else None) from None
    raise _no_common_version(listed, version) from None


def _handshake_versions(listed: list[str] | None) -> list[str]:
    """Step: the handshake-era versions histor-sign speaks among those listed, ours first."""
    return [v for v in LEGACY_VERSIONS if v in (listed or ())]


def _no_common_version(listed: list[str], version: str) -> FetchError:
    """Step: the error for a server that lists only versions histor-sign does not speak."""
    if version in listed:
        return FetchError(
            f"the server answered server/discover for {version} twice with "
            "JSON-RPC error -32022 (unsupported protocol version) while naming "
            f"{version} among its versions"
        )
    shown = ", ".join(clip(v, 40) for v in listed[:8]) or "none listed"
    return FetchError(
        f"the server supports protocol versions {shown}; histor-sign speaks "
        f"{', '.join(MODERN_VERSIONS + LEGACY_VERSIONS)}"
    )


def _check_discovered(result: dict[str, Any], version: str) -> None:
    """Step: the discover result lists ``version``; else fall back to the handshake."""
    supported = result.get("supportedVersions")
    if not isinstance(supported, list) or version not in supported:
        # A server that answers the probe but lists no modern version we speak (a
        # catch-all ``{}`` answer; Go SDK servers list only handshake-era versions)
        # advertises the handshake: fall back, as the official SDK clients do.
        shown = ", ".join(clip(str(v), 40) for v in supported[:8]) if isinstance(
            supported, list) else "none"
        raise _FallBack(f"server/discover lists protocol versions {shown}, not {version}")


async def _legacy(channel: Channel, options: FetchOptions, requested: str) -> Session:
    channel.enter_era(Era.LEGACY)
    result = await channel.call(
        "initialize",
        {"protocolVersion": requested, "capabilities": dict(CLIENT_CAPABILITIES),
         "clientInfo": dict(CLIENT_INFO)},
        timeout=options.timeout,
    )
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise FetchError("the initialize result has no protocolVersion string")
    if version not in LEGACY_VERSIONS:
        raise FetchError(
            f"the server chose protocol version {clip(version, 40)!r}, which histor-sign does "
            f"not speak ({', '.join(LEGACY_VERSIONS)})"
        )
    channel.on_protocol_negotiated(Era.LEGACY, version)
    await channel.notify("notifications/initialized")
    return Session(
        channel=channel,
        era=Era.LEGACY,
        protocol_version=version,
        timeout=options.timeout,
        server_info=result.get("serverInfo"),
        server_capabilities=result.get("capabilities"),
        instructions=result.get("instructions"),
    )
