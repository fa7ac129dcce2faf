"""Freshness under a pin, through the library: rollback, fork, skip-ahead with a valid and
a broken chain, signers the pin refuses, and the first-use flow — all against envelopes
signed by a real (stopped) LocalSigstore and published in the documented layout."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pin_fixtures import SERVER, History, tools
from sigstore_testkit import ALICE_OWNER_ID, ALICE_REPO_ID, WF_ALICE

from histor_sign.errors import InputError, UsageError, VerificationFailed
from histor_sign.pins import (
    Freshness,
    PinEntry,
    PinStore,
    check_served,
    pin_first_use,
    verify_pinned,
)

pytestmark = pytest.mark.slow


def first_pin(history: History, tmp_path: Path, workflow: str | None = None,
              ref_pattern: str | None = None) -> PinStore:
    """Pin SERVER at revision 1 the first-use way, into a fresh pin file."""
    where = history.publish(tmp_path / "pub1", "rev1")
    first = pin_first_use(SERVER, repository="alice/docs", location=str(where),
                          workflow=workflow, trust=history.trust(), ref_pattern=ref_pattern)
    return PinStore.load(tmp_path / "pins.json").add(first.pin)


def repoint(store: PinStore, location: Path) -> PinEntry:
    entry = store.get(SERVER)
    assert entry is not None
    from dataclasses import replace

    return replace(entry, location=str(location))


def test_first_use_learns_numeric_ids_and_pins_the_revision(history: History,
                                                            tmp_path: Path) -> None:
    store = first_pin(history, tmp_path, workflow=".github/workflows/sign.yml")
    entry = store.get(SERVER)
    assert entry is not None
    assert (entry.owner_id, entry.repository_id) == (ALICE_OWNER_ID, ALICE_REPO_ID)
    assert entry.revision == 1 and entry.signer == WF_ALICE
    on_disk = json.loads((tmp_path / "pins.json").read_text())
    assert on_disk["version"] == 2
    assert on_disk["servers"][SERVER]["ownerId"] == ALICE_OWNER_ID
    assert PinStore.load(tmp_path / "pins.json") == store


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"repository": "alice/other"}, "repository is 'alice/docs', expected 'alice/other'"),
        ({"repository": "alice/docs", "workflow": ".github/workflows/deploy.yml"},
         "signing workflow is"),
        ({"repository": "alice/docs", "owner_id": "42"}, "owner id is '1001', expected '42'"),
    ],
)
def test_first_use_refuses_an_envelope_the_pin_does_not_cover(
    history: History, tmp_path: Path, kwargs: dict[str, str], message: str
) -> None:
    where = history.publish(tmp_path / "pub", "rev1")
    with pytest.raises(VerificationFailed, match="identity") as info:
        pin_first_use(SERVER, location=str(where), trust=history.trust(), **kwargs)
    assert message in str(info.value)


def test_first_use_refuses_another_namespace_owner_and_other_names(
        history: History, tmp_path: Path) -> None:
    where = history.publish(tmp_path / "pub", "rev1")
    with pytest.raises(UsageError, match="not owned by alice"):
        pin_first_use(SERVER, repository="mallory/docs", location=str(where))
    with pytest.raises(UsageError, match=r"outside io\.github"):
        pin_first_use("com.example/docs", repository="alice/docs", location=str(where))
    with pytest.raises(VerificationFailed, match="not the pinned server"):
        pin_first_use("io.github.alice/other", repository="alice/docs", location=str(where),
                      trust=history.trust())


def test_current_revision_is_accepted_unchanged(history: History, tmp_path: Path) -> None:
    store = first_pin(history, tmp_path)
    result = verify_pinned(store.get(SERVER), trust=history.trust())  # type: ignore[arg-type]
    assert result.freshness is Freshness.CURRENT
    assert result.pin == store.get(SERVER)


def test_rollback_is_refused(history: History, tmp_path: Path) -> None:
    store = first_pin(history, tmp_path)
    store.advance(verify_pinned(repoint(store, history.publish(tmp_path / "p2", "rev2", "rev1")),
                                trust=history.trust()).pin)
    store = PinStore.load(store.path)
    entry = store.get(SERVER)
    assert entry is not None and entry.revision == 2
    old = verify_pinned(repoint(store, tmp_path / "pub1"), trust=history.trust())
    assert old.freshness is Freshness.ROLLBACK
    assert "revision 1 is older than the pinned revision 2" in old.detail
    with pytest.raises(VerificationFailed, match="rollback"):
        old.raise_for_freshness()


def test_fork_same_revision_other_digest_is_refused(history: History, tmp_path: Path) -> None:
    store = first_pin(history, tmp_path)
    store = store.advance(verify_pinned(
        repoint(store, history.publish(tmp_path / "p2", "rev2")), trust=history.trust()).pin)
    forked = verify_pinned(repoint(store, history.publish(tmp_path / "f2", "fork2")),
                           trust=history.trust())
    assert forked.freshness is Freshness.FORK
    pinned = store.get(SERVER)
    assert pinned is not None and pinned.revision == 2
    assert forked.pin.manifest_digest == pinned.manifest_digest  # the pin does not move


def test_skip_ahead_with_a_valid_chain_advances_the_pin(history: History,
                                                        tmp_path: Path) -> None:
    # Revision 3 was released from a tag after branch releases: a client that allows both
    # (a pin made from a branch allows only that branch: test_pin_narrowing.py).
    store = first_pin(history, tmp_path, workflow=".github/workflows/sign.yml",
                      ref_pattern="refs/**")
    # A chain directory keeps every revision: the pinned one too (what changed is triaged
    # against it before the pin follows).
    where = history.publish(tmp_path / "p3", "rev3", "rev1", "rev2")
    served = tools(3)
    result = check_served(PinStore(store.path, {SERVER: repoint(store, where)}), SERVER, served,
                          trust=history.trust())
    assert result.freshness is Freshness.ADVANCED
    assert result.revision.followed == (2,)
    assert result.ok and result.drift is not None and result.drift.matches
    # The tag-triggered revision 3 is signed by the pinned workflow at another ref.
    assert result.revision.signer.endswith("@refs/tags/v3.0.0")
    entry = PinStore.load(store.path).get(SERVER)
    assert entry is not None and entry.revision == 3
    assert entry.manifest_digest == result.revision.envelope.statement.manifest_digest
    text = result.to_text()
    assert text.startswith(f"match · {SERVER} revision 3 · signed by https://github.com/alice")
    assert "pin advanced" in text


def test_skip_ahead_with_a_broken_chain_is_refused(history: History, tmp_path: Path) -> None:
    store = first_pin(history, tmp_path, ref_pattern="refs/**")  # rev3 came from a tag
    # 3 descends from the fork, so the published 2 does not lead to it.
    broken = verify_pinned(repoint(store, history.publish(tmp_path / "b", "broken3", "rev2")),
                           trust=history.trust())
    assert broken.freshness is Freshness.BROKEN_CHAIN
    assert "revision 3" in broken.detail and "chain" in broken.detail
    # An intermediate revision that is not published breaks the chain too.
    missing = verify_pinned(repoint(store, history.publish(tmp_path / "m", "rev3")),
                            trust=history.trust())
    assert missing.freshness is Freshness.BROKEN_CHAIN
    assert "revision 2" in missing.detail and "not published" in missing.detail
    # An intermediate from another fork: its own link to the pinned revision holds, the next
    # link does not.
    forked = history.publish(tmp_path / "f", "rev3", "fork2")
    assert verify_pinned(repoint(store, forked),
                         trust=history.trust()).freshness is Freshness.BROKEN_CHAIN
    # A file that holds another revision than its name says.
    lying = history.publish(tmp_path / "l", "rev3", "rev2")
    (lying / "2.envelope.json").write_bytes(history.envelopes["rev1"].read_bytes())
    result = verify_pinned(repoint(store, lying), trust=history.trust())
    assert result.freshness is Freshness.BROKEN_CHAIN and "holds revision 1" in result.detail
    assert PinStore.load(store.path).get(SERVER).revision == 1  # type: ignore[union-attr]


def test_the_next_revision_must_descend_from_the_pinned_one(history: History,
                                                            tmp_path: Path) -> None:
    store = first_pin(history, tmp_path)
    store = store.advance(verify_pinned(
        repoint(store, history.publish(tmp_path / "p2", "rev2")), trust=history.trust()).pin)
    # Revision 3 right after the pinned 2, validly signed, but descending from the fork.
    result = verify_pinned(repoint(store, history.publish(tmp_path / "b", "broken3")),
                           trust=history.trust())
    assert result.freshness is Freshness.BROKEN_CHAIN
    assert "does not descend from the pinned revision 2" in result.detail
    assert result.followed == ()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("mallory2", "namespace io.github.alice belongs to GitHub owner 'alice'"),
        ("other_repo2", "repository is 'alice/other', expected 'alice/docs'"),
        ("reregistered2", "owner id is '9999', expected '1001'"),
    ],
)
def test_a_validly_signed_envelope_from_another_signer_is_refused(
    history: History, tmp_path: Path, name: str, message: str
) -> None:
    store = first_pin(history, tmp_path)
    with pytest.raises(VerificationFailed, match="identity") as info:
        verify_pinned(repoint(store, history.publish(tmp_path / name, name)),
                      trust=history.trust())
    assert message in str(info.value)


def test_the_pinned_workflow_is_required(history: History, tmp_path: Path) -> None:
    store = first_pin(history, tmp_path, workflow=".github/workflows/sign.yml")
    with pytest.raises(VerificationFailed, match="signing workflow is"):
        verify_pinned(repoint(store, history.publish(tmp_path / "d", "deploy2")),
                      trust=history.trust())
    # Without a workflow given, the pin holds the workflow that signed revision 1 (issue 23:
    # "any workflow of the repository" let another workflow file advance the pin).
    learned = first_pin(history, tmp_path / "learned")
    assert learned.get(SERVER).workflow == ".github/workflows/sign.yml"  # type: ignore[union-attr]
    with pytest.raises(VerificationFailed, match="signing workflow is"):
        verify_pinned(repoint(learned, history.publish(tmp_path / "d2", "deploy2")),
                      trust=history.trust())


def test_a_signed_snapshot_that_is_not_the_signed_catalog_fails(history: History,
                                                                tmp_path: Path) -> None:
    store = first_pin(history, tmp_path)
    where = history.publish(tmp_path / "p", "rev2")
    (where / "2.tools.snapshot.json").write_text(json.dumps({"tools": tools(7)}))
    with pytest.raises(VerificationFailed, match="tools"):
        verify_pinned(repoint(store, where), trust=history.trust(), signed_tools=True)
    (where / "2.tools.snapshot.json").unlink()
    with pytest.raises(InputError, match="no such file"):
        verify_pinned(repoint(store, where), trust=history.trust(), signed_tools=True)
    assert verify_pinned(repoint(store, where), trust=history.trust(),
                         signed_tools=None).signed_tools is None


@pytest.fixture
def http_location(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/releases/", root / "releases"
    finally:
        server.shutdown()
        server.server_close()


def test_loopback_url_location_first_use_and_skip_ahead(
    history: History, tmp_path: Path, http_location: tuple[str, Path]
) -> None:
    url, root = http_location
    history.publish(root, "rev1")
    first = pin_first_use(SERVER, repository="alice/docs", location=url + "latest.envelope.json",
                          trust=history.trust(), ref_pattern="refs/**")  # rev3: a tag
    store = PinStore.load(tmp_path / "pins.json").add(first.pin)
    history.publish(root, "rev3", "rev2")
    result = check_served(store, SERVER, tools(2), trust=history.trust())
    assert result.freshness is Freshness.ADVANCED and result.revision.followed == (2,)
    assert result.drift is not None and not result.drift.matches
    # The signed snapshot was fetched: the changed fields are named.
    changed = [t for t in result.drift.tools if t.name == "search"]
    assert changed and changed[0].fields == ("description",)
