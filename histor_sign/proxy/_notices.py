"""The proxy's operator notices, written without ever holding up the MCP stream.

The proxy says one line per event (a withheld tool, a denied call) through the ``notice``
callable it was given — on the command line, a write to stderr. A host that never reads
the proxy's stderr (many don't) fills that pipe after some hundred lines, and a write to a
full pipe blocks: written from the event loop, it would stop every message of the session.

So the event loop only hands lines to :class:`Notices`: a bounded queue, emptied in order
by one writer thread that calls ``notice`` (and may block in it, alone). When the queue is
full a line is dropped and counted, and the next line that fits carries the count: the
writer says how many were dropped just where they were. Nothing the proxy decides depends
on a notice: the audit log records every decision whether or not its line was shown.
:meth:`Notices.flush` waits, for a bounded time, until everything queued is out; a writer
still blocked then is left behind (a daemon thread: it never keeps the process alive).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

from histor_sign._limits import DEFAULT_MAX_PENDING_NOTICES


class Notices:
    """Callable like ``notice``: ``notices(line)`` never blocks and never raises.

    Lines reach ``notice`` in the order given, one at a time, from one writer thread
    (started on the first line); a ``notice`` that raises loses that line only.
    ``dropped_line(n)`` words the line that stands for ``n`` dropped lines.
    """

    def __init__(self, notice: Callable[[str], None], dropped_line: Callable[[int], str], *,
                 max_pending: int = DEFAULT_MAX_PENDING_NOTICES) -> None:
        self._notice = notice
        self._dropped_line = dropped_line
        #: (lines dropped just before this one, the line or None for a count alone)
        self._queue: queue.Queue[tuple[int, str | None]] = queue.Queue(max(1, max_pending))
        self._lock = threading.Condition()
        self._dropped = 0  # dropped since the last line queued
        self._unwritten = 0  # queued and not yet written (or failed)
        self._thread: threading.Thread | None = None

    def __call__(self, line: str) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._write, daemon=True,
                                                name="histor-sign notices")
                self._thread.start()
            try:
                self._queue.put_nowait((self._dropped, line))
            except queue.Full:
                self._dropped += 1
                return
            self._dropped = 0
            self._unwritten += 1

    def flush(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until every line queued so far is written (and
        the count of lines dropped since the last one). True if all got out in time."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._lock:
            dropped, self._dropped = self._dropped, 0
            self._unwritten += 1 if dropped else 0
        if dropped:
            try:
                self._queue.put((dropped, None), timeout=max(0.0, timeout))
            except queue.Full:
                with self._lock:
                    self._dropped += dropped
                    self._unwritten -= 1
                return False
        with self._lock:
            return self._lock.wait_for(lambda: self._unwritten == 0,
                                       max(0.0, deadline - time.monotonic()))

    def _write(self) -> None:
        while True:
            dropped, line = self._queue.get()
            if dropped:
                self._say(self._dropped_line(dropped))
            if line is not None:
                self._say(line)
            with self._lock:
                self._unwritten -= 1
                self._lock.notify_all()

    def _say(self, line: str) -> None:
        try:
            self._notice(line)
        except Exception:  # a notice is best effort; the audit log is the record
            pass
