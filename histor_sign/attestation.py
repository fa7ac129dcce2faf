"""The in-toto attestation of a revision: the form the rest of the supply chain consumes.

A revision is signed twice by the same keyless identity:

* the HISTOR envelope's ``hashedrekord`` bundle over the revision statement's canonical
  bytes (``X.statement.json`` + ``X.sigstore.json``), which histor-sign's own ``verify``,
  ``check`` and ``guard`` read; and
* this attestation, ``X.intoto.sigstore.json``: a Sigstore bundle v0.3 whose DSSE envelope
  (``application/vnd.in-toto+json``) holds an in-toto Statement v1. Its subjects are the
  manifest and each tool, named ``manifest`` and ``tool:<name>``, each with the SHA-256 (hex)
  of the RFC 8785 bytes histor-sign digests — so any consumer can recompute them — plus
  the artifacts the publisher bound to the revision (``release --artifact``: npm tarballs,
  Python distributions, OCI images; named by package URL, ``pkg:…``, see
  :mod:`histor_sign.artifacts`) — and its
  predicate (:data:`ATTESTATION_PREDICATE_TYPE`) carries the revision statement without its
  tool digests (those are the subjects), the signer, the canonicalization, the capture context and,
  optionally, ``surface`` digests of the rest of what a server shows a model.

More than :data:`MAX_SUBJECTS` subjects (GitHub's attest action's cap) are split into parts:
every part repeats the manifest subject, the artifact subjects and the predicate (with
``part.index``), so each part verifies any artifact on its own; part 1 is
``X.intoto.sigstore.json`` and part *k* is ``X.intoto.k.sigstore.json``.

What a verified attestation proves: the certificate's identity signed exactly these digests
for this revision statement. It says nothing about what the tools do.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign.canonical import JsonValue, canonical_bytes, parse_json, read_json_file
from histor_sign.errors import InputError, VerificationFailed
from histor_sign.layout import MAX_PARTS, MAX_SUBJECTS, part_addresses
from histor_sign.models import (
    ARTIFACT_SUBJECT_PREFIX,
    NOT_SERVED,
    STATEMENT_TYPE,
    SURFACE_LISTS,
    ArtifactSubject,
    SignedEnvelope,
    Statement,
    SurfaceDigests,
    not_served_lists,
)

if TYPE_CHECKING:
    from sigstore.models import TrustedRoot

    from histor_sign._sigstore_trust import Trust
    from histor_sign.catalog import ToolsLike
    from histor_sign.verification import AxisResult, VerificationReport
    from histor_sign.verification._certificate import CertificateFacts
    from histor_sign.verification.policy import PinsLike

#: histor-sign's predicate type: versioned; a new major version gets a new URI.
ATTESTATION_PREDICATE_TYPE = "https://histor-sign.dev/revision/v1"
INTOTO_STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
INTOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"
MANIFEST_SUBJECT = "manifest"
TOOL_SUBJECT_PREFIX = "tool:"
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_PREDICATE_KEYS = ("revision", "signer", "canonicalization", "capture", "part")
_REVISION_KEYS = (
    "type", "server", "serverVersion", "revision", "identity", "manifestDigest",
    "previousManifestDigest", "toolCount",
)


def _hex(digest: str) -> str:
    return digest.removeprefix("sha256:")


def public_capture(capture: Mapping[str, Any], *, observed: bool) -> dict[str, Any]:
    """A snapshot's capture context as the attestation (a public log entry) carries it.

    ``observedBySigner`` says whether the signing process fetched the server itself: when
    it signs a snapshot another job made (the two-job release, ``sign --snapshot``) the
    target, ``serverInfo`` and ``fetchedAt`` are that job's claims, which the signer could
    not check. A stdio command is reduced to its program's name and its argument count:
    local paths and argument values (which may carry keys) stay out of the log.
    """
    out = dict(capture)
    target = out.get("target")
    if isinstance(target, Mapping) and isinstance(target.get("command"), list):
        command = target["command"]
        program = str(command[0]).replace("\\", "/").rsplit("/", 1)[-1] if command else ""
        out["target"] = {**target, "command": [program] if program else [],
                         "arguments": max(len(command) - 1, 0)}
    out["observedBySigner"] = observed
    return out


def build_attestation(
    statement: Statement,
    *,
    issuer: str,
    identity: str,
    capture: Mapping[str, Any] | None = None,
    surface: Mapping[str, Any] | None = None,
    artifacts: Sequence[ArtifactSubject] = (),
) -> list[bytes]:
    """The in-toto Statement(s) of a revision, as RFC 8785 bytes (one per part).

    ``capture`` is the capture context as the predicate carries it (see
    :func:`public_capture`; None for a plain catalog);
    ``surface`` optional digests of instructions, prompts and resource templates (a JSON
    object, carried as given); ``artifacts`` the published artifacts bound to the revision.
    Each part holds the manifest subject, every artifact subject (in the order given) and
    up to ``MAX_SUBJECTS - 1 - len(artifacts)`` tool subjects, sorted by tool name. Without
    artifacts the bytes are exactly those of earlier versions.
    """
    revision = {k: v for k, v in statement.to_json().items() if k != "toolDigests"}
    revision["toolCount"] = len(statement.tool_digests)
    tools = sorted(statement.tool_digests.items())
    per_part = MAX_SUBJECTS - 1 - len(artifacts)
    if per_part < 1:
        raise InputError(f"{len(artifacts)} artifacts leave no room for tool subjects")
    bound = [a.to_json() for a in artifacts]
    chunks = [tools[i : i + per_part] for i in range(0, len(tools), per_part)] or [[]]
    manifest = {"name": MANIFEST_SUBJECT, "digest": {"sha256": _hex(statement.manifest_digest)}}
    parts: list[bytes] = []
    for index, chunk in enumerate(chunks, start=1):
        predicate: dict[str, Any] = {
            "revision": revision,
            "signer": {"issuer": issuer, "identity": identity},
            "canonicalization": "rfc8785",
            "capture": dict(capture) if capture is not None else None,
            "part": {"index": index, "count": len(chunks)},
        }
        if surface is not None:
            predicate["surface"] = dict(surface)
        parts.append(canonical_bytes(_part_document([manifest, *bound], chunk, predicate)))
    return parts


def _part_document(
    subjects: list[dict[str, Any]], chunk: list[tuple[str, str]], predicate: dict[str, Any],
) -> dict[str, Any]:
    """Step: one part's in-toto Statement: the given subjects, then its tool subjects."""
    return {
        "_type": INTOTO_STATEMENT_TYPE,
        "subject": subjects + [
            {"name": TOOL_SUBJECT_PREFIX + name, "digest": {"sha256": _hex(digest)}}
            for name, digest in chunk
        ],
        "predicateType": ATTESTATION_PREDICATE_TYPE,
        "predicate": predicate,
    }


