"""Verification of a signed revision envelope, axis by axis.

Axes, each reported separately so a failure names what broke:

``well-formed``  strict JSON, required members, types (a failure here is bad input, exit 2)
``signature``    sigstore Verifier over the rebuilt signed bytes: certificate chain, SCT,
                 Rekor inclusion proof, signed checkpoint and SET, signed time
``identity``     issuer, exact or pattern identity pin, ``io.github.<owner>`` namespace
                 owner, optional repository / workflow / ref / numeric id pins
``log-entry``    ``transparencyLog`` equals the bundle's entry; ``signer`` equals the certificate
``chain``        given a previous envelope: same server, revision + 1, previousManifestDigest,
                 the previous envelope's own signature, the same pins, and the same
                 publisher (numeric owner and repository ids, workflow file)
``tools``        given the tools: catalog digests equal the signed ones

The Verifier runs with an accept-all policy and identity is decided here on the same,
chain-verified certificate, so a wrong identity and a broken signature are told apart.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._escape import printable
from histor_sign._sigstore_trust import Trust, _first_line, stale_root_hint
from histor_sign.errors import UsageError, VerificationFailed
from histor_sign.models import (
    GITHUB_ACTIONS_ISSUER,
    SignedEnvelope,
    TransparencyLogRef,
    load_envelope,
    namespace_owner,
)
from histor_sign.verification._certificate import (
    CertificateFacts,
    certificate_facts,
    parse_workflow_identity,
)
from histor_sign.verification.policy import (
    Identity,
    Pins,
    PinsLike,
    identity_problems,
    summary,
    ties_to_signer,
)

if TYPE_CHECKING:
    from cryptography.x509 import Certificate
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

    from histor_sign.catalog import ToolsLike
    from histor_sign.models import Tool

#: ``surface`` is an attestation's alone (the envelope signs tools only).
AXES = ("well-formed", "signature", "identity", "log-entry", "chain", "tools", "surface")


class AxisStatus(StrEnum):
    """The outcome of one verification axis."""

    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"


PASS, FAIL, SKIPPED = AxisStatus.PASS, AxisStatus.FAIL, AxisStatus.SKIPPED


# ---------------------------------------------------------------------- results
@dataclass(frozen=True)
class AxisResult:
    """One axis of a verification: its name, outcome and a human-readable reason."""

    axis: str
    status: AxisStatus
    detail: str

    def to_json(self) -> dict[str, str]:
        """This axis in the JSON verification report."""
        return {"axis": self.axis, "status": self.status.value, "detail": self.detail}


@dataclass(frozen=True)
class VerificationReport:
    """Outcome of :func:`verify`; ``ok`` is True only if no axis failed.

    ``envelope`` is the envelope that was verified, so the report can be handed on
    (e.g. to ``Guard.from_envelope`` or ``compare``) without re-reading it.
    """

    source: str
    envelope: SignedEnvelope
    trust: str
    axes: tuple[AxisResult, ...]

    @property
    def ok(self) -> bool:
        """True if no axis failed (skipped axes do not fail)."""
        return all(a.status is not FAIL for a in self.axes)

    @property
    def failed(self) -> list[AxisResult]:
        """The failed axes, in axis order."""
        return [a for a in self.axes if a.status is FAIL]

    def axis(self, name: str) -> AxisResult:
        """The result of the axis called ``name`` (one of :data:`AXES`)."""
        return next(a for a in self.axes if a.axis == name)

    def raise_for_failure(self) -> None:
        """Raise :class:`VerificationFailed` naming the first failed axis, if any."""
        if not self.ok:
            first = self.failed[0]
            message = f"{self.source}: {first.axis}: {first.detail}"
            named = tuple(p for p in ("trusted_root",) if f"`{p}`" in message)
            raise VerificationFailed(message, alternatives=named)

    def to_json(self) -> dict[str, Any]:
        """The JSON verification report (stable keys)."""
        env = self.envelope
        return {
            "verified": self.ok,
            "envelope": self.source,
            "server": env.server,
            "serverVersion": env.statement.server_version,
            "revision": env.revision,
            "manifestDigest": env.statement.manifest_digest,
            "signer": {"issuer": env.issuer, "identity": env.identity},
            "transparencyLog": env.transparency_log.to_json(),
            "trust": self.trust,
            "checks": [a.to_json() for a in self.axes],
        }

    def to_text(self) -> str:
        """The human report: a headline, the signer, then one line per axis."""
        env, p = self.envelope, printable
        head = "VERIFIED" if self.ok else "FAILED"
        # Every field is the envelope's (or its certificate's) text: escaped, so a tampered
        # envelope cannot draw a "VERIFIED" over its own FAILED lines.
        lines = [
            f"{head}: {p(env.server)} revision {env.revision} "
            f"({p(env.statement.server_version)})",
            f"  signer    {p(env.identity)}",
            f"  issuer    {p(env.issuer)}",
            f"  log index {env.transparency_log.log_index}",
            f"  trust     {p(self.trust)}",
        ]
        width = max(len(a) for a in AXES)
        lines += [f"  {a.status.value:<7} {a.axis:<{width}}  {p(a.detail)}" for a in self.axes]
        return "\n".join(lines)


# ---------------------------------------------------------------------- identity
class IdentityPinRequired(UsageError):
    """A server outside ``io.github.*`` has no namespace owner to tie the certificate to,
    so the signer must be pinned: an exact identity, an identity pattern, or a workflow
    file of a repository."""

    def __init__(self, server: str) -> None:
        self.server = server
        super().__init__(
            f"server {server!r} is outside io.github.*, so there is no namespace to tie the "
            "certificate to: pass `cert_identity` (as cosign's keyless verify requires), "
            "`identity_regexp`, or `workflow` with `repository`",
            param="cert_identity", alternatives=("identity_regexp", "workflow", "repository"),
        )


class SignerPinRequired(UsageError):
    """Verification with no pin naming the signer: any workflow of the namespace owner
    would pass. Pin a repository, a workflow, an identity or an identity pattern (cosign
    requires an identity too), or accept any workflow of the owner explicitly."""

    def __init__(self) -> None:
        super().__init__(
            "no signer pinned, so any workflow of the namespace owner would pass: pass "
            "`repository` (with `workflow`), `cert_identity` or `identity_regexp`, or accept "
            "any workflow of the owner explicitly with `any_workflow_of_owner`",
            param="repository",
            alternatives=("workflow", "cert_identity", "identity_regexp",
                          "any_workflow_of_owner"),
        )


def require_signer_pin(
    pins: PinsLike | None, *, any_workflow_of_owner: bool = False
) -> str | None:
    """The rule before a stand-alone verification: ``pins`` must name a repository
    (or its numeric id), a workflow, an exact identity or an identity pattern
    (a composed policy is taken as given). Without one, ``any_workflow_of_owner`` accepts
    any workflow of the namespace owner and the warning to show is returned; otherwise
    :class:`SignerPinRequired` is raised. None when the pins name the signer."""
    if pins is not None and (not isinstance(pins, Pins) or any(v is not None for v in (
            pins.repository, pins.repository_id, pins.workflow, pins.cert_identity,
            pins.identity_regexp))):
        return None
    if any_workflow_of_owner:
        return ("no signer pinned: ANY workflow of the namespace owner's GitHub account "
                "passes, including one in a repository you never meant to trust")
    raise SignerPinRequired()


def recommended_pins(envelope: SignedEnvelope) -> Pins | None:
    """The pins to recommend for a publisher's revisions: its source repository, its
    signing workflow (repository-qualified, so a reusable workflow works too) and a ref
    pattern the next tag also matches — never the exact identity, which names one tag and
    breaks on the next. None when the signer is not a GitHub workflow."""
    parts = parse_workflow_identity(envelope.identity)
    if parts is None:
        return None
    repository = parts.repository
    try:
        source = certificate_facts(load_bundle_certificate(envelope.bundle)).repository
    except Exception:  # the identity's repository is the fallback
        source = None
    if source:
        repository = source
    ref = parts.ref
    if ref.startswith("refs/tags/"):
        ref = "refs/tags/v*" if ref.startswith("refs/tags/v") else "refs/tags/*"
    return Pins(repository=repository, workflow=f"{parts.repository}/{parts.path}",
                ref_pattern=ref)


# ---------------------------------------------------------------------- signature core
class AcceptAnyIdentity:
    """Verifier policy that defers identity to :func:`identity_problems`."""

    def verify(self, cert: Certificate) -> None:
        return None


def _bundle_text(bundle: Mapping[str, Any] | str | bytes) -> str:
    if isinstance(bundle, bytes):
        return bundle.decode("utf-8", errors="replace")
    if isinstance(bundle, str):
        return bundle
    return json.dumps(bundle)


def load_bundle_certificate(bundle: Mapping[str, Any] | str | bytes) -> Certificate:
    """The signing certificate of a bundle, without verifying anything."""
    from sigstore.models import Bundle

    try:
        return Bundle.from_json(_bundle_text(bundle)).signing_certificate
    except Exception as exc:
        raise VerificationFailed(f"not a valid Sigstore bundle: {_first_line(exc)}") from None


_VERIFIERS: dict[int, tuple[TrustedRoot, Verifier]] = {}


def _verifier(trusted_root: TrustedRoot) -> Verifier:
    """sigstore's Verifier for ``trusted_root``, made once per root object (building its
    keyrings is most of a verification's own work); the root is held with it, so its id
    cannot be reused while the entry lives."""
    from sigstore.verify import Verifier

    entry = _VERIFIERS.get(id(trusted_root))
    if entry is None or entry[0] is not trusted_root:
        if len(_VERIFIERS) >= 8:
            _VERIFIERS.pop(next(iter(_VERIFIERS)))
        entry = (trusted_root, Verifier(trusted_root=trusted_root))
        _VERIFIERS[id(trusted_root)] = entry
    return entry[1]


def verify_artifact_bundle(
    artifact: bytes,
    bundle: Mapping[str, Any] | str | bytes,
    *,
    trusted_root: TrustedRoot,
    pins: PinsLike | None = None,
    server: str | None = None,
) -> CertificateFacts:
    """Run the sigstore Verifier on ``artifact`` + ``bundle``; then, if ``pins`` are given,
    the identity checks. Raises :class:`VerificationFailed` naming the axis."""
    from sigstore.models import Bundle

    try:
        parsed = Bundle.from_json(_bundle_text(bundle))
    except Exception as exc:
        raise VerificationFailed(
            f"signature: not a valid Sigstore bundle: {_first_line(exc)}"
        ) from None
    try:
        _verifier(trusted_root).verify_artifact(artifact, parsed, AcceptAnyIdentity())
    except Exception as exc:  # VerificationError and anything a hostile bundle provokes
        message = _first_line(exc)
        if "certificate chain" in message:
            message += (
                " (the certificate was not issued by a CA in this trust root: signed with "
                "another Sigstore instance? check which trust root is used)"
            )
        raise VerificationFailed(f"signature: {message}") from None
    facts = certificate_facts(parsed.signing_certificate)
    if pins is not None:
        problems = identity_problems(facts, pins, server=server)
        if problems:
            raise VerificationFailed(f"identity: {'; '.join(problems)}")
    return facts


def log_entry_of(bundle: Mapping[str, Any]) -> TransparencyLogRef:
    """The ``transparencyLog`` record of a bundle's (single) Rekor entry."""
    try:
        entries = bundle["verificationMaterial"]["tlogEntries"]
        if not isinstance(entries, list) or len(entries) != 1:
            raise ValueError("expected exactly one tlog entry")
        entry = entries[0]
        log_id = base64.b64decode(entry["logId"]["keyId"], validate=True).hex()
        log_index = int(entry["logIndex"])
        raw_time = entry.get("integratedTime")
        integrated = int(raw_time) if raw_time not in (None, "", "0", 0) else None
    except (KeyError, TypeError, ValueError, binascii.Error) as exc:
        raise VerificationFailed(f"bundle has no readable log entry ({exc})") from None
    return TransparencyLogRef(log_id, log_index, integrated)


