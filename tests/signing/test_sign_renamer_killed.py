"""``sign -o``: the detached process that does a group's renames (``_renamer.py``) killed at
each of its renames. While the signer lives, it finishes the renames itself (the staged
files are complete): the set ends all new, nothing is left behind. When the signer dies
too, the commit record survives, and the next ``sign -o`` of the same output rolls the
interrupted group forward first and says so."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
from test_sign_killed import NAMES, _consistent, _contents, inst  # noqa: F401 (fixture)

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

#: Runs the real CLI with the renamer run under strace, which SIGKILLs it at its Nth rename
#: (argv[1] = N); argv[2] = "1" also SIGKILLs the signer once the renamer has ended.
_RENAMER_KILLER = """
import os, signal, subprocess, sys
step = sys.argv.pop(1)
signer_too = sys.argv.pop(1) == "1"
real_run = subprocess.run
renames = "rename,renameat,renameat2"
def run(cmd, *args, **kwargs):
    if isinstance(cmd, list) and cmd[1:3] == ["-I", "-c"]:
        cmd = ["strace", "-qq", "-o", "/dev/null", "-e", "trace=" + renames,
               "-e", f"inject={renames}:signal=KILL:when={step}", "--", *cmd]
        done = real_run(cmd, *args, **kwargs)
        if signer_too:
            os.kill(os.getpid(), signal.SIGKILL)
        return done
    return real_run(cmd, *args, **kwargs)
subprocess.run = run
from histor_sign.cli import main
sys.argv[0] = "histor-sign"
sys.exit(main())
"""


def _hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to kill the renamer "
                    "at one of its renames")
@pytest.mark.parametrize("signer_too", [False, True], ids=["renamer", "renamer-and-signer"])
def test_a_killed_renamer_never_leaves_a_mixed_group(
    inst: LocalSigstore, tmp_path: Path, signer_too: bool  # noqa: F811
) -> None:
    trust = ("--trust-config", str(inst.trust_config_path))
    old_stmt = write_statement(tmp_path / "v1.json",
                               statement("io.github.alice/docs", WF_ALICE, TOOLS_V1))
    new_stmt = write_statement(tmp_path / "v2.json",
                               statement("io.github.alice/docs", WF_ALICE, TOOLS_V2))
    out = tmp_path / "out"
    out.mkdir()
    first = run_cli("sign", str(old_stmt), "-o", str(out / NAMES[0]),
                    "--identity-token", inst.mint_token(WF_ALICE), *trust)
    assert first.code == 0, first.stderr
    old = _contents(out)
    # killed before its 2nd … 4th rename (a mixed group on disk); with the signer too,
    # one kill point in the middle (each is a full signing and a recovering one)
    for step in (range(2, len(NAMES) + 1) if not signer_too else (3,)):
        for name, data in old.items():
            (out / name).write_bytes(data)
        run = subprocess.run(
            [sys.executable, "-c", _RENAMER_KILLER, str(step), "1" if signer_too else "0",
             "sign", str(new_stmt), "-o", str(out / NAMES[0]),
             "--identity-token", inst.mint_token(WF_ALICE), *trust],
            env=cli_env(), capture_output=True, text=True, timeout=300,
        )
        if not signer_too:
            # the signer took over the renames its helper could not finish
            assert run.returncode == 0, (step, run.stderr)
            now = _contents(out)
            assert all(now[n] != old[n] for n in NAMES), (step, "mixed old and new")
            assert _consistent(out), step
            assert _hidden(out) == [], (step, _hidden(out))
            continue
        assert run.returncode == -9, (step, run.stderr)
        assert any(p.name.endswith(".commit") for p in out.iterdir()), step  # it survives
        # the next run of the same command settles the group first and says so
        again = run_cli("sign", str(old_stmt), "-o", str(out / NAMES[0]),
                        "--identity-token", inst.mint_token(WF_ALICE), *trust)
        assert again.code == 0, again.stderr
        assert "was interrupted" in again.stderr and "rolled forward" in again.stderr, \
            (step, again.stderr)
        assert _consistent(out) and _hidden(out) == [], (step, _hidden(out))
        assert json.loads((out / NAMES[0]).read_text())["revision"] == 1
