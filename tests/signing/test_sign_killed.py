"""``sign -o`` killed with ``kill -9`` at each file-system step of writing its four files
(envelope, statement, bundle, attestation): the set is the complete old one or the complete
new one, never a new envelope beside an old statement."""

from __future__ import annotations

import contextlib
import fcntl
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sigstore_testkit import (
    TOOLS_V1,
    TOOLS_V2,
    WF_ALICE,
    cli_env,
    run_cli,
    statement,
    write_statement,
)

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

NAMES = ("release.envelope.json", "release.statement.json", "release.sigstore.json",
         "release.intoto.sigstore.json")

#: Runs the real CLI, SIGKILLing itself at the Nth file-system call once the outputs are
#: being committed (argv[1] = N); everything before (fetching a token, signing) runs as is.
_KILLER = """
import os, signal, sys
from histor_sign import _atomic
step = int(sys.argv.pop(1))
count = [0]
armed = [False]
real_commit = _atomic._commit_group
def commit(files):
    armed[0] = True
    return real_commit(files)
_atomic._commit_group = commit
def counting(real):
    def call(*args, **kwargs):
        if armed[0]:
            count[0] += 1
            if count[0] == step:
                os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return call
for name in ("replace", "rename", "unlink", "link", "open", "fsync", "fchmod", "close"):
    setattr(os, name, counting(getattr(os, name)))
from histor_sign.cli import main
sys.argv[0] = "histor-sign"
sys.exit(main())
"""


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("dev-sigstore")) as running:
        yield running


def _contents(directory: Path) -> dict[str, bytes]:
    return {n: (directory / n).read_bytes() for n in NAMES if (directory / n).exists()}


def _consistent(directory: Path) -> bool:
    """The envelope carries the statement and bundle beside it (a set written together)."""
    env = json.loads((directory / NAMES[0]).read_text())
    bundle = json.loads((directory / NAMES[2]).read_text())
    stmt = json.loads((directory / NAMES[1]).read_text())
    return bool(env["signer"]["signature"] == bundle and stmt["revision"] == env["revision"])


def test_sign_output_is_old_or_new_whatever_step_is_killed(
    inst: LocalSigstore, tmp_path: Path
) -> None:
    old_stmt = write_statement(tmp_path / "v1.json",
                               statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
    new_doc = statement("io.github.alice/docs", WF_ALICE, TOOLS_V2)
    new_stmt = write_statement(tmp_path / "v2.json", new_doc)
    out = tmp_path / "out"
    out.mkdir()
    trust = ("--trust-config", str(inst.trust_config_path))
    first = run_cli("sign", str(old_stmt), "-o", str(out / NAMES[0]),
                    "--identity-token", inst.mint_token(WF_ALICE), *trust)
    assert first.code == 0, first.stderr
    old = _contents(out)
    assert sorted(old) == sorted(NAMES)
    seen = set()
    step = 0
    while True:
        step += 2  # every other call: each gap between renames is still hit
        run = subprocess.run(
            [sys.executable, "-c", _KILLER, str(step), "sign", str(new_stmt), "-o",
             str(out / NAMES[0]), "--identity-token", inst.mint_token(WF_ALICE), *trust],
            env=cli_env(), capture_output=True, text=True, timeout=300,
        )
        if run.returncode == 0:
            break
        assert run.returncode == -9, run.stderr
        for record in out.glob(f".{NAMES[0]}.*commit"):
            with contextlib.suppress(FileNotFoundError), open(record, "rb") as fh:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # a detached finisher still at work
        now = _contents(out)
        assert sorted(now) == sorted(NAMES), step
        if now == old:
            seen.add("old")
        else:
            assert all(now[n] != old[n] for n in NAMES), (step, "mixed old and new")
            assert _consistent(out), step
            seen.add("new")
            # start the next kill point from the old set again
            for name, data in old.items():
                (out / name).write_bytes(data)
    assert seen == {"old", "new"}, seen
    assert _contents(out) != old and _consistent(out)
    # whatever the killed runs left (staged files, backups, a record) is gone now
    assert sorted(p.name for p in out.iterdir()) == sorted(NAMES)
