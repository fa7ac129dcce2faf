"""End to end, as a publisher and a client would: the bundled example server released twice
through a local Sigstore instance (stopped before the client acts), the releases published
in the documented location layout, ``trust add`` on revision 1, then ``check --server``
against the live example server over stdio as the publisher moves to revision 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_harness import run_cli
from release_fixtures import (  # the release tests' own fixtures
    DRIFT,
    IDENTITY,
    SERVER,
    make_releases,
    server_command,
)

pytestmark = pytest.mark.slow


def publish(release_dir: Path, location: Path, revision: int) -> None:
    """What the publisher's workflow does after a release: copy the signed envelope, tools
    and attestation under their revision numbers and point latest at the new one."""
    location.mkdir(parents=True, exist_ok=True)
    shutil.copy(release_dir / "envelope.json", location / f"{revision}.envelope.json")
    shutil.copy(release_dir / "tools.snapshot.json", location / f"{revision}.tools.snapshot.json")
    shutil.copy(release_dir / "intoto.sigstore.json",
                location / f"{revision}.intoto.sigstore.json")
    shutil.copy(release_dir / "envelope.json", location / "latest.envelope.json")


def test_trust_add_then_check_server_against_the_example_server(tmp_path: Path) -> None:
    released = make_releases(tmp_path / "releases")
    location = tmp_path / "published"
    pins = tmp_path / "project" / "histor-pins.json"
    common = ["--pins", str(pins), "--trust-config", str(released.trust_config)]
    publish(released.rev1, location, 1)

    added = run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                    "--workflow", ".github/workflows/sign.yml", "--envelope", str(location),
                    *common)
    assert added.code == 0, added.stderr
    assert "dev-sigstore" in added.stderr  # the untrusted local instance is named

    shipped = ["--stdio", server_command()]
    first = run_cli("check", "--server", SERVER, *shipped, *common)
    assert first.code == 0, first.stderr
    assert first.stdout.splitlines()[0] == f"match · {SERVER} revision 1 · signed by {IDENTITY}"

    # The publisher releases revision 2 (one description changed) and publishes it.
    publish(released.rev2, location, 2)
    drifted = ["--stdio", server_command("--description", DRIFT)]
    # Its change is triaged high risk, so no path follows it before the user accepts it:
    # the check compares with the accepted revision 1 and says what waits.
    second = run_cli("check", "--server", SERVER, *drifted, *common)
    assert second.code == 1, second.stderr
    lines = second.stdout.splitlines()
    assert lines[0].startswith("different — risk: high") and "revision 1 · " in lines[0]
    assert lines[1].startswith("  revision 2 waits for acceptance: different — risk: high")
    assert f"trust update {SERVER}" in second.stderr
    assert json.loads(pins.read_text())["servers"][SERVER]["revision"] == 1
    shown = run_cli("trust", "update", SERVER, *common)
    assert shown.code == 1 and "search_notes" in shown.stdout, shown.stderr
    accepted = run_cli("trust", "update", SERVER, "--accept", *common)
    assert accepted.code == 0, accepted.stderr
    assert accepted.stdout.splitlines()[:2] == [
        f"advanced · {SERVER} revision 2 · signed by {IDENTITY}",
        "  pin advanced: revision 2 chains from the pinned revision 1",
    ]
    assert json.loads(pins.read_text())["servers"][SERVER]["revision"] == 2
    third = run_cli("check", "--server", SERVER, *drifted, *common)
    assert third.code == 0, third.stderr
    assert third.stdout.splitlines()[0] == f"match · {SERVER} revision 2 · signed by {IDENTITY}"

    # A server still serving the revision-1 tools now differs from the pinned revision 2;
    # the signed snapshot from the location names the field and shows the wording.
    stale = run_cli("check", "--server", SERVER, *shipped, *common, "--format", "json")
    assert stale.code == 1, stale.stderr
    doc = json.loads(stale.stdout)
    assert doc["verified"]["revision"] == 2 and doc["verified"]["freshness"] == "current"
    # The published snapshot and the live fetch both hold the server surface: compared, same.
    assert (doc["surfaceStatus"], doc["surface"]) == ("match", [])
    [tool] = doc["tools"]
    assert (tool["name"], tool["fields"]) == ("search_notes", ["description"])
    assert "Search every note, including private notebooks." in tool["descriptionDiff"]

    # Rolling the location back to revision 1 is refused.
    shutil.copy(location / "1.envelope.json", location / "latest.envelope.json")
    rollback = run_cli("check", "--server", SERVER, *shipped, *common)
    assert rollback.code == 1 and rollback.stdout == ""
    assert "rollback: revision 1 is older than the pinned revision 2" in rollback.stderr
