"""Two ``monitor`` runs on one checkpoint file: a run whose checkpoint another run stored
meanwhile stores nothing (it would move the cursor back or drop acknowledgements) and says
so in one line; the other run's checkpoint stays."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error
from test_monitor import World, make_world

import histor_sign.monitor as monitor_module

pytestmark = pytest.mark.slow


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path)


def test_a_checkpoint_stored_meanwhile_by_another_run_is_kept(
    v1: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert v1.report("--max-entries", "1")[0] == 0
    first = v1.state.read_bytes()
    assert v1.report("--max-entries", "1")[0] == 0
    other = v1.state.read_bytes()  # what another run stores from the first checkpoint
    assert json.loads(other)["logs"][0]["nextIndex"] > json.loads(first)["logs"][0]["nextIndex"]
    v1.state.write_bytes(first)
    real = monitor_module.read_chain

    def racing(*args: Any, **kwargs: Any) -> Any:  # the other run stores while this one reads
        v1.state.write_bytes(other)
        return real(*args, **kwargs)

    monkeypatch.setattr(monitor_module, "read_chain", racing)
    run = v1.monitor("--max-entries", "2")
    assert_clean_error(run)
    assert "was changed by another monitor run meanwhile; nothing was stored" in run.stderr
    assert v1.state.read_bytes() == other