def recheck_identity(
    env: SignedEnvelope, pins: PinsLike, further: Sequence[Mapping[str, Any]] = (),
) -> list[str]:
    """The identity and signer checks of :func:`verify` alone, on the bundle's certificate
    read without sigstore: what a recorded verification (the verified-revision cache) must
    still pass on every use, so a forged record cannot stand in for the pins. ``further``:
    an attestation's bundles after the first, each held to the whole policy and to one
    signer across parts, as :func:`histor_sign.attestation.verify_attestation` holds them.
    Every problem, or an empty list."""
    facts = _unverified_facts(env.bundle)
    parts = [_unverified_facts(bundle) for bundle in further]
    if facts is None or None in parts:
        return ["no readable signing certificate in the bundle"]
    signers = [f for f in parts if f is not None]
    problems = [a.detail for a in (_identity_axis(env, facts, pins, signers),
                                   _log_axis(env, facts)) if a.status is FAIL]
    if len({(f.issuer, tuple(f.sans)) for f in (facts, *signers)}) > 1:
        problems.append("the parts were signed by different identities")
    return problems


def _unverified_facts(bundle: Mapping[str, Any]) -> CertificateFacts | None:
    """Step: the facts of a bundle's signing certificate, read (not verified) without
    sigstore; None when it has none readable."""
    from cryptography import x509

    try:
        raw = base64.b64decode(_certificate_member(bundle)["rawBytes"], validate=True)
        return certificate_facts(x509.load_der_x509_certificate(raw))
    except Exception:  # any malformed bundle: no certificate to vouch for anything
        return None


