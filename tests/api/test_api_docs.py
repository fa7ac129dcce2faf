"""docs/api.md is executable: every ```python block runs, in order, in one namespace.

It starts the bundled example server and the local Sigstore instance, so it is slow.
"""

from __future__ import annotations

import re

import pytest
from cli_harness import REPO

DOC = REPO / "docs" / "api.md"
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_examples_for_every_step() -> None:
    text = "\n".join(blocks())
    for call in ("hs.fetch(", "hs.load_tools(", "hs.build_statement(", "hs.sign(", "hs.verify(",
                 "hs.compare(", "hs.check_served(", "hs.scan(", "hs.Guard.from_envelope(", "hs.release(",
                 "hs.check_binding(", "hs.LockFile.", "hs.check_locked(", "hs.yank_revision(",
                 "hs.monitor_log("):
        assert call in text, call


@pytest.mark.slow
def test_python_api_page_runs() -> None:
    namespace: dict[str, object] = {"__name__": "api_doc"}
    for number, code in enumerate(blocks(), start=1):
        try:
            exec(compile(code, f"{DOC.name} block {number}", "exec"), namespace)
        except Exception as exc:  # pragma: no cover - the message is the point
            raise AssertionError(f"docs/api.md block {number} failed: {exc!r}\n{code}") from exc
