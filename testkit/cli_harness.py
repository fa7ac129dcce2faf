"""Test harness: run the real CLI as a user would, and check its errors.

``run_cli`` runs the real entry point (``histor_sign.cli.main``) in this process by default,
with the argv, standard input, working directory and environment a fresh
``python -m histor_sign`` would have, and gives back its exit code and the bytes it wrote
to stdout and stderr, decoded as a subprocess's would be. Starting an interpreter costs
about two seconds on a busy two-core machine; this costs milliseconds. Everything the run
may change in this process (the standard streams, ``os.environ``, the working directory,
``sys.argv``, signal handlers, warning filters, the root logger, the CLI's module state) is
put back afterwards.

``run_cli(..., subprocess=True)`` (or ``run_cli_subprocess``) starts a real process, for
the tests where the process boundary is what is tested: signals, process trees, blocking
IO, start-up imports, ``python -m``. ``HISTOR_SIGN_TEST_SUBPROCESS=1`` in the environment
makes every ``run_cli`` start a process, to check that both ways agree.

A plain module (not conftest) so every test directory imports the same one."""

from __future__ import annotations

import contextlib
import io
import locale
import logging
import os
import signal
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"

#: Set (to anything but "" or "0") to run every ``run_cli`` call in a fresh process.
SUBPROCESS_ENV = "HISTOR_SIGN_TEST_SUBPROCESS"


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["NO_PROXY"] = "127.0.0.1,localhost"
    env.pop("GITHUB_ACTIONS", None)
    if extra:
        env.update(extra)
    return env


def bytecode_env() -> dict[str, str]:
    """For a process started with a minimal environment (as a desktop host or a golden case
    starts one): where this run keeps bytecode (tests/conftest.py, outside the checkout), else
    none is written — never into the checkout."""
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    return {"PYTHONPYCACHEPREFIX": prefix} if prefix else {"PYTHONDONTWRITEBYTECODE": "1"}


def run_cli(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    subprocess: bool = False,
) -> Run:
    """Run ``histor-sign ARGS`` as ``python -m histor_sign ARGS`` would: in this process
    (the default), or with ``subprocess=True`` in a fresh one."""
    if subprocess or os.environ.get(SUBPROCESS_ENV, "") not in ("", "0"):
        return run_cli_subprocess(*args, stdin=stdin, cwd=cwd, env=env, timeout=timeout)
    return run_cli_in_process(*args, stdin=stdin, cwd=cwd, env=env, timeout=timeout)