# ---------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Attestation:
    """A parsed (not yet verified) attestation: the revision statement it attests, rebuilt
    from the predicate and the tool subjects, and the bundle of each part."""

    statement: Statement
    issuer: str
    identity: str
    capture: Mapping[str, Any] | None
    surface: Mapping[str, Any] | None
    bundles: tuple[Mapping[str, Any], ...]
    #: The published artifacts the publisher bound to this revision (every part names them).
    artifacts: tuple[ArtifactSubject, ...] = ()

    def as_envelope(self) -> SignedEnvelope:
        """The statement and signer in envelope form, so the envelope's identity, log-entry
        and chain checks apply unchanged (the bundle is part 1's)."""
        from histor_sign.verification import log_entry_of

        return SignedEnvelope(
            statement=self.statement, issuer=self.issuer, identity=self.identity,
            bundle=self.bundles[0], transparency_log=log_entry_of(self.bundles[0]),
        )


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a JSON object")
    return value


def dsse_payload(bundle: Mapping[str, Any], source: str) -> tuple[str, bytes]:
    """The DSSE envelope's payload type and payload bytes (unverified)."""
    envelope = bundle.get("dsseEnvelope")
    if not isinstance(envelope, dict):
        raise InputError(f"{source}: not a DSSE attestation bundle (no dsseEnvelope)")
    payload_type, payload = envelope.get("payloadType"), envelope.get("payload")
    if not isinstance(payload_type, str) or not isinstance(payload, str):
        raise InputError(f"{source}: dsseEnvelope needs string payloadType and payload")
    try:
        return payload_type, base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise InputError(f"{source}: dsseEnvelope.payload is not base64") from None


