"""sigstore-js, cosign and sigstore-go accept what histor-sign signs, and reject the negative
controls: the companion bundle (``statement.json`` + ``sigstore.json``) and the in-toto
attestation (``intoto.sigstore.json``) of both demo revisions, of a log whose first
signature has index 0, and of a Rekor v2 + timestamp-authority instance.

Each verifier runs as its own process with the instance's trusted root, after the instance
has stopped. A verifier that cannot be obtained here skips with the reason (see
``third_party.py``); CI has node, npm and apt, so it runs them all.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from sigstore_testkit import TOOLS_V1, TOOLS_V2, WF_ALICE, WF_ALICE_OTHER, statement
from third_party import PEERS, Unavailable, debian_tools, sigstore_js

from histor_sign._sigstore_trust import Trust
from histor_sign.attestation import ATTESTATION_PREDICATE_TYPE
from histor_sign.canonical import canonical_object_from_parts
from histor_sign.catalog import load_catalog
from histor_sign.layout import attestation_path, companion_paths
from histor_sign.revision import tool_digest_parts
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

ISSUER = "https://token.actions.githubusercontent.com"
PRODUCTION_ROOT = (
    Path(__file__).resolve().parents[2] / "histor_sign" / "trust_roots"
    / "production.trusted_root.json"
)


@dataclass(frozen=True)
class Revision:
    """One signed revision's files, as a third party would be handed them."""

    bundle: Path  # hashedrekord bundle over ``statement``
    statement: Path  # the exact signed bytes
    attestation: Path  # DSSE / in-toto bundle
    manifest: Path  # the manifest's canonical bytes: a subject of the attestation
    identity: str
    trusted_root: Path

    def log_index(self) -> int:
        entry = json.loads(self.bundle.read_text())["verificationMaterial"]["tlogEntries"][0]
        return int(entry["logIndex"])


def manifest_file(path: Path, tools: object) -> Path:
    path.write_bytes(canonical_object_from_parts(tool_digest_parts(tools)))  # type: ignore[arg-type]
    return path


def signed_pair(directory: Path, **instance: object) -> list[Revision]:
    """Two chained revisions signed through ``sign_statement`` on a fresh local instance."""
    revisions = []
    with LocalSigstore(directory=directory, **instance) as inst:  # type: ignore[arg-type]
        trust = Trust.from_trust_config(inst.trust_config_path)
        token = inst.mint_token(WF_ALICE)
        previous = None
        for number, tools in enumerate((TOOLS_V1, TOOLS_V2), start=1):
            stmt = statement("io.github.alice/docs", WF_ALICE, tools, previous=previous,
                             version=f"1.{number}.0")
            out = directory / f"rev{number}.envelope.json"
            sign_statement(stmt, trust=trust, identity_token=token,
                           require_owned_namespace=False).write(out)
            statement_path, bundle_path = companion_paths(out)
            revisions.append(Revision(
                bundle_path, statement_path, attestation_path(out),
                manifest_file(directory / f"rev{number}.manifest.json", tools),
                WF_ALICE, inst.trusted_root_path,
            ))
            previous = stmt
    return revisions


@pytest.fixture(scope="session")
def revisions(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Revision]]:
    from histor_sign.demo import walkthrough

    base = tmp_path_factory.mktemp("interop")
    demo = walkthrough.run_demo(base / "demo")
    root = base / "demo" / "dev-sigstore" / "dev-sigstore.trusted_root.json"
    demo_revisions = []
    for number, outcome in enumerate(demo.releases, start=1):
        files = outcome.files
        tools = load_catalog(str(files["tools"])).tools
        demo_revisions.append(Revision(
            files["bundle"], files["statement"], files["attestation"],
            manifest_file(base / f"demo-{number}.manifest.json", tools),
            walkthrough.IDENTITY, root,
        ))
    return {
        "demo": demo_revisions,
        "index-0": signed_pair(base / "index-0", first_index=0),
        "rekor-v2-tsa": signed_pair(base / "rekor-v2", rekor_version=2, tsa=True),
    }


def test_the_sets_cover_index_0_and_integrated_time_null(
    revisions: dict[str, list[Revision]],
) -> None:
    assert revisions["index-0"][0].log_index() == 0
    v2 = json.loads(revisions["rekor-v2-tsa"][0].bundle.read_text())["verificationMaterial"]
    assert v2["tlogEntries"][0].get("integratedTime") in (None, "0", 0)
    assert v2["timestampVerificationData"]["rfc3161Timestamps"]


# ---------------------------------------------------------------------- the verifiers
Verifier = Callable[..., subprocess.CompletedProcess[str]]


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp), "NODE_PATH": str(PEERS / "node_modules")}


def _run(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=_env(tmp))