def _certificate_member(bundle: Any) -> Any:
    """The bundle's signing-certificate member as written (``verificationMaterial.
    certificate``, or the first of ``x509CertificateChain.certificates`` in older
    bundles); a malformed bundle raises (the caller reads any failure as no certificate)."""
    material = bundle["verificationMaterial"]
    if "certificate" in material:
        return material["certificate"]
    return material["x509CertificateChain"]["certificates"][0]


# ---------------------------------------------------------------------- envelope axes
def _signature_axis(
    env: SignedEnvelope, trusted_root: TrustedRoot
) -> tuple[AxisResult, CertificateFacts | None]:
    try:
        facts = verify_artifact_bundle(env.signed_bytes(), env.bundle, trusted_root=trusted_root)
    except VerificationFailed as exc:
        detail = str(exc).removeprefix("signature: ")
        try:
            facts = certificate_facts(load_bundle_certificate(env.bundle))
        except VerificationFailed:
            facts = None
        return AxisResult("signature", FAIL, detail), facts
    return AxisResult(
        "signature", PASS,
        "certificate chain, SCT, Rekor inclusion proof, checkpoint and signed time verified",
    ), facts


def _identity_axis(
    env: SignedEnvelope, facts: CertificateFacts | None, pins: PinsLike,
    further: Sequence[CertificateFacts] = (),
) -> AxisResult:
    """The signer under the pins; ``further`` certificates (an attestation's parts after
    the first) must meet the whole policy too, each named by its part number."""
    if facts is None:
        return AxisResult("identity", FAIL, "no readable signing certificate in the bundle")
    problems = identity_problems(facts, pins, server=env.server)
    for number, more in enumerate(further, start=2):
        problems += [f"part {number}: {p}"
                     for p in identity_problems(more, pins, server=env.server)]
    return judged("identity", problems, summary(pins, facts, env.server))


