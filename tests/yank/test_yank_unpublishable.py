"""A yank that cannot be published is never signed: a read-only or full chain directory,
or another yank of the chain at work, fails before any transparency-log entry exists."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli_env
from fs_faults import fill, remount_read_only, small_tmpfs
from test_yank import SERVER, Publisher

from histor_sign._sigstore_trust import Trust
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

#: Rounds of two racing yanks (bounded).
ROUNDS = 2


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("yank-sigstore")) as inst:
        yield inst


def _publisher(instance: LocalSigstore, root: Path) -> Publisher:
    pub = Publisher(instance, Trust.from_trust_config(instance.trust_config_path), root)
    pub.release(1)
    return pub


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_a_yank_into_an_unpublishable_chain_is_not_signed(
    instance: LocalSigstore, tmp_path: Path, fault: str
) -> None:
    with small_tmpfs(tmp_path / "mnt", "1m") as mnt:
        pub = _publisher(instance, mnt / "revisions")
        if fault == "full":
            fill(mnt)
        else:
            remount_read_only(mnt)
        listing = sorted(os.listdir(pub.directory))
        before = len(instance.log.tree)
        run = pub.yank(1)
        assert run.code == 2, run.stdout + run.stderr
        assert run.stderr.count("error:") == 1 and "Traceback" not in run.stderr, run.stderr
        assert ("No space left on device" if fault == "full" else "Read-only file system") \
            in run.stderr
        assert len(instance.log.tree) == before  # no orphan attestation, no log entry
        assert sorted(os.listdir(pub.directory)) == listing


def test_two_yanks_of_one_revision_sign_once(instance: LocalSigstore, tmp_path: Path) -> None:
    for round_ in range(ROUNDS):
        pub = _publisher(instance, tmp_path / f"revisions{round_}")
        before = len(instance.log.tree)
        args = ["yank", "--server", SERVER, "--revision", "1", "--reason", "withdrawn",
                "--revisions", str(pub.root), "--trust-config",
                str(instance.trust_config_path)]
        racers = [subprocess.Popen([sys.executable, "-m", "histor_sign", *args,
                                    "--identity-token", pub.token()],
                                   env=cli_env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True) for _ in range(2)]
        results = [(p.wait(timeout=300), *p.communicate()) for p in racers]
        assert sorted(code for code, _o, _e in results) == [0, 2], results
        loser = next(err for code, _o, err in results if code == 2)
        assert loser.count("error:") == 1 and ("in use by another release or yank" in loser
                                               or "already yanked" in loser), loser
        assert len(instance.log.tree) - before == 2, results  # the yank and its attestation
        assert (pub.directory / "1.yank.envelope.json").is_file()
