"""Compressed HTTP bodies: `max_bytes` bounds decoded bytes and memory stays bounded.

A raw server answers with hand-made ``Content-Encoding`` bodies: a legitimate gzip or
deflate page must still fetch; stacked or unknown codings are refused in one line; a gzip
bomb (1 MiB that inflates to 512 MiB) trips the byte bound with bounded peak RSS, measured
for the CLI process itself (``wait4``) against a same-run baseline fetch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import Run, assert_clean_error, cli_env, run_cli
from raw_http_server import Reply, Seen, serve
from test_fetch_http_raw import legacy, page

from histor_sign.errors import FetchError, LimitExceeded
from histor_sign.mcp import FetchOptions, Target, fetch

BOMB_BYTES = 512 << 20


def _gzip(data: bytes, wbits: int = 31) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return c.compress(data) + c.flush()


def _bomb_pieces():  # type: ignore[no-untyped-def]
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    for _ in range(BOMB_BYTES >> 20):
        yield c.compress(block)
    yield c.flush()


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """gzip of 512 MiB of JSON whitespace (about 512 KiB)."""
    return b"".join(_bomb_pieces())


@pytest.fixture(scope="module")
def bomb_head() -> bytes:
    """The bomb's first 64 KiB, the same bytes as ``bomb[: 64 << 10]``: deflate writes a
    stream, so a prefix needs only the input before it, not all 512 MiB."""
    head = b""
    for piece in _bomb_pieces():
        head += piece
        if len(head) >= 64 << 10:
            break
    return head[: 64 << 10]


def _encoded_tools(encode: Callable[[bytes], bytes], coding: str) -> Callable[[Seen], Reply]:
    def tools_list(req: Seen) -> Reply:
        body = page(req.body["id"], '[{"name":"zipped","inputSchema":{"type":"object"}}]')
        return Reply(200, encode(body.encode()),
                     {"Content-Type": "application/json", "Content-Encoding": coding})

    return legacy(tools_list)


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", _gzip),
        ("x-gzip", _gzip),
        ("deflate", lambda b: _gzip(b, 15)),  # zlib-wrapped, as RFC 9110 defines it
        ("deflate", lambda b: _gzip(b, -15)),  # raw deflate, as some servers send it
        ("identity", lambda b: b),
        ("gzip", lambda b: _gzip(b[:10]) + _gzip(b[10:])),  # two gzip members back to back
    ],
)
def test_one_compression_layer_still_fetches(coding: str, encode: Callable[[bytes], bytes]) -> None:
    with serve(_encoded_tools(encode, coding)) as (url, seen):
        snap = fetch(Target.http(url))
    assert [t["name"] for t in snap.tools] == ["zipped"]
    assert {r.headers.get("accept-encoding") for r in seen} == {"identity"}


@pytest.mark.parametrize("coding", ["gzip, gzip", "br", "zstd", "compress", "gzip, identity, deflate"])
def test_stacked_or_unknown_codings_are_refused(coding: str) -> None:
    double = coding.count(",") == 1 and coding.startswith("gzip, gzip")
    encode = (lambda b: _gzip(_gzip(b))) if double else (lambda b: b)
    with serve(_encoded_tools(encode, coding)) as (url, _), pytest.raises(FetchError) as info:
        fetch(Target.http(url))
    assert "Content-Encoding" in str(info.value)
    assert "at most one gzip or deflate layer" in str(info.value)


def test_corrupt_gzip_is_one_clean_error() -> None:
    with serve(_encoded_tools(lambda b: b"\x1f\x8b\x08\x00garbage" + b, "gzip")) as (url, _):
        with pytest.raises(FetchError, match="compressed response body is corrupt"):
            fetch(Target.http(url))


_MEASURE = """
import os, subprocess, sys
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
out, err = b"", b""
import threading
def drain(stream, sink):
    sink.append(stream.read())
o, e = [], []
ts = [threading.Thread(target=drain, args=(proc.stdout, o)),
      threading.Thread(target=drain, args=(proc.stderr, e))]
for t in ts: t.start()
_, status, usage = os.wait4(proc.pid, 0)
for t in ts: t.join()
sys.stdout.buffer.write(e[0])
sys.stderr.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}\\n")
"""


def run_with_peak_rss(*args: str) -> tuple[Run, int]:
    """Run the CLI; return its result and its own peak RSS in KiB (``wait4`` on that pid)."""
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, sys.executable, "-m", "histor_sign", *args],
        capture_output=True, env=cli_env(), timeout=120,
    )
    code, rss = proc.stderr.decode().split()
    return Run(int(code), "", proc.stdout.decode()), int(rss)


@pytest.mark.slow
def test_gzip_bomb_trips_max_bytes_with_bounded_memory(bomb: bytes, tmp_path: Path) -> None:
    def bomb_reply(_req: Seen) -> Reply:
        return Reply(200, bomb, {"Content-Type": "application/json", "Content-Encoding": "gzip"})

    def small_reply(req: Seen) -> Reply:
        return Reply(200, b" " * 1024, {"Content-Type": "application/json"})

    out = str(tmp_path / "snap.json")
    with serve(legacy(small_reply)) as (url, _):
        baseline, base_rss = run_with_peak_rss("fetch", "--url", url, "-o", out)
    assert_clean_error(baseline, 2)  # whitespace is not a JSON-RPC answer
    with serve(legacy(bomb_reply)) as (url, _):
        run, bomb_rss = run_with_peak_rss("fetch", "--url", url, "-o", out)
    assert_clean_error(run, 2)
    assert "more than --max-bytes" in run.stderr, run.stderr
    # The default bound is 32 MiB of decoded bytes (buffered once); measured here: +33 MiB
    # over the baseline, and +132 MiB when httpx inflated whole network chunks.
    assert bomb_rss - base_rss < 64 * 1024, (base_rss, bomb_rss)
    assert not os.path.exists(out)


def test_max_bytes_counts_decoded_bytes(bomb_head: bytes) -> None:
    def bomb_reply(_req: Seen) -> Reply:
        return Reply(200, bomb_head, {"Content-Type": "application/json",
                                      "Content-Encoding": "gzip"})

    # 64 KiB of compressed input, far more decoded: a 1 MiB bound trips on decoded bytes.
    with serve(legacy(bomb_reply)) as (url, _), pytest.raises(LimitExceeded):
        fetch(Target.http(url), FetchOptions(max_bytes=1 << 20))


def test_stacked_gzip_from_the_issue_is_one_cli_line(tmp_path: Path) -> None:
    double = _gzip(_gzip(b" " * (64 << 20)))
    assert len(double) < 4096

    def reply(_req: Seen) -> Reply:
        return Reply(200, double, {"Content-Type": "application/json",
                                   "Content-Encoding": "gzip, gzip"})

    with serve(legacy(reply)) as (url, _):
        run = run_cli("fetch", "--url", url, "-o", str(tmp_path / "s.json"))
    assert_clean_error(run, 2)
    assert "Content-Encoding" in run.stderr