def _parse_part(
    bundle: Mapping[str, Any], source: str
) -> tuple[dict[str, Any], list[tuple[str, str, dict[str, Any]]]]:
    """(predicate, [(subject name, sha256 hex, digest)]) of one part; wrong types are a
    failed check."""
    payload_type, payload = dsse_payload(bundle, source)
    if payload_type != INTOTO_PAYLOAD_TYPE:
        raise VerificationFailed(
            f"{source}: payload type is {payload_type!r}, expected {INTOTO_PAYLOAD_TYPE!r}"
        )
    doc = _object(parse_json(payload, f"{source} (in-toto statement)"), f"{source}: statement")
    if doc.get("_type") != INTOTO_STATEMENT_TYPE:
        raise VerificationFailed(f"{source}: not an in-toto Statement v1")
    if doc.get("predicateType") != ATTESTATION_PREDICATE_TYPE:
        raise VerificationFailed(
            f"{source}: predicate type is {doc.get('predicateType')!r}, "
            f"expected {ATTESTATION_PREDICATE_TYPE!r}"
        )
    subjects = doc.get("subject")
    if not isinstance(subjects, list) or not subjects:
        raise InputError(f"{source}: statement needs a non-empty subject list")
    pairs: list[tuple[str, str, dict[str, Any]]] = []
    for subject in subjects:
        item = _object(subject, f"{source}: subject")
        name, digest = item.get("name"), _object(item.get("digest"), f"{source}: subject digest")
        hex_digest = digest.get("sha256")
        if not isinstance(name, str) or not isinstance(hex_digest, str):
            raise InputError(f"{source}: every subject needs a name and a sha256 digest")
        pairs.append((name, hex_digest, digest))
    return _object(doc.get("predicate"), f"{source}: predicate"), pairs


def parse_attestation(bundles: Sequence[Mapping[str, Any]], source: str) -> Attestation:
    """Rebuild the attested statement from every part (strict: parts must agree)."""
    predicates: list[dict[str, Any]] = []
    tools: dict[str, str] = {}
    manifests: set[str] = set()
    artifacts: list[tuple[ArtifactSubject, ...]] = []
    for number, bundle in enumerate(bundles, start=1):
        where = source if number == 1 else f"{source} part {number}"
        predicate, pairs = _parse_part(bundle, where)
        predicates.append(predicate)
        artifacts.append(_artifact_subjects(pairs, where))
        _sort_subjects(pairs, where, tools, manifests)
    if any(part != artifacts[0] for part in artifacts[1:]):
        raise VerificationFailed(f"{source}: the parts name different artifacts")
    _check_parts_agree(predicates, len(bundles), source)
    first = predicates[0]
    revision = _object(first["revision"], f"{source}: predicate.revision")
    signer = _object(first["signer"], f"{source}: predicate.signer")
    statement = _attested_statement(revision, tools, manifests, source)
    issuer, identity = signer.get("issuer"), signer.get("identity")
    if not isinstance(issuer, str) or not isinstance(identity, str):
        raise InputError(f"{source}: predicate.signer needs string issuer and identity")
    capture, surface = first.get("capture"), first.get("surface")
    return Attestation(
        statement=statement, issuer=issuer, identity=identity,
        capture=capture if isinstance(capture, dict) else None,
        surface=surface if isinstance(surface, dict) else None,
        bundles=tuple(bundles), artifacts=artifacts[0],
    )


