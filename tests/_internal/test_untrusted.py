"""printable: the one escaper for server- and model-chosen text shown to a person."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign._internal.untrusted import printable

DANGEROUS = {
    "NUL": "\x00", "BEL": "\x07", "BS": "\x08", "TAB": "\t", "LF": "\n", "VT": "\x0b",
    "FF": "\x0c", "CR": "\r", "ESC": "\x1b", "DEL": "\x7f",
    "C1 NEL": "\x85", "C1 CSI": "\x9b", "C1 OSC": "\x9d", "C1 ST": "\x9c",
    "LINE SEPARATOR": "\u2028", "PARAGRAPH SEPARATOR": "\u2029",
    "LRE": "\u202a", "RLE": "\u202b", "PDF": "\u202c", "LRO": "\u202d", "RLO": "\u202e",
    "LRI": "\u2066", "RLI": "\u2067", "FSI": "\u2068", "PDI": "\u2069",
    "LRM": "\u200e", "RLM": "\u200f", "ALM": "\u061c",
    "ZWSP": "\u200b", "ZWJ": "\u200d", "BOM": "\ufeff", "TAG LATIN A": "\U000e0041",
    "lone surrogate": "\ud800",
}


@pytest.mark.parametrize("name", sorted(DANGEROUS))
def test_dangerous_characters_are_escaped(name: str) -> None:
    char = DANGEROUS[name]
    shown = printable(f"a{char}b")
    assert char not in shown
    assert shown.startswith("a\\") and shown.endswith("b")
    assert shown.isprintable() and shown.isascii()


def test_terminal_escape_sequence_is_inert() -> None:
    shown = printable("ok\x1b]0;pwned\x07\x1b[2J\r\nFAKE: line")
    assert shown == "ok\\u001b]0;pwned\\u0007\\u001b[2J\\r\\nFAKE: line"


def test_bidi_override_cannot_reorder_the_line() -> None:
    assert printable("safe\u202etxt.exe") == "safe\\u202etxt.exe"


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_output_is_one_printable_line(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable()
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in shown)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(categories=["L", "M", "N", "P", "S"])))
def test_printable_text_is_unchanged(text: str) -> None:
    assert printable(text) == text


def test_limit_clips_before_escaping_and_marks_the_cut() -> None:
    assert printable("abcdef", limit=3) == "abc…"
    assert printable("abc", limit=3) == "abc"
    assert printable("\x1b" * 10, limit=2) == "\\u001b\\u001b…"
