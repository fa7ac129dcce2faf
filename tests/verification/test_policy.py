"""Identity policies compose: each names every way a certificate misses it, AllOf adds them
up in order, AnyOf passes on one, and Pins is exactly the AllOf of its fields."""

from __future__ import annotations

import pytest
from sigstore_testkit import SignedSet

from histor_sign.errors import UsageError
from histor_sign.models import GITHUB_ACTIONS_ISSUER
from histor_sign.verification._certificate import CertificateFacts
from histor_sign.verification.policy import (
    AllOf,
    AnyOf,
    Identity,
    IdentityRegexp,
    Issuer,
    NamespaceOwner,
    OwnerId,
    Pins,
    Ref,
    RefPattern,
    Repository,
    RepositoryId,
    Workflow,
    identity_problems,
)

WORKFLOW = "https://github.com/acme/search/.github/workflows/sign.yml@refs/tags/v1.2.0"


def facts(identity: str = WORKFLOW, *, repository: str = "acme/search",
          ref: str = "refs/tags/v1.2.0", owner_id: str = "11", repository_id: str = "22",
          issuer: str = GITHUB_ACTIONS_ISSUER) -> CertificateFacts:
    owner = repository.split("/")[0]
    return CertificateFacts((identity,), {
        "8": issuer, "12": f"https://github.com/{repository}", "14": ref,
        "16": f"https://github.com/{owner}", "17": owner_id, "15": repository_id,
    })


@pytest.mark.parametrize("policy", [
    Issuer(), Identity(WORKFLOW), IdentityRegexp(r"https://github\.com/acme/.*"),
    NamespaceOwner("io.github.acme/search"), NamespaceOwner("com.example/search"),
    Repository("ACME/Search"), Workflow(".github/workflows/sign.yml"),
    Workflow("acme/search/.github/workflows/sign.yml"), RefPattern("refs/tags/v*"),
    Ref("refs/tags/v1.2.0"), OwnerId("11"), RepositoryId("22"),
])
def test_each_policy_passes_the_certificate_it_describes(policy: object) -> None:
    assert policy.problems(facts()) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(("policy", "says"), [
    (Issuer("https://accounts.google.com"), "issuer is"),
    (Identity(WORKFLOW.replace("v1.2.0", "v9")), "certificate identity is"),
    (IdentityRegexp(r"https://github\.com/other/.*"), "does not match"),
    (NamespaceOwner("io.github.other/search"), "belongs to GitHub owner 'other'"),
    (Repository("acme/other"), "repository is 'acme/search', expected 'acme/other'"),
    (Workflow(".github/workflows/evil.yml"), "signing workflow is"),
    (RefPattern("refs/tags/v*"), "ref is 'refs/heads/evil'"),
    (Ref("refs/heads/main"), "ref is"),
    (OwnerId("99"), "owner id is '11', expected '99'"),
    (RepositoryId("99"), "repository id is '22', expected '99'"),
])
def test_each_policy_names_what_the_certificate_misses(policy: object, says: str) -> None:
    cert = facts(ref="refs/heads/evil") if isinstance(policy, RefPattern) else facts()
    [problem] = policy.problems(cert)  # type: ignore[attr-defined]
    assert says in problem


def test_all_of_reports_every_problem_in_order_and_any_of_passes_on_one() -> None:
    cert = facts(ref="refs/heads/evil")
    both = AllOf((Workflow(".github/workflows/release.yml"), RefPattern("refs/tags/*")))
    assert [p.split(" ")[0] for p in both.problems(cert)] == ["signing", "ref"]
    either = AnyOf((Workflow(".github/workflows/release.yml"),
                    Workflow(".github/workflows/sign.yml")))
    assert either.problems(cert) == []
    neither = AnyOf((Workflow(".github/workflows/a.yml"), Workflow(".github/workflows/b.yml")))
    [problem] = neither.problems(cert)
    assert problem.startswith("none of the alternatives holds:") and "a.yml" in problem
    assert AnyOf(()).problems(cert) == ["no policy to meet"]


def test_who_a_policy_names() -> None:
    assert Identity(WORKFLOW).names_signer() and IdentityRegexp(".*").names_signer()
    assert not Workflow(".github/workflows/sign.yml").names_signer()
    assert AllOf((Workflow(".github/workflows/sign.yml"), Repository("a/b"))).names_signer()
    assert AllOf((Workflow(".github/workflows/sign.yml"), RepositoryId("1"))).names_signer()
    assert not AllOf((Repository("a/b"), RefPattern("refs/tags/*"))).names_signer()
    assert not AnyOf((Identity(WORKFLOW), Repository("a/b"))).names_signer()


def test_pins_are_the_all_of_their_fields_with_the_namespace_rule() -> None:
    pins = Pins(repository="acme/search", workflow=".github/workflows/sign.yml",
                ref_pattern="refs/tags/v*", owner_id="11", repository_id="22")
    policy = pins.policy("io.github.acme/search")
    assert [type(p).__name__ for p in policy.policies] == [
        "Issuer", "NamespaceOwner", "Repository", "Workflow", "RefPattern", "OwnerId",
        "RepositoryId"]
    assert identity_problems(facts(), pins, server="io.github.acme/search") == []
    forked = facts(ref="refs/heads/evil", repository="mallory/search")
    problems = identity_problems(forked, pins, server="io.github.acme/search")
    # owner, repository, workflow (now another repository's) and ref: all named at once
    assert [p.split(" ")[0] for p in problems] == ["namespace", "repository", "signing", "ref"]


@pytest.mark.parametrize(("kwargs", "param"), [
    ({"workflow": "sign.yml@refs/heads/main"}, "workflow"),
    ({"ref_pattern": ""}, "ref_pattern"),
    ({"identity_regexp": "("}, "identity_regexp"),
])
def test_malformed_pins_are_refused_when_made(kwargs: dict[str, str], param: str) -> None:
    with pytest.raises(UsageError) as caught:
        Pins(**kwargs)
    assert caught.value.param == param


def test_a_composed_policy_verifies_a_real_envelope_like_its_pins(signed_set: SignedSet) -> None:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.verification import verify

    trust = Trust.from_trust_config(signed_set.trust_config)
    by_policy = verify(signed_set.rev2, trust=trust, pins=AllOf((
        Issuer(), Workflow(".github/workflows/sign.yml"), RefPattern("refs/**"))))
    assert by_policy.axis("identity").status == "pass", by_policy.to_text()
    assert "meets the policy" in by_policy.axis("identity").detail
    wrong = verify(signed_set.rev2, trust=trust, pins=AnyOf((
        Workflow(".github/workflows/a.yml"), Workflow(".github/workflows/b.yml"))))
    assert wrong.axis("identity").status == "fail"
    assert "none of the alternatives holds" in wrong.axis("identity").detail
    # The namespace rule holds whatever the policy: alice's workflow cannot sign mallory's.
    squat = verify(signed_set.squat, trust=trust, pins=Workflow(".github/workflows/sign.yml"))
    assert squat.axis("identity").status == "fail"
