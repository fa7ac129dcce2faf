"""The scan pauses the cyclic garbage collector and gives back the state it found."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, _scanner, scan_tools
from histor_sign.collisions._gc import collector_paused
from histor_sign.models import Tool


@pytest.fixture
def restore_gc() -> Iterator[None]:
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def tools() -> list[Tool]:
    return list(tools_from_dicts([{"name": f"get_user_{i}", "inputSchema": {"type": "object"}}
                                  for i in range(4)], "t.json"))


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_off_during_a_scan_and_restored(
    enabled: bool, restore_gc: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    (gc.enable if enabled else gc.disable)()
    seen: list[bool] = []
    real = _scanner.shadowing_findings

    def spy(items: list[Tool]) -> list[object]:
        seen.append(gc.isenabled())
        return list(real(items))

    monkeypatch.setattr(_scanner, "shadowing_findings", spy)
    scan_tools(tools(), ScanOptions(workers=1))
    assert seen == [False]
    assert gc.isenabled() is enabled


def test_restored_after_an_error_and_nested(restore_gc: None) -> None:
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # only the outermost gives it back
        raise ValueError
    assert gc.isenabled()


def test_findings_share_one_reference_per_tool() -> None:
    """Memory at registry scale: every finding about a tool points at the same ToolRef."""
    result = scan_tools(tools(), ScanOptions(workers=1))
    refs = [ref for f in result.findings for ref in f.tools]
    assert len(refs) > len({r.index for r in refs})
    by_index: dict[int, object] = {}
    for ref in refs:
        assert by_index.setdefault(ref.index, ref) is ref
