"""The process's entry point (``histor_sign.cli.entry_point``): a one-shot command (``verify``,
``guard``) runs with the cyclic collector off and freezes its objects at exit, and nothing a
user sees changes — the same stdout, stderr and exit code as ``main`` run in-process, for a
pass, a failed check, bad input, help and JSON. ``main`` in-process leaves the collector
alone."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import cli_env, run_cli_in_process, run_cli_subprocess
from sigstore_testkit import WF_ALICE, SignedSet

from histor_sign.cli.app import COMMANDS, ONE_SHOT, command_name


def test_only_one_shot_commands_run_with_the_collector_off() -> None:
    assert ONE_SHOT <= set(COMMANDS)
    assert command_name(["--debug", "verify", "x"]) == "verify"
    assert command_name(["--help"]) is None


PROBE = """
import atexit, gc, sys
import histor_sign.verification as verification
real = verification.verify
def spy(*args, **kwargs):
    print("GC-DURING:%s" % gc.isenabled(), file=sys.stderr, flush=True)
    return real(*args, **kwargs)
verification.verify = spy
def report():
    print("ATEXIT-RAN frozen=%s" % (gc.get_freeze_count() > 0), file=sys.stderr)
atexit.register(report)
sys.argv = ["histor-sign", *sys.argv[1:]]
from histor_sign.cli import entry_point
entry_point()
"""


@pytest.mark.slow
def test_verify_runs_with_the_collector_off_and_the_usual_exit(
    signed_set: SignedSet,
) -> None:
    """The collector is off while the command runs; at exit the objects are frozen and
    every ``atexit`` handler still runs (this one, registered before the entry point's
    freeze, after it), and Python's own exit follows."""
    args = ["verify", str(signed_set.rev1), "--trust-config", str(signed_set.trust_config),
            "--cert-identity", WF_ALICE, "--offline"]
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, env=cli_env(), timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "GC-DURING:False" in lines
    assert lines[-1] == "ATEXIT-RAN frozen=True"
    assert done.stdout.startswith("VERIFIED: io.github.alice/docs revision 1")


def test_main_in_process_leaves_the_collector_alone() -> None:
    assert gc.isenabled()
    run_cli_in_process("verify", "--help")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def _tampered(signed_set: SignedSet, tmp: Path) -> Path:
    text = signed_set.rev1.read_text().replace('"revision": 1', '"revision": 7', 1)
    assert text != signed_set.rev1.read_text()
    out = tmp / "tampered.envelope.json"
    out.write_text(text)
    return out


@pytest.mark.slow
def test_a_process_says_and_exits_exactly_what_main_does(
    signed_set: SignedSet, tmp_path: Path
) -> None:
    trust = ["--trust-config", str(signed_set.trust_config)]
    pin = ["--cert-identity", WF_ALICE]
    lines = [
        ["verify", str(signed_set.rev1), *trust, *pin, "--offline"],
        ["verify", str(signed_set.rev2), *trust, *pin, "--previous", str(signed_set.rev1),
         "--tools", str(signed_set.tools_v2), "--format", "json"],
        ["verify", str(_tampered(signed_set, tmp_path)), *trust, *pin],  # a failed check
        ["verify", str(signed_set.rev1), *trust, "--cert-identity", "https://x.example/y"],
        ["verify", str(tmp_path / "missing.envelope.json"), *trust, *pin],  # bad input
        ["verify", str(signed_set.rev1), *trust],  # no signer pinned: usage error
        ["verify", "--help"],
    ]
    codes = set()
    for argv in lines:
        here, there = run_cli_in_process(*argv), run_cli_subprocess(*argv, timeout=300)
        assert (there.code, there.stdout, there.stderr) == \
            (here.code, here.stdout, here.stderr), argv
        codes.add(here.code)
    assert codes == {0, 1, 2}


def test_guard_as_a_process_says_and_exits_exactly_what_main_does(tmp_path: Path) -> None:
    """``guard`` is one-shot too: an allow, a deny, a call that is no call, a bad catalog,
    a usage error, JSON written to a file, and help — the same bytes and codes either way."""
    schema = {"type": "object", "properties": {"path": {"type": "string"}},
              "required": ["path"], "additionalProperties": False}
    catalog = tmp_path / "tools.json"
    catalog.write_text('{"tools": [{"name": "read_file", "description": "Read a file", '
                       f'"inputSchema": {json.dumps(schema)}}}]}}')
    good, bad, junk = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "junk.json"
    good.write_text('{"name": "read_file", "arguments": {"path": "/tmp/x"}}')
    bad.write_text('{"name": "read_file", "arguments": {"path": 3, "extra": true}}')
    junk.write_text("[1, 2")
    broken = tmp_path / "broken.json"
    broken.write_text('{"tools": [{"name": "x"}]}')
    lines = [
        ["guard", str(good), "--catalog", str(catalog)],
        ["guard", str(bad), "--catalog", str(catalog)],
        ["guard", str(junk), "--catalog", str(catalog)],
        ["guard", str(good), "--catalog", str(broken)],
        ["guard", str(good)],
        ["guard", str(bad), "--catalog", str(catalog), "--format", "json"],
        ["guard", "--help"],
    ]
    codes = set()
    for argv in lines:
        here, there = run_cli_in_process(*argv), run_cli_subprocess(*argv)
        assert (there.code, there.stdout, there.stderr) == \
            (here.code, here.stdout, here.stderr), argv
        codes.add(here.code)
    assert codes == {0, 1, 2}
    out = tmp_path / "decision.json"
    there = run_cli_subprocess("guard", str(good), "--catalog", str(catalog), "--format",
                               "json", "--output", str(out))
    assert there.code == 0 and json.loads(out.read_text())["decision"] == "allow"
