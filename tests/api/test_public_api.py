"""The public face: exactly these names, each documented, each loaded lazily."""

from __future__ import annotations

import ast
import compileall
import inspect
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from cli_harness import REPO, cli_env

import histor_sign as hs

API_DOC = REPO / "docs" / "api.md"
INIT = REPO / "histor_sign" / "__init__.py"


def _type_checking_reexports() -> dict[str, str]:
    """``{name: module}`` of the ``from M import N as N`` lines under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    (block,) = [node for node in tree.body if isinstance(node, ast.If)
                and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    names: dict[str, str] = {}
    for stmt in block.body:
        assert isinstance(stmt, ast.ImportFrom) and stmt.module, ast.unparse(stmt)
        for alias in stmt.names:
            assert alias.asname == alias.name, f"write `{alias.name} as {alias.name}`"
            assert alias.name not in names, f"{alias.name} re-exported twice"
            names[alias.name] = stmt.module
    return names


def test_the_type_checkers_face_and_the_run_time_table_agree() -> None:
    # Written twice in __init__.py: what mypy and IDEs see, and what __getattr__ loads.
    table = hs._MODULE_OF  # type: ignore[attr-defined]
    reexports = _type_checking_reexports()
    assert list(reexports.items()) == list(table.items())
    assert hs.__all__ == sorted(table)


#: Imports the package as an installed user would and touches every public name.
_EVERY_NAME = (
    "import histor_sign as hs\n"
    "assert hs.__file__.endswith('.pyc'), hs.__file__\n"
    "missing = [n for n in hs.__all__ if getattr(hs, n, None) is None]\n"
    "from histor_sign import verify, Pins, release  # noqa\n"
    "print(len(hs.__all__), missing)\n"
)


def _bytecode_only(tmp: Path) -> Path:
    """A copy of the package as a bytecode-only install: ``compileall -b`` writes each
    module's ``.pyc`` beside it, then every ``.py`` is removed (data files stay)."""
    site = tmp / "site"
    shutil.copytree(REPO / "histor_sign", site / "histor_sign",
                    ignore=shutil.ignore_patterns("__pycache__"))
    assert compileall.compile_dir(site, legacy=True, quiet=1)
    for source in site.rglob("*.py"):
        source.unlink()
    return site


def _import_every_name(path_entry: Path, cwd: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(path_entry))
    done = subprocess.run([sys.executable, "-c", _EVERY_NAME], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


@pytest.mark.slow
def test_a_bytecode_only_install_imports_and_exposes_every_public_name(
        tmp_path: Path) -> None:
    site = _bytecode_only(tmp_path)
    assert not list(site.rglob("*.py"))
    assert _import_every_name(site, tmp_path) == f"{len(hs.__all__)} []"


@pytest.mark.slow
def test_a_zipped_bytecode_only_install_imports_and_exposes_every_public_name(
        tmp_path: Path) -> None:
    site = _bytecode_only(tmp_path)
    archive = tmp_path / "histor_sign.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(site.rglob("*")):
            zf.write(path, path.relative_to(site).as_posix())
    assert _import_every_name(archive, tmp_path) == f"{len(hs.__all__)} []"


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


def test_the_architecture_page_counts_the_public_names() -> None:
    page = (REPO / "docs" / "architecture.md").read_text()
    assert f"the public face ({len(hs.__all__)} names)" in page
