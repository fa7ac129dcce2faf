"""What a command line loads: only its own command module (``app.COMMANDS``), and typer's
parameter coercion through the fast path (``cli/_coercion.py``) with exactly typer's own
values and errors. Start-up *time* is measured by benchmarks/bench_startup.py, not here."""

from __future__ import annotations

import enum
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_args, get_origin

import pytest
import typer
import typer.core
from cli_harness import REPO, cli_env, run_cli
from sigstore_testkit import WF_ALICE, SignedSet
from typer._coercion import build_runtime_param
from typer.main import get_command

from histor_sign.cli._coercion import _converter
from histor_sign.cli.app import COMMANDS, app, load_commands

EXAMPLE = REPO / "examples" / "docs-tools.json"
GUARD = REPO / "examples" / "guard"


def _walk(command: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    for param in command.params:
        yield path, command, param
    for name, sub in getattr(command, "commands", {}).items():
        yield from _walk(sub, f"{path} {name}".strip())


def test_every_command_is_listed_with_the_module_that_registers_it() -> None:
    load_commands(None)
    registered = {info.name or info.callback.__name__.replace("_", "-"):
                  info.callback.__module__ for info in app.registered_commands
                  if info.callback is not None}
    for group in app.registered_groups:
        sub = group.typer_instance
        assert sub is not None and group.name is not None
        registered[group.name] = {i.callback.__module__ for i in sub.registered_commands
                                  if i.callback is not None}.pop()
    assert {name: f"histor_sign.cli.{module}" for name, module in COMMANDS.items()} == \
        registered
    modules = {p.stem for p in (REPO / "histor_sign" / "cli").glob("*_commands.py")}
    assert set(COMMANDS.values()) == modules


def test_help_lists_the_commands_in_table_order_whatever_was_imported_first() -> None:
    load_commands(["proxy"])  # registers proxy and the modules it imports, out of order
    listed = run_cli("--help").stdout.split("Commands:\n", 1)[1]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ")]
    assert names == list(COMMANDS)


PROBE = """
import sys
from histor_sign.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES:" + ",".join(sorted(m for m in sys.modules
                                   if m.startswith("histor_sign.cli.") and m.endswith("_commands"))),
      file=sys.stderr)
"""


def _loaded(*argv: str) -> list[str]:
    env = cli_env()
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES:"))
    return [m.removeprefix("histor_sign.cli.") for m in line[8:].split(",") if m]


def test_a_command_imports_only_its_own_command_module() -> None:
    assert _loaded("digest", "--format", "json", str(EXAMPLE)) == ["catalog_commands"]
    loaded = set(_loaded("--debug", "proxy", "--help"))
    assert "proxy_commands" in loaded  # and what it imports (signing, trust), nothing else
    assert not loaded & {"catalog_commands", "check_commands", "fetch_commands",
                         "guard_commands", "init_commands", "lock_commands",
                         "release_commands", "scan_commands", "wrap_commands"}
    assert _loaded("--version") == []
    every = sorted(set(COMMANDS.values()))
    assert _loaded("--help") == every
    assert _loaded("no-such-command") == every  # click's suggestions need every name


VERIFY_PROBE = """
import sys
from histor_sign.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("LOADED:" + ",".join(sorted(sys.modules)), "CODE:%s" % code, file=sys.stderr)
"""


@pytest.mark.slow
def test_verify_imports_a_flags_modules_only_when_the_flag_is_given(
    signed_set: SignedSet,
) -> None:
    """An offline verification of one envelope reads no attestation and no catalog, so it
    imports neither their modules nor the fetching layer behind ``--tools``; the same
    command with those flags does (and still verifies)."""
    base = ["verify", str(signed_set.rev2), "--trust-config", str(signed_set.trust_config),
            "--cert-identity", WF_ALICE, "--offline"]

    def probe(*extra: str) -> tuple[set[str], str]:
        done = subprocess.run([sys.executable, "-c", VERIFY_PROBE, *base, *extra],
                              capture_output=True, text=True, env=cli_env(), timeout=300,
                              check=False)
        line = next(x for x in done.stderr.splitlines() if x.startswith("LOADED:"))
        loaded, code = line.split(" ")
        return set(loaded[7:].split(",")), code

    flagged = {"histor_sign.attestation", "histor_sign.cli.target_options", "histor_sign.mcp"}
    loaded, code = probe()
    assert code == "CODE:0"
    assert "sigstore.verify" in loaded  # it did verify
    assert not loaded & flagged
    loaded, code = probe("--tools", str(signed_set.tools_v2), "--previous",
                         str(signed_set.rev1), "--attestation",
                         str(signed_set.rev2).replace(".envelope.json", ".intoto.sigstore.json"))
    assert code == "CODE:0"
    assert flagged <= loaded


# --- coercion: the fast path gives typer's own values, and hands every other value over ---

SAMPLES = {
    str: ["x", "", "é ü", " padded "],
    bool: [True, False],
    int: ["0", "12", "-3", "007", "1_0", " 5", "+4", "1.0", "x", 7],
    float: ["1", "1.5", "-0.25", "1e3", "nan", ".5", "x", "1,5", 2, 2.5],
}


def _samples(annotation: Any, tmp: Path) -> list[Any]:
    if get_origin(annotation) is list:
        (item,) = get_args(annotation)
        values = _samples(item, tmp)
        return [tuple(values[:2]), (values[-1],), values[0]]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        members = list(annotation)
        return [*members, *(m.value for m in members), members[0].value.upper(), "nope"]
    if isinstance(annotation, type) and issubclass(annotation, Path):
        (tmp / "file").write_text("x")
        return ["rel/path", str(tmp / "file"), str(tmp), "-", "", str(tmp / "missing"),
                tmp / "file"]
    return SAMPLES.get(annotation, [])


def _real(param: Any, value: Any, ctx: Any) -> tuple[str, Any]:
    try:
        runtime = build_runtime_param(param.type_descriptor)
        return "ok", runtime._coerce_value(value, param=param, ctx=ctx)
    except Exception as exc:
        return "error", type(exc).__name__


def test_fast_coercion_equals_typers_own_for_every_parameter(tmp_path: Path) -> None:
    load_commands(None)
    root = get_command(app)
    checked = 0
    for path, command, param in _walk(root):
        descriptor = param.type_descriptor
        fast = _converter(descriptor.annotation, descriptor.parameter_info)
        if fast is None:
            continue
        ctx = typer.Context(command, info_name=path or "histor-sign")
        for value in _samples(descriptor.annotation, tmp_path):
            status, expected = _real(param, value, ctx)
            try:
                got = fast(value, param, ctx)
            except Exception:
                continue  # handed over: typer's own coercion decides (and words any error)
            assert status == "ok", (path, param.name, value, expected)
            assert (got, type(got)) == (expected, type(expected)), (path, param.name, value)
            checked += 1
    assert checked > 100


@pytest.fixture
def typer_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """typer's own coercion for every parameter, as without cli/_coercion."""
    monkeypatch.setattr(typer.core, "build_runtime_param", build_runtime_param)
    monkeypatch.setattr("histor_sign.cli._coercion.install", lambda: None)


LINES = [
    ["fetch", "--url", "https://127.0.0.1:9/mcp", "--timeout", "abc"],
    ["fetch", "--url", "https://127.0.0.1:9/mcp", "--max-pages", "1.5"],
    ["fetch", "--url", "https://127.0.0.1:9/mcp", "--max-pages", "0"],
    ["check", "--fail-on", "nope"],
    ["digest", "--format", "xml", str(EXAMPLE)],
    ["digest", "--format", "JSON", str(EXAMPLE)],
    ["digest", "--format", "json", "--max-pages", "2", str(EXAMPLE)],
    ["dev-sigstore", "--port", "99999999"],
    ["guard", "--tools", str(GUARD / "tools.json"), "--policy", str(GUARD / "guard.toml"),
     "--format", "json", str(GUARD / "call-ok.json")],
    ["trust", "list", "--pins", "/nonexistent/dir/pins.json", "--format", "json"],
]


@pytest.mark.parametrize("argv", LINES, ids=lambda a: " ".join(a[:3]))
def test_command_lines_run_as_with_typers_own_coercion(
        argv: list[str], request: pytest.FixtureRequest) -> None:
    fast = run_cli(*argv)
    request.getfixturevalue("typer_only")
    own = run_cli(*argv)
    assert (fast.code, fast.stdout, fast.stderr) == (own.code, own.stdout, own.stderr)
