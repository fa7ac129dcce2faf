"""Identity policies: what a signing certificate must say for a revision to be accepted.

A signature proves *who* signed; a policy says who that may be. Policies compose as
sigstore-python's do: each one checks one fact of the certificate (:class:`Issuer`,
:class:`Identity`, :class:`IdentityRegexp`, :class:`Repository`, :class:`Workflow`,
:class:`Ref`, :class:`RefPattern`, :class:`OwnerId`, :class:`RepositoryId`, and the
namespace rule :class:`NamespaceOwner`), and :class:`AllOf` / :class:`AnyOf` combine them.
Every policy answers with *every* way a certificate misses it (an empty list passes), so a
failed verification names all of them at once.

:class:`Pins` is the record the command line and most callers fill in (an exact identity, a
repository, a workflow file, a ref pattern, numeric ids); :meth:`Pins.policy` is the
:class:`AllOf` it stands for, with the server's namespace rule in it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from histor_sign._escape import printable
from histor_sign.errors import UsageError
from histor_sign.models import GITHUB_ACTIONS_ISSUER, namespace_owner
from histor_sign.verification._certificate import CertificateFacts, parse_workflow_identity

_WORKFLOW = re.compile(
    r"^(?:[A-Za-z0-9-]{1,39}/[A-Za-z0-9._-]{1,100}/)?\.github/workflows/[A-Za-z0-9._/-]+\.ya?ml$"
)


def validate_workflow(workflow: str, param: str = "workflow") -> str:
    """The one rule for a workflow pin (a pin file, ``trust add``, a :class:`Workflow`
    policy, ``monitor``, ``init``): a workflow file ``.github/workflows/sign.yml`` in the
    source repository, or ``OWNER/REPO/.github/workflows/sign.yml`` for a reusable
    workflow — a ``.yml``/``.yaml`` file as GitHub runs them, without ``@REF``."""
    if (not isinstance(workflow, str) or not _WORKFLOW.match(workflow)
            or "/../" in workflow or "//" in workflow):
        raise UsageError(
            f"`{param}` must be a workflow file path like .github/workflows/sign.yml (or "
            f"OWNER/REPO/.github/workflows/sign.yml), without @REF, got "
            f"{printable(str(workflow), 120)!r}",
            param=param,
        )
    return workflow


def validate_ref_pattern(pattern: str, param: str = "ref_pattern") -> str:
    """The one rule for a ref pin: a glob over full git refs (``refs/tags/v*``,
    ``refs/heads/main``)."""
    if (not isinstance(pattern, str) or not pattern.startswith("refs/") or len(pattern) > 255
            or not pattern.isprintable() or any(c.isspace() for c in pattern)):
        raise UsageError(
            f"`{param}` must be a glob over full git refs such as refs/tags/v* or "
            f"refs/heads/main, got {printable(str(pattern), 120)!r}", param=param,
        )
    return pattern


class IdentityPolicy(Protocol):
    """One requirement on a signing certificate."""

    def problems(self, facts: CertificateFacts) -> list[str]:
        """Every way ``facts`` miss this policy; empty when they meet it."""
        ...

    def names_signer(self) -> bool:
        """True if the policy alone ties a revision to one signer (an exact or matched
        identity, or a workflow file of a named repository), with no namespace to lean on."""
        ...


def ref_glob(pattern: str) -> re.Pattern[str]:
    """A ref glob as GitHub's branch and tag filters read it: ``*`` matches within one
    path segment, ``**`` across segments, ``?`` one character; the rest is literal and
    the whole ref must match."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def _sans(facts: CertificateFacts) -> str:
    return ", ".join(facts.sans) or "none"


