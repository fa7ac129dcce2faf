"""Adversarial sweep of the error contract over every command: hostile files, flags,
outputs, stdin, tampered envelopes, hostile servers and Ctrl-C.

Every case must end in exactly one ``histor-sign: error:`` line (warnings may precede it),
the documented exit code, no traceback, no new file (partial output or temp file), and no
secret value anywhere. Most cases run the real entry point in-process (``run_main``) so the
whole sweep stays fast; stdin, Ctrl-C and interpreter-level cases run a subprocess.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import REPO, Run, cli_env, sigint_default
from mcp_helpers import alive, pids_from, raw_command
from raw_http_server import Reply, Seen, json_reply, serve
from sigstore_testkit import (
    TOOLS_V1,
    WF_ALICE,
    SignedSet,
    make_signed_set,
    run_main,
    statement,
    write_statement,
)

from histor_sign.sigstore_dev import LocalSigstore

SECRET = "S3CRET-sweep-value-7781"
SERVER = "io.github.alice/docs"
BUILD = ["--server", SERVER, "--server-version", "1", "--identity", WF_ALICE]
EXAMPLE_SERVER = shlex.join([sys.executable, "-m", "histor_sign.demo.example_server"])
COLLIDING = REPO / "examples" / "scan" / "collision-mcp.json"  # fails the scan gate


# --- fixtures ------------------------------------------------------------------------------


def _hostile_contents() -> dict[str, bytes | None]:
    rnd = random.Random(8785)
    return {
        "missing": None,
        "directory": None,
        "empty": b"",
        "invalid-utf8": b'{"tools": ["\xff\xfe"]}',
        "random-bytes": bytes(rnd.randrange(256) for _ in range(512)),
        "bom": b"\xef\xbb\xbf{}",
        "duplicate-keys": b'{"tools": [], "tools": []}',
        "nan": b'{"tools": [NaN]}',
        "2^96": b'{"tools": [], "n": 79228162514264337593543950336}',
        "lone-surrogate": b'{"tools": [{"name": "\\ud800", "inputSchema": {"type": "object"}}]}',
        "deep-100k": b"[" * 100_000 + b"]" * 100_000,
        "object": b"{}",
        "string": b'"tools"',
        "number": b"42",
        "null": b"null",
        "tools-object": b'{"tools": {}}',
        "tools-number": b'{"tools": [1]}',
        "name-number": b'{"tools": [{"name": 5}]}',
        "not-toml": b"[[[not toml",
        "jsonl-broken": b'{"a": 1}\n{bad\n',
        "int-5000": b'{"tools": [], "n": ' + b"7" * 5000 + b"}",  # past int()'s digit limit
        "toml-deep-5000": b"a = " + b"[" * 5000 + b"]" * 5000,
        "toml-int-5000": b"n = " + b"7" * 5000,
        "fifo": None,  # a FIFO nobody writes: must be refused, not waited on
    }


HOSTILE = list(_hostile_contents())
# Secondary file slots get the kinds that exercise distinct code paths.
SHORT = ["missing", "directory", "invalid-utf8", "deep-100k", "null", "int-5000", "fifo",
         "toml-deep-5000", "toml-int-5000"]


class World:
    """A signed set plus hostile files, and a work directory that must stay empty."""

    def __init__(self, base: Path) -> None:
        self.ss: SignedSet = make_signed_set(base / "signed")
        self.hostile = base / "hostile"
        self.hostile.mkdir()
        for name, data in _hostile_contents().items():
            if name == "directory":
                (self.hostile / name).mkdir()
            elif name == "fifo":
                os.mkfifo(self.hostile / name)
            elif data is not None:
                (self.hostile / name).write_bytes(data)
        self.work = base / "work"
        self.work.mkdir()
        self.regular = base / "regular-file"
        self.regular.write_text("x")
        self.stmt = write_statement(base / "stmt.json", statement(SERVER, WF_ALICE, TOOLS_V1))
        self.call = base / "call.json"
        self.call.write_text(json.dumps({"name": "search", "arguments": {"query": "x"}}))
        self.colliding = COLLIDING
        self.watched = [self.work, self.hostile, base / "signed", base]

    def path(self, kind: str) -> str:
        return str(self.hostile / kind)

    def under_file(self, name: str = "out.json") -> str:
        """An output path whose parent is a regular file: unwritable even for root."""
        return str(self.regular / name)

    def listing(self) -> set[str]:
        return {str(p) for d in self.watched for p in d.iterdir()}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return World(tmp_path_factory.mktemp("sweep"))


@pytest.fixture
def in_work(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    monkeypatch.chdir(world.work)
    monkeypatch.delenv("SIGSTORE_IDENTITY_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    yield world


# --- assertions ----------------------------------------------------------------------------


def assert_one_error(run: Run, code: int, *needles: str) -> None:
    """The error contract: exit code, one error line (warnings may precede), no traceback,
    no secret."""
    assert run.code == code, (run.code, run.stdout[-500:], run.stderr)
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("histor-sign: error: ")]
    assert len(errors) == 1, run.stderr
    assert all(line.startswith("histor-sign: warning: ") for line in lines[:-1]), run.stderr
    assert lines[-1] == errors[0], run.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    assert SECRET not in run.stdout + run.stderr


def assert_report_outcome(run: Run, code: int) -> None:
    """Exit 1 with a report (drift, DENY, findings): no traceback, no stray stderr."""
    assert run.code == code, (run.code, run.stdout[-500:], run.stderr)
    assert "Traceback" not in run.stderr
    stray = [line for line in run.stderr.splitlines()
             if line.strip() and not line.startswith(("histor-sign: warning: ",
                                                       "histor-sign: error: "))]
    assert not stray, run.stderr
    assert run.stdout.strip(), "a report outcome prints its report"
    assert SECRET not in run.stdout + run.stderr


def run_clean(world: World, *args: str) -> Run:
    """run_main, asserting that the run created no file anywhere we watch."""
    before = world.listing()
    run = run_main(*args)
    assert world.listing() == before, sorted(world.listing() ^ before)
    return run


# --- 1. hostile files in every file slot of every command ----------------------------------


def slots(w: World) -> dict[str, list[str]]:
    """Each command line with one file slot marked ``{}``; everything else valid."""
    t, e, tc = str(w.ss.tools_v1), str(w.ss.rev1), str(w.ss.trust_config)
    rel = ["--server", SERVER, "--server-version", "1", "--trust-config", tc,
           "--identity-token", SECRET, "--out-dir", "rel"]
    return {
        "digest": ["digest", "{}"],
        "build": ["build", "{}", *BUILD],
        "build --previous": ["build", t, *BUILD, "--previous", "{}"],
        "sign": ["sign", "{}", "-o", "out.envelope.json", "--trust-config", tc,
                 "--identity-token", SECRET],
        "sign --trust-config": ["sign", str(w.stmt), "-o", "out.envelope.json",
                                "--trust-config", "{}", "--identity-token", SECRET],
        "verify": ["verify", "{}", "--trust-config", tc, "--repository", "alice/docs"],
        "verify --previous": ["verify", str(w.ss.rev2), "--previous", "{}", "--trust-config", tc, "--repository", "alice/docs"],
        "verify --tools": ["verify", e, "--tools", "{}", "--trust-config", tc, "--repository", "alice/docs"],
        "verify --trusted-root": ["verify", e, "--trusted-root", "{}"],
        "verify --trust-config": ["verify", e, "--trust-config", "{}"],
        "scan": ["scan", "{}"],
        "scan (second)": ["scan", t, "{}"],
        "replay": ["replay", "{}", "-c", t],
        "replay --catalog": ["replay", str(w.call), "-c", "{}"],
        "guard": ["guard", "{}", "--catalog", t],
        "guard --catalog": ["guard", str(w.call), "--catalog", "{}"],
        "guard --envelope": ["guard", str(w.call), "--catalog", t, "--envelope", "{}"],
        "guard --policy": ["guard", str(w.call), "--catalog", t, "--policy", "{}"],
        "guard --verify --trust-config": ["guard", str(w.call), "--catalog", t, "--envelope", e,
                                          "--verify", "--trust-config", "{}"],
        "check": ["check", "{}", "--envelope", e],
        "check --envelope": ["check", t, "--envelope", "{}"],
        "check --signed-tools": ["check", t, "--envelope", e, "--signed-tools", "{}"],
        "check --verify --trusted-root": ["check", t, "--envelope", e, "--verify",
                                          "--trusted-root", "{}"],
        "release --tools": ["release", *rel, "--tools", "{}"],
        "release --previous": ["release", *rel, "--tools", t, "--previous", "{}"],
        "release --policy": ["release", *rel, "--tools", t, "--policy", "{}"],
        "release --trust-config": ["release", "--server", SERVER, "--server-version", "1",
                                   "--tools", t, "--trust-config", "{}", "--out-dir", "rel",
                                   "--identity-token", SECRET],
    }


PRIMARY = {"digest", "build", "sign", "verify", "scan", "replay", "guard --catalog",
           "check --envelope", "release --tools"}
SLOT_NAMES = [
    "digest", "build", "build --previous", "sign", "sign --trust-config", "verify",
    "verify --previous", "verify --tools", "verify --trusted-root", "verify --trust-config",
    "scan", "scan (second)", "replay", "replay --catalog", "guard", "guard --catalog",
    "guard --envelope", "guard --policy", "guard --verify --trust-config", "check",
    "check --envelope", "check --signed-tools", "check --verify --trusted-root",
    "release --tools", "release --previous", "release --policy", "release --trust-config",
]
FILE_CASES = [
    (slot, kind) for slot in SLOT_NAMES for kind in (HOSTILE if slot in PRIMARY else SHORT)
]

# Content that is documented as a *decision*, not an error: guard denies what is not a
# decidable call (exit 1, DENY on stdout); a policy file that is valid TOML is a policy.
GUARD_DENIES = set(HOSTILE) - {"missing", "directory", "fifo"}


def _hung(_signum: int, _frame: object) -> None:
    raise TimeoutError("the command blocked on a special file")


def test_every_file_slot_is_covered(world: World) -> None:
    assert sorted(slots(world)) == sorted(SLOT_NAMES)


@pytest.mark.parametrize(("slot", "kind"), FILE_CASES, ids=[f"{s}:{k}" for s, k in FILE_CASES])
def test_hostile_file(in_work: World, slot: str, kind: str) -> None:
    w = in_work
    args = [w.path(kind) if a == "{}" else a for a in slots(w)[slot]]
    # A regression that opens the FIFO would block forever: fail after 20 s instead.
    signal.signal(signal.SIGALRM, _hung)
    signal.alarm(20 if kind == "fifo" else 0)
    try:
        run = run_clean(w, *args)
    finally:
        signal.alarm(0)
    if slot == "guard" and kind in GUARD_DENIES:
        assert_report_outcome(run, 1)
        assert run.stdout.startswith("DENY")
    elif slot in ("guard --policy",) and kind == "empty":
        assert run.code == 0, run.stderr  # an empty TOML file is an empty policy
    else:
        assert_one_error(run, 2)


# --- 2. flags: unknown, conflicting, bad values --------------------------------------------


def flag_cases(w: World) -> list[tuple[list[str], str]]:
    t, e, tc = str(w.ss.tools_v1), str(w.ss.rev1), str(w.ss.trust_config)
    srv = ["--stdio", EXAMPLE_SERVER]
    rel = ["release", "--server", SERVER, "--server-version", "1"]
    return [
        (["--bogus"], "No such option"),
        (["nosuchcommand"], "No such command"),
        (["digest", t, "--bogus"], "No such option: --bogus"),
        (["digest", t, t], "unexpected extra argument"),
        (["digest", t, "--format", "xml"], "'xml' is not one of"),
        (["digest", t, "--stdio", "x"], "not both"),
        (["digest", "--stdio", "x", "--url", "http://127.0.0.1:1/mcp"], "not both"),
        (["digest", t, "--header", f"X-Key: {SECRET}"], "need --url"),
        (["digest", "--url", "http://127.0.0.1:1/mcp", "--header", f"X-Key {SECRET}"],
         "expected NAME:VALUE"),
        (["digest", "--url", "http://127.0.0.1:1/mcp", "--header", f"X-Key: {SECRET}\r\nA: b"],
         "line breaks"),
        (["digest", "--url", f"http://user:{SECRET}@127.0.0.1:1/mcp"], "credentials in the URL"),
        (["digest", "--url", "ftp://127.0.0.1:1/mcp"], "expected an http:// or https:// URL"),
        (["digest", "--url", "http://127.0.0.1:1/mcp", "--bearer-token-env", "HS_SWEEP_UNSET"],
         "is not set"),
        (["digest", "--stdio", ""], "empty"),
        (["digest", "--stdio", "unterminated 'quote"], "cannot split"),
        (["digest", "--stdio", "/nonexistent/histor-sweep"], "no such command"),
        *[(["digest", *srv, flag, value], flag)
          for flag, value in [("--max-pages", "0"), ("--max-pages", "-1"), ("--max-tools", "0"),
                              ("--max-bytes", "-5"), ("--timeout", "0"), ("--timeout", "-1"),
                              ("--timeout", "nan"), ("--timeout", "inf"),
                              ("--total-timeout", "0"), ("--total-timeout", "inf"),
                              ("--protocol", "bogus"), ("--timeout", "abc")]],
        (["build", t, "--server", SERVER, "--server-version", "1"], "Missing option '--identity'"),
        (["build", t, *BUILD[:4], "--identity", "bogus"], "invalid identity"),
        (["build", t, "--server", "bogus", *BUILD[2:]], "invalid server name"),
        (["build", t, "--server", SERVER, "--server-version", "", *BUILD[4:]],
         "invalid server version"),
        (["fetch"], "give the MCP server"),
        (["fetch", *srv, "--header", f"A: {SECRET}"], "apply only to --url"),
        (["fetch", *srv, "--max-tools", "1"], "--max-tools 1"),
        (["fetch", *srv, "--max-bytes", "10"], "--max-bytes 10"),
        (["sign", str(w.stmt)], "Missing option '--output'"),
        (["sign", str(w.stmt), "-o", "x.json", "--trust-config", tc, "--identity-token", SECRET],
         "not a JWT"),
        (["sign", str(w.stmt), "-o", "x.json", "--trust-config", tc,
          "--identity-token", f"eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.{SECRET}"], ""),
        (["sign", str(w.stmt), "-o", "x.json", "--staging", "--trust-config", tc,
          "--identity-token", SECRET], "cannot be used together"),
        (["verify", e, "--trust-config", tc, "--repository", "alice/docs", "--trusted-root", str(w.ss.trusted_root)],
         "cannot be used together"),
        (["verify", e, "--trust-config", tc, "--repository", "alice/docs", "--format", "xml"], "'xml' is not one of"),
        (["dev-sigstore"], "Missing option '--trust-config-out'"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--host", "0.0.0.0"], "loopback only"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--port", "-1"], "--port"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--port", "70000"], "--port"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--port", "abc"], "--port"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--token-lifetime", "0"],
         "--token-lifetime"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--token-out", "t"], "--token-for"),
        (["dev-sigstore", "--trust-config-out", "tc.json", "--token-for", WF_ALICE],
         "--token-out"),
        (["scan"], "give the MCP server"),
        *[(["scan", t, "--threshold", v], "--threshold")
          for v in ("0", "2", "abc", "nan", "-0.5", "inf")],
        (["scan", t, "--format", "xml"], "'xml' is not one of"),
        (["scan", t, "--fail-on", "bogus"], "'bogus' is not one of"),
        (["scan", t, "--max-tools", "0"], "--max-tools"),
        (["scan", t, "--max-candidates", "-1"], "--max-candidates"),
        (["scan", t, "--max-tools", "1", str(w.ss.tools_v2)], "--max-tools 1"),
        (["scan", "-", "-"], "read only once"),
        (["replay", str(w.call)], "Missing option '--catalog'"),
        (["replay", str(w.call), "-c", t, "--max-calls", "0"], "--max-calls"),
        (["replay", str(w.call), "-c", t, "--max-trace-bytes", "-1"], "--max-trace-bytes"),
        (["replay", str(w.call), "-c", t, "--max-trace-bytes", "3"], "--max-trace-bytes 3"),
        (["replay", str(w.call), "-c", t, "--max-validations", "0"], "--max-validations"),
        (["replay", str(w.call), "-c", t, "--fail-on", "x"], "'x' is not one of"),
        (["replay", "-", "-c", "-"], "read only once"),
        (["guard", str(w.call)], "guard needs the contract"),
        (["guard", str(w.call), "--catalog", t, "--verify"], "--verify needs --envelope"),
        (["guard", str(w.call), "--catalog", t, "--offline"], "need --verify"),
        (["guard", "-", "--catalog", "-"], "read only once"),
        (["guard", str(w.call), "--catalog", t, "--format", "xml"], "'xml' is not one of"),
        (["check", t], "give the signed revision: --envelope FILE, or --server NAME"),
        (["check", t, "--envelope", e, "--offline"], "need --verify"),
        (["check", t, "--envelope", e, "--stdio", "x"], "not both"),
        (["check", "--envelope", e], "give the served tools"),
        (["check", t, "--envelope", e, "--format", "xml"], "'xml' is not one of"),
        ([*rel], "give the MCP server"),
        ([*rel, "--tools", t, "--stdio", "x"], "not both"),
        ([*rel, "--tools", t, "--threshold", "0"], "--threshold"),
        ([*rel, "--tools", t, "--threshold", "abc"], "--threshold"),
        ([*rel, "--tools", t, "--fail-on", "bogus"], "'bogus' is not one of"),
        ([*rel, "--tools", t, "--max-tools", "0", "--identity-token", SECRET], "--max-tools"),
        ([*rel, "--tools", t, "--staging", "--trust-config", tc, "--identity-token", SECRET],
         "cannot be used together"),
        ([*rel, "--tools", t, "--trust-config", tc, "--out-dir", "rel"], "no identity token"),
        ([*rel, *srv, "--max-pages", "0", "--identity-token", SECRET], "--max-pages"),
        ([*rel, *srv, "--timeout", "-1", "--identity-token", SECRET], "--timeout"),
        ([*rel, "--url", "http://127.0.0.1:1/mcp", "--header", f"A {SECRET}",
          "--identity-token", SECRET], "expected NAME:VALUE"),
        (["demo", "--bogus"], "No such option"),
    ]


@pytest.mark.slow
def test_bad_flags(in_work: World) -> None:
    """One table, one loop: many cases share the in-process entry point cheaply."""
    failures = []
    for args, needle in flag_cases(in_work):
        try:
            assert_one_error(run_clean(in_work, *args), 2, needle)
        except AssertionError as exc:
            failures.append(f"{args}: {exc}")
    assert not failures, "\n".join(failures)


# --- 3. unwritable outputs: a path under a regular file (root can write anywhere else) ------


@pytest.mark.slow
def test_unwritable_outputs(in_work: World) -> None:
    w, u = in_work, in_work.under_file()
    t, e = str(w.ss.tools_v1), str(w.ss.rev1)
    cases = [
        ["digest", t, "-o", u],
        ["build", t, *BUILD, "-o", u],
        ["fetch", "--stdio", EXAMPLE_SERVER, "-o", u],
        ["scan", t, "-o", u],
        ["scan", str(w.colliding), "-o", u],  # findings at the gate: still exit 2, no file
        ["replay", str(w.call), "-c", t, "-o", u],
        ["guard", str(w.call), "--catalog", t, "-o", u],
        ["check", t, "--envelope", e, "-o", u],
        ["check", str(w.ss.tools_v2), "--envelope", e, "-o", u],  # drift: still exit 2
        ["dev-sigstore", "--trust-config-out", u],
        ["dev-sigstore", "--trust-config-out", "tc.json", "--trusted-root-out", u],
        ["dev-sigstore", "--trust-config-out", "tc.json", "--token-for", WF_ALICE,
         "--token-out", u],
        ["dev-sigstore", "--trust-config-out", "tc.json", "--token-for", WF_ALICE,
         "--github-env-out", u],
        ["demo", "-o", u],
        ["demo", "-o", str(w.regular)],
    ]
    for args in cases:
        assert_one_error(run_clean(w, *args), 2, "cannot")


@pytest.fixture(scope="module")
def live_sigstore(local_sigstore: LocalSigstore) -> Iterator[LocalSigstore]:
    """The session's shared LocalSigstore (tests/conftest.py)."""
    yield local_sigstore


