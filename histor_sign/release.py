"""The release gate: one pipeline from served tools to a verified, signed revision.

fetched catalog → reject duplicates → collision scan + contract lint (gate at ``fail_on``)
→ pre-flight (signing identity owns the namespace; ``previous`` is a signed envelope of
the same publisher) → statement chained to ``previous`` → keyless signature → full
verification of the fresh envelope → every output written at once. A failed gate or
signature leaves no envelope: only the SARIF report and the summary are written then, so
CI can still show why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._internal.atomic import write_all_atomic
from histor_sign._internal.untrusted import printable
from histor_sign.catalog import SNAPSHOT_TYPE, Catalog, reject_duplicates, require_mcp
from histor_sign.errors import GateFailed, InputError, VerificationFailed
from histor_sign.report._findings import (
    FailOn,
    Finding,
    count_by_severity,
    effective_severity,
    reaches_threshold,
)

if TYPE_CHECKING:
    from histor_sign._internal.certificate import CertificateFacts
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.envelope import SignedEnvelope
    from histor_sign.guard._policy import Policy
    from histor_sign.mcp._snapshot import Snapshot
    from histor_sign.scan import ScanOptions
    from histor_sign.signing import SignedRevision, TokenIdentity
    from histor_sign.verify import Pins, VerificationReport

#: Output files of a release, by role, inside ``out_dir``.
OUTPUT_NAMES: dict[str, str] = {
    "envelope": "envelope.json",
    "statement": "statement.json",
    "bundle": "sigstore.json",
    "sarif": "scan.sarif",
    "summary": "summary.md",
    "tools": "tools.snapshot.json",
}


@dataclass(frozen=True)
class ReleaseRequest:
    """What to release and how.

    ``identity`` defaults to the identity in the OIDC token (and must equal it if given);
    ``previous`` is the signed revision to chain to: an envelope path or a
    :class:`SignedEnvelope`. It must verify with the same trust, and come from the same
    publisher as the signing token (numeric owner and repository ids, workflow file);
    a bare statement is refused, since nothing vouches for it. ``fail_on``/``strict`` set the
    gate; ``trust`` defaults to production. ``verify_command``, when given, is the command
    line ``summary.md`` shows under "Verify it yourself", with ``{envelope}`` and
    ``{identity}`` filled in (a front end names its own verify command there).
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
    from histor_sign.canonical import read_json_file
    from histor_sign.envelope import SignedEnvelope, parse_envelope

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


class NamespaceNotOwned(InputError):
    """The signing identity cannot own the server's ``io.github.<owner>`` namespace, so
    the fresh envelope would fail verification: refused before anything is signed."""

    def __init__(self, server: str, problems: list[str]) -> None:
        self.server, self.problems = server, problems
        super().__init__(
            f"`server` {server!r} cannot be released by this signing identity: "
            f"{'; '.join(problems)}; nothing was signed",
            param="server",
        )


def _predicted_facts(who: TokenIdentity) -> CertificateFacts:
    """The certificate facts Fulcio will derive from the token (GitHub claim mapping)."""
    from histor_sign._internal.certificate import GITHUB_ACTIONS_ISSUER, CertificateFacts

    extensions = {"8": who.issuer}
    if who.issuer == GITHUB_ACTIONS_ISSUER:
        claims = who.claims
        for number, claim, prefix in (
            ("12", "repository", "https://github.com/"),
            ("16", "repository_owner", "https://github.com/"),
            ("14", "ref", ""),
            ("15", "repository_id", ""),
            ("17", "repository_owner_id", ""),
        ):
            value = claims.get(claim)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                extensions[number] = f"{prefix}{value}"
    return CertificateFacts((who.identity,), extensions)


