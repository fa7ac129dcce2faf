"""``check --all`` through the real CLI: every pinned server's latest revision followed under
its pin; and ``check --all --host-config FILE``: each server of an MCP host config that runs
through the proxy, fetched with its original command and compared with its pinned release."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli
from pin_fixtures import SERVER as ALICE
from pin_fixtures import History
from release_fixtures import DRIFT, SERVER, make_releases, server_command
from sigstore_testkit import WF_ALICE, run_main
from test_example_server_e2e import publish

pytestmark = pytest.mark.slow


def test_check_all_follows_every_pin(history: History, tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    trust = ("--trust-config", str(history.trust_config))
    where = history.publish(tmp_path / "pub", "rev1")
    assert run_main("check", "--all", "--pins", str(pins)).code == 2  # nothing pinned
    assert run_main("trust", "add", ALICE, "--repository", "alice/docs", "--envelope",
                    str(where), "--ref-pattern", "refs/**", "--pins", str(pins),
                    *trust).code == 0
    history.publish(tmp_path / "pub", "rev2")
    run = run_main("check", "--all", "--pins", str(pins), *trust)
    assert run.code == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"ok      {ALICE}: advanced · {ALICE} revision 2 · signed by {WF_ALICE}",
        "1 checked, 0 failed, 0 skipped",
    ]
    assert json.loads(pins.read_text())["servers"][ALICE]["revision"] == 2
    history.publish(tmp_path / "pub", "broken3", "fork2")
    broken = run_main("check", "--all", "--pins", str(pins), *trust, "-f", "json")
    assert broken.code == 1, broken.stderr
    doc = json.loads(broken.stdout)
    assert doc["schemaVersion"] == 1 and [s["status"] for s in doc["servers"]] == ["failed"]
    mixed = run_main("check", "--all", "--server", ALICE, "--pins", str(pins))
    assert_clean_error(mixed)
    assert "--all checks every pinned server" in mixed.stderr


def test_check_all_over_a_host_config(tmp_path: Path) -> None:
    released = make_releases(tmp_path / "releases")
    location = tmp_path / "published"
    pins = tmp_path / "pins.json"
    common = ["--pins", str(pins), "--trust-config", str(released.trust_config)]
    publish(released.rev1, location, 1)
    assert run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                   "--envelope", str(location), *common).code == 0
    shipped, drifted = shlex.split(server_command()), shlex.split(
        server_command("--description", DRIFT))
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "notes": {"command": shipped[0], "args": shipped[1:]},
        "notes-drifted": {"command": drifted[0], "args": drifted[1:]},
        "remote": {"url": "https://example.com/mcp"},
    }}, indent=2))
    wrapped = run_cli("wrap", str(config), "--server-name", "notes=" + SERVER,
                      "--server-name", "notes-drifted=" + SERVER,
                      "--pins", str(pins))
    assert wrapped.code == 0, wrapped.stderr
    run = run_cli("check", "--all", "--host-config", str(config), *common,
                  "--server-is-trusted-code")
    assert run.code == 1, run.stderr  # the drifted one fails
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"ok      notes (mcpServers.notes): match · {SERVER} revision 1")
    assert lines[1].startswith("failed  notes-drifted (mcpServers.notes-drifted): different")
    assert lines[2].startswith("skipped remote (mcpServers.remote): an HTTP server")
    assert lines[3] == "2 checked, 1 failed, 1 skipped"


def test_check_all_judges_what_each_wrapped_entry_runs(tmp_path: Path) -> None:
    """A committed host config whose proxy entries weaken the pin by their own flags — trust
    on first use (--lock), a trust root of their own (--staging, --trust-config), drifted
    tools passed (--on-drift warn), another pin file — is never reported ok."""
    released = make_releases(tmp_path / "releases")
    location = tmp_path / "published"
    pins = tmp_path / "pins.json"
    common = ["--pins", str(pins), "--trust-config", str(released.trust_config)]
    publish(released.rev1, location, 1)
    assert run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                   "--envelope", str(location), *common).code == 0
    command = shlex.split(server_command())
    lock_file = tmp_path / "mcp.lock"
    locked = run_cli("lock", "--stdio", server_command(), "--server-is-trusted-code",
                     "--server", "notes", "--output", str(lock_file))
    assert locked.code == 0, locked.stderr
    other_pins = tmp_path / "other" / "pins.json"
    other_pins.parent.mkdir()
    other_pins.write_bytes(pins.read_bytes())  # the same pins, another file
    own_root = tmp_path / "own-trust-config.json"
    own_root.write_bytes(released.trust_config.read_bytes())

    def entry(*flags: str) -> dict[str, object]:
        return {"command": "histor-sign",
                "args": ["proxy", "--server", SERVER, "--pins", str(pins), *flags, "--",
                         *command]}

    config = tmp_path / "claude_desktop_config.json"
    config.write_text(json.dumps({"mcpServers": {
        "plain": entry(),
        "warn": entry("--on-drift", "warn"),
        "staging": entry("--staging"),
        "own-root": entry("--trust-config", str(own_root)),
        "pinned-root": entry("--trust-config", str(released.trust_config)),
        "other-pins": {"command": "histor-sign", "args": [
            "proxy", "--server", SERVER, "--pins", str(other_pins), "--", *command]},
        "locked": {"command": "histor-sign", "args": [
            "proxy", "--server", "notes", "--lock", str(lock_file), "--", *command]},
        "unknown-flag": entry("--no-such-flag"),
        "asks-help": entry("--help"),
    }}, indent=2))
    run = run_cli("check", "--all", "--host-config", str(config), *common,
                  "--server-is-trusted-code")
    assert run.code == 1, run.stderr
    lines = dict(line.split(" (mcpServers.", 1) for line in run.stdout.splitlines()[:-1])
    status = {name.split()[-1]: (name.split()[0], rest) for name, rest in lines.items()}
    assert status["plain"][0] == "ok" and f"{SERVER} revision 1" in status["plain"][1]
    weakened = {"warn": "--on-drift warn", "staging": "--staging",
                "own-root": f"--trust-config {own_root}",
                "pinned-root": f"--trust-config {released.trust_config}",
                "other-pins": f"--pins {other_pins}", "unknown-flag": "--no-such-flag",
                "asks-help": "the proxy refuses its command line: it asks the proxy for its help"}
    # Every weakened entry is judged at once, so a regression names each one it lets pass.
    passed = {name: status[name] for name, flag in weakened.items()
              if status[name][0] != "failed" or flag not in status[name][1]}
    assert passed == {}
    assert status["locked"][0] == "locked", status["locked"]
    assert "locked (trust on first use), not publisher-signed" in status["locked"][1]
    assert "signed by" not in status["locked"][1]
    assert run.stdout.splitlines()[-1] == (
        "9 checked, 7 failed, 0 skipped, 1 locked (not publisher-signed)")
    assert "Show this message and exit" not in run.stdout  # the parser's help is dropped
