"""Incremental Server-Sent Events parser, per the WHATWG HTML "event stream" rules.

MCP servers differ in framing (sse-starlette writes CRLF, the TypeScript SDK LF and ``id:``
lines, some send an empty priming event first), so this follows the spec exactly instead of
splitting on ``data:``: lines end in CR, LF or CRLF (also across chunk boundaries), ``:``
starts a comment, one optional space after the colon is dropped, ``data`` lines join with
LF, an event with empty data is not dispatched, and an unterminated event at end of stream
is discarded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    type: str
    data: str
    id: str


class SSEParser:
    """Feed bytes, get complete events; remembers ``last_event_id`` and ``retry``."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip_lf = False  # previous chunk ended in CR: a leading LF belongs to it
        self._first = True
        self._data: list[str] = []
        self._type = ""
        self.last_event_id = ""
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> Iterator[Event]:
        """Parse ``chunk`` and yield every event it completes."""
        buf = self._buffer
        buf += chunk
        n = len(buf)
        start = self._chunk_start(buf)
        while start < n:
            cr = buf.find(b"\r", start)
            lf = buf.find(b"\n", start)
            if cr < 0 and lf < 0:
                break
            end = lf if cr < 0 else cr if lf < 0 else min(cr, lf)
            if buf[end] == 0x0D:
                if end + 1 < n:
                    nxt = end + 2 if buf[end + 1] == 0x0A else end + 1
                else:
                    nxt = end + 1
                    self._skip_lf = True
            else:
                nxt = end + 1
            line = bytes(buf[start:end])
            start = nxt
            event = self._line(line)
            if event is not None:
                yield event
        del buf[:start]

    def _chunk_start(self, buf: bytearray) -> int:
        """Step: where the buffer's first line starts: after an LF that completes the CRLF
        the last chunk ended in (it emptied the buffer, so only position 0 can be one)."""
        if not self._skip_lf or not buf:
            return 0
        self._skip_lf = False
        return 1 if buf[0] == 0x0A else 0

    def _line(self, raw: bytes) -> Event | None:
        if self._first:
            raw = self._without_bom(raw)
        # Field names and the separator are ASCII; values are decoded strictly so that
        # invalid UTF-8 in JSON data is caught by the JSON parser's rules, not replaced.
        line = raw.decode("utf-8", "surrogateescape")
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        else:
            self._other_field(name, value)
        return None

    def _without_bom(self, raw: bytes) -> bytes:
        """Step: the stream's first line, less a UTF-8 byte order mark."""
        self._first = False
        return raw[3:] if raw.startswith(b"\xef\xbb\xbf") else raw

    def _other_field(self, name: str, value: str) -> None:
        """Step: an ``event``, ``id`` or ``retry`` field (any other field is ignored)."""
        if name == "event":
            self._type = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                self.retry_ms = int(value)

    def _dispatch(self) -> Event | None:
        data, etype = self._data, self._type
        self._data, self._type = [], ""
        if not data:
            return None
        return Event(type=etype or "message", data="\n".join(data), id=self.last_event_id)
