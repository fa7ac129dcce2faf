"""Every default bound comes from histor_sign._limits, and the docs quote it."""

from __future__ import annotations

import re

from cli_harness import REPO

from histor_sign import _limits as limits
from histor_sign.canonical import parse_json, read_bytes
from histor_sign.collisions import ScanOptions
from histor_sign.collisions._replay import ReplayOptions
from histor_sign.mcp import FetchOptions


def test_library_defaults_are_the_limits_module() -> None:
    fetch = FetchOptions()
    assert (fetch.max_pages, fetch.max_tools, fetch.max_bytes) == (
        limits.DEFAULT_MAX_PAGES, limits.DEFAULT_MAX_TOOLS, limits.DEFAULT_MAX_RECEIVED_BYTES)
    assert (fetch.timeout, fetch.total_timeout) == (
        limits.DEFAULT_TIMEOUT, limits.DEFAULT_TOTAL_TIMEOUT)
    scan = ScanOptions()
    assert (scan.max_tools, scan.max_candidates, scan.max_witness_bytes) == (
        limits.DEFAULT_MAX_SCAN_TOOLS, limits.DEFAULT_MAX_CANDIDATES,
        limits.DEFAULT_MAX_WITNESS_BYTES)
    replay = ReplayOptions()
    assert (replay.max_tools, replay.max_calls, replay.max_validations,
            replay.max_trace_bytes, replay.max_argument_bytes) == (
        limits.DEFAULT_MAX_SCAN_TOOLS, limits.DEFAULT_MAX_CALLS, limits.DEFAULT_MAX_VALIDATIONS,
        limits.DEFAULT_MAX_TRACE_BYTES, limits.DEFAULT_MAX_ARGUMENT_BYTES)


def test_a_fetched_catalog_fits_the_file_bound() -> None:
    # What fetch writes is pretty-printed; it must stay readable by the file commands.
    assert limits.DEFAULT_MAX_FILE_BYTES >= 2 * limits.DEFAULT_MAX_RECEIVED_BYTES


def test_reader_defaults(tmp_path) -> None:  # type: ignore[no-untyped-def]
    deep = limits.DEFAULT_MAX_DEPTH
    assert parse_json(b"[" * deep + b"]" * deep, "t") is not None
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(limits.DEFAULT_MAX_FILE_BYTES)
    assert len(read_bytes(str(big))) == limits.DEFAULT_MAX_FILE_BYTES


def _mib(text: str) -> int:
    return int(text) * 1024 * 1024


def test_the_docs_quote_the_defaults() -> None:
    mcp = (REPO / "docs" / "mcp.md").read_text()
    m = re.search(r"defaults (\d+) / (\d+) / (\d+) MiB of everything the server sends", mcp)
    assert m is not None
    assert (int(m[1]), int(m[2]), _mib(m[3])) == (
        limits.DEFAULT_MAX_PAGES, limits.DEFAULT_MAX_TOOLS, limits.DEFAULT_MAX_RECEIVED_BYTES)
    scan = (REPO / "docs" / "scan.md").read_text()
    quoted = {
        "--max-tools": r"`--max-tools` \(default (\d+)\)",
        "--max-candidates": r"`--max-candidates` \(default (\d+)",
        "--max-calls": r"`--max-calls` \((\d+)\)",
        "--max-validations": r"`--max-validations` \((\d+) full validations\)",
        "--max-trace-bytes": r"`--max-trace-bytes` \((\d+) MiB",
    }
    found = {flag: re.search(pattern, scan) for flag, pattern in quoted.items()}
    assert all(found.values()), found
    assert int(found["--max-tools"][1]) == limits.DEFAULT_MAX_SCAN_TOOLS  # type: ignore[index]
    assert int(found["--max-candidates"][1]) == limits.DEFAULT_MAX_CANDIDATES  # type: ignore[index]
    assert int(found["--max-calls"][1]) == limits.DEFAULT_MAX_CALLS  # type: ignore[index]
    assert int(found["--max-validations"][1]) == limits.DEFAULT_MAX_VALIDATIONS  # type: ignore[index]
    assert _mib(found["--max-trace-bytes"][1]) == limits.DEFAULT_MAX_TRACE_BYTES  # type: ignore[index]