def publisher_pins(facts: CertificateFacts) -> Pins:
    """Pins that hold for every release of one publisher, whatever its ref: numeric ids
    and workflow file on GitHub Actions; the exact identity elsewhere."""
    from histor_sign._internal.certificate import GITHUB_ACTIONS_ISSUER
    from histor_sign.verify import Pins

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
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.revision import validate_server_name
    from histor_sign.verify import Pins, identity_problems, verify

    validate_server_name(request.server)
    previous = _load_previous(request.previous) if request.previous is not None else None
    who = _signer(request)
    facts = _predicted_facts(who)
    problems = identity_problems(facts, Pins(issuer=who.issuer), server=request.server)
    if problems:
        raise NamespaceNotOwned(request.server, problems)
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
    drift checks later; any other catalog is wrapped as ``{"tools": [...]}``.
    """
    if isinstance(tools, Catalog):
        raw = [dict(t.raw) for t in tools.tools]
        if tools.shape == "snapshot":
            return tools, {"type": SNAPSHOT_TYPE, "capture": tools.capture, "tools": raw}
        return tools, {"tools": raw}
    return tools.to_catalog(), tools.to_json()


def gate(
    catalog: Catalog, request: ReleaseRequest
) -> tuple[list[Finding], dict[str, Any], bool]:
    """Scan + lint the catalog; return (findings, scan stats, gate passed)."""
    from histor_sign.guard._lint import lint_catalog
    from histor_sign.report._findings import sorted_findings
    from histor_sign.scan import scan_tools

    scanned = scan_tools(catalog.tools, request.scan)
    findings = sorted_findings([*scanned.findings, *lint_catalog(catalog.tools, request.policy)])
    return findings, scanned.stats, not reaches_threshold(
        findings, request.fail_on, request.strict
    )


def release(tools: Snapshot | Catalog, request: ReleaseRequest) -> ReleaseOutcome:
    """Run the whole pipeline for tools already fetched (a Snapshot) or loaded (a Catalog).

    Writes every output into ``request.out_dir`` at once and returns the outcome. Raises
    :class:`GateFailed` (carrying the outcome; only the SARIF report and summary are
    written) when findings reach the gate, and other errors on bad input, signing or
    verification failure (nothing written).
    """
    catalog, evidence = _catalog_and_evidence(tools)
    reject_duplicates(catalog.tools)
    require_mcp(catalog.tools)
    findings, stats, passed = gate(catalog, request)
    from histor_sign.report._render import render

    sarif = render(findings, "sarif", strict=request.strict, stats=stats, command="release")
    outcome = ReleaseOutcome(request=request, findings=findings, gate_passed=passed)
    if not passed:
        _gate_tripped(outcome, catalog, sarif)
    signed, report = _sign_and_verify(catalog, request, preflight(request))
    outcome = replace(outcome, envelope=signed.envelope, report=report)
    outcome = replace(outcome, summary_markdown=summary_markdown(outcome, catalog))
    contents = {
        "envelope": signed.envelope.to_bytes(),
        "statement": signed.statement_bytes,
        "bundle": signed.bundle_json,
        "sarif": sarif.encode(),
        "summary": outcome.summary_markdown.encode(),
        "tools": (json.dumps(evidence, indent=2, ensure_ascii=False) + "\n").encode(),
    }
    paths = {role: request.out_dir / OUTPUT_NAMES[role] for role in contents}
    write_all_atomic({paths[role]: data for role, data in contents.items()})
    return replace(outcome, files=paths)


def _gate_tripped(outcome: ReleaseOutcome, catalog: Catalog, sarif: str) -> None:
    """Write the SARIF report and summary that say why, then raise :class:`GateFailed`."""
    out = outcome.request.out_dir
    text = summary_markdown(outcome, catalog)
    paths = {"sarif": out / OUTPUT_NAMES["sarif"], "summary": out / OUTPUT_NAMES["summary"]}
    write_all_atomic({paths["sarif"]: sarif.encode(), paths["summary"]: text.encode()})
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
    catalog: Catalog, request: ReleaseRequest, checked: Preflight
) -> tuple[SignedRevision, VerificationReport]:
    """Build, sign, and verify the fresh envelope fully before anything is written."""
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.revision import build_statement
    from histor_sign.signing import sign_statement
    from histor_sign.verify import verify

    who = checked.signer
    statement = build_statement(
        catalog,
        server=request.server,
        identity=who.identity,
        server_version=request.server_version,
        previous=checked.previous,
    )
    trust = request.trust or Trust.production()
    signed = sign_statement(statement, trust=trust, token_identity=who)
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
    """A short Markdown report for ``$GITHUB_STEP_SUMMARY`` and ``summary.md``."""
    req = outcome.request
    counts = count_by_severity(outcome.findings, req.strict)
    lines = [f"## histor-sign release: `{req.server}` {req.server_version}", ""]
    if outcome.envelope is None:
        lines += [
            f"**Gate failed**: findings at `{req.fail_on.value}` or above; nothing was signed.",
            "",
        ]
    else:
        stmt = outcome.envelope.statement
        log = outcome.envelope.transparency_log
        lines += [
            "| | |",
            "|---|---|",
            f"| revision | {stmt.revision} |",
            f"| tools | {len(stmt.tool_digests)} |",
            f"| manifest digest | `{stmt.manifest_digest}` |",
            f"| previous manifest | `{stmt.previous_manifest_digest}` |",
            f"| signer | `{outcome.envelope.identity}` |",
            f"| Rekor log index | {log.log_index} |",
            "",
        ]
    lines.append(
        f"Scan of {len(catalog.tools)} tools: {counts['error']} errors, "
        f"{counts['warning']} warnings, {counts['note']} notes."
    )
    if outcome.findings:
        lines += ["", "| rule | severity | tools | message |", "|---|---|---|---|"]
        for f in outcome.findings[:50]:
            names = ", ".join(_md_cell(t.name) for t in f.tools)
            severity = effective_severity(f, req.strict).value
            lines.append(f"| {f.rule} | {severity} | {names} | {_md_cell(f.message)} |")
        if len(outcome.findings) > 50:
            lines.append(f"\n… and {len(outcome.findings) - 50} more in scan.sarif.")
    if outcome.report is not None:
        lines += ["", "Verification of the fresh envelope:", ""]
        lines += [f"- {a.axis}: {a.status} — {a.detail}" for a in outcome.report.axes]
    if outcome.envelope is not None and req.verify_command is not None:
        command = req.verify_command.format(
            envelope=OUTPUT_NAMES["envelope"], identity=outcome.envelope.identity
        )
        lines += ["", "Verify it yourself:", "", "```", command, "```"]
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    """Tool names and messages are untrusted: keep them inside one Markdown table cell."""
    cell = printable(text)
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"),
                         ("`", "&#96;")):
        cell = cell.replace(raw, escaped)
    return cell