def _sort_subjects(
    pairs: Sequence[tuple[str, str, dict[str, Any]]], where: str,
    tools: dict[str, str], manifests: set[str],
) -> None:
    """Step: file one part's manifest and ``tool:`` subjects (artifacts are read apart)."""
    for name, digest, _ in pairs:
        if name.startswith(ARTIFACT_SUBJECT_PREFIX):
            continue
        if name == MANIFEST_SUBJECT:
            manifests.add(digest)
        elif name.startswith(TOOL_SUBJECT_PREFIX):
            tool = name[len(TOOL_SUBJECT_PREFIX) :]
            if tool in tools:
                raise InputError(f"{where}: tool subject named twice")
            tools[tool] = "sha256:" + digest
        else:
            raise InputError(f"{where}: unknown subject (neither manifest, tool:NAME nor "
                             "an artifact pkg:…)")


def _check_parts_agree(predicates: list[dict[str, Any]], count: int, source: str) -> None:
    """Step: part 1's predicate is complete; each part numbers itself right and carries it."""
    first = predicates[0]
    missing = [k for k in _PREDICATE_KEYS if k not in first]
    if missing:
        raise InputError(f"{source}: predicate is missing {', '.join(missing)}")
    for number, predicate in enumerate(predicates, start=1):
        part = _object(predicate.get("part"), f"{source}: predicate.part")
        if part.get("index") != number or part.get("count") != count:
            raise VerificationFailed(
                f"{source}: part {number} of {count} says it is part "
                f"{part.get('index')!r} of {part.get('count')!r}"
            )
        if _without_part(predicate) != _without_part(first):
            raise VerificationFailed(f"{source}: part {number}'s predicate differs from part 1's")


def _without_part(predicate: dict[str, Any]) -> dict[str, Any]:
    """Step: a predicate less its ``part`` numbering (what every part must share)."""
    return {k: v for k, v in predicate.items() if k != "part"}


def _attested_statement(
    revision: dict[str, Any], tools: dict[str, str], manifests: set[str], source: str,
) -> Statement:
    """Step: the predicate's revision checked against the subjects, as a statement."""
    if revision.get("type") != STATEMENT_TYPE or revision.get("toolCount") != len(tools):
        raise VerificationFailed(
            f"{source}: predicate says {revision.get('toolCount')!r} tools, subjects name "
            f"{len(tools)}"
        )
    if manifests != {_hex(str(revision.get("manifestDigest")))}:
        raise VerificationFailed(f"{source}: manifest subject differs from manifestDigest")
    document = {k: v for k, v in revision.items() if k != "toolCount"}
    document["toolDigests"] = dict(sorted(tools.items()))
    return Statement.from_json(document, f"{source}: predicate.revision")


def _artifact_subjects(
    pairs: Sequence[tuple[str, str, dict[str, Any]]], where: str
) -> tuple[ArtifactSubject, ...]:
    """The ``pkg:`` subjects of one part, strictly (each digest well-formed, no name twice)."""
    found: list[ArtifactSubject] = []
    for name, _, digest in pairs:
        if not name.startswith(ARTIFACT_SUBJECT_PREFIX):
            continue
        try:
            found.append(ArtifactSubject(name=name, digest=digest))
        except InputError as exc:
            raise InputError(f"{where}: {exc.message}") from None
    if len({a.name for a in found}) != len(found):
        raise InputError(f"{where}: an artifact subject is named twice")
    return tuple(found)


def _bundle_document(value: JsonValue, source: str) -> dict[str, Any]:
    return _object(value, source)


def part_count(first: Mapping[str, Any], source: str) -> int:
    """How many parts part 1 says the attestation has (1 to :data:`MAX_PARTS`, so a hostile
    part 1 cannot make a reader fetch unbounded files)."""
    predicate, _ = _parse_part(first, source)
    part = predicate.get("part")
    count = part.get("count") if isinstance(part, dict) else None
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_PARTS:
        raise InputError(
            f"{source}: predicate.part.count must be an integer from 1 to {MAX_PARTS}"
        )
    return count


