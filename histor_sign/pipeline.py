"""The release gate: one pipeline from served tools to a verified, signed revision.

fetched catalog → reject duplicates → collision scan + contract lint (gate at ``fail_on``)
→ pre-flight (signing identity owns the namespace; ``previous`` is a signed envelope of
the same publisher) → statement chained to ``previous`` → keyless signature → full
verification of the fresh envelope → every output published at once into the output
directory. A failed gate publishes only the SARIF report and the summary, so CI can still
show why; a failed pre-flight, signature or verification leaves the directory as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._atomic import OutputDirectory
from histor_sign._chain_store import (
    ChainReservation,
    latest_envelope,
    publish,
    refuse_published,
    reserve_chain,
)
from histor_sign._escape import inert_line, printable
from histor_sign.canonical import read_json_file
from histor_sign.catalog import reject_duplicates, require_mcp
from histor_sign.errors import GateFailed, InputError, VerificationFailed
from histor_sign.layout import OUTPUT_NAMES, output_names
from histor_sign.models import (
    GITHUB_ACTIONS_ISSUER,
    SNAPSHOT_TYPE,
    Catalog,
    Finding,
    SignedEnvelope,
    parse_envelope,
    validate_server_name,
)
from histor_sign.report._findings import (
    FailOn,
    count_by_severity,
    effective_severity,
    reaches_threshold,
)

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.collisions import ScanOptions
    from histor_sign.guard._policy import Policy
    from histor_sign.models import ArtifactSubject, SignedEnvelope, Snapshot
    from histor_sign.signing import SignedRevision, TokenIdentity
    from histor_sign.verification import VerificationReport
    from histor_sign.verification._certificate import CertificateFacts
    from histor_sign.verification.policy import Pins


@dataclass(frozen=True)
class ReleaseRequest:
    """What to release and how.

    ``identity`` defaults to the identity in the OIDC token (and must equal it if given);
    ``previous`` is the signed revision to chain to: an envelope path or a
    :class:`SignedEnvelope`. It must verify with the same trust, and come from the same
    publisher as the signing token (numeric owner and repository ids, workflow file);
    a bare statement is refused, since nothing vouches for it. ``fail_on``/``strict`` set the
    gate; ``trust`` defaults to production. ``verify_command``, when given, is the command
    line ``summary.md`` shows under "Verify it yourself", with ``{envelope}``,
    ``{identity}`` and the recommended pins ``{repository}``, ``{workflow}`` and
    ``{ref_pattern}`` (:func:`~histor_sign.verification.recommended_pins`) filled in (a
    front end names its own verify command there; none is shown for a signer that is not a
    GitHub workflow).
    ``revisions``, when given, is the chain directory the fresh revision is published into
    (:mod:`histor_sign.layout`): a release whose revision number is already published there
    is refused before anything is signed, and the outcome lists the files published.
    """

    server: str
    server_version: str
    out_dir: Path
    identity: str | None = None
    previous: str | Path | SignedEnvelope | None = None
    fail_on: FailOn = FailOn.error
    strict: bool = False
    scan: ScanOptions | None = None
    policy: Policy | None = None
    trust: Trust | None = None
    identity_token: str | None = None
    verify_command: str | None = None
    revisions: Path | None = None
    #: Published artifacts bound to the revision as attestation subjects: files (npm
    #: tarballs, wheels, …), ``oci:REF@sha256:…`` or ready subjects
    #: (:mod:`histor_sign.artifacts`). The envelope and statement do not change with them.
    artifacts: tuple[str | Path | ArtifactSubject, ...] = ()
    #: Where the chain directory is served (URL or path of the directory holding
    #: ``latest.envelope.json``), for ``registry-meta.json``; default: where the histor-sign
    #: action publishes it for the signing repository (none off GitHub Actions).
    published_at: str | None = None
    #: True when ``tools`` is this process's own live fetch: the attestation then says the
    #: signer observed the capture (else it carries it as another job's claim).
    observed: bool = False


@dataclass(frozen=True)
class ReleaseOutcome:
    """What a release did. ``envelope`` is None when the gate stopped the release."""

    request: ReleaseRequest
    findings: list[Finding]
    gate_passed: bool
    files: Mapping[str, Path] = field(default_factory=dict)
    envelope: SignedEnvelope | None = None
    report: VerificationReport | None = None
    summary_markdown: str = ""
    #: What was published into ``request.revisions``: the numbered and the latest envelope
    #: first, then the snapshot and the attestation parts.
    published: tuple[Path, ...] = ()
    #: The artifacts bound to the revision as attestation subjects.
    artifacts: tuple[ArtifactSubject, ...] = ()

    def github_outputs(self) -> dict[str, str]:
        """Step outputs for ``$GITHUB_OUTPUT`` (the composite action re-exports them)."""
        out = {"gate": "passed" if self.gate_passed else "failed"}
        out.update({name: str(path) for name, path in self.files.items()})
        if self.envelope is not None:
            stmt = self.envelope.statement
            out["revision"] = str(stmt.revision)
            out["manifest-digest"] = stmt.manifest_digest
            out["log-index"] = str(self.envelope.transparency_log.log_index)
        return out


def _load_previous(previous: str | Path | SignedEnvelope) -> SignedEnvelope:
    """The previous revision: a signed envelope only (a bare statement proves nothing)."""

    if isinstance(previous, SignedEnvelope):
        return previous
    if not isinstance(previous, str | Path):
        raise InputError(
            "`previous` must be a signed envelope (a path or SignedEnvelope), not a bare "
            "statement: nothing vouches for an unsigned one",
            param="previous",
        )
    doc = read_json_file(str(previous))
    if not (isinstance(doc, dict) and "signer" in doc):
        raise InputError(
            f"`previous` {str(previous)!r} is not a signed envelope (no signer): chain to the "
            "envelope.json of the last release, not to a bare statement",
            param="previous",
        )
    try:
        return parse_envelope(doc, str(previous))
    except InputError as exc:
        raise InputError(f"`previous`: {exc.message}", param="previous") from None


@dataclass(frozen=True)
class Preflight:
    """What a release establishes before it fetches, gates or signs anything.

    ``signer`` is the OIDC identity that will sign; ``pins`` the publisher pins derived
    from it (issuer, numeric owner and repository ids, workflow file — or, off GitHub
    Actions, the exact identity), applied to the fresh envelope and to ``previous``.
    """

    signer: TokenIdentity
    pins: Pins
    previous: SignedEnvelope | None


def publisher_pins(facts: CertificateFacts) -> Pins:
    """Pins that hold for every release of one publisher, whatever its ref: numeric ids
    and workflow file on GitHub Actions; the exact identity elsewhere."""
    from histor_sign.verification.policy import Pins

    if facts.issuer == GITHUB_ACTIONS_ISSUER and facts.workflow and facts.repository_id:
        return Pins(
            issuer=facts.issuer, owner_id=facts.owner_id, repository_id=facts.repository_id,
            workflow=facts.workflow,
        )
    return Pins(cert_identity=facts.identity, issuer=facts.issuer or "")


def preflight(request: ReleaseRequest) -> Preflight:
    """Everything that can refuse a release before a signature is spent: the signing
    identity (a claimed one must be it), the server's namespace against that identity,
    and the previous envelope — signed, verified with the same trust and the publisher's
    pins, and of the same publisher. Raises :class:`NamespaceNotOwned`,
    :class:`IdentityNotSigner` or :class:`InputError` (exit 2), or
    :class:`VerificationFailed` for a previous envelope that does not verify."""
    from histor_sign._sigstore_trust import Trust
    from histor_sign.signing import require_namespace
    from histor_sign.verification import verify

    validate_server_name(request.server)
    previous = _load_previous(request.previous) if request.previous is not None else None
    who = _signer(request)
    facts = require_namespace(request.server, who)
    pins = publisher_pins(facts)
    if previous is not None:
        if previous.server != request.server:
            raise InputError(
                f"`previous` is a revision of {previous.server!r}, not {request.server!r}",
                param="previous",
            )
        report = verify(
            previous, pins=pins, trust=request.trust or Trust.production(),
            source="the previous envelope",
        )
        if not report.ok:
            first = report.failed[0]
            raise VerificationFailed(
                f"the previous envelope does not verify as a release of this publisher "
                f"({first.axis}: {first.detail}); nothing was signed"
            )
    return Preflight(signer=who, pins=pins, previous=previous)


def _catalog_and_evidence(tools: Snapshot | Catalog) -> tuple[Catalog, dict[str, Any]]:
    """The catalog to gate and sign, and the snapshot document written beside it.

    A fetch snapshot (live, or a snapshot file) keeps its capture context as evidence for
    drift checks later, and its findings name the snapshot file written (never a stdio
    command line); any other catalog is wrapped as ``{"tools": [...]}``.
    """
    if isinstance(tools, Catalog):
        raw = [dict(t.raw) for t in tools.tools]
        if tools.shape == "snapshot":
            return tools, {"type": SNAPSHOT_TYPE, "capture": tools.capture, "tools": raw}
        return tools, {"tools": raw}
    # Findings point into the snapshot written beside them, never at the fetched target:
    # a stdio command line carries runner paths and secrets passed as arguments.
    return tools.to_catalog(OUTPUT_NAMES["tools"]), tools.to_json()


def gate(
    catalog: Catalog, request: ReleaseRequest
) -> tuple[list[Finding], dict[str, Any], bool]:
    """Scan + lint the catalog; return (findings, scan stats, gate passed)."""
    from histor_sign.collisions import scan_tools
    from histor_sign.guard._lint import lint_catalog
    from histor_sign.report._findings import sorted_findings

    scanned = scan_tools(catalog.tools, request.scan)
    findings = sorted_findings([*scanned.findings, *lint_catalog(catalog.tools, request.policy)])
    return findings, scanned.stats, not reaches_threshold(
        findings, request.fail_on, request.strict
    )


def release(tools: Snapshot | Catalog, request: ReleaseRequest) -> ReleaseOutcome:
    """Run the whole pipeline for tools already fetched (a Snapshot) or loaded (a Catalog).

    ``request.out_dir`` is locked for the whole run (a concurrent release into it fails
    with :class:`~histor_sign._atomic.OutputBusy` before signing) and must hold
    nothing but release outputs; its contents are replaced in one atomic step, so it holds
    the complete previous run or the complete new one, even if the process is killed.
    Raises :class:`GateFailed` (carrying the outcome; the directory then holds only the
    SARIF report and summary) when findings reach the gate, and other errors on bad input,
    signing or verification failure (the directory is left as it was).
    """
    from histor_sign.artifacts import artifact_subjects

    bound = artifact_subjects(request.artifacts)  # unreadable artifacts fail before the gate
    # ``previous`` is read once, strictly: the revision number checked against the chain
    # directory is the one the statement will chain to, even if the file changes meanwhile
    chained = request if request.previous is None else replace(
        request, previous=_load_previous(request.previous))
    if request.revisions is None:
        return _release(tools, request, chained, bound, None)
    # The chain directory is held from here until the revision is published: its number,
    # checked free now, cannot be taken by a concurrent release (which fails at once).
    with reserve_chain(request.revisions, request.server) as chain:
        refuse_published(request.revisions, request.server, _next_revision(chained))
        return _release(tools, request, chained, bound, chain)


def _release(
    tools: Snapshot | Catalog, request: ReleaseRequest, chained: ReleaseRequest,
    bound: tuple[ArtifactSubject, ...], chain: ChainReservation | None,
) -> ReleaseOutcome:
    """:func:`release` once ``previous`` is loaded and the chain directory (if any) held."""
    from histor_sign.revision import manifest_bytes, surface_json

    catalog, evidence = _catalog_and_evidence(tools)
    reject_duplicates(catalog.tools)
    require_mcp(catalog.tools)
    surface = surface_json(tools)  # duplicate prompt names etc. fail before anything runs
    findings, stats, passed = gate(catalog, request)
    from histor_sign.report._render import render

    sarif = render(findings, "sarif", strict=request.strict, stats=stats, command="release")
    outcome = ReleaseOutcome(request=request, findings=findings, gate_passed=passed)
    # Locked before anything is signed: a concurrent release into the same directory
    # fails here, before it could make a Rekor entry.
    with OutputDirectory(request.out_dir, output_names()) as out:
        if not passed:
            _gate_tripped(outcome, catalog, sarif, out)
        # Work that cannot be written is not signed: a full or read-only file system
        # fails here, before a log entry exists.
        room = _room_needed(sarif, evidence)
        out.reserve(room)
        if chain is not None:
            chain.reserve(room)
        signed, report = _sign_and_verify(catalog, request, preflight(chained),
                                          surface=surface, artifacts=bound)
        outcome = replace(outcome, envelope=signed.envelope, report=report)
        outcome = replace(outcome, summary_markdown=summary_markdown(outcome, catalog))
        contents = {
            "envelope": signed.envelope.to_bytes(),
            "statement": signed.statement_bytes,
            "bundle": signed.bundle_json,
            "sarif": sarif.encode(),
            "summary": outcome.summary_markdown.encode(),
            "tools": (json.dumps(evidence, indent=2, ensure_ascii=False) + "\n").encode(),
            "manifest": manifest_bytes(catalog),
        }
        registry = _registry_meta(signed.envelope, request)
        if registry is not None:
            contents["registry"] = registry
        from histor_sign.layout import part_paths

        files = {OUTPUT_NAMES[role]: data for role, data in contents.items()}
        parts = part_paths(Path(OUTPUT_NAMES["attestation"]), len(signed.attestation_json))
        files.update(zip((p.name for p in parts), signed.attestation_json, strict=True))
        written = out.publish(files)
    paths = {role: written[OUTPUT_NAMES[role]] for role in contents}
    paths["attestation"] = written[OUTPUT_NAMES["attestation"]]
    published: tuple[Path, ...] = ()
    if request.revisions is not None:
        published = tuple(publish(
            request.revisions, request.server, signed.envelope.statement.revision,
            contents["envelope"], contents["tools"], signed.attestation_json,
            manifest=contents["manifest"],
        ))
    return replace(outcome, files=paths, published=published, artifacts=bound)


def _registry_meta(envelope: SignedEnvelope, request: ReleaseRequest) -> bytes | None:
    """The server.json ``_meta`` fragment (:mod:`histor_sign.registry`), or None when where
    the chain is served is unknown (not given, and not a GitHub workflow signer)."""
    from histor_sign.pins import published_location
    from histor_sign.registry import registry_meta
    from histor_sign.verification import recommended_pins

    pins = recommended_pins(envelope)
    repository = pins.repository if pins is not None else None
    workflow = pins.workflow if pins is not None else None
    if repository and workflow and workflow.startswith(repository + "/"):
        workflow = workflow[len(repository) + 1:]
    base = request.published_at
    if base is None and repository:
        base = published_location(request.server, repository).rsplit("/", 1)[0]
    if base is None:
        return None
    return registry_meta(envelope, base=base.rstrip("/"), repository=repository,
                         workflow=workflow)


def _room_needed(sarif: str, evidence: dict[str, Any]) -> int:
    """Bytes a release's outputs take, estimated before signing: the report and snapshot
    (twice over: the statement and attestation carry the digests and capture), plus the
    certificates, bundles and summary."""
    from histor_sign._limits import OUTPUT_ROOM_SLACK

    snapshot = len(json.dumps(evidence, ensure_ascii=False))
    return len(sarif.encode()) + 3 * snapshot + OUTPUT_ROOM_SLACK


def latest_published(revisions: Path, server: str) -> Path | None:
    """The latest envelope of ``server`` in the chain directory ``revisions`` (what
    ``previous`` is for the next release), or None before its first release."""
    return latest_envelope(revisions, server)


def _next_revision(request: ReleaseRequest) -> int:
    """The number this release will get: one past ``previous`` (already loaded)."""
    previous = request.previous
    return previous.statement.revision + 1 if isinstance(previous, SignedEnvelope) else 1


def _gate_tripped(
    outcome: ReleaseOutcome, catalog: Catalog, sarif: str, out: OutputDirectory
) -> None:
    """Publish the SARIF report and summary that say why, then raise :class:`GateFailed`.

    They replace the directory's contents, so no earlier release's envelope stays beside a
    summary that says nothing was signed.
    """
    text = summary_markdown(outcome, catalog)
    written = out.publish(
        {OUTPUT_NAMES["sarif"]: sarif.encode(), OUTPUT_NAMES["summary"]: text.encode()}
    )
    paths = {role: written[OUTPUT_NAMES[role]] for role in ("sarif", "summary")}
    tripped = replace(outcome, files=paths, summary_markdown=text)
    raise GateFailed(
        f"release gate failed: findings at {outcome.request.fail_on.value} or above; "
        f"nothing was signed (see {paths['sarif']})",
        outcome=tripped,
    )


class IdentityNotSigner(InputError):
    """The requested ``identity`` is not the one in the OIDC token that signs: a revision
    can only claim the workflow that signs it."""

    def __init__(self, claimed: str, signer: str) -> None:
        self.claimed, self.signer = claimed, signer
        super().__init__(
            f"`identity` {claimed!r} is not the identity in the OIDC token ({signer!r}); a "
            "revision can only claim the workflow that signs it (omit `identity` to use it)",
            param="identity",
        )


def _signer(request: ReleaseRequest) -> TokenIdentity:
    """The OIDC identity that signs; a claimed identity must be that one."""
    from histor_sign.signing import obtain_identity

    who = obtain_identity(request.identity_token)
    if request.identity is not None and request.identity != who.identity:
        raise IdentityNotSigner(request.identity, who.identity)
    return who


def _sign_and_verify(
    catalog: Catalog, request: ReleaseRequest, checked: Preflight,
    *, surface: dict[str, Any] | None = None, artifacts: tuple[ArtifactSubject, ...] = (),
) -> tuple[SignedRevision, VerificationReport]:
    """Build, sign, and verify the fresh envelope fully before anything is written.

    ``surface`` (digests of a snapshot's instructions, prompts and resource templates) goes
    into the attestation's predicate; the HISTOR statement stays tools-only."""
    from histor_sign._sigstore_trust import Trust
    from histor_sign.revision import build_statement
    from histor_sign.signing import sign_statement
    from histor_sign.verification import verify

    who = checked.signer
    statement = build_statement(
        catalog,
        server=request.server,
        identity=who.identity,
        server_version=request.server_version,
        previous=checked.previous,
    )
    trust = request.trust or Trust.production()
    signed = sign_statement(
        statement, trust=trust, token_identity=who, capture=catalog.capture, surface=surface,
        capture_observed=request.observed, artifacts=artifacts,
    )
    report = verify(
        signed.envelope,
        pins=checked.pins,
        trust=trust,
        previous=checked.previous,
        tools=catalog,
        source="the fresh envelope",
    )
    if not report.ok:
        first = report.failed[0]
        raise VerificationFailed(
            f"the fresh envelope failed verification ({first.axis}: {first.detail}); "
            "nothing was written"
        )
    return signed, report


def summary_markdown(outcome: ReleaseOutcome, catalog: Catalog) -> str:
    """A short Markdown report for ``$GITHUB_STEP_SUMMARY`` and ``summary.md``.

    Everything a server or file chose (tool names, messages, the server version, the signer,
    verification details) is shown as a code span (:func:`_md_code`): it cannot become a
    link, an image, HTML, emphasis, a heading or an extra table cell.
    """
    req = outcome.request
    counts = count_by_severity(outcome.findings, req.strict)
    lines = [f"## histor-sign release: {_md_code(req.server)} {_md_code(req.server_version)}",
             ""]
    if outcome.envelope is None:
        lines += [
            f"**Gate failed**: findings at `{req.fail_on.value}` or above; nothing was signed.",
            "",
        ]
    else:
        lines += _md_signed_table(outcome.envelope)
    lines.append(
        f"Scan of {len(catalog.tools)} tools: {counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['note']} notes."
    )
    if outcome.findings:
        lines += _md_findings(outcome.findings, req.strict)
    if outcome.report is not None:
        lines += ["", "Verification of the fresh envelope:", ""]
        lines += [f"- {a.axis}: {a.status} — {_md_code(a.detail, 1000)}"
                  for a in outcome.report.axes]
    if outcome.envelope is not None and req.verify_command is not None:
        lines += _md_verify_yourself(outcome.envelope, req.verify_command)
    return "\n".join(lines) + "\n"


def _md_signed_table(envelope: SignedEnvelope) -> list[str]:
    """Step: the signed revision as a two-column Markdown table."""
    stmt = envelope.statement
    log = envelope.transparency_log
    previous = stmt.previous_manifest_digest
    return [
        "| | |",
        "|---|---|",
        f"| revision | {stmt.revision} |",
        f"| tools | {len(stmt.tool_digests)} |",
        f"| manifest digest | {_md_code(stmt.manifest_digest)} |",
        f"| previous manifest | {_md_code(previous) if previous else 'none'} |",
        f"| signer | {_md_code(envelope.identity)} |",
        f"| Rekor log index | {log.log_index} |",
        "",
    ]


def _md_findings(findings: Sequence[Finding], strict: bool) -> list[str]:
    """Step: the first 50 findings as a Markdown table (and how many more there are)."""
    lines = ["", "| rule | severity | tools | message |", "|---|---|---|---|"]
    for f in findings[:50]:
        names = ", ".join(_md_code(t.name, 200) for t in f.tools)
        severity = effective_severity(f, strict).value
        lines.append(f"| {f.rule} | {severity} | {names} | {_md_code(f.message, 1000)} |")
    if len(findings) > 50:
        lines.append(f"\n… and {len(findings) - 50} more in scan.sarif.")
    return lines


def _md_verify_yourself(envelope: SignedEnvelope, verify_command: str) -> list[str]:
    """Step: the ``verify`` command line to copy, pinned as recommended (none without pins)."""
    import shlex

    from histor_sign.verification import recommended_pins

    # Quoted for a shell: the summary invites copying this line into one. The pins are
    # the repository, workflow and a ref pattern: an exact identity names one tag.
    pins = recommended_pins(envelope)
    if pins is None:
        return []
    command = verify_command.format(
        envelope=shlex.quote(OUTPUT_NAMES["envelope"]),
        identity=shlex.quote(envelope.identity),
        repository=shlex.quote(pins.repository or ""),
        workflow=shlex.quote(pins.workflow or ""),
        ref_pattern=shlex.quote(pins.ref_pattern or ""),
    )
    return ["", "Verify it yourself:", "", "````", printable(command), "````"]


def _md_code(text: str, limit: int | None = None) -> str:
    """Untrusted text as one inert Markdown code span that also stays in its table cell.

    :func:`inert_line` first (one line, no controls, no workflow command); then ``|`` is
    escaped (GFM splits table cells before it parses code spans, and turns ``\\|`` back
    into ``|``), and the span is
    fenced with one backtick more than the longest backtick run inside, padded with a space
    when the text starts or ends with a backtick, as CommonMark specifies.
    """
    shown = inert_line(text, limit).replace("|", "\\|")
    longest = run = 0
    for char in shown:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown.strip() else ""
    return f"{fence}{pad}{shown}{pad}{fence}"
