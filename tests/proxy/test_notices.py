"""The proxy's notice writer (histor_sign/proxy/_notices.py): a caller never waits on a
blocked ``notice``; lines come out in order; those that did not fit are counted where they
were; ``flush`` is bounded."""

from __future__ import annotations

import threading

from histor_sign.proxy._notices import Notices


class Blocking:
    """A ``notice`` that blocks until released (an unread pipe), recording what it got."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.written: dict[str, threading.Event] = {}

    def __call__(self, line: str) -> None:
        self.entered.set()
        self.release.wait()
        self.lines.append(line)
        self.written.setdefault(line, threading.Event()).set()

    def wait_for(self, line: str) -> bool:
        return self.written.setdefault(line, threading.Event()).wait(30)


def test_a_blocked_notice_holds_up_no_caller_and_drops_are_counted_in_place() -> None:
    sink = Blocking()
    notices = Notices(sink, lambda n: f"[{n} dropped]", max_pending=3)
    notices("a")  # taken by the writer, which then blocks in the sink
    assert sink.entered.wait(30)
    for line in "bcdefg":  # b, c, d fill the queue; e, f, g are dropped
        notices(line)
    assert notices.flush(0) is False  # bounded: the writer is still blocked
    sink.release.set()
    assert sink.wait_for("d")
    notices("h")  # room again: h carries the count of what was dropped before it
    assert notices.flush(30) is True
    assert sink.lines == ["a", "b", "c", "d", "[3 dropped]", "h"]


def test_drops_after_the_last_line_are_said_on_flush() -> None:
    sink = Blocking()
    notices = Notices(sink, lambda n: f"[{n} dropped]", max_pending=1)
    notices("a")
    assert sink.entered.wait(30)
    notices("b")
    notices("c")
    sink.release.set()
    assert notices.flush(30) is True
    assert sink.lines == ["a", "b", "[1 dropped]"]


def test_a_notice_that_raises_loses_only_its_line() -> None:
    got: list[str] = []

    def flaky(line: str) -> None:
        if line == "bad":
            raise BrokenPipeError
        got.append(line)

    notices = Notices(flaky, lambda n: f"[{n} dropped]")
    for line in ("one", "bad", "two"):
        notices(line)
    assert notices.flush(30) is True
    assert got == ["one", "two"]


def test_nothing_said_nothing_started() -> None:
    notices = Notices(lambda _line: None, lambda n: f"[{n} dropped]")
    assert notices.flush(0) is True
    assert notices._thread is None
