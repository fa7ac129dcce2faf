"""The process's entry point (``histor_sign.cli.entry_point``): a one-shot command (``verify``,
``guard``) runs with the cyclic collector off and the modules it imports but never uses unrun
(``cli/_deferred.py``), and ends its process without the interpreter's teardown
(``end_process``), and nothing a user sees changes — the same stdout, stderr and
exit code as ``main`` run in-process, for a pass, a failed check, bad input, help and JSON.
``end_process`` falls back to the usual exit whenever that exit could differ."""

from __future__ import annotations

import ast
import atexit
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_harness import cli_env, run_cli_in_process, run_cli_subprocess
from sigstore_testkit import WF_ALICE, SignedSet

from histor_sign.cli._deferred import DEFERRED
from histor_sign.cli.app import COMMANDS, ONE_SHOT, command_name, end_process


class _Exited(BaseException):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.fixture
def no_real_exit(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """``os._exit`` raises instead of ending pytest, and the atexit handlers that
    ``end_process`` would run are recorded, not run (they are pytest's own)."""
    calls: list[str] = []

    def fake_exit(code: int) -> None:
        raise _Exited(code)

    monkeypatch.setattr(os, "_exit", fake_exit)
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: calls.append("atexit"))
    yield calls


def test_end_process_flushes_runs_atexit_and_exits_with_the_code(
    no_real_exit: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "gettrace", lambda: None)  # a coverage or debugger tracer
    monkeypatch.setattr(sys, "getprofile", lambda: None)
    # The test session's own threads (a session-wide dev-sigstore server) are not the
    # command's: end_process sees the single thread a one-shot command has.
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    with pytest.raises(_Exited) as exited:
        end_process(3)
    assert exited.value.code == 3
    assert no_real_exit == ["atexit"]


@pytest.mark.parametrize("why", ["not an int", "a thread", "a tracer", "a closed pipe"])
def test_end_process_leaves_it_to_the_usual_exit_when_that_could_differ(
    why: str, no_real_exit: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "gettrace", lambda: None)
    monkeypatch.setattr(sys, "getprofile", lambda: None)
    code: object = 0
    if why == "not an int":
        code = "a message Python prints"
    elif why == "a thread":
        monkeypatch.setattr(threading, "active_count", lambda: 2)
    elif why == "a tracer":
        monkeypatch.setattr(sys, "gettrace", lambda: print)
    else:
        class Broken:
            def flush(self) -> None:
                raise BrokenPipeError

        monkeypatch.setattr(sys, "stdout", Broken())
    assert end_process(code) is None  # returned: the caller exits the usual way
    assert no_real_exit == []


def test_only_one_shot_commands_leave_the_usual_exit() -> None:
    assert ONE_SHOT <= set(COMMANDS)
    assert command_name(["--debug", "verify", "x"]) == "verify"
    assert command_name(["--help"]) is None


PROBE = """
import atexit, gc, sys
import histor_sign.verification as verification
from histor_sign.cli._deferred import DEFERRED
real = verification.verify
def spy(*args, **kwargs):
    print("GC-DURING:%s" % gc.isenabled(), file=sys.stderr, flush=True)
    return real(*args, **kwargs)
verification.verify = spy
def report():
    state = {m: type(sys.modules[m]).__name__ for m in sorted(DEFERRED) if m in sys.modules}
    print("DEFERRED:%s" % state, file=sys.stderr)
    print("ATEXIT-RAN", file=sys.stderr)
atexit.register(report)
sys.argv = ["histor-sign", *sys.argv[1:]]
from histor_sign.cli import entry_point
entry_point()
"""


@pytest.mark.slow
def test_verify_runs_with_the_collector_off_its_unused_imports_unrun_and_atexit_handlers(
    signed_set: SignedSet,
) -> None:
    args = ["verify", str(signed_set.rev1), "--trust-config", str(signed_set.trust_config),
            "--cert-identity", WF_ALICE, "--offline"]
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True,
                          text=True, env=cli_env(), timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "GC-DURING:False" in lines
    assert lines[-1] == "ATEXIT-RAN"
    state = ast.literal_eval(lines[-2].removeprefix("DEFERRED:"))
    # imported by sigstore's graph, never run: jwt and id (OIDC), platformdirs (TUF cache)
    assert {"jwt", "id", "platformdirs"} <= set(state)
    assert set(state.values()) == {"_LazyModule"}
    assert done.stdout.startswith("VERIFIED: io.github.alice/docs revision 1")


SAME_MODULE = """
import sys
if sys.argv[1] == "deferred":
    from histor_sign.cli._deferred import defer_unused_imports
    defer_unused_imports()
import importlib
module = importlib.import_module(sys.argv[2])
kind = type(module).__name__
names = sorted(vars(module))  # a first use: the module runs now
print(kind, type(sys.modules[sys.argv[2]]).__name__, sys.modules[sys.argv[2]] is module, names)
"""


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_a_deferred_module_is_the_usual_module_once_used(name: str) -> None:
    """Deferring changes when a module runs, not what it is: on first use it holds exactly
    the names a plain import gives, in the same ``sys.modules`` entry."""
    def run(how: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", SAME_MODULE, how, name],
                              capture_output=True, text=True, env=cli_env(), timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.split(" ", 3)

    kind, after, same, names = run("deferred")
    assert (kind, after, same) == ("_LazyModule", "module", "True")
    plain = run("plain")
    assert plain[:3] == ["module", "module", "True"]
    assert names == plain[3]


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