def judged(axis: str, problems: list[str], passed: str) -> AxisResult:
    """FAIL with every problem named, or PASS with what was established."""
    if problems:
        return AxisResult(axis, FAIL, "; ".join(problems))
    return AxisResult(axis, PASS, passed)


def _log_axis(env: SignedEnvelope, facts: CertificateFacts | None) -> AxisResult:
    problems: list[str] = []
    try:
        logged = log_entry_of(env.bundle)
    except VerificationFailed as exc:
        return AxisResult("log-entry", FAIL, str(exc))
    ours = env.transparency_log
    for label, mine, theirs in (
        ("logId", ours.log_id, logged.log_id),
        ("logIndex", ours.log_index, logged.log_index),
        ("integratedTime", ours.integrated_time, logged.integrated_time),
    ):
        if mine != theirs:
            problems.append(f"transparencyLog.{label} is {mine!r} but the bundle says {theirs!r}")
    if facts is None:
        problems.append("no readable signing certificate to compare signer with")
    else:
        if env.identity not in facts.sans or len(facts.sans) != 1:
            problems.append(
                f"signer.identity is {env.identity!r} but the certificate says "
                f"{', '.join(facts.sans) or 'nothing'}"
            )
        if env.issuer != facts.issuer:
            problems.append(
                f"signer.issuer is {env.issuer!r} but the certificate says {facts.issuer!r}"
            )
    if env.statement.identity != env.identity:
        problems.append(
            f"statement identity {env.statement.identity!r} differs from signer.identity"
        )
    return judged(
        "log-entry", problems,
        f"log index {ours.log_index} and signer match the bundle and certificate",
    )


