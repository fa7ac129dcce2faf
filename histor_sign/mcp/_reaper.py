"""The stdio server's keeper on Linux: no process started for a fetch outlives it.

Run as ``python -I -S -c <this file> PARENT_PID ARGV...`` (stdlib only, so it needs nothing
from the server's environment). It makes itself a *child subreaper* — every descendant of
the server whose parent dies is re-parented to it, even one that called ``setsid()`` — and
starts the server as its child in a new process group, sharing its stdin/stdout/stderr.

* The server exits: everything left below the keeper is killed (SIGKILL, repeated until
  nothing is left), and the keeper exits with the server's status (re-raising its signal).
* histor-sign ends in any way, ``kill -9`` included: ``PR_SET_PDEATHSIG`` delivers SIGHUP
  to the keeper, which kills everything below it and exits.
* SIGTERM from histor-sign is forwarded to the server's process group (a polite stop);
  SIGHUP or SIGINT means kill everything now.

The keeper itself is a few hundred kilobytes of Python that reads nothing the server says.
"""

import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            pass
    return found


def _sweep(me: int, server: int) -> None:
    """SIGKILL every descendant until none is left (orphans re-parent to us meanwhile)."""
    try:
        os.killpg(server, signal.SIGKILL)
    except OSError:
        pass
    for _ in range(200):
        stack, seen = _children(me), []
        while stack:
            pid = stack.pop()
            seen.append(pid)
            stack.extend(_children(pid))
        for pid in seen:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, 0 if seen else os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            return
        if not seen:
            return


def main() -> None:
    parent, argv = int(sys.argv[1]), sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0)
    me, server = os.getpid(), 0

    def stop_now(signum: int, _frame: object) -> None:
        if server:
            _sweep(me, server)
        os._exit(128 + signum)

    def forward(signum: int, _frame: object) -> None:
        if server:
            try:
                os.killpg(server, signum)
            except OSError:
                pass

    # Armed before the fork, so a PDEATHSIG arriving at any moment still sweeps.
    signal.signal(signal.SIGHUP, stop_now)
    signal.signal(signal.SIGINT, stop_now)
    signal.signal(signal.SIGTERM, forward)
    if os.getppid() != parent:  # histor-sign died before PDEATHSIG was armed
        os._exit(129)
    server = os.fork()
    if server == 0:
        try:
            os.setpgid(0, 0)
            for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_DFL)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == server:
            break
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _sweep(me, server)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those cannot have a handler
            signal.signal(-code, signal.SIG_DFL)
        os.kill(me, -code)
    os._exit(code & 0xFF)


if __name__ == "__main__":
    main()
