"""The ECMA-safe regex subset agrees with ECMA-262 (node's ``RegExp(p, "u")``).

Patterns are generated from every construct the subset admits plus constructs it must
refuse (seeded, bounded); subjects are printable ASCII, the empty string included. For each
pattern the subset accepts, node must compile it under the ``u`` flag, and both Python ``re``
and the linear matcher (RE2, what the scan runs) must give node's answer on every subject
the guard lets through. The schema-level
regressions check that the decision (``pattern``, ``patternProperties``, ``propertyNames``)
never says ``disjoint`` where an ECMA engine finds a common instance.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from histor_sign._schema.regex_subset import ecma_safe, printable_ascii, search
from histor_sign._schema.witness import decide

HARNESS = Path(__file__).with_name("ecma_regex.js")

#: Constructs inside the subset, and ones outside it (the subset must refuse those or agree).
ATOMS = [
    "a", "b", "-", "_", " ", "0", "A", "é", "😀", "\ud83d", ".", r"\d", r"\w", r"\s", r"\D",
    r"\W", r"\S", r"\b", r"\B", r"\.", r"\-", r"\/", r"\\", r"\$", r"\^", r"\|", r"\(",
    r"\)", r"\[", r"\]", r"\{", r"\}", r"\*", r"\+", r"\?", r"\t", r"\n", r"\r", r"\f",
    r"\v", r"\u0041", r"\x61", r"\uD83D", r"\uD83D\uDE00", r"\u{41}", r"\cA", r"\0", r"\1",
    r"\p{L}", r"\k<n>", r"\e", r"\a", r"\z", r"\Z", r"\A",
    "[a-c]", "[^a]", r"[\d]", r"[\-]", "[a-]", "[-a]", r"[\w.]", r"[^\s]", r"[\b]", "[]",
    "[^]", r"[\]]", r"[\^a]", "[z-a]", r"[\d-z]", r"[a-\d]", r"[a\-z]", "[$.|]", r"[\B]",
    r"[\u0041-\u005A]", "(?=a)", "(?!a)", "(?<=a)", "(?<n>a)", "(?i)", "]", "}", "{", "\\",
    "a{1", "x{0}",
]
QUANTIFIERS = ["", "", "", "*", "+", "?", "{2}", "{1,}", "{0,2}", "*?", "+?", "??",
               "{1,2}?", "{,2}", "{2,1}", "*+", "++", "{0}"]
SUBJECT_ALPHABET = "ab-_ 0A.é"
FIXED_SUBJECTS = ["", "a", "-", " ", "ab", "A", "0", "a-b", "_", ".", "b a", "aa", "00"]


def _pattern(rng: random.Random, depth: int = 0) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.08:
            parts.append(rng.choice("^$|"))
        elif r < 0.2 and depth < 2:
            group = rng.choice(["(", "(?:"]) + _pattern(rng, depth + 1) + ")"
            parts.append(group + rng.choice(QUANTIFIERS))
        else:
            parts.append(rng.choice(ATOMS) + rng.choice(QUANTIFIERS))
    return "".join(parts)


def _ecma(cases: list[tuple[str, list[str]]]) -> list[list[bool] | None]:
    node = shutil.which("node")
    assert node, "node (>= 20) is required for the ECMA-262 regex agreement test"
    done = subprocess.run([node, str(HARNESS)], input=json.dumps(cases), capture_output=True,
                          text=True, check=True, timeout=120)
    result: list[list[bool] | None] = json.loads(done.stdout)
    return result


def test_subset_agrees_with_ecma_262_on_generated_patterns() -> None:
    rng = random.Random(15)
    cases: list[tuple[str, list[str]]] = []
    for _ in range(6000):
        subjects = FIXED_SUBJECTS + ["".join(rng.choice(SUBJECT_ALPHABET)
                                             for _ in range(rng.randint(1, 7)))
                                     for _ in range(6)]
        cases.append((_pattern(rng), subjects))
    verdicts = _ecma(cases)
    safe = 0
    disagreements: list[Any] = []
    for (pattern, subjects), verdict in zip(cases, verdicts, strict=True):
        if not ecma_safe(pattern):
            continue
        safe += 1
        if verdict is None:
            disagreements.append((pattern, "SyntaxError under the u flag"))
            continue
        for subject, ecma in zip(subjects, verdict, strict=True):
            if not printable_ascii(subject):
                continue
            if (re.search(pattern, subject) is not None) != ecma:
                disagreements.append((pattern, subject, ecma, "re"))
            if search(pattern, subject) != ecma:
                disagreements.append((pattern, subject, ecma, "linear"))
    assert safe > 1500  # the generator exercises the subset, not only its refusals
    assert not disagreements, disagreements[:20]


@pytest.mark.parametrize("pattern", [r"\B", r"^\B$", r"a\-b", r"\-", r"x\uD83D\uDE00?",
                                     "x\ud83d?", r"\u{41}"])
def test_constructs_where_engines_differ_are_outside_the_subset(pattern: str) -> None:
    assert not ecma_safe(pattern)


@pytest.mark.parametrize("pattern", [r"[\-]", r"[a\-z]", r"\b", r"\u0041", r"[\u0041-\u005A]"])
def test_constructs_where_engines_agree_stay_inside(pattern: str) -> None:
    assert ecma_safe(pattern)


def _ecma_accepts(pattern: str, subject: str) -> bool:
    verdict = _ecma([(pattern, [subject])])[0]
    assert verdict is not None
    return verdict[0]


@pytest.mark.parametrize(("a", "b"), [
    # pattern: the empty string matches \B in ECMA-262 (Python < 3.14 disagrees)
    ({"type": "object", "properties": {"x": {"type": "string", "pattern": r"\B"}},
      "required": ["x"]},
     {"type": "object", "properties": {"x": {"maxLength": 0}}, "required": ["x"]}),
    # patternProperties: the empty property name matches \B
    ({"type": "object", "patternProperties": {r"\B": {"type": "integer"}},
      "additionalProperties": False, "required": [""]},
     {"type": "object", "properties": {"": {"type": "integer"}}, "required": [""]}),
    # propertyNames
    ({"type": "object", "propertyNames": {"pattern": r"\B"}, "required": [""]},
     {"type": "object", "required": [""]}),
])
def test_backslash_b_upper_is_never_disjoint(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert _ecma_accepts(r"\B", "")
    assert decide(a, b).outcome != "disjoint"
