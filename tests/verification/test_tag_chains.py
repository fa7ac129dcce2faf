"""Tag-triggered releases: pins by repository + workflow file survive a new tag, and the
chain follows the publisher's numeric ids and workflow file, not its login or its ref."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sigstore_testkit import (
    ALICE_OWNER_ID,
    ALICE_REPO_ID,
    TOOLS_V1,
    TOOLS_V2,
    assert_bad_input,
    assert_failed_check,
    run_main,
    statement,
)

from histor_sign._sigstore_trust import Trust
from histor_sign.errors import UsageError
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore
from histor_sign.verification import verify
from histor_sign.verification.policy import Pins, ref_glob

TAG = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/{}"
OTHER_REPO = "https://github.com/alice/other/.github/workflows/sign.yml@refs/tags/v1.1.0"
OTHER_WORKFLOW = "https://github.com/alice/docs/.github/workflows/publish.yml@refs/tags/v1.1.0"
PIN = ("--repository", "alice/docs", "--workflow", ".github/workflows/sign.yml")


@dataclass
class Chains:
    trust_config: Path
    envelopes: dict[str, Path]

    def verify(self, name: str, previous: str | None, *flags: str) -> Any:
        prev = ("--previous", str(self.envelopes[previous])) if previous else ()
        return run_main("verify", str(self.envelopes[name]), *prev,
                        "--trust-config", str(self.trust_config), *flags)


@pytest.fixture(scope="module")
def chains(tmp_path_factory: pytest.TempPathFactory) -> Chains:
    directory = tmp_path_factory.mktemp("tag-chains")
    out: dict[str, Path] = {}
    with LocalSigstore(directory=directory) as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)

        def sign(name: str, stmt: Any, identity: str, owner_id: str = ALICE_OWNER_ID,
                 repository_id: str = ALICE_REPO_ID) -> None:
            token = inst.mint_token(identity, owner_id=owner_id, repository_id=repository_id)
            out[name] = directory / f"{name}.envelope.json"
            sign_statement(stmt, trust=trust, identity_token=token,
                           require_owned_namespace=False).write(out[name])

        for server, key in (("io.github.alice/docs", "gh"), ("com.example/docs", "ex")):
            s1 = statement(server, TAG.format("v1.0.0"), TOOLS_V1)
            sign(f"{key}1", s1, TAG.format("v1.0.0"))
            s2 = statement(server, TAG.format("v1.1.0"), TOOLS_V2, previous=s1, version="1.1.0")
            sign(f"{key}2", s2, TAG.format("v1.1.0"))
            # Same login and repository name, other numeric ids: a re-registered account.
            sign(f"{key}2-reregistered", s2, TAG.format("v1.1.0"), owner_id="9999",
                 repository_id="8888")
            s2o = statement(server, OTHER_REPO, TOOLS_V2, previous=s1, version="1.1.0")
            sign(f"{key}2-other-repo", s2o, OTHER_REPO, repository_id="2002")
            s2w = statement(server, OTHER_WORKFLOW, TOOLS_V2, previous=s1, version="1.1.0")
            sign(f"{key}2-other-workflow", s2w, OTHER_WORKFLOW)
        trust_config = inst.trust_config_path
    return Chains(trust_config, out)


@pytest.mark.parametrize("key", ["gh", "ex"])
@pytest.mark.parametrize(
    "flags",
    [
        PIN,
        (*PIN, "--ref-pattern", "refs/tags/v*"),
        ("--workflow", ".github/workflows/sign.yml", "--repository-id", ALICE_REPO_ID),
        ("--workflow", "alice/docs/.github/workflows/sign.yml", "--repository", "alice/docs"),
        ("--cert-identity-regexp",
         r"https://github\.com/alice/docs/\.github/workflows/sign\.yml@refs/tags/v.*"),
    ],
)
def test_tag_to_tag_chain_verifies_with_tag_independent_pins(
    chains: Chains, key: str, flags: tuple[str, ...]
) -> None:
    run = chains.verify(f"{key}2", f"{key}1", *flags)
    assert run.code == 0, run.stdout + run.stderr
    assert "pass    chain" in run.stdout


@pytest.mark.parametrize("key", ["gh", "ex"])
def test_exact_identity_pin_names_one_tag(chains: Chains, key: str) -> None:
    """The user's pins apply to the previous envelope too: an exact v1.1.0 pin cannot
    vouch for v1.0.0, and the failure says what to pin instead."""
    run = chains.verify(f"{key}2", f"{key}1", "--cert-identity", TAG.format("v1.1.0"))
    assert_failed_check(run, "chain")
    assert "pin the repository and workflow file" in run.stderr


@pytest.mark.parametrize("key", ["gh", "ex"])
@pytest.mark.parametrize(
    ("variant", "flags", "expected"),
    [
        ("reregistered", ("--workflow", ".github/workflows/sign.yml", "--repository",
                          "alice/docs"), "owner id 1001, this one from 9999"),
        ("other-repo", ("--cert-identity-regexp", "https://github.com/alice/.*"),
         "repository id 2001, this one from 2002"),
        ("other-workflow", ("--cert-identity-regexp", "https://github.com/alice/docs/.*"),
         "workflow '.github/workflows/sign.yml', this one by '.github/workflows/publish.yml'"),
    ],
)
def test_another_publisher_breaks_the_chain(
    chains: Chains, key: str, variant: str, flags: tuple[str, ...], expected: str
) -> None:
    # The envelope itself verifies under these pins; only the chain is broken.
    alone = chains.verify(f"{key}2-{variant}", None, *flags)
    assert alone.code == 0, alone.stderr
    run = chains.verify(f"{key}2-{variant}", f"{key}1", *flags)
    assert_failed_check(run, "chain")
    assert expected in run.stderr, run.stderr


def test_io_github_chain_without_pins_still_needs_the_same_publisher(chains: Chains) -> None:
    assert chains.verify("gh2", "gh1", "--any-workflow-of-owner").code == 0
    assert_failed_check(chains.verify("gh2-reregistered", "gh1", "--any-workflow-of-owner"),
                        "chain")


def test_ref_pattern_and_workflow_pins_can_fail(chains: Chains) -> None:
    run = chains.verify("gh2", None, *PIN, "--ref-pattern", "refs/heads/*")
    assert_failed_check(run, "identity")
    assert "does not match 'refs/heads/*'" in run.stderr
    run = chains.verify("ex2", None, "--repository", "alice/docs", "--workflow",
                        ".github/workflows/publish.yml")
    assert_failed_check(run, "identity")


@pytest.mark.parametrize(
    ("flags", "needle"),
    [
        (("--workflow", ".github/workflows/sign.yml"), "--cert-identity-regexp"),
        (("--repository", "alice/docs"), "--workflow with --repository"),
        ((*PIN[:2], "--workflow", "sign.yml@refs/tags/v1"), "--workflow"),
        (("--cert-identity-regexp", "("), "--cert-identity-regexp"),
    ],
)
def test_pins_that_name_no_signer_are_bad_input(
    chains: Chains, flags: tuple[str, ...], needle: str
) -> None:
    assert_bad_input(chains.verify("ex2", None, *flags), needle)


def test_library_pins(chains: Chains) -> None:
    trust = Trust.from_trust_config(chains.trust_config)
    pins = Pins(repository="alice/docs", workflow=".github/workflows/sign.yml",
                ref_pattern="refs/tags/v*")
    report = verify(chains.envelopes["ex2"], pins=pins, trust=trust,
                    previous=chains.envelopes["ex1"])
    assert report.ok, report.to_text()
    with pytest.raises(UsageError):
        Pins(workflow="https://github.com/alice/docs/.github/workflows/sign.yml@refs/x")


@pytest.mark.parametrize(
    ("pattern", "ref", "matches"),
    [
        ("refs/tags/v*", "refs/tags/v1.1.0", True),
        ("refs/tags/v*", "refs/tags/v1/evil", False),
        ("refs/tags/**", "refs/tags/v1/x", True),
        ("refs/heads/main", "refs/heads/main2", False),
        ("refs/tags/v?.0", "refs/tags/v1.0", True),
        ("refs/tags/v1.0", "refs/tags/v1x0", False),
    ],
)
def test_ref_glob(pattern: str, ref: str, matches: bool) -> None:
    assert bool(ref_glob(pattern).fullmatch(ref)) is matches
