"""histor-sign: sign the complete tools/list of an MCP server, gate releases, detect drift.

The public API is the names below (``__all__``); every other module whose name starts with
``_`` is implementation. A typical client::

    import histor_sign as hs

    snap = hs.fetch(hs.Target.stdio("node dist/index.js"))
    stmt = hs.build_statement(snap.tools, server="io.github.o/n", server_version="1.2.0",
                              identity="https://github.com/o/n/.github/workflows/sign.yml@...")
    env = hs.sign(stmt, trust=hs.Trust.production())
    hs.verify(env, pins=hs.Pins(repository="o/n"), tools=snap.tools).raise_for_failure()
    hs.compare(env, snap.tools)

Importing this package is cheap: each name is loaded on first use, so the command line starts
without sigstore, jsonschema or httpx. The names are written twice, in this file only, and
``tests/api/test_public_api.py`` holds the two to each other: the ``TYPE_CHECKING`` block
below (the re-exports type checkers and IDEs read) and :data:`_MODULE_OF`, a literal table of
``name → defining module`` that :func:`__getattr__` reads at run time — the lazy loader of
Scientific Python's SPEC 1, as httpx and sigstore-python keep their faces. Nothing reads source
text, so the package imports the same from bytecode alone or a zip. Each public object's
``__module__`` is set to ``histor_sign`` when it is first loaded, as httpx does, so reprs and
docs show the name users import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from histor_sign._version import __version__ as __version__

if TYPE_CHECKING:
    # grouped as the data flows, not sorted
    # isort: off
    # models
    from histor_sign.models import Catalog as Catalog
    from histor_sign.models import Finding as Finding
    from histor_sign.models import ObservedCall as ObservedCall
    from histor_sign.models import Severity as Severity
    from histor_sign.models import SignedEnvelope as SignedEnvelope
    from histor_sign.models import Snapshot as Snapshot
    from histor_sign.models import Statement as Statement
    from histor_sign.models import Tool as Tool
    # fetch, digest, sign
    from histor_sign.mcp import FetchOptions as FetchOptions
    from histor_sign.mcp import Target as Target
    from histor_sign.mcp import fetch as fetch
    from histor_sign.canonical import canonical_bytes as canonical_bytes
    from histor_sign.revision import build_statement as build_statement
    from histor_sign.revision import digests as digests
    from histor_sign._sigstore_trust import Trust as Trust
    from histor_sign.signing import sign as sign
    # verify
    from histor_sign.verification import AxisStatus as AxisStatus
    from histor_sign.verification.policy import Pins as Pins
    from histor_sign.verification import VerificationReport as VerificationReport
    from histor_sign.verification import verify as verify
    from histor_sign.attestation import ATTESTATION_PREDICATE_TYPE as ATTESTATION_PREDICATE_TYPE
    from histor_sign.attestation import build_attestation as build_attestation
    from histor_sign.attestation import verify_attestation as verify_attestation
    # drift and pinned publishers
    from histor_sign.drift import ChangeKind as ChangeKind
    from histor_sign.drift import DriftResult as DriftResult
    from histor_sign.drift import DriftStatus as DriftStatus
    from histor_sign.models import Risk as Risk
    from histor_sign.drift import compare as compare
    from histor_sign.pins import Freshness as Freshness
    from histor_sign.pins import PinStore as PinStore
    from histor_sign.pins import check_served as check_served
    from histor_sign.pins import pin_first_use as pin_first_use
    # packages, locks, withdrawals and the log
    from histor_sign.binding import check_binding as check_binding
    from histor_sign.lock import LockFile as LockFile
    from histor_sign.lock import LockedServer as LockedServer
    from histor_sign.lock import check_locked as check_locked
    from histor_sign.yank import yank_revision as yank_revision
    from histor_sign.monitor import monitor_log as monitor_log
    # collisions and the guard
    from histor_sign.catalog import load_tools as load_tools
    from histor_sign.collisions import ReplayOptions as ReplayOptions
    from histor_sign.collisions import ScanOptions as ScanOptions
    from histor_sign.collisions import replay as replay
    from histor_sign.collisions import scan as scan
    from histor_sign.guard import Decision as Decision
    from histor_sign.guard import Guard as Guard
    from histor_sign.guard import Policy as Policy
    # the release
    from histor_sign.pipeline import ReleaseOutcome as ReleaseOutcome
    from histor_sign.pipeline import ReleaseRequest as ReleaseRequest
    from histor_sign.pipeline import release as release
    # errors (every class is in histor_sign.errors)
    from histor_sign.errors import CheckFailed as CheckFailed
    from histor_sign.errors import FetchError as FetchError
    from histor_sign.errors import GateFailed as GateFailed
    from histor_sign.errors import HistorError as HistorError
    from histor_sign.errors import InputError as InputError
    from histor_sign.errors import VerificationFailed as VerificationFailed
    # isort: on

#: Every public name and the module that defines it, in the order of the block above.
_MODULE_OF: dict[str, str] = {
    # models
    "Catalog": "histor_sign.models",
    "Finding": "histor_sign.models",
    "ObservedCall": "histor_sign.models",
    "Severity": "histor_sign.models",
    "SignedEnvelope": "histor_sign.models",
    "Snapshot": "histor_sign.models",
    "Statement": "histor_sign.models",
    "Tool": "histor_sign.models",
    # fetch, digest, sign
    "FetchOptions": "histor_sign.mcp",
    "Target": "histor_sign.mcp",
    "fetch": "histor_sign.mcp",
    "canonical_bytes": "histor_sign.canonical",
    "build_statement": "histor_sign.revision",
    "digests": "histor_sign.revision",
    "Trust": "histor_sign._sigstore_trust",
    "sign": "histor_sign.signing",
    # verify
    "AxisStatus": "histor_sign.verification",
    "Pins": "histor_sign.verification.policy",
    "VerificationReport": "histor_sign.verification",
    "verify": "histor_sign.verification",
    "ATTESTATION_PREDICATE_TYPE": "histor_sign.attestation",
    "build_attestation": "histor_sign.attestation",
    "verify_attestation": "histor_sign.attestation",
    # drift and pinned publishers
    "ChangeKind": "histor_sign.drift",
    "DriftResult": "histor_sign.drift",
    "DriftStatus": "histor_sign.drift",
    "Risk": "histor_sign.models",
    "compare": "histor_sign.drift",
    "Freshness": "histor_sign.pins",
    "PinStore": "histor_sign.pins",
    "check_served": "histor_sign.pins",
    "pin_first_use": "histor_sign.pins",
    # packages, locks, withdrawals and the log
    "check_binding": "histor_sign.binding",
    "LockFile": "histor_sign.lock",
    "LockedServer": "histor_sign.lock",
    "check_locked": "histor_sign.lock",
    "yank_revision": "histor_sign.yank",
    "monitor_log": "histor_sign.monitor",
    # collisions and the guard
    "load_tools": "histor_sign.catalog",
    "ReplayOptions": "histor_sign.collisions",
    "ScanOptions": "histor_sign.collisions",
    "replay": "histor_sign.collisions",
    "scan": "histor_sign.collisions",
    "Decision": "histor_sign.guard",
    "Guard": "histor_sign.guard",
    "Policy": "histor_sign.guard",
    # the release
    "ReleaseOutcome": "histor_sign.pipeline",
    "ReleaseRequest": "histor_sign.pipeline",
    "release": "histor_sign.pipeline",
    # errors (every class is in histor_sign.errors)
    "CheckFailed": "histor_sign.errors",
    "FetchError": "histor_sign.errors",
    "GateFailed": "histor_sign.errors",
    "HistorError": "histor_sign.errors",
    "InputError": "histor_sign.errors",
    "VerificationFailed": "histor_sign.errors",
}
__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    from importlib import import_module

    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    if isinstance(value, type) or callable(value):
        value.__module__ = __name__
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