@dataclass(frozen=True)
class Issuer:
    """The OIDC issuer that vouched for the signer (GitHub Actions by default)."""

    issuer: str = GITHUB_ACTIONS_ISSUER

    def problems(self, facts: CertificateFacts) -> list[str]:
        if facts.issuer != self.issuer:
            return [f"issuer is {facts.issuer!r}, expected {self.issuer!r}"]
        return []

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class Identity:
    """An exact signer identity (a SAN of the certificate), as cosign's
    ``--certificate-identity``: one workflow at one ref."""

    identity: str

    def problems(self, facts: CertificateFacts) -> list[str]:
        if self.identity not in facts.sans:
            return [f"certificate identity is {_sans(facts)}, expected {self.identity}"]
        return []

    def names_signer(self) -> bool:
        return True


@dataclass(frozen=True)
class IdentityRegexp:
    """A regular expression some SAN must match in full (cosign's
    ``--certificate-identity-regexp``)."""

    pattern: str

    def __post_init__(self) -> None:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise UsageError(
                f"`identity_regexp` is not a valid regular expression: {exc}",
                param="identity_regexp",
            ) from None

    def problems(self, facts: CertificateFacts) -> list[str]:
        if not any(re.fullmatch(self.pattern, san) for san in facts.sans):
            return [f"certificate identity is {_sans(facts)}, which does not match "
                    f"{self.pattern!r}"]
        return []

    def names_signer(self) -> bool:
        return True


@dataclass(frozen=True)
class NamespaceOwner:
    """The rule of the MCP registry's ``io.github.<owner>`` namespace: a revision of such a
    server is signed from GitHub Actions in a repository of ``<owner>``. Other namespaces
    have no owner a certificate can show, and pass (their pins must name the signer)."""

    server: str

    def problems(self, facts: CertificateFacts) -> list[str]:
        owner = namespace_owner(self.server)
        if owner is None:
            return []
        problems: list[str] = []
        if facts.issuer != GITHUB_ACTIONS_ISSUER:
            problems.append(
                f"{self.server} is in the io.github.{owner} namespace, so it must be signed "
                f"from GitHub Actions, but the issuer is {facts.issuer!r}"
            )
        owners = facts.owners()
        if not owners:
            problems.append("certificate names no source repository owner")
        wrong = sorted({o for o in owners if o.lower() != owner.lower()})
        if wrong:
            problems.append(
                f"namespace io.github.{owner} belongs to GitHub owner {owner!r}, but the "
                f"certificate's repository owner is {', '.join(map(repr, wrong))}"
            )
        return problems

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class Repository:
    """The certificate's source repository ``OWNER/REPO`` (case-insensitive)."""

    repository: str

    def problems(self, facts: CertificateFacts) -> list[str]:
        stated = [r for r in (facts.repository, facts.ext("5")) if r is not None]
        if not stated or any(r.lower() != self.repository.lower() for r in stated):
            return [f"repository is {facts.repository!r}, expected {self.repository!r}"]
        return []

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class Workflow:
    """The signing workflow file, whatever ref it ran for: ``.github/workflows/sign.yml``
    in the source repository, or ``OWNER/REPO/.github/workflows/sign.yml`` (a reusable
    workflow; repository compared case-insensitively, the path exactly)."""

    workflow: str

    def __post_init__(self) -> None:
        validate_workflow(self.workflow)

    def problems(self, facts: CertificateFacts) -> list[str]:
        if not self._matches(facts):
            return [f"signing workflow is {facts.workflow!r}, expected {self.workflow!r}"]
        return []

    def _matches(self, facts: CertificateFacts) -> bool:
        parts = parse_workflow_identity(facts.identity) if facts.identity else None
        if parts is None:
            return False
        repository, _, path = self.workflow.rpartition("/.github/workflows/")
        if not repository:
            return self.workflow == parts.path and facts.workflow == parts.path
        return (f".github/workflows/{path}" == parts.path
                and repository.lower() == parts.repository.lower())

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class RefPattern:
    """The git ref the workflow ran for matches a glob (``refs/tags/v*``; ``*`` within a
    segment, ``**`` across)."""

    pattern: str

    def __post_init__(self) -> None:
        validate_ref_pattern(self.pattern)

    def problems(self, facts: CertificateFacts) -> list[str]:
        if facts.ref is None or not ref_glob(self.pattern).fullmatch(facts.ref):
            return [f"ref is {facts.ref!r}, which does not match {self.pattern!r}"]
        return []

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class _Equals:
    value: str
    label: str = ""

    def _actual(self, facts: CertificateFacts) -> str | None:
        raise NotImplementedError

    def problems(self, facts: CertificateFacts) -> list[str]:
        actual = self._actual(facts)
        if actual != self.value:
            return [f"{self.label} is {actual!r}, expected {self.value!r}"]
        return []

    def names_signer(self) -> bool:
        return False


