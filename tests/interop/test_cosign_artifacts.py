"""cosign and sigstore-go verify a release's attestation against the files it binds, as
docs/signing.md shows: ``manifest.json`` (out-dir and chain directory), an ``npm pack``
tarball and a wheel built in the test; a one-byte change of any of them is rejected."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from artifact_kit import BoundRelease, release_with_artifacts
from third_party import Unavailable, debian_tools

from histor_sign.attestation import ATTESTATION_PREDICATE_TYPE

pytestmark = pytest.mark.slow

ISSUER = "https://token.actions.githubusercontent.com"


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> BoundRelease:
    return release_with_artifacts(tmp_path_factory.mktemp("cosign-bound"))


def tools() -> dict[str, Path]:
    try:
        return debian_tools()
    except Unavailable as exc:
        pytest.skip(f"cosign/sigstore-go unavailable here: {exc}")


def cosign(bound: BoundRelease, bundle: Path, blob: Path, tmp: Path) -> int:
    command = [str(tools()["cosign"]), "verify-blob-attestation", "--bundle", str(bundle),
               "--type", ATTESTATION_PREDICATE_TYPE, "--certificate-identity", bound.identity,
               "--certificate-oidc-issuer", ISSUER, "--trusted-root", str(bound.trusted_root),
               str(blob)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp), "PATH": "/usr/bin:/bin"}).returncode


def sigstore_go(bound: BoundRelease, bundle: Path, blob: Path, tmp: Path) -> int:
    command = [str(tools()["sigstore-go-verification"]), "-trustedrootJSONpath",
               str(bound.trusted_root), "-expectedIssuer", ISSUER, "-expectedSAN",
               bound.identity, "-artifact", str(blob), str(bundle)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp), "PATH": "/usr/bin:/bin"}).returncode


def changed(src: Path, tmp: Path) -> Path:
    data = bytearray(src.read_bytes())
    data[-2] ^= 0x01
    out = tmp / f"changed-{src.name}"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("verifier", [cosign, sigstore_go], ids=["cosign", "sigstore-go"])
def test_verifiers_accept_the_bound_files_and_reject_a_one_byte_change(
    bound: BoundRelease, verifier, tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    out, chain = bound.out_dir, bound.chain
    cases = [
        ("out-dir manifest", out / "intoto.sigstore.json", out / "manifest.json"),
        ("chain latest manifest", chain / "latest.intoto.sigstore.json",
         chain / "latest.manifest.json"),
        ("chain manifest 1", chain / "1.intoto.sigstore.json", chain / "1.manifest.json"),
        ("wheel", out / "intoto.sigstore.json", bound.wheel),
    ]
    if bound.tarball is not None:
        cases.append(("npm tarball", out / "intoto.sigstore.json", bound.tarball))
    wrong: list[str] = []
    for label, bundle, blob in cases:
        if verifier(bound, bundle, blob, tmp_path) != 0:
            wrong.append(f"{label}: refused")
        if verifier(bound, bundle, changed(blob, tmp_path), tmp_path) == 0:
            wrong.append(f"{label}, one byte changed: accepted")
    assert wrong == []
