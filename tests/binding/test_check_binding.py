"""``check --server NAME --artifact FILE`` and ``--installed ECOSYSTEM:PATH`` against a real
release that bound an ``npm pack`` tarball, a wheel built by pip and an image digest: the
released package is accepted, a modified one is refused naming what differs, and a revision
released without artifacts binds nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from artifact_kit import (
    IMAGE,
    BoundRelease,
    npm_install,
    npm_tarball,
    pip_install,
    release_with_artifacts,
    wheel,
)
from cli_harness import assert_clean_error, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> BoundRelease:
    return release_with_artifacts(tmp_path_factory.mktemp("bound"))


@pytest.fixture(scope="module")
def pins(bound: BoundRelease, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    path = tmp_path_factory.mktemp("client") / "pins.json"
    common = ["--pins", str(path), "--trust-config", str(bound.trust_config)]
    added = run_cli("trust", "add", bound.server, "--repository", "example/notes-server",
                    "--envelope", str(bound.chain), *common)
    assert added.code == 0, added.stderr
    return common


def check(bound: BoundRelease, pins: list[str], *args: str):  # type: ignore[no-untyped-def]
    return run_cli("check", "--server", bound.server, *args, *pins)


def one_byte_changed(src: Path, dst: Path) -> Path:
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 0x01
    dst.write_bytes(bytes(data))
    return dst


def test_released_files_are_attested(bound: BoundRelease, pins: list[str]) -> None:
    run = check(bound, pins, "--artifact", str(bound.wheel))
    assert run.code == 0, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith(f"attested · {bound.wheel.name} · {bound.server} revision 1")
    assert "pkg:pypi/acme-search@2.3.0" in run.stdout
    image = check(bound, pins, "--artifact", f"oci:{IMAGE}", "--format", "json")
    assert image.code == 0, image.stderr
    doc = json.loads(image.stdout)
    assert doc["bindingVersion"] == 1 and doc["result"] == "attested"
    assert doc["verified"]["revision"] == 1
    assert len(doc["attestedArtifacts"]) == (3 if bound.tarball else 2)
    if bound.tarball is not None:
        npm = check(bound, pins, "--artifact", str(bound.tarball))
        assert npm.code == 0, npm.stderr
        assert "pkg:npm/%40acme/search@2.3.0" in npm.stdout


def test_a_modified_file_or_another_digest_is_refused(
    bound: BoundRelease, pins: list[str], tmp_path: Path
) -> None:
    changed = one_byte_changed(bound.wheel, tmp_path / bound.wheel.name)
    run = check(bound, pins, "--artifact", str(changed))
    assert run.code == 1
    assert run.stdout.startswith("NOT attested")
    assert "pkg:pypi/acme-search@2.3.0" in run.stdout and "is attested with sha256:" in run.stdout
    other_image = IMAGE.rsplit(":", 1)[0] + ":" + "00" * 32
    refused = check(bound, pins, "--artifact", f"oci:{other_image}")
    assert refused.code == 1 and "is attested with sha256:5e5e" in refused.stdout
    stranger = tmp_path / "stranger.bin"
    stranger.write_bytes(b"not released")
    unknown = check(bound, pins, "--artifact", str(stranger))
    assert unknown.code == 1 and "is none of the artifacts" in unknown.stdout


def test_installed_npm_package(bound: BoundRelease, pins: list[str], tmp_path: Path) -> None:
    if bound.tarball is None:
        pytest.skip("npm is not installed")
    package = npm_install(tmp_path / "app", bound.tarball)
    run = check(bound, pins, "--installed", f"npm:{package}")
    assert run.code == 0, run.stderr
    assert "node_modules/.package-lock.json" in run.stdout
    assert "npm keeps no per-file digests" in run.stdout  # what it cannot prove, said
    # Same name and version, other code: the lockfile's integrity is not the attested one.
    impostor = npm_tarball(tmp_path / "impostor", body="module.exports = 'exfiltrate';\n")
    swapped = npm_install(tmp_path / "app2", impostor)
    refused = check(bound, pins, "--installed", f"npm:{swapped}")
    assert refused.code == 1
    assert "NOT attested" in refused.stdout and "none of the artifacts" in refused.stdout


def test_installed_python_distribution(
    bound: BoundRelease, pins: list[str], tmp_path: Path
) -> None:
    dist_info = pip_install(tmp_path / "site", bound.wheel)
    run = check(bound, pins, "--installed", f"pypi:{dist_info}", "--format", "json")
    assert run.code == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["evidence"]["ecosystem"] == "pypi"
    assert doc["evidence"]["source"].endswith("direct_url.json")
    # An installed file edited after install no longer matches RECORD: refused, named.
    module = tmp_path / "site" / "acme_search" / "__init__.py"
    module.write_text(module.read_text() + "import os\n")
    edited = check(bound, pins, "--installed", f"pypi:{dist_info}")
    assert edited.code == 1
    assert "acme_search/__init__.py differs from its RECORD digest" in edited.stdout
    # Another wheel of the same name and version: its recorded hash is not attested.
    other = wheel(tmp_path / "other", body='"""patched"""\n')
    other_info = pip_install(tmp_path / "site2", other)
    refused = check(bound, pins, "--installed", f"pypi:{other_info}")
    assert refused.code == 1 and "is attested with sha256:" not in refused.stdout
    assert "none of the artifacts" in refused.stdout
    # pip keeps no digest for an index install: said plainly, exit 2.
    (other_info / "direct_url.json").unlink()
    unknown = check(bound, pins, "--installed", f"pypi:{other_info}")
    assert_clean_error(unknown)
    assert "records no digest" in unknown.stderr


def test_installed_image_by_digest(bound: BoundRelease, pins: list[str]) -> None:
    assert check(bound, pins, "--installed", f"oci:{IMAGE}").code == 0
    by_tag = check(bound, pins, "--installed", "oci:ghcr.io/acme/search:2.3.0")
    assert_clean_error(by_tag)
    assert "a tag alone names no content" in by_tag.stderr


def test_bad_combinations_are_usage_errors(bound: BoundRelease, pins: list[str]) -> None:
    no_server = run_cli("check", "--artifact", str(bound.wheel), *pins)
    assert_clean_error(no_server)
    both = check(bound, pins, "--artifact", str(bound.wheel), "--installed", f"oci:{IMAGE}")
    assert_clean_error(both)
    with_tools = check(bound, pins, "--artifact", str(bound.wheel), "-")
    assert_clean_error(with_tools)
    bad = check(bound, pins, "--installed", "cargo:./target")
    assert_clean_error(bad)


def test_a_revision_without_artifacts_binds_nothing(
    bound: BoundRelease, tmp_path: Path
) -> None:
    from cli_harness import run_cli as cli

    from histor_sign.sigstore_dev import LocalSigstore

    base = tmp_path / "plain"
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        run = cli("release", "--server", bound.server, "--server-version", "2.3.0",
                  "--out-dir", str(base / "out"), "--trust-config",
                  str(sigstore.trust_config_path), "--tools",
                  str(bound.out_dir / "tools.snapshot.json"),
                  "--identity-token", sigstore.mint_token(bound.identity),
                  "--revisions", str(base / "revisions"))
        assert run.code == 0, run.stderr
        trust_config = sigstore.trust_config_path
    chain = base / "revisions" / "io.github.example" / "notes-server"
    common = ["--pins", str(tmp_path / "pins.json"), "--trust-config", str(trust_config)]
    assert run_cli("trust", "add", bound.server, "--repository", "example/notes-server",
                   "--envelope", str(chain), *common).code == 0
    refused = run_cli("check", "--server", bound.server, "--artifact", str(bound.wheel),
                      *common)
    assert refused.code == 1
    assert "binds no artifact (none was bound when it was released)" in refused.stdout
    # Deleting the attestation is not a way around it: nothing binds, exit 1.
    for part in chain.glob("*.intoto.sigstore.json"):
        part.unlink()
    gone = run_cli("check", "--server", bound.server, "--artifact", str(bound.wheel), *common)
    assert gone.code == 1 and "publishes no attestation" in gone.stderr
    shutil.rmtree(base / "out")


def test_a_verified_attestation_marks_the_pin_attested(
    bound: BoundRelease, pins: list[str], tmp_path: Path
) -> None:
    """As with ``check --server``: once an artifact check verified the attestation under the
    pin, a later revision without one is a broken chain, not an unsigned surface."""
    path = tmp_path / "pins.json"
    shutil.copyfile(pins[1], path)  # a pin recorded before this publisher attested
    doc = json.loads(path.read_text())
    doc["servers"][bound.server]["attested"] = False
    path.write_text(json.dumps(doc))
    common = ["--pins", str(path), *pins[2:]]
    refused = run_cli("check", "--server", bound.server, "--artifact", str(tmp_path), *common)
    assert_clean_error(refused)  # bad input: the pin is not touched
    assert json.loads(path.read_text()) == doc
    run = run_cli("check", "--server", bound.server, "--artifact", str(bound.wheel), *common)
    assert run.code == 0, run.stderr
    assert json.loads(path.read_text())["servers"][bound.server]["attested"] is True
