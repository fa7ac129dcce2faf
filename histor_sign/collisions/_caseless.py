"""A quick negative test before a case-insensitive regex over long text.

``re.IGNORECASE`` patterns get no literal-prefix search in CPython's ``re``: each position of
the text is tried, which is most of the cost of scanning a 16 KB description for "read only"
or an imperative. Where every match of a pattern contains one of a few lowercase ASCII words,
an ASCII text whose lowercase form contains none of them cannot match — and ``str.__contains__``
finds that out at memory speed. Non-ASCII text always goes to the regex: Unicode case folding
matches more than ``str.lower`` (``ſ`` matches ``s``, the Kelvin sign ``k``).
"""

from __future__ import annotations

from collections.abc import Iterable


def cannot_match(text: str, words: Iterable[str]) -> bool:
    """True when no case-insensitive match of a pattern whose every match contains one of
    ``words`` (lowercase ASCII) exists in ``text``; False means "maybe" (run the pattern)."""
    if not text.isascii():
        return False
    low = text.lower()
    return not any(word in low for word in words)
