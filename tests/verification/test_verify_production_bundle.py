"""Our verification core on a REAL production Sigstore bundle (GitHub Actions, Rekor v1),
offline with the vendored trusted root."""

from __future__ import annotations

import pytest
from sigstore_testkit import DATA

from histor_sign._sigstore_trust import Trust
from histor_sign.errors import InputError, VerificationFailed
from histor_sign.verification import load_bundle_certificate, log_entry_of, verify_artifact_bundle
from histor_sign.verification._certificate import certificate_facts
from histor_sign.verification.policy import Pins

PROD = DATA / "prod-github-rfc8785"
WHEEL = (PROD / "rfc8785-0.1.2-py3-none-any.whl").read_bytes()
BUNDLE = (PROD / "rfc8785-0.1.2-py3-none-any.whl.sigstore.json").read_bytes()
IDENTITY = "https://github.com/trailofbits/rfc8785.py/.github/workflows/release.yml@refs/tags/v0.1.2"
SERVER = "io.github.trailofbits/rfc8785.py"


@pytest.fixture(scope="module")
def production_root():  # type: ignore[no-untyped-def]
    return Trust.production(offline=True).trusted_root()


def test_production_bundle_verifies_with_all_pins(production_root) -> None:  # type: ignore[no-untyped-def]
    pins = Pins(
        cert_identity=IDENTITY, repository="trailofbits/rfc8785.py", ref="refs/tags/v0.1.2",
        owner_id="2314423", repository_id="768213997",
    )
    facts = verify_artifact_bundle(
        WHEEL, BUNDLE, trusted_root=production_root, pins=pins, server=SERVER
    )
    assert facts.identity == IDENTITY
    assert facts.owners() == ["trailofbits", "trailofbits"]
    # owner comparison is case-insensitive (GitHub logins are)
    verify_artifact_bundle(
        WHEEL, BUNDLE, trusted_root=production_root,
        pins=Pins(repository="TrailOfBits/rfc8785.py"), server="io.github.TrailOfBits/x",
    )


def test_vendored_root_file_same_result() -> None:
    root = Trust.from_trusted_root(DATA / "production.trusted_root.json").trusted_root()
    verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=root, pins=Pins(IDENTITY))


def test_log_entry_read_from_bundle() -> None:
    import json

    ref = log_entry_of(json.loads(BUNDLE))
    assert ref.log_index == 79605083
    assert ref.integrated_time is not None and ref.integrated_time > 1_700_000_000
    assert len(ref.log_id) == 64


@pytest.mark.parametrize(
    ("pins", "server", "needle"),
    [
        (Pins(IDENTITY.replace("v0.1.2", "v0.1.3")), SERVER, "certificate identity"),
        (Pins(IDENTITY), "io.github.evil/rfc8785.py", "'trailofbits'"),
        (Pins(IDENTITY, repository="evil/rfc8785.py"), SERVER, "repository is"),
        (Pins(IDENTITY, owner_id="1"), SERVER, "owner id"),
        (Pins(IDENTITY, issuer="https://accounts.google.com"), SERVER,
         "issuer is"),
    ],
    ids=["identity", "namespace-owner", "repository", "owner-id", "issuer"],
)
def test_identity_mismatch(production_root, pins: Pins, server: str, needle: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(VerificationFailed, match=r"^identity: ") as info:
        verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=production_root, pins=pins,
                               server=server)
    assert needle in str(info.value)
    assert info.value.exit_code == 1


def test_tampered_artifact_rejected(production_root) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(VerificationFailed, match=r"^signature: .*digest"):
        verify_artifact_bundle(WHEEL + b"\0", BUNDLE, trusted_root=production_root,
                               pins=Pins(IDENTITY))


def test_staging_root_rejects_production_bundle() -> None:
    root = Trust.staging(offline=True).trusted_root()
    with pytest.raises(VerificationFailed, match=r"^signature: "):
        verify_artifact_bundle(WHEEL, BUNDLE, trusted_root=root)


def test_garbage_bundle_rejected(production_root) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(VerificationFailed, match="not a valid Sigstore bundle"):
        verify_artifact_bundle(WHEEL, b'{"mediaType": "x"}', trusted_root=production_root)


def test_certificate_facts_of_real_certificate() -> None:
    facts = certificate_facts(load_bundle_certificate(BUNDLE))
    assert facts.issuer == "https://token.actions.githubusercontent.com"
    assert facts.repository == "trailofbits/rfc8785.py"
    assert facts.ref == "refs/tags/v0.1.2"
    assert (facts.owner_id, facts.repository_id) == ("2314423", "768213997")


def test_trusted_root_file_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "root.json"
    bad.write_text('{"mediaType": 1}')
    with pytest.raises(InputError, match="not a Sigstore trusted root"):
        Trust.from_trusted_root(bad).trusted_root()
    with pytest.raises(InputError):
        Trust.from_trusted_root(tmp_path / "missing.json").trusted_root()
