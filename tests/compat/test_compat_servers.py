"""Real servers: histor-sign lists what the official MCP Python SDK client lists.

Each pinned server of ``benchmarks/compat_servers.py`` that is installed in its cache
(``python benchmarks/compat_servers.py install``; ``HISTOR_COMPAT_DIR`` moves the cache) is
fetched with ``histor_sign.mcp.fetch`` and with ``mcp.Client``, and both must list the same
tools: names in order and canonical definitions. This test never downloads: a server that is
not installed is skipped, and so is every server once ``HISTOR_COMPAT_BUDGET`` seconds
(default 900) are spent, so a CI run spends at most that much here.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import ModuleType

import pytest
from cli_harness import load_benchmark

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parent.parent.parent


def _load() -> ModuleType:
    return load_benchmark("compat_servers")


compat = _load()
BUDGET = float(os.environ.get("HISTOR_COMPAT_BUDGET") or 900)
_START: list[float] = []


@pytest.mark.parametrize("server", compat.SERVERS, ids=lambda s: s.slug)
def test_histor_sign_lists_what_the_sdk_lists(server: object) -> None:
    if not compat.is_installed(server):
        pytest.skip(f"not installed (python benchmarks/compat_servers.py install --only "
                    f"{server.slug})")  # type: ignore[attr-defined]
    if not _START:
        _START.append(time.monotonic())
    if time.monotonic() - _START[0] > BUDGET:
        pytest.skip(f"HISTOR_COMPAT_BUDGET {BUDGET:g} s spent")
    result = compat.compare(server)
    assert result.passed, result.problems