@dataclass(frozen=True)
class Ref(_Equals):
    """The exact git ref the workflow ran for (``refs/heads/main``)."""

    label: str = "ref"

    def _actual(self, facts: CertificateFacts) -> str | None:
        return facts.ref


@dataclass(frozen=True)
class OwnerId(_Equals):
    """The numeric GitHub owner id: survives renames and is never reused, unlike a login."""

    label: str = "owner id"

    def _actual(self, facts: CertificateFacts) -> str | None:
        return facts.owner_id


@dataclass(frozen=True)
class RepositoryId(_Equals):
    """The numeric GitHub repository id (rename-proof)."""

    label: str = "repository id"

    def _actual(self, facts: CertificateFacts) -> str | None:
        return facts.repository_id


@dataclass(frozen=True)
class AllOf:
    """Every policy holds; the problems of all of them are reported, in order."""

    policies: Sequence[IdentityPolicy]

    def problems(self, facts: CertificateFacts) -> list[str]:
        return [problem for policy in self.policies for problem in policy.problems(facts)]

    def names_signer(self) -> bool:
        kinds = {type(p) for p in self.policies}
        return (any(p.names_signer() for p in self.policies)
                or (Workflow in kinds and bool(kinds & {Repository, RepositoryId})))


@dataclass(frozen=True)
class AnyOf:
    """At least one policy holds (e.g. either of two release workflows)."""

    policies: Sequence[IdentityPolicy]

    def problems(self, facts: CertificateFacts) -> list[str]:
        every = [policy.problems(facts) for policy in self.policies]
        if not every or any(not problems for problems in every):
            return [] if every else ["no policy to meet"]
        return ["none of the alternatives holds: "
                + " | ".join("; ".join(problems) for problems in every)]

    def names_signer(self) -> bool:
        return bool(self.policies) and all(p.names_signer() for p in self.policies)


