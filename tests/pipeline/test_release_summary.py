"""The Markdown summary renders untrusted text inertly, as GitHub's own renderer (cmark-gfm,
with its table and autolink extensions) shows it: no link, image, HTML, heading or extra
table cell can come from a tool name, a message, the server version or the signer."""

from __future__ import annotations

import re
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from histor_sign.models import Finding, Severity, ToolRef, parse_catalog
from histor_sign.pipeline import ReleaseOutcome, ReleaseRequest, _md_code, summary_markdown

HOSTILE = [
    "evil|<img src=x>`\n## injected",
    "[click](https://evil.example)",
    "![img](https://evil.example/x.png)",
    "www.evil.example",
    "https://evil.example/path",
    "mallory@evil.example",
    "<script>alert(1)</script>",
    "**bold** _em_ ~~strike~~",
    "``` fence",
    "`",
    "``a``",
    "a\\|b\\",
    "|",
    " ",
    "",
    "&lt;img&gt;",
    "\x1b[2J\r\n::warning::pwned",
]


def render(markdown: str) -> str:
    """GitHub-flavored HTML; raw HTML kept (UNSAFE) so any HTML we let through is visible."""
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def assert_inert_html(html: str) -> None:
    tags = set(re.findall(r"</?([a-zA-Z0-9]+)", html))
    assert tags <= {"h2", "p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td",
                    "ul", "li", "pre"}, (tags, html)


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_shows_exactly_the_escaped_text(text: str) -> None:
    from histor_sign._escape import printable

    html = render(f"| a |\n|---|\n| {_md_code(text)} |\n")
    assert_inert_html(html)
    [cell] = re.findall(r"<td>(.*?)</td>", html, re.S)
    shown = printable(text)
    if shown.strip():
        expected = (shown.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                    .replace('"', "&quot;"))
        assert cell == f"<code>{expected}</code>", (cell, text)


def test_hostile_tool_names_and_messages_stay_in_their_cells() -> None:
    findings = [
        Finding(rule="TC002", severity=Severity.warning, message=f"names '{name}' collide",
                tools=[ToolRef(name=name, source="c.json", index=0),
                       ToolRef(name="ok", source="c.json", index=1)])
        for name in HOSTILE
    ]
    outcome = ReleaseOutcome(
        request=ReleaseRequest(server="io.github.a/b", server_version="[v](https://e.example)",
                               out_dir=Path("o")),
        findings=findings, gate_passed=False,
    )
    text = summary_markdown(outcome, parse_catalog({"tools": []}, "c.json"))
    html = render(text)
    assert_inert_html(html)
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)[1:]
    assert len(rows) == len(HOSTILE)
    assert all(row.count("<td") == 4 for row in rows), rows
    assert "Gate failed" in text and "None" not in text
    assert "<h2>histor-sign release: <code>io.github.a/b</code> <code>[v](https://e.example)" \
        "</code></h2>" in html