def sjs_verifier(tmp: Path) -> Verifier:
    node, script = sigstore_js()

    def run(bundle: Path, artifact: Path, root: Path, identity: str, dsse: bool,
            predicate_type: str = ATTESTATION_PREDICATE_TYPE) -> subprocess.CompletedProcess[str]:
        return _run([node, str(script), str(bundle), "-" if dsse else str(artifact), str(root),
                     identity, ISSUER], tmp)

    return run


def cosign_verifier(tmp: Path) -> Verifier:
    cosign = debian_tools()["cosign"]

    def run(bundle: Path, artifact: Path, root: Path, identity: str, dsse: bool,
            predicate_type: str = ATTESTATION_PREDICATE_TYPE) -> subprocess.CompletedProcess[str]:
        command = ["verify-blob-attestation", "--type", predicate_type] if dsse \
            else ["verify-blob"]
        return _run([str(cosign), *command, "--bundle", str(bundle),
                     "--certificate-identity", identity, "--certificate-oidc-issuer", ISSUER,
                     "--trusted-root", str(root), str(artifact)], tmp)

    return run


def sigstore_go_verifier(tmp: Path) -> Verifier:
    binary = debian_tools()["sigstore-go-verification"]

    def run(bundle: Path, artifact: Path, root: Path, identity: str, dsse: bool,
            predicate_type: str = ATTESTATION_PREDICATE_TYPE) -> subprocess.CompletedProcess[str]:
        return _run([str(binary), "-trustedrootJSONpath", str(root), "-expectedIssuer", ISSUER,
                     "-expectedSAN", identity, "-artifact", str(artifact), str(bundle)], tmp)

    return run


VERIFIERS = {"sigstore-js": sjs_verifier, "cosign": cosign_verifier,
             "sigstore-go": sigstore_go_verifier}


def swapped_payload(attestation: Path, other: Path, out: Path) -> Path:
    """``attestation``'s signature and certificate around ``other``'s in-toto payload."""
    bundle = json.loads(attestation.read_text())
    bundle["dsseEnvelope"]["payload"] = json.loads(other.read_text())["dsseEnvelope"]["payload"]
    out.write_text(json.dumps(bundle))
    return out


@pytest.mark.parametrize("verifier", sorted(VERIFIERS))
@pytest.mark.parametrize("kind", ["demo", "index-0", "rekor-v2-tsa"])
def test_verifier_accepts_both_revisions_and_rejects_the_controls(
    revisions: dict[str, list[Revision]], verifier: str, kind: str, tmp_path: Path,
) -> None:
    try:
        run = VERIFIERS[verifier](tmp_path)
    except Unavailable as exc:
        pytest.skip(f"{verifier} unavailable here: {exc}")
    pair = revisions[kind]
    accepted: list[str] = []
    refused: list[str] = []
    for number, (rev, other) in enumerate(zip(pair, pair[::-1], strict=True), start=1):
        other_identity = WF_ALICE_OTHER if rev.identity == WF_ALICE else WF_ALICE
        forged = swapped_payload(rev.attestation, other.attestation,
                                 tmp_path / f"forged-{number}.json")
        cases: list[tuple[str, bool, tuple[object, ...], dict[str, str]]] = [
            ("companion bundle", True, (rev.bundle, rev.statement, rev.trusted_root,
                                        rev.identity, False), {}),
            ("attestation", True, (rev.attestation, rev.manifest, rev.trusted_root,
                                   rev.identity, True), {}),
            ("companion, wrong identity", False, (rev.bundle, rev.statement, rev.trusted_root,
                                                  other_identity, False), {}),
            ("attestation, wrong identity", False, (rev.attestation, rev.manifest,
                                                    rev.trusted_root, other_identity, True), {}),
            ("companion, other revision's statement", False,
             (rev.bundle, other.statement, rev.trusted_root, rev.identity, False), {}),
            ("attestation, other revision's payload", False,
             (forged, other.manifest, rev.trusted_root, rev.identity, True), {}),
            ("companion, production root", False,
             (rev.bundle, rev.statement, PRODUCTION_ROOT, rev.identity, False), {}),
            ("attestation, production root", False,
             (rev.attestation, rev.manifest, PRODUCTION_ROOT, rev.identity, True), {}),
        ]
        if verifier == "cosign":
            cases.append(("attestation, other predicate type", False,
                          (rev.attestation, rev.manifest, rev.trusted_root, rev.identity, True),
                          {"predicate_type": "https://slsa.dev/provenance/v1"}))
        for label, expected, args, options in cases:
            done = run(*args, **options)
            if (done.returncode == 0) != expected:
                output = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
                (refused if expected else accepted).append(
                    f"revision {number}, {label}: exit {done.returncode}: {output[0]}"
                )
    assert accepted == []  # no negative control is ever accepted
    assert refused == []
