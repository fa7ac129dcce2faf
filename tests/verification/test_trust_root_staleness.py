"""Offline production/staging roots: sigstore's TUF cache before the vendored copy, a hint
that names staleness when trust material is missing, and the vendored roots' age."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from sigstore_testkit import DATA, WF_ALICE, SignedSet, assert_failed_check, error_lines, run_main

from histor_sign._sigstore_trust import (
    PRODUCTION,
    STAGING,
    TUF_URLS,
    VENDORED_FROM,
    VENDORED_ON,
    Trust,
    stale_root_hint,
    vendored_root_path,
)
from histor_sign.errors import VerificationFailed
from histor_sign.sigstore_dev import LocalSigstore
from histor_sign.verification import verify_artifact_bundle

PROD = DATA / "prod-github-rfc8785"
WHEEL = (PROD / "rfc8785-0.1.2-py3-none-any.whl").read_bytes()
BUNDLE = (PROD / "rfc8785-0.1.2-py3-none-any.whl.sigstore.json").read_bytes()
#: Warn past this age. Sigstore names its Rekor v2 shards by year (log2025-1, ...) and has
#: added a CT log, a TSA and a Rekor shard within the last few years, so a root older than
#: half a year is likely to miss a key that new signatures use. Fail only when the root can
#: no longer verify anything new (every key of a kind past its validity end).
MAX_AGE = dt.timedelta(days=180)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def put_in_tuf_cache(cache_home: Path, name: str, root: dict[str, Any]) -> Path:
    path = (cache_home / "sigstore-python" / "tuf" / quote(TUF_URLS[name], safe="")
            / "trusted_root.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(root))
    return path


def test_offline_production_prefers_sigstores_tuf_cache(cache_home: Path) -> None:
    trust = Trust.production(offline=True)
    assert trust.describe() == "production (offline, vendored root)"
    verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=trust.trusted_root())

    # a cached root that lacks the Fulcio CA this (real) bundle was issued by
    stale = json.loads(vendored_root_path(PRODUCTION).read_text())
    stale["certificateAuthorities"] = [
        ca for ca in stale["certificateAuthorities"] if "end" in ca["validFor"]
    ]
    cached = put_in_tuf_cache(cache_home, PRODUCTION, stale)
    assert trust.describe() == f"production (offline, sigstore's TUF cache {cached})"
    with pytest.raises(VerificationFailed, match="certificate chain"):
        verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=trust.trusted_root())

    # an unreadable cache entry is ignored: the vendored root is used
    cached.write_text("{not json")
    assert trust.describe() == "production (offline, vendored root)"
    verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=trust.trusted_root())


@pytest.mark.slow
def test_stale_offline_root_says_so(signed_set: SignedSet, cache_home: Path,
                                    tmp_path: Path) -> None:
    """An envelope whose keys the offline root lacks (a rotation, from its point of view)."""
    args = ("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE, "--offline")
    own_root = json.loads(signed_set.trusted_root.read_text())
    put_in_tuf_cache(cache_home, PRODUCTION, own_root)
    assert run_main(*args).code == 0  # the cached root is the one used

    with LocalSigstore() as other:
        rotated = other.trust_config["trustedRoot"]
    put_in_tuf_cache(cache_home, PRODUCTION, rotated)
    run = run_main(*args)
    assert_failed_check(run, "signature")
    (line,) = error_lines(run.stderr)
    assert "the cached production trusted root may be out of date" in line
    assert "retry online or pass a current trusted root with --trusted-root" in line
    assert "`" not in line

    # a root the caller chose is not "stale": no hint
    (tmp_path / "rotated.json").write_text(json.dumps(rotated))
    explicit = run_main("verify", str(signed_set.rev1), "--cert-identity", WF_ALICE,
                        "--trusted-root", str(tmp_path / "rotated.json"))
    assert_failed_check(explicit, "signature")
    assert "out of date" not in explicit.stderr


def test_hint_only_for_trust_material_failures_of_builtin_offline_roots(
    cache_home: Path,
) -> None:
    offline = Trust.production(offline=True)
    chain = "failed to build timestamp certificate chain: unable to get local issuer"
    hint = stale_root_hint(offline, chain)
    assert hint is not None and "vendored production trusted root" in hint
    assert "`trusted_root`" in hint
    assert stale_root_hint(Trust.staging(offline=True), "checkpoint: Signature not found")
    assert stale_root_hint(offline, "Signature is invalid for input") is None
    assert stale_root_hint(Trust.production(), chain) is None  # online: the root is fresh
    assert stale_root_hint(Trust.from_trusted_root(Path("r.json")), chain) is None


@pytest.mark.parametrize("name", [PRODUCTION, STAGING])
def test_vendored_root_age(name: str) -> None:
    """Warn when the vendored root is old; fail once it cannot verify new signatures."""
    refresh = (
        f"refresh histor_sign/trust_roots/{name}.trusted_root.json: run `sigstore "
        f"{'--staging ' if name == STAGING else ''}plumbing update-trust-root` online, copy "
        f"trusted_root.json from sigstore-python's TUF cache "
        f"(.../tuf/{quote(TUF_URLS[name], safe='')}/), and set VENDORED_ON in "
        "histor_sign/_sigstore_trust.py"
    )
    now = dt.datetime.now(dt.UTC)
    vendored_on = dt.datetime.fromisoformat(VENDORED_ON).replace(tzinfo=dt.UTC)
    assert vendored_on <= now + dt.timedelta(days=1), "VENDORED_ON is in the future"
    assert VENDORED_FROM.startswith("sigstore ")
    if now - vendored_on > MAX_AGE:
        warnings.warn(
            f"the vendored {name} trusted root is {(now - vendored_on).days} days old "
            f"(copied {VENDORED_ON} from {VENDORED_FROM}); {refresh}",
            stacklevel=1,
        )
    root = json.loads(vendored_root_path(name).read_text())

    def ends(entry: dict[str, Any]) -> dt.datetime | None:
        validity = entry.get("validFor") or entry.get("publicKey", {}).get("validFor", {})
        end = validity.get("end")
        return dt.datetime.fromisoformat(end.replace("Z", "+00:00")) if end else None

    for kind in ("certificateAuthorities", "tlogs", "ctlogs", "timestampAuthorities"):
        entries = root.get(kind) or []
        assert entries, f"{name} root has no {kind}"
        live = [e for e in entries if (end := ends(e)) is None or end > now]
        assert live, f"every {kind} key of the vendored {name} root has expired; {refresh}"
