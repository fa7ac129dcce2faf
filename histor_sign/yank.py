"""Yanking a revision: the publisher's signed withdrawal, and how a client reads it.

The public Sigstore instance revokes nothing, so a bad revision is withdrawn the way a
package index does it ("revoke artifacts, not keys"): the publisher signs a
:class:`~histor_sign.models.YankStatement` naming the revision, its manifest digest and a
reason, with the same keyless signing and the same workflow as its revisions, and publishes
it beside the revision as ``<n>.yank.envelope.json`` (never overwritten).

A yank is honoured only if it passes the identity rules of the revisions themselves: its
certificate meets the client's pins (repository, workflow file, refs, numeric ids) and
comes from the same publisher as the revision it withdraws (same numeric owner and
repository ids, same workflow file). Anything else — another identity, another
repository, a yank for another manifest — is *rejected*: it withdraws nothing, and the
reason it was rejected is reported. What a client does with an honoured yank (refuse the
revision, or follow to a later unyanked one) is :mod:`histor_sign.pins`'s rule.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from histor_sign._chain_store import (
    NotPublished,
    ReleaseLocation,
    is_published,
    publish_yank,
    reserve_chain,
)
from histor_sign._escape import printable
from histor_sign.errors import InputError, SigningError, VerificationFailed
from histor_sign.layout import ENVELOPE_NAME, chain_dir
from histor_sign.models import (
    SignedEnvelope,
    SignedYank,
    YankStatement,
    load_envelope,
    validate_yank_reason,
)

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.verification import VerificationReport
    from histor_sign.verification._certificate import CertificateFacts
    from histor_sign.verification.policy import PinsLike


@dataclass(frozen=True)
class YankCheck:
    """What the location says about one revision: ``yank`` is an honoured yank (None: not
    yanked), ``rejected`` why a published yank was not honoured, ``address`` where it was
    looked for."""

    address: str
    yank: SignedYank | None = None
    rejected: str | None = None


def _facts(envelope: SignedEnvelope | SignedYank) -> CertificateFacts:
    from histor_sign.verification import load_bundle_certificate
    from histor_sign.verification._certificate import certificate_facts

    return certificate_facts(load_bundle_certificate(envelope.bundle))


def yank_problems(
    yank: SignedYank, revision: SignedEnvelope, *, pins: PinsLike, trust: Trust
) -> list[str]:
    """Every reason ``yank`` does not withdraw ``revision`` (a verified envelope) for a
    client holding ``pins`` (empty: it does)."""
    from histor_sign.verification import continuity_problems, log_entry_of, verify_artifact_bundle

    statement = yank.statement
    for label, mine, theirs in (
        ("server", statement.server, revision.server),
        ("revision", statement.revision, revision.revision),
        ("manifestDigest", statement.manifest_digest, revision.statement.manifest_digest),
    ):
        if mine != theirs:
            return [f"it names {label} {printable(str(mine), 200)}, the revision has "
                    f"{printable(str(theirs), 200)}"]
    try:
        facts = verify_artifact_bundle(yank.signed_bytes(), yank.bundle,
                                       trusted_root=trust.trusted_root(), pins=pins,
                                       server=statement.server)
    except VerificationFailed as exc:
        return [str(exc)]
    problems: list[str] = []
    if log_entry_of(yank.bundle) != yank.transparency_log:
        problems.append("its transparencyLog differs from the bundle's log entry")
    if yank.identity not in facts.sans or len(facts.sans) != 1 or yank.issuer != facts.issuer:
        problems.append("its signer is not the certificate's identity")
    if statement.identity != yank.identity:
        problems.append("its statement identity differs from signer.identity")
    try:
        problems += continuity_problems(facts, _facts(revision))
    except VerificationFailed as exc:
        problems.append(str(exc))
    return problems


def read_yank(
    location: ReleaseLocation, revision: SignedEnvelope, *, pins: PinsLike, trust: Trust
) -> YankCheck:
    """Look for the yank of ``revision`` (verified by the caller) at ``location`` and judge
    it under ``pins``: honoured, rejected (with why) or absent."""
    address = location.yank(revision.revision)
    try:
        document = location.fetch_json(address)
    except NotPublished:
        return YankCheck(address)
    try:
        yank = SignedYank.from_json(document, address)
    except InputError as exc:
        return YankCheck(address, rejected=exc.message)
    problems = yank_problems(yank, revision, pins=pins, trust=trust)
    if problems:
        return YankCheck(address, rejected="; ".join(problems))
    return YankCheck(address, yank=yank)


def with_yank_axis(
    report: VerificationReport, *, pins: PinsLike, trust: Trust
) -> VerificationReport:
    """``report`` (of an envelope file) with a ``yank`` axis when a yank of its revision is
    published beside the file: failed when the yank is honoured under ``pins`` (the revision
    is withdrawn: the axis names the reason), passed with the reason it withdraws nothing
    when it is rejected. A report whose signature failed, or an envelope with no yank
    beside it, is returned as it is."""
    from dataclasses import replace

    from histor_sign.verification import FAIL, PASS, AxisResult

    if not report.ok or ReleaseLocation.parse(report.source).is_url:
        return report
    check = read_yank(ReleaseLocation.parse(report.source), report.envelope, pins=pins,
                      trust=trust)
    if check.yank is not None:
        axis = AxisResult("yank", FAIL, f"revision {check.yank.revision} is yanked by its "
                          f"publisher: {printable(check.yank.reason, 300)!r} ({check.address})")
    elif check.rejected is not None:
        axis = AxisResult("yank", PASS, f"the yank at {check.address} withdraws nothing: "
                          f"{check.rejected}")
    else:
        return report
    return replace(report, axes=(*report.axes, axis))


# ---------------------------------------------------------------------- publishing
@dataclass(frozen=True)
class YankOutcome:
    """A signed, verified and published yank."""

    yank: SignedYank
    path: Path


def _same_publisher_problems(signer: CertificateFacts, revision: CertificateFacts) -> list[str]:
    """The signer of a yank must be the revision's publisher: same numeric ids and workflow
    file (:func:`continuity_problems`), and a ref the default pin of that revision allows
    (any tag after a tag, else the same branch), so every client that accepted the
    revision also accepts its yank."""
    from histor_sign.verification import continuity_problems

    problems = continuity_problems(signer, revision)
    ref, signed_ref = signer.ref, revision.ref
    if signed_ref is not None:
        tag = signed_ref.startswith("refs/tags/")
        if (tag and not (ref or "").startswith("refs/tags/")) or (not tag and ref != signed_ref):
            problems.append(
                f"the revision was signed from {signed_ref}, the yank would be signed from "
                f"{ref or 'no ref'}; clients pinned to the revision's refs would reject it "
                "(run the yank from " + ("a tag" if tag else signed_ref) + ")"
            )
    return problems


def yank_revision(
    server: str,
    revision: int,
    reason: str,
    *,
    revisions: str | Path,
    trust: Trust,
    identity_token: str | None = None,
) -> YankOutcome:
    """Withdraw revision ``revision`` of ``server`` from the chain directory ``revisions``.

    The revision must be published there and verify; the signing identity (``identity_token``
    or ambient credentials) must be its publisher (:class:`InputError` before anything is
    signed otherwise); the fresh yank is verified against the revision as a client would
    before it is published. A revision already yanked is refused.
    """
    try:
        validate_yank_reason(reason, "`reason`")
    except InputError as exc:
        raise InputError(exc.message, param="reason") from None
    _require_chain(chain_dir(revisions, server), server, revision)
    # The chain is held from before the checks until the yank is published: a yank that
    # cannot be published (another yank or release at work, a read-only or full directory)
    # fails before it is signed, so no log entry exists for it.
    with reserve_chain(revisions, server) as chain:
        chain.reserve(_YANK_ROOM)
        return _yank_held(server, revision, reason, revisions=revisions, trust=trust,
                          identity_token=identity_token)


def _require_chain(directory: Path, server: str, revision: int) -> None:
    """The chain directory must exist (a yank never creates one); one that cannot be
    looked up (a name too long, a symlink loop) is bad input naming it."""
    try:
        os.stat(directory)
    except (FileNotFoundError, NotADirectoryError):
        raise InputError(f"revision {revision} of {printable(server)} is not published in "
                         f"{printable(str(directory))}", param="revision") from None
    except OSError as exc:
        raise InputError(f"cannot read the chain directory {printable(str(directory))}: "
                         f"{exc.strerror or type(exc).__name__}", param="revisions") from None


#: Room a yank and its attestation take in the chain directory, checked before signing.
_YANK_ROOM = 64 * 1024


def _yank_held(
    server: str, revision: int, reason: str, *, revisions: str | Path, trust: Trust,
    identity_token: str | None,
) -> YankOutcome:
    """:func:`yank_revision` with the chain directory held."""
    from histor_sign.signing import obtain_identity, predicted_facts, sign_documents
    from histor_sign.verification import log_entry_of, verify_artifact_bundle
    from histor_sign.verification.policy import Pins

    numbered = chain_dir(revisions, server) / ENVELOPE_NAME.format(n=revision)
    if not is_published(numbered):
        raise InputError(f"revision {revision} of {printable(server)} is not published in "
                         f"{numbered.parent}", param="revision")
    envelope = load_envelope(numbered)
    if envelope.server != server or envelope.revision != revision:
        raise InputError(f"{numbered} holds revision {envelope.revision} of "
                         f"{printable(envelope.server)}, not {revision} of {printable(server)}")
    location = ReleaseLocation.parse(str(numbered))
    if is_published(numbered.parent / Path(location.yank(revision)).name):
        raise InputError(f"revision {revision} of {printable(server)} is already yanked",
                         param="revision")
    try:
        revision_facts = verify_artifact_bundle(envelope.signed_bytes(), envelope.bundle,
                                                trusted_root=trust.trusted_root())
    except VerificationFailed as exc:
        raise InputError(f"{numbered}: does not verify, so it cannot be yanked: {exc}") from None
    who = obtain_identity(identity_token)
    problems = _same_publisher_problems(predicted_facts(who), revision_facts)
    if problems:
        raise InputError(f"the signing identity {printable(who.identity)} did not publish "
                         f"revision {revision}: {'; '.join(problems)}; nothing was signed")
    statement = YankStatement(server, revision, envelope.statement.manifest_digest,
                              who.identity, reason)
    data = statement.signed_bytes(issuer=who.issuer, identity=who.identity)
    bundle, (attestation,) = sign_documents(
        data, [yank_attestation(statement, issuer=who.issuer)], who=who, trust=trust)
    yank = SignedYank(statement, who.issuer, who.identity, bundle, log_entry_of(bundle))
    problems = yank_problems(yank, envelope, pins=Pins(issuer=who.issuer), trust=trust)
    if problems:
        raise SigningError(f"the fresh yank does not verify: {'; '.join(problems)}; "
                           "nothing was published")
    path = publish_yank(revisions, server, revision, yank.to_bytes(),
                        (json.dumps(attestation) + "\n").encode())
    return YankOutcome(yank, path)


#: The predicate of a yank's in-toto form: versioned; a new major version gets a new URI.
YANK_PREDICATE_TYPE = "https://histor-sign.dev/yank/v1"


def yank_attestation(statement: YankStatement, *, issuer: str) -> bytes:
    """The in-toto Statement of a yank (RFC 8785 bytes): the yanked revision's manifest as
    its subject (named as in the revision's attestation), the yank statement and its signer
    as the predicate — so verifiers of attestations (cosign, GitHub's) see the withdrawal
    of the manifest they verified."""
    from histor_sign.attestation import INTOTO_STATEMENT_TYPE, MANIFEST_SUBJECT
    from histor_sign.canonical import canonical_bytes

    return canonical_bytes({
        "_type": INTOTO_STATEMENT_TYPE,
        "subject": [{"name": MANIFEST_SUBJECT,
                     "digest": {"sha256": statement.manifest_digest.removeprefix("sha256:")}}],
        "predicateType": YANK_PREDICATE_TYPE,
        "predicate": {"yank": statement.to_json(),
                      "signer": {"issuer": issuer, "identity": statement.identity}},
    })
