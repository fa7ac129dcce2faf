"""Enforce the signed contract in the tool-call path: an MCP proxy.

``Proxy(server=..., upstream=Target, trust=..., store=...)`` sits between a host (an agent
framework's MCP client) and the server: it serves only after the pinned publisher's latest
revision verified for use, offers only tools whose served definition is the signed one
(as the signed objects), decides every ``tools/call`` with the guard before the server
sees it, re-checks on ``list_changed``, relays everything else, and records each decision
in an append-only audit log. See docs/proxy.md.
"""

from __future__ import annotations

from histor_sign.proxy._contract import Contract, OnDrift, Withheld, build_contract
from histor_sign.proxy._proxy import DEFAULT_MAX_MESSAGE_BYTES, Proxy, ProxyOutcome

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "Contract",
    "OnDrift",
    "Proxy",
    "ProxyOutcome",
    "Withheld",
    "build_contract",
]
