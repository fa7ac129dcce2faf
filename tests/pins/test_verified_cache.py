"""The verified-revision cache the proxy opts into (``histor_sign._verified_cache``): the very
same inputs skip the Sigstore verification; anything else — another envelope, another pin
policy, another trust root, a cache file others could write — verifies afresh, and
freshness (rollback) is judged every time."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from pin_fixtures import SERVER, History

import histor_sign.verification as verification
from histor_sign._sigstore_trust import Trust
from histor_sign._verified_cache import VerifiedCache, cache_path_for, using
from histor_sign.errors import UsageError, VerificationFailed
from histor_sign.pins import PinStore, latest_for_use, pin_first_use

pytestmark = pytest.mark.slow


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the real Sigstore verifications (the real function still runs)."""
    calls: list[int] = []
    real = verification.verify

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(verification, "verify", counting)
    return calls


def pinned(history: History, tmp_path: Path, verifications: list[int],
           latest: str = "rev1") -> PinStore:
    """Pinned at revision 1 the first-use way (one verification, not counted)."""
    where = history.publish(tmp_path / "pub", "rev1")
    first = pin_first_use(SERVER, repository="alice/docs", location=str(where),
                          trust=history.trust())
    store = PinStore.load(tmp_path / "pins.json").add(first.pin)
    if latest != "rev1":
        history.publish(where, latest, "rev1")
    verifications.clear()
    return store


def use(store: PinStore, trust: Trust | None) -> Any:
    with using(VerifiedCache(store.path)):
        return latest_for_use(SERVER, trust=trust, store=store.path, signed_tools=True)


def test_the_same_inputs_verify_once(history: History, tmp_path: Path,
                                     verifications: list[int]) -> None:
    store = pinned(history, tmp_path, verifications)
    first = use(store, history.trust())
    assert len(verifications) == 1
    lines = cache_path_for(store.path).read_text().splitlines()
    assert lines[0] == "histor-sign verified-revisions v3" and len(lines) == 2
    assert oct(cache_path_for(store.path).stat().st_mode & 0o777) == "0o600"
    again = use(store, history.trust())
    assert len(verifications) == 1  # a hit
    assert again.revision == first.revision == 1
    # Without opting in, nothing is cached.
    latest_for_use(SERVER, trust=history.trust(), store=store.path, signed_tools=True)
    assert len(verifications) == 2


def test_another_envelope_is_verified_and_refused(history: History, tmp_path: Path,
                                                  verifications: list[int]) -> None:
    store = pinned(history, tmp_path, verifications)
    use(store, history.trust())
    # Revision 2 signed by another owner's workflow replaces the latest: verified afresh.
    history.publish(Path(store.get(SERVER).location), "mallory2", "rev1")  # type: ignore[union-attr]
    with pytest.raises(VerificationFailed):
        use(store, history.trust())
    assert len(verifications) == 2


def test_freshness_is_judged_every_time(history: History, tmp_path: Path,
                                        verifications: list[int]) -> None:
    store = pinned(history, tmp_path, verifications, latest="rev2")
    use(store, history.trust())  # rev1 -> rev2: the pin advances; rev2 cached
    where = Path(store.get(SERVER).location)  # type: ignore[union-attr]
    history.publish(where, "rev1", "rev2")  # latest rolled back to revision 1
    with pytest.raises(VerificationFailed, match=r"rollback|older"):
        use(store, history.trust())


def test_another_trust_root_or_policy_misses(history: History, tmp_path: Path,
                                             verifications: list[int]) -> None:
    root = tmp_path / "trust.json"
    shutil.copy(history.trust_config, root)
    where = history.publish(tmp_path / "pub", "rev1")
    first = pin_first_use(SERVER, repository="alice/docs", location=str(where),
                          trust=Trust.from_trust_config(root))
    store = PinStore.load(tmp_path / "pins.json").add(first.pin)
    verifications.clear()
    use(store, None)
    doc = json.loads(root.read_text())
    root.write_text(json.dumps(doc, indent=1))  # the pinned root, other bytes
    use(store, None)
    assert len(verifications) == 2
    # Another root than the pinned one is no use of the pin at all.
    with pytest.raises(UsageError, match="is pinned under the trust root"):
        use(store, history.trust())
    # An online production trust is never cached (its root comes from a TUF refresh).
    assert VerifiedCache(store.path).key(
        _envelope(history), pins=store.get(SERVER).pins(),  # type: ignore[union-attr]
        trust=Trust.production(), previous=None, tools=None) is None


def test_a_forged_line_cannot_stand_in_for_the_pin(history: History, tmp_path: Path,
                                                    verifications: list[int]) -> None:
    """A line computed with the package's own code for another owner's envelope (what the
    writer of the cache file could add) does not make it pass: the pin's identity checks
    run on every hit."""
    store = pinned(history, tmp_path, verifications)
    where = Path(store.get(SERVER).location)  # type: ignore[union-attr]
    history.publish(where, "mallory2", "rev1")
    from histor_sign.models import load_envelope

    forged = load_envelope(history.envelopes["mallory2"])
    entry = store.get(SERVER)
    assert entry is not None
    cache = VerifiedCache(store.path)
    key = cache.key(forged, pins=entry.pins(), trust=history.trust(), previous=None,
                    tools=None, pin=entry.to_json())
    assert key is not None
    cache.add(key)
    with pytest.raises(VerificationFailed, match="identity"):
        with using(VerifiedCache(store.path)):
            latest_for_use(SERVER, store=store.path, signed_tools=False)
    assert PinStore.load(store.path).get(SERVER).revision == 1  # type: ignore[union-attr]


def test_a_cache_in_a_directory_others_can_write_is_ignored(
        history: History, tmp_path: Path, verifications: list[int]) -> None:
    store = pinned(history, tmp_path, verifications)
    use(store, history.trust())
    os.chmod(tmp_path, 0o777)
    try:
        use(store, history.trust())
    finally:
        os.chmod(tmp_path, 0o700)
    assert len(verifications) == 2


def test_a_cache_others_could_write_is_ignored(history: History, tmp_path: Path,
                                               verifications: list[int]) -> None:
    store = pinned(history, tmp_path, verifications)
    use(store, history.trust())
    cache = cache_path_for(store.path)
    os.chmod(cache, 0o664)
    use(store, history.trust())
    assert len(verifications) == 2
    os.chmod(cache, 0o600)
    shutil.copy(cache, tmp_path / "kept")
    cache.write_text("histor-sign verified-revisions v3\nnot-a-key\n")
    os.chmod(cache, 0o600)
    use(store, history.trust())  # a garbled file: no hit, verified, rewritten
    assert len(verifications) == 3
    assert cache.read_text() == (tmp_path / "kept").read_text()


def _envelope(history: History) -> Any:
    from histor_sign.models import parse_envelope

    return parse_envelope(json.loads(history.envelopes["rev1"].read_text()), "rev1")
