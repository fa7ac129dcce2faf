"""Racing releases and unpublishable chain directories: the chain directory is held from
before the revision number is checked until the revision is published, so two releases into
one chain never both succeed (one is refused before it signs), and a chain directory that
cannot take the revision (read-only, full) fails before any transparency-log entry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli_env, run_cli
from fs_faults import fill, remount_read_only, small_tmpfs
from release_fixtures import IDENTITY, SERVER, release_args, server_command

from histor_sign.layout import chain_dir
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

#: Rounds of two racing releases (bounded: each round is two real releases).
ROUNDS = 3


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("dev-sigstore")) as running:
        yield running


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("catalog") / "tools.json"
    assert run_cli("fetch", "--stdio", server_command(), "-o", str(path)).code == 0
    return path


def _args(inst: LocalSigstore, catalog: Path, out: Path, chain: Path) -> list[str]:
    return release_args(out, inst.trust_config_path, "--tools", str(catalog),
                        "--revisions", str(chain), "--previous", "auto",
                        "--identity-token", inst.mint_token(IDENTITY))


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "histor_sign", *args], env=cli_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_releases_into_one_chain_never_both_succeed(
    inst: LocalSigstore, catalog: Path, tmp_path: Path
) -> None:
    chain = tmp_path / "revisions"
    first = run_cli(*_args(inst, catalog, tmp_path / "out0", chain))
    assert first.code == 0, first.stderr
    published = chain_dir(chain, SERVER)
    for round_ in range(1, ROUNDS + 1):
        before = len(inst.log.tree)
        outs = [tmp_path / f"out{round_}a", tmp_path / f"out{round_}b"]
        racers = [_start(_args(inst, catalog, out, chain)) for out in outs]
        results = [(p.wait(timeout=300), *p.communicate()) for p in racers]
        codes = sorted(code for code, _out, _err in results)
        assert codes == [0, 2], (round_, results)
        winner = next(out for out, (code, _o, _e) in zip(outs, results, strict=True)
                      if code == 0)
        loser_err = next(err for code, _o, err in results if code == 2)
        # the loser was refused before it signed, with one line saying why
        assert loser_err.count("error:") == 1, loser_err
        assert ("in use by another release" in loser_err
                or "already published" in loser_err), loser_err
        assert len(inst.log.tree) - before == 2, (round_, results)  # one revision's entries
        revision = round_ + 1
        envelope = (winner / "envelope.json").read_bytes()
        assert (published / f"{revision}.envelope.json").read_bytes() == envelope
        assert json.loads(envelope)["revision"] == revision
        assert not (published / f"{revision + 1}.envelope.json").exists()
    assert sorted(p.name for p in published.iterdir() if p.name.startswith(".")) == []


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_an_unpublishable_chain_directory_fails_before_signing(
    inst: LocalSigstore, catalog: Path, tmp_path: Path, fault: str
) -> None:
    with small_tmpfs(tmp_path / "mnt", "1m") as mnt:
        chain = mnt / "revisions"
        first = run_cli(*_args(inst, catalog, tmp_path / "out1", chain))
        assert first.code == 0, first.stderr
        if fault == "full":
            fill(mnt)
        else:
            remount_read_only(mnt)
        listing = sorted(os.listdir(chain_dir(chain, SERVER)))
        before = len(inst.log.tree)
        out = tmp_path / "out2"
        run = run_cli(*_args(inst, catalog, out, chain))
        assert run.code == 2, run.stdout + run.stderr
        assert run.stderr.count("error:") == 1, run.stderr
        assert ("No space left on device" if fault == "full" else "Read-only file system") \
            in run.stderr
        assert len(inst.log.tree) == before  # no log entry for a revision never published
        assert sorted(os.listdir(chain_dir(chain, SERVER))) == listing
        assert not (out / "envelope.json").exists()  # and no signed set in --out-dir