def read_attestation(first: str, read: Callable[[str], JsonValue]) -> Attestation:
    """Read the attestation whose part 1 is at address ``first`` (a path or URL) with
    ``read`` (which bounds and parses one file), then the further parts it names."""
    bundle = _bundle_document(read(first), first)
    rest = part_addresses(first, part_count(bundle, first))[1:]
    return parse_attestation([bundle] + [_bundle_document(read(a), a) for a in rest], first)


def load_attestation(path: str | Path) -> Attestation:
    """Read an attestation file and, if it says it has more parts, its sibling part files."""
    return read_attestation(str(path), read_json_file)


def attested_surface(attestation: Attestation, source: str) -> SurfaceDigests | None:
    """The predicate's ``surface`` as digests (None when the attestation signs no surface).

    Every member must be of the form ``surface_json`` writes; anything else is bad input."""
    if attestation.surface is None:
        return None
    return _surface_digests(attestation.surface, source)


def _surface_digests(surface: Mapping[str, Any], source: str) -> SurfaceDigests:

    def digest(value: object) -> bool:
        return isinstance(value, str) and _SHA256.fullmatch(value) is not None

    def digests(key: str) -> dict[str, str]:
        value = surface.get(key)
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and digest(v) for k, v in value.items()
        ):
            raise InputError(f"{source}: predicate.surface.{key} is not an object of digests")
        return value

    instructions = surface.get("instructions")
    if instructions is not None and not digest(instructions):
        raise InputError(f"{source}: predicate.surface.instructions is not a digest or null")
    not_served = not_served_lists(surface.get(NOT_SERVED), f"{source}: predicate.surface")
    return SurfaceDigests(instructions=instructions, prompts=digests("prompts"),
                          resource_templates=digests("resourceTemplates"),
                          not_served=not_served)


# ---------------------------------------------------------------------- verifying
def verify_attestation_bundle(
    bundle: Mapping[str, Any], *, trusted_root: TrustedRoot
) -> tuple[bytes, CertificateFacts]:
    """sigstore's DSSE verification of one part (certificate chain, SCT, log inclusion,
    DSSE signature); returns the verified payload and the certificate's facts."""
    from sigstore.models import Bundle
    from sigstore.verify import Verifier

    from histor_sign._sigstore_trust import _first_line
    from histor_sign.verification import AcceptAnyIdentity
    from histor_sign.verification._certificate import certificate_facts

    try:
        parsed = Bundle.from_json(json.dumps(bundle))
    except Exception as exc:
        raise VerificationFailed(f"not a valid Sigstore bundle: {_first_line(exc)}") from None
    try:
        payload_type, payload = Verifier(trusted_root=trusted_root).verify_dsse(
            parsed, AcceptAnyIdentity()
        )
    except Exception as exc:  # VerificationError and anything a hostile bundle provokes
        raise VerificationFailed(_first_line(exc)) from None
    if payload_type != INTOTO_PAYLOAD_TYPE:
        raise VerificationFailed(f"payload type is {payload_type!r}")
    return payload, certificate_facts(parsed.signing_certificate)


