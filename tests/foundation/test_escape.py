"""printable: the one escaper for server- and model-chosen text shown to a person."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from histor_sign._escape import printable

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


# --- inert_line / inert_text: what the CLI prints ------------------------------------------

from histor_sign._escape import inert_line, inert_text  # noqa: E402


def _is_inert(text: str) -> bool:
    return (all(c == "\n" or c.isprintable() for c in text)
            and not any(line.lstrip().startswith("::") for line in text.split("\n"))
            and "##[" not in text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(":#[ \n\r\x1b\x85\u2028ab")) | st.characters()))
def test_inert_text_never_carries_control_or_a_workflow_command(text: str) -> None:
    assert _is_inert(inert_text(text))
    assert _is_inert(inert_text(text, colors=True).replace("\x1b[", "").replace("m", ""))
    assert "\n" not in inert_line(text) and _is_inert(inert_line(text))
    assert inert_text(text).count("\n") == text.count("\n")  # our own line breaks stay


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from([None, 2]))
def test_inert_text_keeps_a_json_documents_value(value: object, indent: int | None) -> None:
    import json

    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert json.loads(inert_text(text)) == value


@pytest.mark.parametrize(("line", "shown"), [
    ("::warning::x", "\\u003a:warning::x"),
    ("   ::add-mask::x", "   \\u003a:add-mask::x"),
    ("a ::warning::x", "a ::warning::x"),  # not at the start: the runner ignores it
    ("x ##[error]y", "x #\\u0023[error]y"),
    ("###[", "##\\u0023["),
    ("\x1b[2J::x", "\\u001b[2J::x"),
])
def test_workflow_commands_are_escaped_readably(line: str, shown: str) -> None:
    assert inert_line(line) == shown


def test_colors_keep_only_sgr_sequences() -> None:
    assert inert_text("\x1b[31merror\x1b[0m \x1b]0;t\x07", colors=True) == \
        "\x1b[31merror\x1b[0m \\u001b]0;t\\u0007"
    assert inert_text("::x \x1b[31m", colors=True).startswith("\\u003a:x")


def test_whole_lines_regroup_pieces_and_keep_inert_text_the_same() -> None:
    """A text in arbitrary pieces (a line-leading ``::`` split across two of them among
    them) becomes runs of whole lines whose inert forms join to the inert whole."""
    import random

    from histor_sign._escape import whole_lines

    rng = random.Random(7)
    lines = [rng.choice(["plain", "  ::warning::x", ":", "\u2028bidi\u202e", "##[error]",
                         "x" * 500, ""]) for _ in range(3000)]
    text = "\n".join(lines)
    cuts = sorted(rng.sample(range(1, len(text)), 800))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    runs = list(whole_lines(pieces, size=4096))
    assert "".join(runs) == text and len(runs) > 10
    assert all(run.endswith("\n") for run in runs[:-1])
    assert "".join(inert_text(run) for run in runs) == inert_text(text)