def run_cli_subprocess(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> Run:
    """Run ``python -m histor_sign ARGS`` as a user would, in a fresh process."""
    proc = subprocess.run(
        [sys.executable, "-m", "histor_sign", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=cli_env(env),
        timeout=timeout,
    )
    return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


class _TimedOut(BaseException):
    """Raised in the main thread when an in-process run overstays its timeout (a
    BaseException, so the CLI's error boundary does not turn it into an error line)."""


#: A fresh interpreter's warning filters (no -W, no PYTHONWARNINGS, not in dev mode),
#: lowest priority first.
_DEFAULT_WARNING_FILTERS: tuple[tuple[str, type[Warning], str], ...] = (
    ("ignore", ResourceWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", DeprecationWarning, ""),
    ("default", DeprecationWarning, "__main__"),
)

#: Handlers saved and put back around each in-process run (a fresh process has its own).
_SIGNALS = tuple(
    getattr(signal, name) for name in
    ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGPIPE", "SIGCHLD", "SIGALRM", "SIGUSR1",
     "SIGUSR2", "SIGWINCH")
    if hasattr(signal, name)
)


#: How this interpreter's own stdin/stdout were set up (same locale rules as a child's).
_STDIO_ERRORS = getattr(sys.__stdout__, "errors", None) or "strict"


def _stream_encoding(env: dict[str, str]) -> tuple[str, str]:
    """The encoding and error handler a child's stdin/stdout would get from this
    environment (stderr always uses backslashreplace)."""
    forced = env.get("PYTHONIOENCODING", "")
    if forced:
        name, _, errors = forced.partition(":")
        return (name or locale.getpreferredencoding(False)), (errors or _STDIO_ERRORS)
    if env.get("PYTHONUTF8", "") == "1":
        return "utf-8", "surrogateescape"
    return locale.getpreferredencoding(False), _STDIO_ERRORS


@contextlib.contextmanager
def _environment(env: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _working_directory(cwd: Path | None) -> Iterator[None]:
    saved = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved)


@contextlib.contextmanager
def _signal_handlers() -> Iterator[None]:
    saved = {sig: signal.getsignal(sig) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            if handler is not None:
                signal.signal(sig, handler)


@contextlib.contextmanager
def _fresh_warnings() -> Iterator[None]:
    """Warnings filtered as in a fresh interpreter and printed on (the captured) stderr."""

    def show(message: Any, category: Any, filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        text = warnings.formatwarning(message, category, filename, lineno, line)
        with contextlib.suppress(OSError, ValueError):
            (file or sys.stderr).write(text)

    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in _DEFAULT_WARNING_FILTERS:
            warnings.filterwarnings(action, category=category, module=module)  # type: ignore[arg-type]
        warnings.showwarning = show
        yield


@contextlib.contextmanager
def _fresh_root_logger() -> Iterator[None]:
    """A root logger as in a fresh process (no handlers, level WARNING): a record nobody
    handles goes to ``logging.lastResort``, which writes on the current (captured) stderr."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers.clear()
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


@contextlib.contextmanager
def _alarm(timeout: float) -> Iterator[None]:
    def expired(_signum: int, _frame: object) -> None:
        raise _TimedOut

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _ThreadRouted:
    """Stands in for a standard stream during an in-process run: the thread that runs the
    CLI sees its pipe; every other thread (a test's HTTP server, a LocalSigstore) keeps the
    stream it had, as it would if the CLI ran in a process of its own."""

    def __init__(self, pipe: io.TextIOWrapper, other: Any) -> None:
        self._pipe, self._other, self._owner = pipe, other, threading.get_ident()

    def _target(self) -> Any:
        return self._pipe if threading.get_ident() == self._owner else self._other

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    def __iter__(self) -> Any:
        return iter(self._target())


class _Pipe(io.BytesIO):
    """What the CLI writes into; stays readable even if the CLI closes its stream."""

    def close(self) -> None:
        pass


def _exit_code(exc: SystemExit, stderr: io.TextIOBase) -> int:
    """The status a process would end with after this SystemExit (as Py_Exit does)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    stderr.write(f"{code}\n")
    return 1


def run_cli_in_process(
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    inherit_env: bool = False,
) -> Run:
    """Run the CLI's ``main`` here, as ``python -m histor_sign ARGS`` would run it.

    Standard input is ``stdin`` (empty when None: pytest's stdin is /dev/null, which is
    what a child would inherit). stdout and stderr are pipes to the CLI — not terminals —
    with the encoding a child would get; the bytes written are decoded as ``run_cli_subprocess``
    decodes a child's. ``inherit_env`` runs with this process's environment as it is
    (``env`` still applies on top) instead of ``cli_env``'s.
    """
    from histor_sign.canonical import reset_stdin
    from histor_sign.cli import main

    # The module that defines ``main`` (and its ``_debug`` flag), wherever it lives.
    cli_app = sys.modules[main.__module__]

    child_env = dict(os.environ) if inherit_env else cli_env()
    if env:
        child_env.update(env)
    encoding, errors = _stream_encoding(child_env)
    out_bytes, err_bytes = _Pipe(), _Pipe()
    fake_in = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding=encoding, errors=errors)
    fake_out = io.TextIOWrapper(out_bytes, encoding=encoding, errors=errors)
    fake_err = io.TextIOWrapper(err_bytes, encoding=encoding, errors="backslashreplace",
                                line_buffering=True)
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_dunder = (sys.__stdin__, sys.__stdout__, sys.__stderr__)
    saved_argv = sys.argv
    saved_debug = cli_app._debug
    code = 0
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_working_directory(cwd))
            stack.enter_context(_environment(child_env))
            stack.enter_context(_signal_handlers())
            stack.enter_context(_fresh_warnings())
            stack.enter_context(_fresh_root_logger())
            routed = tuple(_ThreadRouted(pipe, other) for pipe, other in
                           zip((fake_in, fake_out, fake_err), saved_streams, strict=True))
            sys.stdin, sys.stdout, sys.stderr = routed
            # What a child's terminal-size and isatty probes would look at: its pipes.
            sys.__stdin__, sys.__stdout__, sys.__stderr__ = (
                _ThreadRouted(pipe, other) for pipe, other in
                zip((fake_in, fake_out, fake_err), saved_dunder, strict=True))
            sys.argv = [str(REPO / "histor_sign" / "__main__.py"), *args]
            stack.enter_context(_alarm(timeout))
            try:
                main(list(args))
            except SystemExit as exc:
                code = _exit_code(exc, fake_err)
            except _TimedOut:
                raise subprocess.TimeoutExpired(["histor-sign", *args], timeout) from None
            except KeyboardInterrupt:
                traceback.print_exc(file=fake_err)
                code = -signal.SIGINT
            except BaseException:  # an uncaught error: Python prints it and exits 1
                traceback.print_exc(file=fake_err)
                code = 1
            for stream in (fake_out, fake_err):
                with contextlib.suppress(ValueError, OSError):
                    stream.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = saved_dunder  # type: ignore[misc]
        sys.argv = saved_argv
        cli_app._debug = saved_debug
        reset_stdin()  # the library's own readers of "-" see a fresh stdin again
    return Run(code, out_bytes.getvalue().decode(), err_bytes.getvalue().decode())


def assert_clean_error(run: Run, code: int = 2) -> None:
    """One error line on stderr, the expected exit code, and no traceback.

    Warnings (e.g. that a local, untrusted Sigstore instance is in use) and the summary
    line of a fetch that completed before the error (issue 26) may precede it.
    """
    assert run.code == code, (run.code, run.stderr)
    assert "Traceback" not in run.stderr
    lines = [
        line for line in run.stderr.splitlines()
        if line.strip() and not line.startswith(("histor-sign: warning: ",
                                                 "histor-sign: fetched "))
    ]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("histor-sign: error: "), run.stderr


def read_github_output(text: str) -> dict[str, str]:
    """Parse a ``$GITHUB_OUTPUT`` file as the GitHub Actions runner does: ``key=value`` lines
    and ``key<<DELIMITER`` … ``DELIMITER`` blocks (later keys win)."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i)  # ValueError: an unterminated block
            outputs[key] = "\n".join(lines[i:end])
            i = end + 1
        else:
            key, value = line.split("=", 1)
            outputs[key] = value
    return outputs


def load_benchmark(name: str) -> ModuleType:
    """Import ``benchmarks/NAME.py`` (not a package) by path, registered in ``sys.modules``
    under ``name`` so the dataclasses and worker processes inside it can find it.

    Only for a test *of* that script (the labeled sets' drawing, labelling and evaluation,
    the pinned compat servers): what tests and benchmarks both use lives in testkit/."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def sigint_default() -> None:
    """For ``preexec_fn``: the child takes SIGINT as a terminal's Ctrl-C, even when the
    test run itself ignores it (a background job of a non-interactive shell inherits
    SIGINT ignored, and so would every process it starts)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
