"""HS107: a tool name no client can show safely (control or format characters, ``::``) is
an error at release time, never signed as served (issue 26)."""

from __future__ import annotations

import pytest

from histor_sign.catalog import tools_from_dicts
from histor_sign.guard import lint_catalog
from histor_sign.models import Severity
from histor_sign.report._findings import RULES

CLOSED = {"type": "object", "additionalProperties": False}


@pytest.mark.parametrize(("name", "needle"), [
    ("read\x85file", "U+0085"),            # C1 NEXT LINE
    ("read\x9bfile", "U+009B"),            # C1 CSI: a terminal escape
    ("read\x1bfile", "U+001B"),            # C0 ESC
    ("read\u202efile", "U+202E"),          # bidirectional override
    ("read\u200bfile", "U+200B"),          # zero-width space
    ("other::read_file", "'::'"),
])
def test_unsafe_tool_names_are_an_error(name: str, needle: str) -> None:
    found = [f for f in lint_catalog(tools_from_dicts([{"name": name, "inputSchema": CLOSED}]))
             if f.rule == "HS107"]
    assert len(found) == 1, found
    assert found[0].severity is Severity.error is RULES["HS107"].severity
    assert needle in found[0].message
    assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or c in "\u202e\u200b"
                   for c in found[0].message), found[0].message


def test_ordinary_names_are_not_flagged() -> None:
    names = ["read_file", "files.read", "fs/read-file", "Sök", "a:b", "日本語"]
    tools = tools_from_dicts([{"name": n, "inputSchema": CLOSED} for n in names])
    assert [f for f in lint_catalog(tools) if f.rule == "HS107"] == []