def _chain_axis(
    env: SignedEnvelope,
    facts: CertificateFacts | None,
    previous: SignedEnvelope | None,
    previous_source: str,
    trusted_root: TrustedRoot,
    pins: PinsLike,
) -> AxisResult:
    if previous is None:
        return AxisResult("chain", SKIPPED, "no previous envelope given")
    problems = _chain_link_problems(env, previous)
    if not problems:
        problems = _previous_signer_problems(env, facts, previous, trusted_root, pins)
    return judged(
        "chain", problems,
        f"follows revision {previous.revision} ({previous_source}), whose signature "
        "verifies under the same pins and publisher",
    )


def _previous_signer_problems(
    env: SignedEnvelope,
    facts: CertificateFacts | None,
    previous: SignedEnvelope,
    trusted_root: TrustedRoot,
    pins: PinsLike,
) -> list[str]:
    """A chain link is only worth something if the previous revision is genuine too.

    Its signature must verify against the same trust root, its signer must meet the same
    pins, and it must come from the same publisher (:func:`continuity_problems`).
    """
    try:
        previous_facts = verify_artifact_bundle(
            previous.signed_bytes(), previous.bundle, trusted_root=trusted_root
        )
    except VerificationFailed as exc:
        return [f"the previous envelope's signature does not verify: {exc}"]
    problems = [
        f"previous envelope: {p}"
        for p in identity_problems(previous_facts, pins, server=env.server)
    ]
    exact = pins.cert_identity if isinstance(pins, Pins) else (
        pins.identity if isinstance(pins, Identity) else None)
    if problems and exact is not None:
        problems.append(
            "an exact identity pin names one ref; pin the repository and workflow file to "
            "verify a chain across tags"
        )
    if previous.identity not in previous_facts.sans or previous.issuer != previous_facts.issuer:
        problems.append("previous envelope: its signer is not the certificate's identity")
    if facts is None:
        problems.append("no readable signing certificate to compare the publisher with")
    else:
        problems += continuity_problems(facts, previous_facts)
    return problems


def continuity_problems(current: CertificateFacts, previous: CertificateFacts) -> list[str]:
    """Every way two certificates fail to come from the same publisher (empty = same).

    GitHub Actions: the same numeric owner id and repository id (Fulcio extensions .17
    and .15, which survive renames and are never reused, unlike logins) and the same
    workflow file; the ref may differ (a tag-to-tag chain). Other issuers: the same
    issuer and the same identity.
    """
    if current.issuer != previous.issuer:
        return [f"previous revision was signed via issuer {previous.issuer!r}, this one via "
                f"{current.issuer!r}"]
    if current.issuer != GITHUB_ACTIONS_ISSUER:
        if current.sans != previous.sans:
            return [f"previous revision was signed by {', '.join(previous.sans) or 'nobody'}, "
                    f"this one by {', '.join(current.sans) or 'nobody'}"]
        return []
    problems = _numeric_id_problems(current, previous)
    if current.workflow is None or current.workflow != previous.workflow:
        problems.append(
            f"previous revision was signed by workflow {previous.workflow!r}, this one by "
            f"{current.workflow!r}"
        )
    return problems


def _numeric_id_problems(current: CertificateFacts, previous: CertificateFacts) -> list[str]:
    """Step (GitHub Actions): both certificates state the same numeric owner and
    repository ids."""
    problems: list[str] = []
    for label, now, then in (
        ("owner id", current.owner_id, previous.owner_id),
        ("repository id", current.repository_id, previous.repository_id),
    ):
        if now is None or then is None:
            problems.append(f"a certificate of the chain states no numeric {label}")
        elif now != then:
            problems.append(
                f"previous revision was signed from {label} {then}, this one from {now} "
                "(another account or repository, even under the same name)"
            )
    return problems


