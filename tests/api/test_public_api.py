"""The public face: exactly these names, each documented, each loaded lazily."""

from __future__ import annotations

import inspect
import subprocess
import sys

from cli_harness import REPO, cli_env

import histor_sign as hs

API_DOC = REPO / "docs" / "api.md"


def test_the_face_is_small_and_documented_in_the_api_guide() -> None:
    # The names are written once (histor_sign/__init__.py); this holds them to the guide.
    assert 20 <= len(hs.__all__) <= 60, len(hs.__all__)
    assert len(set(hs.__all__)) == len(hs.__all__)
    guide = API_DOC.read_text()
    missing = [n for n in hs.__all__ if f"`{n}" not in guide and f"hs.{n}" not in guide]
    assert missing == []


def test_public_objects_say_they_are_histor_sign_s() -> None:
    for name in hs.__all__:
        value = getattr(hs, name)
        if isinstance(value, type) or callable(value):
            assert value.__module__ == "histor_sign", name


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
    # Importing the modules that define verify/release/replay/scan leaves the package's
    # names the public functions.
    import histor_sign.binding
    import histor_sign.collisions
    import histor_sign.collisions._replay
    import histor_sign.lock
    import histor_sign.monitor
    import histor_sign.pipeline
    import histor_sign.verification
    import histor_sign.yank  # noqa: F401

    for name in ("verify", "release", "replay", "scan", "check_binding", "check_locked",
                 "yank_revision", "monitor_log"):
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
