"""``check_served`` reads the revision's attestation from the pinned location and verifies
it under the same pin and trust as the envelope, before the pin may advance; its surface
digests (when it carries any) are the drift's surface baseline. Envelopes and attestations
signed by a real (stopped) LocalSigstore (tests/pins/pin_fixtures.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pin_fixtures import SERVER, History, tools
from test_freshness import first_pin, repoint

from histor_sign.errors import InputError, VerificationFailed
from histor_sign.layout import attestation_path
from histor_sign.pins import PinStore, check_served

pytestmark = pytest.mark.slow


def _attest(history: History, where: Path, revision: int, name: str) -> Path:
    """Publish ``name``'s attestation as revision ``revision``'s."""
    target = where / f"{revision}.intoto.sigstore.json"
    shutil.copy(attestation_path(history.envelopes[name]), target)
    return target


def test_a_tools_only_attestation_verifies_and_names_no_surface_baseline(
    history: History, tmp_path: Path,
) -> None:
    store = first_pin(history, tmp_path)
    where = history.publish(tmp_path / "p", "rev1")
    address = _attest(history, where, 1, "rev1")
    result = check_served(PinStore(store.path, {SERVER: repoint(store, where)}), SERVER,
                          tools(1), trust=history.trust())
    assert result.ok and result.attestation == str(address)
    assert result.drift is not None and result.drift.surface_baseline is None
    assert result.to_json()["verified"]["attestation"] == str(address)
    assert result.to_json()["surfaceBaseline"] is None


@pytest.mark.parametrize(("name", "axis"), [("mallory2", "identity"), ("rev1", "tools"),
                                            ("other_repo2", "identity")])
def test_an_attestation_that_does_not_verify_stops_the_check_and_the_pin(
    history: History, tmp_path: Path, name: str, axis: str,
) -> None:
    store = first_pin(history, tmp_path)
    where = history.publish(tmp_path / "p", "rev2", "rev1")
    address = _attest(history, where, 2, name)
    with pytest.raises(VerificationFailed, match=f"{address}: {axis}: "):
        check_served(PinStore(store.path, {SERVER: repoint(store, where)}), SERVER, tools(2),
                     trust=history.trust())
    entry = PinStore.load(store.path).get(SERVER)
    assert entry is not None and entry.revision == 1  # not advanced to revision 2


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"mediaType": "x"}'])
def test_a_malformed_published_attestation_is_bad_input(
    history: History, tmp_path: Path, content: bytes,
) -> None:
    store = first_pin(history, tmp_path)
    where = history.publish(tmp_path / "p", "rev1")
    (where / "1.intoto.sigstore.json").write_bytes(content)
    with pytest.raises(InputError):
        check_served(PinStore(store.path, {SERVER: repoint(store, where)}), SERVER, tools(1),
                     trust=history.trust())