def _chain_link_problems(env: SignedEnvelope, previous: SignedEnvelope) -> list[str]:
    problems: list[str] = []
    if previous.server != env.server:
        problems.append(f"previous revision is for {previous.server!r}, not {env.server!r}")
    if env.revision != previous.revision + 1:
        problems.append(
            f"revision {env.revision} does not follow previous revision {previous.revision}"
        )
    if env.statement.previous_manifest_digest != previous.statement.manifest_digest:
        problems.append(
            "previousManifestDigest is "
            f"{env.statement.previous_manifest_digest}, previous manifestDigest is "
            f"{previous.statement.manifest_digest}"
        )
    return problems


def _tools_axis(env: SignedEnvelope, tools: list[Tool] | None, tools_source: str) -> AxisResult:
    if tools is None:
        return AxisResult("tools", SKIPPED, "no tools given")
    from histor_sign.drift import ChangeKind, diff_digests
    from histor_sign.revision import digests

    manifest, per_tool = digests(tools)
    signed = env.statement
    changes = diff_digests(signed.tool_digests, per_tool)
    problems = [
        f"{kind.value}: {', '.join(c.name for c in changes if c.change is kind)}"
        for kind in ChangeKind
        if any(c.change is kind for c in changes)
    ]
    if manifest != signed.manifest_digest and not problems:
        problems.append(f"manifest digest is {manifest}, signed {signed.manifest_digest}")
    if problems:
        return AxisResult("tools", FAIL, f"{tools_source} differs from the signed tools: "
                          + "; ".join(problems))
    return AxisResult("tools", PASS, f"{len(per_tool)} tool digests match {tools_source}")


def verify(
    envelope: SignedEnvelope | str | Path,
    *,
    pins: PinsLike | None = None,
    trust: Trust | None = None,
    previous: SignedEnvelope | str | Path | None = None,
    tools: ToolsLike | str | Path | None = None,
    offline: bool = False,
    source: str | None = None,
    previous_source: str | None = None,
    tools_source: str | None = None,
) -> VerificationReport:
    """Verify a signed revision envelope on every axis and report each one.

    ``envelope``/``previous`` are :class:`SignedEnvelope` objects or paths; ``tools`` is
    anything :func:`~histor_sign.catalog.as_tools` accepts, or a catalog path. ``trust``
    defaults to production; ``offline`` verifies production/staging with the vendored
    trusted root instead of a TUF refresh. ``source``, ``previous_source`` and
    ``tools_source`` name the inputs in the report.

    Bad input (unreadable/malformed envelope, previous or catalog; bad trust files; a
    server outside ``io.github.*`` whose pins name no signer) raises an exit-2
    :class:`~histor_sign.errors.HistorError`; failed checks are reported, not raised —
    call :meth:`VerificationReport.raise_for_failure` to turn them into exit 1.
    """
    if isinstance(envelope, SignedEnvelope):
        env, source = envelope, source or "<envelope>"
    else:
        env, source = load_envelope(envelope), source or str(envelope)
    inputs = prepare_inputs(env.server, pins=pins, trust=trust, offline=offline,
                            previous=previous, previous_source=previous_source,
                            tools=tools, tools_source=tools_source)
    return run_axes(
        env, inputs, source=source,
        well_formed=AxisResult("well-formed", PASS, "strict JSON; all members present and typed"),
        signature=lambda trusted_root: _signature_axis(env, trusted_root),
    )


