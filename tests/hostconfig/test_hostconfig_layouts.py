"""The byte-exact round trip over generated layouts: any indentation (none, 2 or 4 spaces,
tabs), LF or CRLF, inline or one-per-line objects and arrays, any spacing around ':' and
',', escaped or raw non-ASCII, a trailing newline or none, entries with args absent, empty
(``[]``, ``[ ]``, one per line) or full, VS Code's Streamable HTTP entries (``"type":
"http"`` and a ``url``) that become ``proxy --url``, key orders of every kind — and for VS
Code's JSON
with comments, comments and trailing commas anywhere between tokens. wrap then unwrap must
give back the very bytes; the wrapped file must hold exactly the intended change."""

from __future__ import annotations

import atexit
import copy
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hostconfig_helpers import make_pins, plain
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from histor_sign.hostconfig import unwrap_config, wrap_config

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
NAMES = ["search", "fs", "näme", "a b", "x/y"]
PINS_DIR = Path(tempfile.mkdtemp(prefix="histor-hostconfig-layouts-"))
atexit.register(shutil.rmtree, PINS_DIR, True)
PINS = make_pins(PINS_DIR / "pins.json", [f"io.github.acme/s{i}" for i in range(len(NAMES))])


@st.composite
def entries(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:  # a Streamable HTTP server: it becomes proxy --url
        remote: list[tuple[str, Any]] = [("url", "https://" + draw(TEXT)), ("type", "http")]
        if draw(st.booleans()):
            remote.append(("note", draw(TEXT)))
        return dict(draw(st.permutations(remote)))
    members: list[tuple[str, Any]] = [("command", draw(TEXT))]
    args = draw(st.sampled_from(["absent", "empty", "full"]))
    if args != "absent":
        members.append(("args", [] if args == "empty" else draw(st.lists(TEXT, min_size=1,
                                                                          max_size=3))))
    if draw(st.booleans()):
        members.append(("env", draw(st.dictionaries(TEXT, TEXT, max_size=2))))
    if draw(st.booleans()):
        members.append(("type", "stdio"))
    order = draw(st.permutations(members))
    return dict(order)


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[str, Any], bool]:
    """(file name, document, JSON with comments allowed)."""
    vscode = draw(st.booleans())
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    servers = {name: draw(entries()) for name in names}
    if not vscode:  # Claude Desktop documents no url entries: they are left as they are
        servers = {name: entry for name, entry in servers.items() if "url" not in entry}
        servers = servers or {names[0]: {"command": "npx"}}
    key = "servers" if vscode else "mcpServers"
    extras = draw(st.lists(st.sampled_from(["inputs", "globalShortcut", "zz"]), unique=True,
                           max_size=2))
    members = [(key, servers)] + [(e, [] if e == "inputs" else "v") for e in extras]
    document = dict(draw(st.permutations(members)))
    return ("mcp.json" if vscode else "claude_desktop_config.json"), document, vscode


@st.composite
def rendered(draw: st.DrawFn) -> tuple[str, dict[str, Any], str]:
    name, document, comments = draw(documents())
    indent = draw(st.sampled_from(["", "  ", "    ", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    colon = draw(st.sampled_from([": ", ":", " : "]))
    inline_comma = draw(st.sampled_from([", ", ","]))

    def gap(depth: int) -> str:
        """Whitespace before an item on its own line, maybe with a comment first."""
        pad = newline + indent * depth
        if comments and draw(st.integers(0, 4)) == 0:
            note = draw(st.sampled_from(["// note, with ] and }", "/* a, b */"]))
            return pad + note + (pad if note.startswith("//") else " ")
        return pad

    def literal(value: str) -> str:
        return json.dumps(value, ensure_ascii=draw(st.booleans()))

    def render(value: Any, depth: int) -> str:
        if isinstance(value, str):
            return literal(value)
        is_dict = isinstance(value, dict)
        opening, closing = ("{", "}") if is_dict else ("[", "]")
        items = ([literal(k) + colon + render(v, depth + 1) for k, v in value.items()]
                 if is_dict else [render(v, depth + 1) for v in value])
        if not items:
            return opening + draw(st.sampled_from(["", " ", newline + indent * depth])) + closing
        trailing = "," if comments and draw(st.booleans()) else ""
        if draw(st.booleans()):  # inline
            pad = draw(st.sampled_from(["", " "]))
            return opening + pad + inline_comma.join(items) + trailing + pad + closing
        return (opening + ",".join(gap(depth + 1) + item for item in items) + trailing
                + newline + indent * depth + closing)

    text = render(document, 0) + draw(st.sampled_from(["", newline]))
    return name, document, text


@pytest.mark.slow  # a long property run (300 generated layouts): CI runs it, the quick loop not
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rendered())
def test_wrap_then_unwrap_gives_back_the_bytes(case: tuple[str, dict[str, Any], str]) -> None:
    name, document, text = case
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / (".vscode" if name == "mcp.json" else "Claude")
        folder.mkdir()
        path = folder / name
        original = text.encode("utf-8")
        path.write_bytes(original)
        key = "servers" if "servers" in document else "mcpServers"
        servers = {n: f"io.github.acme/s{NAMES.index(n)}" for n in document[key]}

        change = wrap_config(path, servers, pins=PINS)
        assert change.exact_unwrap
        expected = copy.deepcopy(document)
        for entry_name, entry in expected[key].items():
            prefix = ["proxy", "--server", servers[entry_name], "--pins", str(PINS)]
            if "url" in entry:
                entry["args"] = [*prefix, "--url", entry.pop("url")]
                entry["type"] = "stdio"
            else:
                entry["args"] = [*prefix, "--", entry["command"], *entry.get("args", [])]
            entry["command"] = "histor-sign"
        assert plain(path.read_bytes().decode("utf-8")) == expected
        assert path.read_bytes().count(b"\r\n") >= original.count(b"\r\n")

        unwrap_config(path)
        assert path.read_bytes() == original
