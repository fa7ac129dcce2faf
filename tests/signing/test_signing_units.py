"""Small pure pieces of signing: output names, the Merkle tree, token identities."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from histor_sign._internal.sigstore_dev.merkle import MerkleTree, root_from_path
from histor_sign._internal.sigstore_dev.oidc import WorkflowIdentity
from histor_sign.envelope import companion_paths


@pytest.mark.parametrize(
    ("output", "statement", "bundle"),
    [
        ("release.envelope.json", "release.statement.json", "release.sigstore.json"),
        ("out/x.envelope.json", "out/x.statement.json", "out/x.sigstore.json"),
        ("signed.json", "signed.statement.json", "signed.sigstore.json"),
        ("signed", "signed.statement.json", "signed.sigstore.json"),
    ],
)
def test_companion_paths(output: str, statement: str, bundle: str) -> None:
    assert companion_paths(output) == (Path(statement), Path(bundle))


def test_merkle_proofs_verify_for_every_size() -> None:
    tree = MerkleTree()
    leaves = [f"entry {i}".encode() for i in range(17)]
    for i, leaf in enumerate(leaves):
        index, size, root, path = tree.append(leaf)
        assert (index, size) == (i, i + 1)
        assert root_from_path(leaf, index, size, path) == root
    assert root_from_path(leaves[0], 0, 1, []) == hashlib.sha256(b"\0" + leaves[0]).digest()


def test_workflow_identity_parsing() -> None:
    who = WorkflowIdentity.parse(
        "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/v1",
        repository="bob/app",
    )
    assert (who.repository, who.owner, who.ref) == ("bob/app", "bob", "refs/tags/v1")
    assert who.job_workflow_ref == "alice/docs/.github/workflows/sign.yml@refs/tags/v1"
    with pytest.raises(ValueError, match="not a GitHub workflow identity"):
        WorkflowIdentity.parse("alice@example.com")


def test_obtain_identity_then_sign(tmp_path: Path) -> None:
    """Release flow: learn the workflow identity from the token, build, then sign."""
    from sigstore_testkit import TOOLS_V1, WF_ALICE, statement

    from histor_sign._internal.sigstore_dev import LocalSigstore
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.signing import obtain_identity, sign_statement

    with LocalSigstore(directory=tmp_path) as inst:
        who = obtain_identity(inst.mint_token(WF_ALICE))
        assert who.identity == WF_ALICE
        stmt = statement("io.github.alice/docs", who.identity, TOOLS_V1)
        signed = sign_statement(
            stmt, trust=Trust.from_trust_config(inst.trust_config_path), token_identity=who
        )
    assert signed.envelope.identity == WF_ALICE
    assert signed.envelope.transparency_log.log_index == 1  # the default first index
    assert signed.statement_bytes == signed.envelope.signed_bytes()
