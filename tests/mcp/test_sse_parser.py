"""The SSE parser follows the WHATWG event-stream rules, whatever the chunking."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from histor_sign.mcp._sse import Event, SSEParser

STREAM = (
    b"\xef\xbb\xbf: comment\r\n"
    b"retry: 1500\n"
    b"id: 1\rdata:\r\r"  # priming event: dispatched with empty data
    b"event: message\r\ndata: {\"a\":\r\ndata:  1}\r\n\r\n"
    b"data\n\n"  # field without colon: empty data line
    b"id: 2\nevent: other\ndata: x\n\n"
    b"data: unterminated"
)
EXPECTED = [
    Event("message", "", "1"),
    Event("message", '{"a":\n 1}', "1"),
    Event("message", "", "1"),
    Event("other", "x", "2"),
]


def parse(chunks: list[bytes]) -> tuple[list[Event], SSEParser]:
    parser = SSEParser()
    events = [e for chunk in chunks for e in parser.feed(chunk)]
    return events, parser


def test_whole_stream() -> None:
    events, parser = parse([STREAM])
    assert events == EXPECTED
    assert parser.retry_ms == 1500 and parser.last_event_id == "2"


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(STREAM)]
    chunks = [STREAM[a:b] for a, b in itertools.pairwise(points)]
    assert parse(chunks)[0] == EXPECTED


def test_cr_at_chunk_end_then_lf_is_one_line_break() -> None:
    events, _ = parse([b"data: a\r", b"\n", b"\r", b"\n"])
    assert events == [Event("message", "a", "")]
