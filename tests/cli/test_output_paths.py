"""Issue 26: output paths no write can succeed at (a name too long, a parent that is a
regular file, a directory that may not change, a symlink loop) are one error line, exit 2,
for every command that writes — the pin store's lock file included."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import Run, run_cli

from histor_sign.errors import OperationalError
from histor_sign.pins import PinEntry, PinStore

SERVER = "io.github.acme/search"
ENTRY = PinEntry(
    server=SERVER, repository="acme/search-mcp",
    location="https://example.org/releases/latest.envelope.json", revision=3,
    manifest_digest="sha256:" + "ab" * 32,
    signer="https://github.com/acme/search-mcp/.github/workflows/sign.yml@refs/tags/v1.0.0",
    workflow=".github/workflows/sign.yml", owner_id="11", repository_id="22",
)
LONG = "a" * 300  # past NAME_MAX (255)


def assert_one_error(run: Run, *needles: str) -> None:
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("histor-sign: error: "), run.stderr
    assert all(not line.startswith("histor-sign: error: ") for line in lines[:-1]), run.stderr
    for needle in needles:
        assert needle in lines[-1], (needle, lines[-1])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("x\n")
    (tmp_path / "tools.json").write_text('{"tools": []}\n')
    return tmp_path


def test_over_long_and_under_a_file_outputs_are_one_error(work: Path) -> None:
    init = ["init", "--server", SERVER, "--stdio", "python server.py"]
    cases: list[tuple[list[str], tuple[str, ...]]] = [
        ([*init, "-o", LONG], ("cannot write", "File name too long")),
        ([*init, "-o", "README.md/w.yml"], ("cannot write README.md/w.yml",)),
        (["release", "--server", SERVER, "--server-version", "1", "--tools", "tools.json",
          "--identity-token", "x", "--out-dir", LONG], ("cannot write", "File name too long")),
        (["trust", "list", "--pins", LONG], ("File name too long",)),
        (["trust", "remove", SERVER, "--pins", LONG], ("File name too long",)),
        (["trust", "remove", SERVER, "--pins", "README.md/p.json"], ("README.md/p.json",)),
        (["trust", "add", SERVER, "--repository", "acme/search-mcp", "--envelope", LONG,
          "--pins", "p.json"], ("File name too long",)),
    ]
    for args, needles in cases:
        assert_one_error(run_cli(*args, cwd=work), *needles)
    assert sorted(p.name for p in work.iterdir()) == ["README.md", "tools.json"]


def test_a_pin_file_behind_a_symlink_loop_is_an_error_not_an_empty_store(work: Path) -> None:
    (work / "loop").symlink_to("loop")
    run = run_cli("trust", "list", "--pins", "loop", cwd=work)
    assert_one_error(run, "loop", "cannot read")
    assert "no servers pinned" not in run.stdout


@contextlib.contextmanager
def immutable(directory: Path) -> Iterator[None]:
    """``directory`` refuses new entries, even to root (``chattr +i``)."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not available")
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable flag")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(directory)], check=True)


def test_a_pin_store_that_cannot_change_is_one_error(work: Path) -> None:
    pins = work / "cfg" / "pins.json"
    PinStore.load(pins).add(ENTRY)
    before = pins.read_bytes()
    assert not (pins.parent / ".pins.json.lock").exists()  # locked on the directory: no file
    with immutable(pins.parent):
        assert_one_error(run_cli("trust", "remove", SERVER, "--pins", str(pins), cwd=work),
                         f"cannot write {pins}")
        store = PinStore.load(pins)
        with pytest.raises(OperationalError, match="cannot write"):  # check --server's path
            store.advance(PinEntry(**{**ENTRY.__dict__, "revision": 4}))
        with pytest.raises(OperationalError, match="cannot write"):
            store.add(PinEntry(**{**ENTRY.__dict__, "server": "io.github.acme/other"}))
    assert pins.read_bytes() == before
    assert json.loads(before)["servers"][SERVER]["revision"] == 3