@dataclass(frozen=True)
class Pins:
    """What the verifier requires of the signing certificate, as one record.

    ``cert_identity`` is an exact identity (SAN) pin, e.g.
    ``https://github.com/O/R/.github/workflows/sign.yml@refs/heads/main``;
    ``identity_regexp`` a regular expression the SAN must match in full (like cosign's
    ``--certificate-identity-regexp``); ``issuer`` the OIDC issuer (GitHub Actions by
    default). ``repository`` (``OWNER/REPO``), ``ref``, ``ref_pattern`` (a glob such as
    ``refs/tags/v*``) and the numeric ``owner_id`` / ``repository_id`` pin the
    certificate's GitHub extensions; ``workflow`` pins the signing workflow file
    (``.github/workflows/sign.yml`` in the source repository, or
    ``OWNER/REPO/.github/workflows/sign.yml`` for a reusable one) whatever branch or tag
    it ran for. A server in ``io.github.<owner>`` is always tied to that owner; any other
    server needs ``cert_identity``, ``identity_regexp``, or ``workflow`` with
    ``repository`` / ``repository_id``. :meth:`policy` is the composed policy.
    """

    cert_identity: str | None = None
    issuer: str = GITHUB_ACTIONS_ISSUER
    repository: str | None = None
    ref: str | None = None
    owner_id: str | None = None
    repository_id: str | None = None
    workflow: str | None = None
    ref_pattern: str | None = None
    identity_regexp: str | None = None

    def __post_init__(self) -> None:
        # A malformed workflow, ref pattern or regexp is refused when the pins are made.
        if self.workflow is not None:
            Workflow(self.workflow)
        if self.ref_pattern is not None:
            RefPattern(self.ref_pattern)
        if self.identity_regexp is not None:
            IdentityRegexp(self.identity_regexp)

    def policy(self, server: str | None = None) -> AllOf:
        """The :class:`AllOf` these pins stand for; with ``server``, its namespace rule too
        (:class:`NamespaceOwner`), after the identity and before the GitHub facts."""
        parts: list[IdentityPolicy] = [Issuer(self.issuer)]
        if self.cert_identity is not None:
            parts.append(Identity(self.cert_identity))
        if self.identity_regexp is not None:
            parts.append(IdentityRegexp(self.identity_regexp))
        if server is not None:
            parts.append(NamespaceOwner(server))
        if self.repository is not None:
            parts.append(Repository(self.repository))
        if self.workflow is not None:
            parts.append(Workflow(self.workflow))
        if self.ref_pattern is not None:
            parts.append(RefPattern(self.ref_pattern))
        for kind, value in ((Ref, self.ref), (OwnerId, self.owner_id),
                            (RepositoryId, self.repository_id)):
            if value is not None:
                parts.append(kind(value))
        return AllOf(tuple(parts))

    def ties_to_signer(self) -> bool:
        """True if these pins name a signer without a namespace owner to lean on."""
        return self.policy().names_signer()

    def names_publisher(self) -> bool:
        """True if these pins say whose revision it is: an exact identity, a repository or
        a numeric id (the issuer, a ref or a workflow alone say which job, not whose)."""
        return any(v is not None for v in (
            self.cert_identity, self.repository, self.owner_id, self.repository_id))

    def summary(self, facts: CertificateFacts, server: str) -> str:
        """What a passing identity check established, in one line."""
        parts = [f"issuer {facts.issuer}"]
        if self.cert_identity:
            parts.append(f"identity pinned to {self.cert_identity}")
        elif self.identity_regexp:
            parts.append(f"identity {facts.identity} matches {self.identity_regexp!r}")
        elif self.workflow:
            parts.append(f"workflow {self.workflow} (any ref)")
        else:
            parts.append("identity not pinned (any workflow of the namespace owner)")
        owner = namespace_owner(server)
        if owner is not None:
            parts.append(f"owner {owner} matches")
        for label, value in (
            ("repository", self.repository), ("ref", self.ref),
            ("ref pattern", self.ref_pattern), ("owner id", self.owner_id),
            ("repository id", self.repository_id),
        ):
            if value is not None:
                parts.append(f"{label} {value}")
        return "; ".join(parts)


#: What verification takes as the identity requirement: the :class:`Pins` record, or any
#: composed policy (taken as given: add :class:`Issuer` to pin the issuer off GitHub).
PinsLike = Pins | IdentityPolicy


def server_policy(pins: PinsLike, server: str | None) -> IdentityPolicy:
    """The whole identity requirement for a revision of ``server``: the pins' policy with
    the server's namespace rule (:class:`NamespaceOwner`) in it."""
    if isinstance(pins, Pins):
        return pins.policy(server)
    return AllOf((pins,) if server is None else (pins, NamespaceOwner(server)))


def ties_to_signer(pins: PinsLike) -> bool:
    """The pins name a signer without a namespace owner to lean on."""
    return pins.ties_to_signer() if isinstance(pins, Pins) else pins.names_signer()


def summary(pins: PinsLike, facts: CertificateFacts, server: str) -> str:
    """What a passing identity check established, in one line."""
    if isinstance(pins, Pins):
        return pins.summary(facts, server)
    parts = [f"issuer {facts.issuer}", f"identity {facts.identity} meets the policy"]
    owner = namespace_owner(server)
    if owner is not None:
        parts.append(f"owner {owner} matches")
    return "; ".join(parts)


def identity_problems(
    facts: CertificateFacts, pins: PinsLike, *, server: str | None = None
) -> list[str]:
    """Every way the certificate misses the pins or the server's namespace (empty = ok)."""
    return server_policy(pins, server).problems(facts)
