"""``trust show NAME`` and ``trust update NAME`` through the real CLI: one pin shown; the
chain followed now, the pin advanced and the changes since the pinned revision triaged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pin_fixtures import SERVER, History
from sigstore_testkit import assert_bad_input, run_main

pytestmark = pytest.mark.slow


def test_show_then_update_follows_the_chain_and_triages_the_changes(
    history: History, tmp_path: Path
) -> None:
    pins = tmp_path / "pins.json"
    trust = ("--trust-config", str(history.trust_config))
    where = history.publish(tmp_path / "pub", "rev1")
    added = run_main("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                     str(where), "--ref-pattern", "refs/**", "--pins", str(pins), *trust)
    assert added.code == 0, added.stderr

    shown = run_main("trust", "show", SERVER, "--pins", str(pins))
    assert shown.code == 0, shown.stderr
    assert shown.stdout.startswith(f"{SERVER} in {pins}\n  repository     alice/docs\n")
    assert "  revision       1 (manifest sha256:" in shown.stdout
    doc = json.loads(run_main("trust", "show", SERVER, "--pins", str(pins), "-f",
                              "json").stdout)
    assert doc["schemaVersion"] == 1 and doc["server"] == SERVER and doc["revision"] == 1
    assert_bad_input(run_main("trust", "show", "io.github.alice/other", "--pins", str(pins)),
                     "is not pinned in")

    current = run_main("trust", "update", SERVER, "--pins", str(pins), *trust)
    assert current.code == 0, current.stderr
    assert current.stdout.startswith("current · io.github.alice/docs revision 1")

    history.publish(tmp_path / "pub", "rev3", "rev2")  # two releases since the pin
    update = run_main("trust", "update", SERVER, "--pins", str(pins), *trust)
    assert update.code == 0, update.stderr
    lines = update.stdout.splitlines()
    assert lines[0].startswith("advanced · io.github.alice/docs revision 3 · signed by")
    assert lines[1] == ("  pin advanced: revision 3 chains from the pinned revision 1 "
                        "through 2")
    assert lines[2].startswith("  from revision 1: different")
    assert any("search" in line and "description" in line for line in lines[3:]), lines
    assert json.loads(pins.read_text())["servers"][SERVER]["revision"] == 3

    # A history that forks after the pin: refused, exit 1, the pin left as it was.
    history.publish(tmp_path / "forked", "broken3", "fork2")
    pin_before = pins.read_bytes()
    forked = tmp_path / "pins-forked.json"
    assert run_main("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                    str(history.publish(tmp_path / "pub2", "rev2")), "--pins", str(forked),
                    *trust).code == 0
    history.publish(tmp_path / "pub2", "broken3", "fork2")
    refused = run_main("trust", "update", SERVER, "--pins", str(forked), *trust)
    assert refused.code == 1 and refused.stdout == "", refused.stderr
    assert "broken" in refused.stderr or "fork" in refused.stderr
    assert json.loads(forked.read_text())["servers"][SERVER]["revision"] == 2
    assert pins.read_bytes() == pin_before


def test_an_unreachable_pinned_location_is_not_blamed_on_envelope(
    history: History, tmp_path: Path
) -> None:
    # The user passed no --envelope: the error names the pin's location instead.
    pins = tmp_path / "pins.json"
    trust = ("--trust-config", str(history.trust_config))
    where = history.publish(tmp_path / "pub", "rev1")
    assert run_main("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                    str(where), "--pins", str(pins), *trust).code == 0
    doc = json.loads(pins.read_text())
    doc["servers"][SERVER]["envelope"] = "http://127.0.0.1:9/revisions/latest.envelope.json"
    pins.write_text(json.dumps(doc))
    served = tmp_path / "served.json"
    served.write_text(json.dumps({"tools": history.tools["rev1"]}))
    for args in (("trust", "update", SERVER), ("check", "--server", SERVER, str(served))):
        run = run_main(*args, "--pins", str(pins), *trust)
        assert run.code == 2, run.stderr
        assert "the pinned envelope location" in run.stderr and "--envelope" not in run.stderr