def test_signing_outputs_unwritable_and_token_never_printed(
    in_work: World, live_sigstore: LocalSigstore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signing succeeds, writing fails: one line, no file, and the (real) token nowhere."""
    w, tc = in_work, str(live_sigstore.trust_config_path)
    token = live_sigstore.mint_token(WF_ALICE)
    runs = [
        run_clean(w, "sign", str(w.stmt), "-o", w.under_file("r.envelope.json"),
                  "--trust-config", tc, "--identity-token", token),
        run_clean(w, "release", "--server", SERVER, "--server-version", "1", "--tools",
                  str(w.ss.tools_v1), "--trust-config", tc, "--identity-token", token,
                  "--out-dir", w.under_file("rel")),
        # A failed gate writes its SARIF and summary: into an unwritable --out-dir, exit 2.
        run_clean(w, "release", "--server", SERVER, "--server-version", "1", "--tools",
                  str(w.colliding), "--trust-config", tc, "--identity-token", token,
                  "--out-dir", w.under_file("gate")),
    ]
    # The token from the environment, and an identity the token does not carry.
    monkeypatch.setenv("SIGSTORE_IDENTITY_TOKEN", token)
    runs.append(run_clean(w, "release", "--server", SERVER, "--server-version", "1", "--tools",
                          str(w.ss.tools_v1), "--trust-config", tc, "--out-dir", "rel",
                          "--identity", WF_ALICE.replace("alice", "mallory")))
    runs.append(run_clean(w, "sign", str(w.stmt), "-o", w.under_file("s.envelope.json"),
                          "--trust-config", tc))
    for run in runs:
        assert_one_error(run, 2)
        assert run.stdout == ""  # a failed gate prints its findings only once written
        assert token not in run.stdout + run.stderr
        assert token.split(".")[1] not in run.stderr  # not even the claims part


# --- 4. standard input: closed, and named twice ---------------------------------------------


def _run_sub(args: tuple[str, ...], stdin: bytes | None, closed: bool, cwd: Path) -> Run:
    proc = subprocess.run(
        [sys.executable, "-m", "histor_sign", *args],
        input=stdin,
        capture_output=True,
        # fd 0 closed in the child: Python starts with sys.stdin = None.
        preexec_fn=(lambda: os.close(0)) if closed else None,
        env=cli_env(), cwd=cwd, timeout=60,
    )
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


@pytest.mark.slow
def test_stdin_closed_and_stdin_twice(world: World) -> None:
    w = world
    t, e, tc = str(w.ss.tools_v1), str(w.ss.rev1), str(w.ss.trust_config)
    rel = ["release", "--server", SERVER, "--server-version", "1", "--identity-token", SECRET,
           "--trust-config", tc, "--out-dir", "rel"]
    closed = [
        ["digest", "-"], ["build", "-", *BUILD], ["sign", "-", "-o", "x.json"],
        ["verify", "-", "--trust-config", tc, "--repository", "alice/docs"], ["scan", "-"], ["replay", "-", "-c", t],
        ["guard", "-", "--catalog", t], ["check", "-", "--envelope", e], [*rel, "--tools", "-"],
    ]
    twice = [  # (args, what stdin holds: what the first reader of '-' accepts)
        (["build", "-", *BUILD, "--previous", "-"], e),
        (["verify", "-", "--previous", "-", "--trust-config", tc, "--repository", "alice/docs"], e),
        (["verify", e, "--tools", "-", "--previous", "-", "--trust-config", tc, "--repository", "alice/docs"], e),
        (["check", "-", "--envelope", "-"], e),
        (["check", "-", "--envelope", e, "--signed-tools", "-"], t),
        (["guard", str(w.call), "--catalog", "-", "--policy", "-"], t),
        ([*rel, "--tools", "-", "--previous", "-"], t),
    ]
    before = w.listing()
    failures = []
    for args in closed:
        try:
            assert_one_error(_run_sub(tuple(args), None, True, w.work), 2, "standard input")
        except AssertionError as exc:
            failures.append(f"closed {args}: {exc}")
    for args, content in twice:
        try:
            run = _run_sub(tuple(args), Path(content).read_bytes(), False, w.work)
            assert_one_error(run, 2, "standard input (-) can be read only once")
        except AssertionError as exc:
            failures.append(f"twice {args}: {exc}")
    assert not failures, "\n".join(failures)
    assert w.listing() == before


# --- 5. tampered envelopes: verify, check --verify, guard --verify -------------------------

_DELETE = object()


def _mutated(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


@pytest.mark.slow
def test_tampered_envelopes(in_work: World) -> None:
    w, tc = in_work, str(in_work.ss.trust_config)
    env = json.loads(w.ss.rev1.read_text())
    material = ("signer", "signature", "verificationMaterial")
    paths: list[tuple[Any, ...]] = [(k,) for k in env] + [
        ("signer", k) for k in env["signer"]] + [
        ("signer", "signature", k) for k in env["signer"]["signature"]] + [
        (*material, "certificate", "rawBytes"), (*material, "tlogEntries"),
        (*material, "tlogEntries", 0, "logIndex"), (*material, "tlogEntries", 0, "inclusionProof"),
        ("signer", "signature", "messageSignature", "signature")]
    variants = [_DELETE, 5, None, "x"]
    tampered = w.work.parent / "tampered.envelope.json"
    failures = []
    for path in paths:
        for value in variants:
            changed = _mutated(env, path, value)
            if changed == env:
                continue  # e.g. null where null already is
            tampered.write_text(json.dumps(changed))
            run = run_main("verify", str(tampered), "--trust-config", tc, "--repository", "alice/docs")
            try:
                assert run.code in (1, 2), run
                assert_one_error(run, run.code)
            except AssertionError as exc:
                failures.append(f"{path} = {value!r}: {exc}")
    # Targeted tampering that stays well-formed must fail verification (exit 1), also when
    # the envelope is used by check --verify and guard --verify.
    signature = env["signer"]["signature"]["messageSignature"]["signature"]
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    for path, value in [
        (("signer", "signature", "messageSignature", "signature"), flipped),
        (("toolDigests", "search"), "sha256:" + "0" * 64),
        (("serverVersion",), "9.9.9"),
    ]:
        tampered.write_text(json.dumps(_mutated(env, path, value)))
        for args in (
            ["verify", str(tampered), "--trust-config", tc, "--repository", "alice/docs"],
            ["check", str(w.ss.tools_v1), "--envelope", str(tampered), "--verify",
             "--trust-config", tc, "--server", "io.github.alice/docs"],
            ["guard", str(w.call), "--catalog", str(w.ss.tools_v1), "--envelope", str(tampered),
             "--verify", "--trust-config", tc, "--server", "io.github.alice/docs"],
        ):
            run = run_main(*args)
            try:
                assert_one_error(run, 1)
            except AssertionError as exc:
                failures.append(f"{args[0]} {path}: {exc}")
    tampered.unlink()
    assert not failures, "\n".join(failures[:20])


# --- 6. hostile servers and limits ------------------------------------------------------------


def _echoing_server(req: Seen) -> Reply:
    """A legacy HTTP endpoint that reflects our credentials into what it serves."""
    if req.method != "POST":
        return Reply(405)
    msg, auth = req.body, req.headers.get("authorization", "") + req.headers.get("x-key", "")
    method = msg.get("method")
    if method == "server/discover":
        return json_reply({"jsonrpc": "2.0", "id": msg["id"],
                           "error": {"code": -32601, "message": "Method not found"}})
    if method == "initialize":
        return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {
            "protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "echo", "version": "1"}}})
    if "id" not in msg:
        return Reply(202)
    return json_reply({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
        {"name": "t", "description": f"you sent {auth}", "inputSchema": {"type": "object"}}]}})


def test_server_echoing_a_credential_is_refused(
    in_work: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HS_SWEEP_TOKEN", SECRET)
    with serve(_echoing_server) as (url, _seen):
        for auth in (["--bearer-token-env", "HS_SWEEP_TOKEN"], ["--header", f"X-Key: {SECRET}"]):
            for command in (["fetch", "-o", "snap.json"], ["digest"], ["scan", "-o", "r.sarif"]):
                run = run_clean(in_work, *command, "--url", url, *auth)
                assert_one_error(run, 2, "echoed a credential")


def test_limits_near_the_bounds(in_work: World) -> None:
    w = in_work
    big = w.work.parent / "big.json"
    with open(big, "wb") as fh:  # sparse: 64 MiB + 1 byte without writing them
        fh.truncate(64 * 1024 * 1024 + 1)
    assert_one_error(run_clean(w, "digest", str(big)), 2, "larger than the limit")
    big.unlink()

    def nested(depth: int) -> Path:
        # {"tools": [{..., "inputSchema": {"type": "object", "default": [[...]]}}]}
        inner = depth - 4
        doc = ('{"tools": [{"name": "t", "inputSchema": {"type": "object", "default": '
               + "[" * inner + "]" * inner + "}}]}")
        path = w.work.parent / f"depth-{depth}.json"
        path.write_text(doc)
        return path

    ok, too_deep = nested(256), nested(257)
    assert run_main("digest", str(ok)).code == 0
    assert_one_error(run_clean(w, "digest", str(too_deep)), 2, "deeper than the limit of 256")
    ok.unlink()
    too_deep.unlink()


# --- 7. Ctrl-C: exit 130, one line, no child process, no partial output ----------------------


def _interrupt(args: list[str], ready: Any, cwd: Path, env: dict[str, str] | None = None) -> Run:
    proc = subprocess.Popen(
        [sys.executable, "-m", "histor_sign", *args], env=cli_env(env), cwd=cwd,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=sigint_default,
    )
    try:
        ready()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return Run(proc.returncode, out.decode(), err.decode())


def _wait_for(path: Path, extra: float) -> Any:
    def ready() -> None:
        deadline = time.monotonic() + 20
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(extra)

    return ready


def assert_interrupted(run: Run) -> None:
    assert_one_error(run, 130)
    assert run.stderr.splitlines()[-1] == "histor-sign: error: interrupted"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("scenario", "to_file"),
    [("hang", True), ("hang", False), ("stubborn", True)],  # stubborn: Ctrl-C in shutdown
)
def test_ctrl_c_during_fetch(tmp_path: Path, scenario: str, to_file: bool) -> None:
    pidfile = tmp_path / "pids"
    out = ["-o", str(tmp_path / "snap.json")] if to_file else []
    run = _interrupt(["fetch", "--stdio", raw_command(scenario, pidfile), "--protocol", "legacy",
                      *out], _wait_for(pidfile, 0.5), tmp_path)
    assert_interrupted(run)
    assert run.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pids"]
    time.sleep(0.1)
    assert not [pid for pid in pids_from(pidfile) if alive(pid)]


@pytest.mark.slow
def test_ctrl_c_during_release_fetch_and_signing(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    rel = ["release", "--server", SERVER, "--server-version", "1", "--out-dir",
           str(tmp_path / "rel")]
    run = _interrupt([*rel, "--stdio", raw_command("hang", pidfile), "--protocol", "legacy",
                      "--server-is-trusted-code", "--identity-token", SECRET],
                     _wait_for(pidfile, 0.5), tmp_path)
    assert_interrupted(run)
    assert not [pid for pid in pids_from(pidfile) if alive(pid)]

    # Signing against a Fulcio that accepts the connection and never answers.
    with LocalSigstore(directory=tmp_path / "sigstore") as instance:
        token = instance.mint_token(WF_ALICE)
        config = instance.trust_config_path.read_text()
        real = instance.url.rstrip("/")
    with socket.socket() as blackhole:
        blackhole.bind(("127.0.0.1", 0))
        blackhole.listen(8)
        blackhole.settimeout(20)
        hanging = tmp_path / "hanging.trust.json"
        hanging.write_text(config.replace(real, f"http://127.0.0.1:{blackhole.getsockname()[1]}"))
        tools = tmp_path / "tools.json"
        tools.write_text(json.dumps({"tools": TOOLS_V1}))
        # Hold the accepted connection until the CLI is gone: closing it early resets the
        # connection and races the signal (the CLI may fail on the reset first).
        held: list[socket.socket] = []
        run = _interrupt([*rel, "--tools", str(tools), "--trust-config", str(hanging)],
                         lambda: (held.append(blackhole.accept()[0]), time.sleep(0.2)),
                         tmp_path, env={"SIGSTORE_IDENTITY_TOKEN": token})
        for conn in held:
            conn.close()
    assert_interrupted(run)
    assert token not in run.stderr
    assert not (tmp_path / "rel").exists()