def run_axes(
    env: SignedEnvelope,
    inputs: Inputs,
    *,
    source: str,
    well_formed: AxisResult,
    signature: Callable[[TrustedRoot], tuple[AxisResult, CertificateFacts | None]],
    tools: AxisResult | None = None,
    extra: tuple[AxisResult, ...] = (),
    further_signers: Callable[[], Sequence[CertificateFacts]] = tuple,
) -> VerificationReport:
    """The axes every signed revision document shares, in one order: well-formed,
    ``signature`` (the document's own check, given the trusted root; it returns the signing
    certificate's facts, verified or not), identity under the pins, the log entry, the chain
    to ``previous``, the tools (``tools``, or the statement's digests against the given
    tools), then ``extra``. An identity or log check passed on a certificate whose signature
    failed says so: nothing vouches for that certificate. ``further_signers`` (read after
    ``signature``) are more certificates of the same document that must meet the whole
    identity policy too (an attestation's parts after the first).
    """
    pins, trust = inputs.pins, inputs.trust
    trusted_root = trust.trusted_root()
    checked, facts = signature(trusted_root)
    if checked.status == FAIL and (hint := stale_root_hint(trust, checked.detail)):
        checked = AxisResult("signature", FAIL, f"{checked.detail}; {hint}")
    identity = _identity_axis(env, facts, pins, further_signers())
    log = _log_axis(env, facts)
    if checked.status == FAIL:  # the certificate they looked at is not vouched for
        identity, log = (
            AxisResult(a.axis, a.status, f"{a.detail} (certificate unverified)")
            if a.status == PASS else a
            for a in (identity, log)
        )
    axes = (
        well_formed,
        checked,
        identity,
        log,
        _chain_axis(env, facts, inputs.previous, inputs.previous_source, trusted_root, pins),
        tools if tools is not None else _tools_axis(env, inputs.tools, inputs.tools_source),
        *extra,
    )
    return VerificationReport(source=source, envelope=env, trust=trust.describe(), axes=axes)


@dataclass(frozen=True)
class Inputs:
    """What a verification checks against, loaded and checked before any signature work."""

    pins: PinsLike
    trust: Trust
    previous: SignedEnvelope | None
    previous_source: str
    tools: list[Tool] | None
    tools_source: str
    #: ``tools`` as given or read: a fetch snapshot stays a Snapshot, whose server surface
    #: the attestation's ``surface`` axis recomputes.
    tools_document: object


def prepare_inputs(
    server: str,
    *,
    pins: PinsLike | None,
    trust: Trust | None,
    offline: bool,
    previous: SignedEnvelope | str | Path | None,
    previous_source: str | None,
    tools: ToolsLike | str | Path | None,
    tools_source: str | None,
) -> Inputs:
    """The shared input preparation of :func:`verify` and
    :func:`~histor_sign.attestation.verify_attestation` for a document naming ``server``.

    Trust defaults to production (the vendored root when ``offline``); a server outside
    ``io.github.*`` needs pins that name the signer (:class:`IdentityPinRequired`, before
    anything is loaded or fetched); ``previous`` and ``tools`` paths are loaded here, so bad
    input raises before any network or signature work.
    """
    pins = pins or Pins()
    trust = trust or Trust.production(offline=offline)
    if offline:
        trust = trust.with_offline()
    if namespace_owner(server) is None and not ties_to_signer(pins):
        raise IdentityPinRequired(server)
    prev_env, previous_source = _previous_input(previous, previous_source)
    tools, tool_list, tools_source = _tools_input(tools, tools_source)
    return Inputs(pins, trust, prev_env, previous_source, tool_list,
                   tools_source or "the catalog", tools)


def _previous_input(
    previous: SignedEnvelope | str | Path | None, previous_source: str | None,
) -> tuple[SignedEnvelope | None, str]:
    """Step: the previous envelope given (a path is loaded) and where it comes from."""
    if previous is None or isinstance(previous, SignedEnvelope):
        return previous, previous_source or "previous envelope"
    return load_envelope(previous), previous_source or str(previous)


def _tools_input(
    tools: ToolsLike | str | Path | None, tools_source: str | None,
) -> tuple[ToolsLike | None, list[Tool] | None, str | None]:
    """Step: the tools given (a path is read as a snapshot or catalog), their tool list
    and where they come from."""
    from histor_sign.catalog import as_tools

    tool_list: list[Tool] | None = None
    if isinstance(tools, str | Path):
        from histor_sign.canonical import read_json_file
        from histor_sign.catalog import snapshot_or_catalog

        tools_source = tools_source or str(tools)
        tools = snapshot_or_catalog(read_json_file(str(tools)), str(tools))
    if tools is not None:
        tool_list = as_tools(tools)
    return tools, tool_list, tools_source