def verify_attestation(
    attestation: Attestation | str | Path,
    *,
    pins: PinsLike | None = None,
    trust: Trust | None = None,
    previous: SignedEnvelope | str | Path | None = None,
    tools: ToolsLike | str | Path | None = None,
    envelope: SignedEnvelope | None = None,
    offline: bool = False,
    source: str | None = None,
    previous_source: str | None = None,
    tools_source: str | None = None,
) -> VerificationReport:
    """Verify an attestation on the envelope's axes and report each one.

    ``signature``: every part's DSSE signature, certificate chain and log inclusion (and
    one certificate identity across parts); ``identity``, ``log-entry`` and ``chain``: the
    envelope's own checks on the attested statement and signer; ``tools``: the subjects
    equal the digests recomputed from ``tools`` or, failing that, the ``envelope``'s signed
    statement (which the caller verifies); ``surface``: the predicate's digests of the
    instructions, each prompt and each resource template equal those recomputed from
    ``tools`` when it is a fetch snapshot holding the server surface (skipped otherwise).
    Bad input raises; failed checks are reported.
    """
    from histor_sign.verification import (
        PASS,
        SKIPPED,
        AxisResult,
        prepare_inputs,
        run_axes,
    )

    if isinstance(attestation, Attestation):
        parsed, source = attestation, source or "<attestation>"
    else:
        parsed, source = load_attestation(attestation), source or str(attestation)
    env = parsed.as_envelope()
    inputs = prepare_inputs(env.server, pins=pins, trust=trust, offline=offline,
                            previous=previous, previous_source=previous_source,
                            tools=tools, tools_source=tools_source)
    parts: list[CertificateFacts] = []  # each part's verified signer, filled by the signature
    tools_axis: AxisResult | None = None  # the subjects against the given tools
    if inputs.tools is None:
        tools_axis = (_envelope_agreement(env.statement, envelope.statement)
                      if envelope is not None
                      else AxisResult("tools", SKIPPED, "no tools or envelope given"))
    return run_axes(
        env, inputs, source=source,
        well_formed=AxisResult("well-formed", PASS,
                               "strict JSON; in-toto Statement v1 with our predicate"),
        signature=lambda trusted_root: _signature_axis(parsed, trusted_root, source, parts),
        further_signers=lambda: parts[1:],
        tools=tools_axis,
        extra=(_surface_axis(parsed.surface, inputs.tools_document, inputs.tools_source),),
    )


def _signature_axis(
    parsed: Attestation, trusted_root: TrustedRoot, source: str,
    parts: list[CertificateFacts],
) -> tuple[AxisResult, CertificateFacts | None]:
    """Every part's DSSE signature, certificate chain and log inclusion, and one signer
    across parts; the facts of the (first) signing certificate, verified or not. ``parts``
    receives each verified part's signer, for the identity axis to hold to the whole
    policy (issuer and SAN alike are not enough: a part signed by another workflow run of
    the same identity string differs in its GitHub facts)."""
    from histor_sign.verification import judged, load_bundle_certificate
    from histor_sign.verification._certificate import certificate_facts

    problems, facts_seen = _verify_parts(parsed, trusted_root, source)
    if len({(f.issuer, tuple(f.sans)) for f in facts_seen}) > 1:
        problems.append("the parts were signed by different identities")
    if not problems:
        parts.extend(facts_seen)
    signature = judged(
        "signature", problems,
        f"DSSE signature, certificate chain, SCT and Rekor inclusion of {len(parsed.bundles)} "
        f"part(s) verified; payload {INTOTO_PAYLOAD_TYPE}, predicate {ATTESTATION_PREDICATE_TYPE}",
    )
    facts_or_none = facts_seen[0] if facts_seen and not problems else None
    if facts_or_none is None:
        try:
            facts_or_none = certificate_facts(load_bundle_certificate(parsed.bundles[0]))
        except VerificationFailed:
            facts_or_none = None
    return signature, facts_or_none


def _verify_parts(
    parsed: Attestation, trusted_root: TrustedRoot, source: str,
) -> tuple[list[str], list[CertificateFacts]]:
    """Step: verify each part's bundle; the problems and the signer facts of those verified."""
    problems: list[str] = []
    facts_seen: list[CertificateFacts] = []
    for number, bundle in enumerate(parsed.bundles, start=1):
        try:
            payload, facts = verify_attestation_bundle(bundle, trusted_root=trusted_root)
        except VerificationFailed as exc:
            problems.append(f"part {number}: {exc}" if len(parsed.bundles) > 1 else str(exc))
            continue
        if payload != dsse_payload(bundle, source)[1]:
            problems.append(f"part {number}: verified payload differs from the parsed one")
        facts_seen.append(facts)
    return problems, facts_seen


