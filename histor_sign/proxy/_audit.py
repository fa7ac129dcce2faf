"""The proxy's audit log: JSON lines, appended, fsynced per record.

Each record is one line ``{"time": …, "event": …, …}``. What a record may hold is fixed
here: tool names, reason codes and the guard's value-free messages, JSON pointers into
the arguments, the SHA-256 of the canonical arguments — never an argument value. Every
line is inert for a terminal (:func:`~histor_sign._escape.inert_line`: bidi overrides,
line separators and other controls a server may put in a tool name are JSON escapes), and
stays the same JSON.

A record that cannot be written (a full device, ``/dev/full``, a file that refuses writes,
a FIFO whose reader stopped reading) is :class:`AuditFailed`: the decision it records does
not take effect, and the proxy ends the session with that one line. Nothing waits forever:
a FIFO must have a reader when the log is opened, and one that stops reading is waited on
for at most :data:`~histor_sign._limits.DEFAULT_OUTPUT_READER_SECONDS`.
"""

from __future__ import annotations

import errno
import json
import os
import select
import stat
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from histor_sign._escape import inert_line, printable
from histor_sign.errors import OperationalError, UsageError


class AuditFailed(OperationalError):
    """An audit record could not be written: what it records must not happen."""


class AuditLog:
    """An append-only JSON-lines file (or nothing when ``path`` is None)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._fd: int | None = None
        self._sync = False
        #: Why the log failed (then every record fails the same way), None while it works.
        self.failure: str | None = None
        if self.path is not None:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                                   | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o600)
                self._sync = stat.S_ISREG(os.fstat(self._fd).st_mode)
            except OSError as exc:
                reason = exc.strerror or str(exc)
                if exc.errno == errno.ENXIO:
                    reason = "it is a FIFO that no process reads"
                raise UsageError(f"cannot open the audit log {printable(str(self.path))}: "
                                 f"{reason}", param="audit") from None

    def record(self, event: str, **fields: Any) -> None:
        """Append one record and fsync it before the decision it records takes effect;
        :class:`AuditFailed` when it cannot be."""
        if self._fd is None:
            return
        if self.failure is not None:
            raise AuditFailed(self.failure)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = json.dumps({"time": stamp, "event": event, **fields}, ensure_ascii=False,
                          separators=(",", ":"), sort_keys=False)
        try:
            self._write((inert_line(line) + "\n").encode("utf-8"))
            if self._sync:
                os.fsync(self._fd)
        except OSError as exc:
            self.failure = (f"cannot write the audit log {printable(str(self.path))}: "
                            f"{exc.strerror or type(exc).__name__}; no call is made without "
                            "its record, so the session was ended")
            raise AuditFailed(self.failure) from None

    def _write(self, data: bytes) -> None:
        """Write all of ``data``; a pipe that stays full is waited on, boundedly."""
        from histor_sign._limits import DEFAULT_OUTPUT_READER_SECONDS

        assert self._fd is not None
        deadline = time.monotonic() + DEFAULT_OUTPUT_READER_SECONDS
        while data:
            try:
                data = data[os.write(self._fd, data):]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise OSError(errno.EAGAIN, "its reader stopped reading for "
                                  f"{DEFAULT_OUTPUT_READER_SECONDS:g} s") from None
                select.select([], [self._fd], [], left)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
