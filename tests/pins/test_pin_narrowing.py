"""A pin holds the workflow and the refs of the revision it was made from (issue 23, hole 2):
a revision signed by the pinned workflow from a pushed branch, or by another workflow file of
the repository, never advances it — on the latest revision or on any link of a followed
chain — and a pin file written before pins held refs is narrowed, never widened."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import run_cli
from pin_fixtures import SERVER, WF_ALICE_EVIL, History
from sigstore_testkit import WF_ALICE

from histor_sign.errors import InputError, VerificationFailed
from histor_sign.pins import PinStore, pin_first_use, verify_pinned

pytestmark = pytest.mark.slow


def _pin(history: History, tmp_path: Path, **kwargs: str) -> PinStore:
    where = history.publish(tmp_path / "pub1", "rev1")
    first = pin_first_use(SERVER, repository="alice/docs", location=str(where),
                          trust=history.trust(), **kwargs)
    return PinStore.load(tmp_path / "pins.json").add(first.pin)


def test_a_first_pin_learns_the_workflow_and_the_branch(history: History, tmp_path: Path) -> None:
    entry = _pin(history, tmp_path).get(SERVER)
    assert entry is not None
    assert entry.workflow == ".github/workflows/sign.yml"
    assert entry.ref_pattern == "refs/heads/main"  # revision 1 came from main, not a tag
    on_disk = json.loads((tmp_path / "pins.json").read_text())["servers"][SERVER]
    assert (on_disk["workflow"], on_disk["refPattern"]) == (entry.workflow, entry.ref_pattern)


@pytest.mark.parametrize(("name", "message"), [
    ("evil_branch2", "ref is 'refs/heads/evil', which does not match 'refs/heads/main'"),
    ("deploy2", "signing workflow is '.github/workflows/deploy.yml'"),
    ("rev3", "ref is 'refs/tags/v3.0.0'"),  # a tag after branch releases: not by default
])
def test_another_branch_or_workflow_never_advances_the_pin(
    history: History, tmp_path: Path, name: str, message: str
) -> None:
    store = _pin(history, tmp_path)
    entry = store.get(SERVER)
    assert entry is not None
    from dataclasses import replace

    where = history.publish(tmp_path / name, name, *(["rev2"] if name == "rev3" else []))
    with pytest.raises(VerificationFailed, match="identity") as info:
        verify_pinned(replace(entry, location=str(where)), trust=history.trust())
    assert message in str(info.value)
    assert PinStore.load(store.path).get(SERVER) == entry


def test_the_ref_pattern_is_held_on_every_link_of_a_followed_chain(
    history: History, tmp_path: Path
) -> None:
    """Pinned to tags only, a chain 1 → 2 → 3 whose revision 2 was signed from a branch is
    broken, although the latest revision 3 (a tag) would pass on its own."""
    store = _pin(history, tmp_path, ref_pattern="refs/**")
    entry = store.get(SERVER)
    assert entry is not None
    from dataclasses import replace

    tags_only = replace(entry, ref_pattern="refs/tags/**",
                        location=str(history.publish(tmp_path / "c", "rev3", "rev2")))
    result = verify_pinned(tags_only, trust=history.trust())
    assert not result.freshness.ok
    assert "revision 2" in result.detail and "refs/tags/**" in result.detail


def test_trust_add_shows_and_takes_the_refs(history: History, tmp_path: Path) -> None:
    where = history.publish(tmp_path / "pub", "rev1")
    common = ["--pins", str(tmp_path / "p.json"), "--trust-config", str(history.trust_config)]
    added = run_cli("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                    str(where), *common)
    assert added.code == 0, added.stderr
    assert "refs           refs/heads/main" in added.stdout
    assert "workflow       .github/workflows/sign.yml" in added.stdout
    again = run_cli("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                    str(where), "--ref-pattern", "refs/tags/v*", "--replace", *common)
    assert again.code == 1  # revision 1 itself was signed from main: refused, nothing pinned
    assert "does not match 'refs/tags/v*'" in again.stderr


def _v1_file(path: Path, entry_json: dict[str, object], workflow: object) -> Path:
    old = {k: v for k, v in entry_json.items() if k not in ("refPattern", "attested", "trustRoot")}
    old["workflow"] = workflow
    path.write_text(json.dumps({"version": 1, "servers": {SERVER: old}}, indent=2))
    return path


def test_an_old_pin_file_is_narrowed_never_widened(history: History, tmp_path: Path) -> None:
    entry = _pin(history, tmp_path).get(SERVER)
    assert entry is not None
    # Written by an earlier histor-sign: no refs, and "any workflow of the repository".
    old = _v1_file(tmp_path / "old.json", entry.to_json(), None)
    upgraded = PinStore.load(old).get(SERVER)
    assert upgraded is not None
    assert upgraded.workflow == ".github/workflows/sign.yml"
    assert upgraded.ref_pattern == "refs/heads/main"
    # ... and what a v1 pin allowed, the upgraded one refuses.
    from dataclasses import replace

    evil = replace(upgraded, location=str(history.publish(tmp_path / "e", "evil_branch2")))
    with pytest.raises(VerificationFailed, match="refs/heads/evil"):
        verify_pinned(evil, trust=history.trust())
    # A v1 pin whose recorded signer names no workflow cannot be narrowed: refused, the file
    # left as it is.
    doc = json.loads(old.read_text())
    doc["servers"][SERVER]["signer"] = "release@example.com"
    old.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="pin the server again"):
        PinStore.load(old)
    assert json.loads(old.read_text())["version"] == 1


def test_check_server_with_an_old_pin_file_still_works(history: History, tmp_path: Path) -> None:
    entry = _pin(history, tmp_path).get(SERVER)
    assert entry is not None
    where = history.publish(tmp_path / "pub2", "rev2", "rev1")
    from dataclasses import replace

    old = _v1_file(tmp_path / "old.json", replace(entry, location=str(where)).to_json(),
                   ".github/workflows/sign.yml")
    served = tmp_path / "served.json"
    served.write_text(json.dumps({"tools": history.tools["rev2"]}))
    run = run_cli("check", "--server", SERVER, str(served), "--pins", str(old),
                  "--trust-config", str(history.trust_config))
    assert run.code == 0, run.stdout + run.stderr
    assert run.stdout.startswith(f"match · {SERVER} revision 2 · signed by {WF_ALICE}")
    doc = json.loads(old.read_text())  # the pin advanced, and the file is version 2 now
    assert doc["version"] == 2 and doc["servers"][SERVER]["refPattern"] == "refs/heads/main"
    assert doc["servers"][SERVER]["revision"] == 2
    assert WF_ALICE_EVIL not in old.read_text()
