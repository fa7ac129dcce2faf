"""The public face: exactly these names, each documented, each loaded lazily."""

from __future__ import annotations

import inspect
import subprocess
import sys

from cli_harness import REPO, cli_env

import histor_sign as hs

PUBLIC = [
    "AxisResult", "AxisStatus", "Catalog", "ChangeKind", "CheckFailed", "CheckServedResult",
    "Decision", "Freshness", "PinEntry", "PinStore", "PinnedRevision", "check_served",
    "pin_first_use",
    "DriftChange", "DriftKind", "Risk",
    "DriftResult", "DriftStatus", "FetchError", "FetchOptions", "Finding", "GateFailed",
    "Guard", "HistorError", "InputError", "LimitExceeded", "OperationalError", "Pins",
    "Policy", "ReleaseOutcome", "ReleaseRequest", "ReplayOptions", "ReplayResult",
    "ScanOptions", "ScanResult", "Severity", "SignedEnvelope", "SigningError", "Snapshot",
    "Statement", "Target", "Tool", "ToolDrift", "Trust", "UsageError", "VerificationFailed",
    "VerificationReport", "build_statement", "canonical_bytes", "compare", "digests", "fetch",
    "load_tools", "release", "replay", "scan", "sign", "verify",
    "ATTESTATION_PREDICATE_TYPE", "build_attestation", "verify_attestation",
]


def test_all_is_pinned() -> None:
    assert sorted(hs.__all__) == sorted(PUBLIC)
    assert len(set(hs.__all__)) == len(hs.__all__)


def test_every_exported_name_resolves_and_is_documented() -> None:
    undocumented = []
    for name in hs.__all__:
        value = getattr(hs, name)
        doc = inspect.getdoc(value)
        # A class must document itself, not inherit Exception's or object's docstring.
        own = value.__dict__.get("__doc__") if inspect.isclass(value) else doc
        # A dataclass without a docstring gets its signature as __doc__: not documentation.
        if not own or not doc or not doc.strip() or doc.startswith(f"{name}("):
            undocumented.append(name)
    assert undocumented == []


def test_functions_stay_functions_after_their_modules_are_imported() -> None:
    # verify/release/replay/scan are also module names; importing the modules must not
    # replace the public functions on the package.
    import histor_sign.release
    import histor_sign.replay
    import histor_sign.scan
    import histor_sign.verify  # noqa: F401

    for name in ("verify", "release", "replay", "scan"):
        assert inspect.isfunction(getattr(hs, name)), name
    from histor_sign import verify

    assert inspect.isfunction(verify)


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        hs.NotAThing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "NotAThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_import_is_cheap() -> None:
    code = (
        "import sys, histor_sign as hs\n"
        "hs.Pins, hs.Trust, hs.Statement, hs.Target\n"
        "heavy = ('sigstore', 'jsonschema', 'jsonschema_rs', 'httpx', 'asyncio', 'cryptography')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=cli_env(), cwd=REPO, check=True)
    assert out.stdout.strip() == ""
