"""The byte-exact round trip over generated Codex TOML and Continue YAML layouts: quoting
(basic, literal, single- or double-quoted, plain), spacing around ``=``/``:``, inline,
multi-line, flow and block arrays with or without a trailing comma, comments between
tokens, key orders, LF or CRLF, a final newline or none, ``args`` absent, empty or full.
wrap then unwrap must give back the very bytes, and the wrapped file must hold exactly the
intended change (as tomllib / PyYAML read it)."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml
from hostconfig_helpers import make_pins
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from histor_sign.hostconfig import unwrap_config, wrap_config

NAMES = ["ctx", "my-server", "a_b"]
WORDS = st.text(st.sampled_from("abcxyz-_/.@~ 0é\\'\""), min_size=1, max_size=8)
PINS_DIR = Path(tempfile.mkdtemp(prefix="histor-hostconfig-text-layouts-"))
PINS = make_pins(PINS_DIR / "pins.json", [f"io.github.acme/{n}" for n in NAMES])


def _servers(draw: st.DrawFn) -> dict[str, dict[str, Any]]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True))
    servers: dict[str, dict[str, Any]] = {}
    for name in names:
        entry: dict[str, Any] = {"command": draw(WORDS)}
        kind = draw(st.sampled_from(["absent", "empty", "full"]))
        if kind != "absent":
            entry["args"] = [] if kind == "empty" else draw(st.lists(WORDS, min_size=1,
                                                                     max_size=3))
        servers[name] = entry
    return servers


def _expected(document: dict[str, Any], servers: list[dict[str, Any]] | dict[str, Any],
              ) -> dict[str, Any]:
    expected = copy.deepcopy(document)
    table = expected["mcpServers"] if "mcpServers" in expected else expected["mcp_servers"]
    for name, entry in (table.items() if isinstance(table, dict)
                        else ((e["name"], e) for e in table)):
        entry["args"] = ["proxy", "--server", f"io.github.acme/{name}", "--pins", str(PINS),
                         "--", entry["command"], *entry.get("args", [])]
        entry["command"] = "histor-sign"
    return expected


@st.composite
def toml_files(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    equals = draw(st.sampled_from([" = ", "=", "  =  "]))

    def string(value: str) -> str:
        if "'" not in value and "\\n" not in value and draw(st.booleans()):
            return f"'{value}'"
        return json.dumps(value, ensure_ascii=draw(st.booleans()))

    def comment() -> str:
        return "  # note, with ] and \" inside" if draw(st.integers(0, 3)) == 0 else ""

    def array(values: list[str]) -> str:
        items = [string(v) for v in values]
        trailing = "," if items and draw(st.booleans()) else ""
        if not items or draw(st.booleans()):
            return "[" + ", ".join(items) + trailing + "]"
        return ("[" + "".join(f"{newline}    {i},{comment()}" for i in items[:-1])
                + f"{newline}    {items[-1]}{trailing}{comment()}{newline}]")

    lines = [f'model{equals}"gpt-5-codex"{comment()}']
    for name, entry in _servers(draw).items():
        header = f'[mcp_servers."{name}"]' if draw(st.booleans()) else f"[mcp_servers.{name}]"
        members = [f"command{equals}{string(entry['command'])}{comment()}"]
        if "args" in entry:
            members.append(f"args{equals}{array(entry['args'])}{comment()}")
        if draw(st.booleans()):
            members.append(f'env{equals}{{ "K" = "v" }}')
        lines += ["", header, *draw(st.permutations(members))]
    return newline.join(lines) + draw(st.sampled_from(["", newline]))


@st.composite
def yaml_files(draw: st.DrawFn) -> str:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["  ", "    "]))

    def scalar(value: str) -> str:
        style = draw(st.sampled_from(["plain", "single", "double"]))
        if style == "plain" and all(c.isalnum() or c in "_/.@~-" for c in value) and (
                value[0] not in "-@~" and yaml.safe_load(value) == value):  # a str as is
            return value
        if style == "single":
            return "'" + value.replace("'", "''") + "'"
        return json.dumps(value, ensure_ascii=draw(st.booleans()))

    def comment() -> str:
        return "  # note: [x]" if draw(st.integers(0, 3)) == 0 else ""

    lines = ["name: my-configuration", "version: 0.0.1", "schema: v1", "mcpServers:"]
    for name, entry in _servers(draw).items():
        members = [[f"name: {name}"], [f"command: {scalar(entry['command'])}{comment()}"]]
        if "args" in entry and (not entry["args"] or draw(st.booleans())):
            members.append([f"args: [{', '.join(scalar(a) for a in entry['args'])}]"])
        elif "args" in entry:
            members.append(["args:", *(f"{indent}- {scalar(a)}{comment()}"
                                       for a in entry["args"])])
        ordered = draw(st.permutations(members))
        block = [line for member in ordered for line in member]
        lines += [f"{indent}- {block[0]}", *(f"{indent}  {line}" for line in block[1:])]
    return newline.join(lines) + draw(st.sampled_from(["", newline]))


def _round_trip(relative: str, text: str, load: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / relative
        path.parent.mkdir(parents=True)
        original = text.encode("utf-8")
        path.write_bytes(original)
        document = load(text)
        table = document.get("mcpServers") or document.get("mcp_servers")
        names = list(table) if isinstance(table, dict) else [e["name"] for e in table]
        change = wrap_config(path, {n: f"io.github.acme/{n}" for n in names}, pins=PINS)
        assert change.exact_unwrap
        assert load(path.read_bytes().decode("utf-8")) == _expected(document, table)
        unwrap_config(path)
        assert path.read_bytes() == original


@pytest.mark.slow  # a property run (150 generated layouts each): CI runs it, the quick loop not
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(toml_files())
def test_codex_toml_layouts_round_trip(text: str) -> None:
    _round_trip(".codex/config.toml", text, tomllib.loads)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_files())
def test_continue_yaml_layouts_round_trip(text: str) -> None:
    _round_trip(".continue/config.yaml", text, yaml.safe_load)


def teardown_module() -> None:
    shutil.rmtree(PINS_DIR, ignore_errors=True)