def verified_surface(
    attestation: Attestation,
    envelope: SignedEnvelope,
    *,
    pins: PinsLike,
    trust: Trust,
    source: str,
) -> SurfaceDigests | None:
    """The surface digests of ``attestation`` once it verifies under ``pins`` and ``trust``
    (the envelope's own) and attests exactly ``envelope``'s statement; None when it signs
    no surface. Raises :class:`VerificationFailed` naming the first failed axis."""
    verify_attestation(attestation, pins=pins, trust=trust, envelope=envelope,
                       source=source).raise_for_failure()
    return attested_surface(attestation, source)


def _surface_axis(
    attested: Mapping[str, Any] | None, tools: object, tools_source: str
) -> AxisResult:
    """The predicate's surface digests against those recomputed from a snapshot (the same
    comparison as ``check``'s: :func:`histor_sign.drift.surface_changes`)."""
    from histor_sign.drift import _surface_of
    from histor_sign.revision import surface_digests
    from histor_sign.verification import SKIPPED, AxisResult, judged

    if attested is None:
        return AxisResult("surface", SKIPPED, "the attestation carries no surface digests")
    snapshot = _surface_of(tools) if tools is not None else None
    if snapshot is None:
        why = ("no `tools` snapshot given" if tools is None else
               f"{tools_source} is not a fetch snapshot holding the server surface")
        return AxisResult("surface", SKIPPED, why)
    recomputed = surface_digests(snapshot)
    try:
        signed = _surface_digests(attested, "predicate.surface")
    except InputError as exc:
        return judged("surface", [exc.message], "")
    problems = _surface_problems(signed, recomputed)
    counts = _surface_counts(recomputed)
    return judged(
        "surface", [f"{tools_source} differs from the attested surface: " + "; ".join(problems)]
        if problems else [],
        f"{counts} match {tools_source}",
    )


def _surface_problems(signed: SurfaceDigests, recomputed: SurfaceDigests) -> list[str]:
    """Step: one line per surface change between the attested and the recomputed digests."""
    from histor_sign.drift import LIST_PART, surface_changes

    what = {"prompt": "prompt", "resourceTemplate": "resource template"}
    return ["instructions differ" if c.part == "instructions"
            else c.label if c.part == LIST_PART
            else f"{what[c.part]} {c.name} {c.change.value}"
            for c in surface_changes(signed, recomputed)]


def _surface_counts(recomputed: SurfaceDigests) -> str:
    """Step: what the surface axis compared, counted (and the lists not served)."""
    counts = (f"{len(recomputed.prompts)} prompts, {len(recomputed.resource_templates)} "
              "resource templates and the instructions")
    if recomputed.not_served:
        counts += " (not served: " + ", ".join(
            f"{SURFACE_LISTS[m]} error {code}" for m, code in recomputed.not_served.items()
        ) + ")"
    return counts


def _envelope_agreement(attested: Statement, signed: Statement) -> AxisResult:
    """The attestation's statement must be the envelope's, digest for digest."""
    from histor_sign.verification import judged

    problems = [
        f"{label} differs from the envelope's"
        for label, mine, theirs in (
            ("server", attested.server, signed.server),
            ("serverVersion", attested.server_version, signed.server_version),
            ("revision", attested.revision, signed.revision),
            ("identity", attested.identity, signed.identity),
            ("manifest subject", attested.manifest_digest, signed.manifest_digest),
            ("previousManifestDigest", attested.previous_manifest_digest,
             signed.previous_manifest_digest),
        )
        if mine != theirs
    ]
    if dict(attested.tool_digests) != dict(signed.tool_digests):
        names = sorted(
            set(attested.tool_digests).symmetric_difference(signed.tool_digests)
            | {n for n in attested.tool_digests
               if signed.tool_digests.get(n, attested.tool_digests[n]) != attested.tool_digests[n]}
        )
        problems.append(f"tool subjects differ from the envelope's for {', '.join(names)}")
    return judged(
        "tools", problems,
        f"{len(attested.tool_digests)} tool subjects and the manifest equal the envelope's",
    )
