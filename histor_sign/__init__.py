"""histor-sign: sign the complete tools/list of an MCP server, gate releases, detect drift.

The public API is the names in ``__all__``; everything else is implementation. A typical
client::

    import histor_sign as hs

    snap = hs.fetch(hs.Target.stdio("node dist/index.js"))
    stmt = hs.build_statement(snap.tools, server="io.github.o/n", server_version="1.2.0",
                              identity="https://github.com/o/n/.github/workflows/sign.yml@...")
    env = hs.sign(stmt, trust=hs.Trust.production())
    hs.verify(env, pins=hs.Pins(repository="o/n"), tools=snap.tools).raise_for_failure()
    hs.compare(env, snap.tools)

Importing this package is cheap: every name is loaded on first use, so the command line
starts without sigstore, jsonschema or httpx.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from histor_sign._internal.calls import ObservedCall
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign._internal.triage import DriftChange, DriftKind, Risk
    from histor_sign.attestation import (
        ATTESTATION_PREDICATE_TYPE,
        build_attestation,
        verify_attestation,
    )
    from histor_sign.canonical import JsonValue, canonical_bytes
    from histor_sign.catalog import Catalog, Tool, ToolsLike
    from histor_sign.drift import ChangeKind, DriftResult, DriftStatus, ToolDrift, compare
    from histor_sign.envelope import SignedEnvelope
    from histor_sign.errors import (
        CheckFailed,
        FetchError,
        GateFailed,
        HistorError,
        InputError,
        LimitExceeded,
        OperationalError,
        SigningError,
        UsageError,
        VerificationFailed,
    )
    from histor_sign.guard import Decision, Guard, Policy
    from histor_sign.mcp import FetchOptions, Snapshot, Target, fetch
    from histor_sign.pins import (
        CheckServedResult,
        Freshness,
        PinEntry,
        PinnedRevision,
        PinStore,
        check_served,
        pin_first_use,
    )
    from histor_sign.release import ReleaseOutcome, ReleaseRequest, release
    from histor_sign.replay import ReplayOptions, ReplayResult
    from histor_sign.report._findings import Finding, Severity
    from histor_sign.revision import Statement, build_statement, digests
    from histor_sign.scan import ScanOptions, ScanResult
    from histor_sign.signing import sign
    from histor_sign.verify import AxisResult, AxisStatus, Pins, VerificationReport, verify

#: Public name → the module that defines it (loaded on first access).
_LAZY: dict[str, str] = {
    # model
    "Tool": "histor_sign.catalog",
    "Catalog": "histor_sign.catalog",
    "Snapshot": "histor_sign.mcp._snapshot",
    "Statement": "histor_sign.revision",
    "SignedEnvelope": "histor_sign.envelope",
    "VerificationReport": "histor_sign.verify",
    "AxisResult": "histor_sign.verify",
    "AxisStatus": "histor_sign.verify",
    "DriftResult": "histor_sign.drift",
    "DriftStatus": "histor_sign.drift",
    "ChangeKind": "histor_sign.drift",
    "ToolDrift": "histor_sign.drift",
    "DriftChange": "histor_sign._internal.triage",
    "DriftKind": "histor_sign._internal.triage",
    "Risk": "histor_sign._internal.triage",
    "Target": "histor_sign.mcp._target",
    "FetchOptions": "histor_sign.mcp._target",
    "Pins": "histor_sign.verify",
    "Trust": "histor_sign._internal.sigstore_trust",
    "Guard": "histor_sign.guard._core",
    "Decision": "histor_sign.guard._core",
    "Policy": "histor_sign.guard._policy",
    "PinStore": "histor_sign.pins",
    "PinEntry": "histor_sign.pins",
    "PinnedRevision": "histor_sign.pins",
    "Freshness": "histor_sign.pins",
    "CheckServedResult": "histor_sign.pins",
    "ScanOptions": "histor_sign.scan._scanner",
    "ScanResult": "histor_sign.scan._scanner",
    "ReplayOptions": "histor_sign.replay",
    "ReplayResult": "histor_sign.replay",
    "Finding": "histor_sign.report._findings",
    "Severity": "histor_sign.report._findings",
    "ReleaseRequest": "histor_sign.release",
    "ReleaseOutcome": "histor_sign.release",
    # functions
    "fetch": "histor_sign.mcp._client",
    "build_statement": "histor_sign.revision",
    "digests": "histor_sign.revision",
    "sign": "histor_sign.signing",
    "verify": "histor_sign.verify",
    "build_attestation": "histor_sign.attestation",
    "verify_attestation": "histor_sign.attestation",
    "ATTESTATION_PREDICATE_TYPE": "histor_sign.attestation",
    "compare": "histor_sign.drift",
    "check_served": "histor_sign.pins",
    "pin_first_use": "histor_sign.pins",
    "release": "histor_sign.release",
    "canonical_bytes": "histor_sign.canonical",
    # errors
    "HistorError": "histor_sign.errors",
    "UsageError": "histor_sign.errors",
    "InputError": "histor_sign.errors",
    "LimitExceeded": "histor_sign.errors",
    "OperationalError": "histor_sign.errors",
    "FetchError": "histor_sign.errors",
    "SigningError": "histor_sign.errors",
    "CheckFailed": "histor_sign.errors",
    "VerificationFailed": "histor_sign.errors",
    "GateFailed": "histor_sign.errors",
}

__all__ = [
    "ATTESTATION_PREDICATE_TYPE",
    "AxisResult",
    "AxisStatus",
    "Catalog",
    "ChangeKind",
    "CheckFailed",
    "CheckServedResult",
    "Decision",
    "DriftChange",
    "DriftKind",
    "DriftResult",
    "DriftStatus",
    "FetchError",
    "FetchOptions",
    "Finding",
    "Freshness",
    "GateFailed",
    "Guard",
    "HistorError",
    "InputError",
    "LimitExceeded",
    "OperationalError",
    "PinEntry",
    "PinStore",
    "PinnedRevision",
    "Pins",
    "Policy",
    "ReleaseOutcome",
    "ReleaseRequest",
    "ReplayOptions",
    "ReplayResult",
    "Risk",
    "ScanOptions",
    "ScanResult",
    "Severity",
    "SignedEnvelope",
    "SigningError",
    "Snapshot",
    "Statement",
    "Target",
    "Tool",
    "ToolDrift",
    "Trust",
    "UsageError",
    "VerificationFailed",
    "VerificationReport",
    "build_attestation",
    "build_statement",
    "canonical_bytes",
    "check_served",
    "compare",
    "digests",
    "fetch",
    "load_tools",
    "pin_first_use",
    "release",
    "replay",
    "scan",
    "sign",
    "verify",
    "verify_attestation",
]


def load_tools(path: str | Path, *, max_tools: int | None = None) -> Catalog:
    """Read a tool catalog file (``-`` for stdin) in any supported shape.

    MCP ``tools/list`` results, JSON-RPC responses, OpenAI and Anthropic tool lists, plain
    arrays and ``fetch`` snapshots are recognised; the file is read as strict I-JSON and
    duplicate names are kept (the scan reports them; signing refuses them).
    """
    from histor_sign.catalog import load_catalog

    return load_catalog(path, max_tools=max_tools)


def scan(tool_lists: Iterable[ToolsLike], options: ScanOptions | None = None) -> ScanResult:
    """Scan several tool lists (catalogs, snapshots or tool lists, any provider) as one set
    for name collisions, confusable tools with overlapping argument schemas (rules TC001–TC005)
    and description shadowing (TC010)."""
    from histor_sign.catalog import as_tools
    from histor_sign.scan import scan_tools

    return scan_tools([t for tools in tool_lists for t in as_tools(tools)], options)


def replay(
    tools: ToolsLike,
    calls: JsonValue | Sequence[ObservedCall],
    options: ReplayOptions | None = None,
) -> ReplayResult:
    """Which tools accept the exact arguments of calls that happened (rules TC006–TC009).

    ``calls`` is a parsed trace (a provider's call objects, e.g. an OpenAI or Anthropic
    message list, or ``{"name", "arguments"}`` objects); reports carry argument digests,
    never argument values.
    """
    from histor_sign._internal.calls import ObservedCall, calls_from_document
    from histor_sign.catalog import as_tools
    from histor_sign.replay import replay_calls

    observed: Sequence[ObservedCall]
    if isinstance(calls, list) and calls and all(isinstance(c, ObservedCall) for c in calls):
        observed = calls
    else:
        observed = calls_from_document(calls, "<calls>")
    return replay_calls(as_tools(tools), observed, options)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """``verify``, ``release``, ``replay`` and ``scan`` are both public functions and
    modules of this package. Importing such a module would rebind the package attribute to
    the module; keep the function (the module stays importable by its dotted name)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and name in __all__:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
