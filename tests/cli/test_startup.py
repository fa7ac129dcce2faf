"""What a command line loads: only its own command module (``app.COMMANDS``), and no
heavy module where the command does not need one. Start-up *time* is measured by
benchmarks/bench_startup.py and benchmarks/compare_startup.py, not here."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_harness import REPO, cli_env, run_cli
from sigstore_testkit import WF_ALICE, SignedSet

from histor_sign.cli.app import COMMANDS, app, load_commands

EXAMPLE = REPO / "examples" / "docs-tools.json"


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


HEAVY_PROBE = """
import sys
from histor_sign.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("sigstore", "jsonschema", "jsonschema_rs", "httpx", "asyncio", "cryptography", "rich",
         "pydantic")
print("HEAVY:" + ",".join(m for m in heavy if m in sys.modules), file=sys.stderr)
"""


def _heavy(*argv: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", HEAVY_PROBE, *argv], capture_output=True,
                          text=True, env=cli_env(), timeout=120, check=False)
    line = next(x for x in done.stderr.splitlines() if x.startswith("HEAVY:"))
    return [m for m in line[6:].split(",") if m]


def test_help_and_version_import_no_heavy_module() -> None:
    # Every command module is imported for --help, none of sigstore, jsonschema, httpx,
    # asyncio, cryptography, rich or pydantic.
    assert _heavy("--help") == []
    assert _heavy("--version") == []
    # A command's help and a real small command coerce their values (defaults included)
    # with typer's own click types: typer below 0.29 (pyproject) builds no pydantic adapter.
    assert _heavy("verify", "--help") == []
    assert _heavy("digest", "--format", "json", str(EXAMPLE)) == []
