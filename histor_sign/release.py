"""The release gate: one pipeline from served tools to a verified, signed revision.

fetched catalog → reject duplicates → collision scan + contract lint (gate at ``fail_on``)
→ statement chained to ``previous`` → keyless signature → full verification of the fresh
envelope → every output written at once. A failed gate or signature leaves no envelope:
only the SARIF report and the summary are written then, so CI can still show why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._internal.atomic import write_all_atomic
from histor_sign._internal.untrusted import printable
from histor_sign.catalog import Catalog, reject_duplicates, require_mcp
from histor_sign.errors import InputError, VerificationFailed
from histor_sign.report._findings import FailOn, Finding, count_by_severity, reaches_threshold

if TYPE_CHECKING:
    from histor_sign._internal.sigstore_trust import TrustSource
    from histor_sign.envelope import Envelope
    from histor_sign.guard._policy import Policy
    from histor_sign.scan import ScanOptions
    from histor_sign.verify import VerificationReport

#: Output files of a release, by role, inside ``out_dir``.
OUTPUT_NAMES: dict[str, str] = {
    "envelope": "envelope.json",
    "statement": "statement.json",
    "bundle": "sigstore.json",
    "sarif": "scan.sarif",
    "summary": "summary.md",
    "tools": "tools.snapshot.json",
}


@dataclass
class ReleaseRequest:
    """What to release and how (CLI flags map onto these one to one)."""

    server: str
    server_version: str
    out_dir: Path
    identity: str | None = None
    previous: str | Path | None = None
    fail_on: FailOn = FailOn.error
    strict: bool = False
    scan: ScanOptions | None = None
    policy: Policy | None = None
    trust: TrustSource | None = None
    identity_token: str | None = None


@dataclass
class ReleaseOutcome:
    """What happened. ``envelope`` is None when the gate stopped the release."""

    request: ReleaseRequest
    findings: list[Finding]
    gate_passed: bool
    files: dict[str, Path] = field(default_factory=dict)
    envelope: Envelope | None = None
    report: VerificationReport | None = None
    summary_markdown: str = ""

    def github_outputs(self) -> dict[str, str]:
        """Step outputs for ``$GITHUB_OUTPUT`` (the composite action re-exports them)."""
        out = {"gate": "passed" if self.gate_passed else "failed"}
        out.update({name: str(path) for name, path in self.files.items()})
        if self.envelope is not None:
            stmt = self.envelope.statement
            out["revision"] = str(stmt["revision"])
            out["manifest-digest"] = stmt["manifestDigest"]
            out["log-index"] = str(self.envelope.transparency_log.log_index)
        return out


def _load_previous(path: str | Path) -> tuple[Mapping[str, Any], Envelope | None]:
    """A previous revision: an envelope (chain verified too) or a bare statement."""
    from histor_sign.canonical import read_json_file
    from histor_sign.envelope import parse_envelope
    from histor_sign.revision import statement_from

    doc = read_json_file(path)
    if isinstance(doc, dict) and "signer" in doc:
        env = parse_envelope(doc, str(path))
        return env.statement, env
    return statement_from(doc, str(path)), None


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


def run_release(
    catalog: Catalog, request: ReleaseRequest, snapshot: Mapping[str, Any] | None = None
) -> ReleaseOutcome:
    """Run the whole pipeline for tools already fetched into ``catalog``.

    ``snapshot`` is the fetch snapshot (served order + capture context), written beside
    the envelope as evidence for ``check --signed-tools``. Raises on bad input, signing or
    verification failure (nothing written); a tripped gate is reported in the outcome.
    """
    from histor_sign._internal.sigstore_trust import TrustSource
    from histor_sign.report._render import render
    from histor_sign.revision import build_statement
    from histor_sign.signing import obtain_identity, sign_statement
    from histor_sign.verify import IdentityPins, verify_envelope

    reject_duplicates(catalog.tools)
    require_mcp(catalog.tools)
    previous, previous_envelope = (
        _load_previous(request.previous) if request.previous else (None, None)
    )
    findings, stats, passed = gate(catalog, request)
    sarif = render(findings, "sarif", strict=request.strict, stats=stats, command="release")
    outcome = ReleaseOutcome(request=request, findings=findings, gate_passed=passed)
    out = request.out_dir
    if not passed:
        outcome.summary_markdown = summary_markdown(outcome, catalog)
        files = {
            "sarif": (out / OUTPUT_NAMES["sarif"], sarif.encode()),
            "summary": (out / OUTPUT_NAMES["summary"], outcome.summary_markdown.encode()),
        }
        write_all_atomic(dict(files.values()))
        outcome.files = {role: path for role, (path, _) in files.items()}
        return outcome

    who = obtain_identity(request.identity_token)
    identity = request.identity or who.identity
    if identity != who.identity:
        raise InputError(
            f"--identity {identity!r} is not the identity in the OIDC token ({who.identity!r}); "
            "a revision can only claim the workflow that signs it (omit --identity to use it)"
        )
    statement = build_statement(
        tools=catalog.tools,
        server=request.server,
        identity=identity,
        server_version=request.server_version,
        previous=previous,
    )
    trust = request.trust or TrustSource.production()
    signed = sign_statement(statement, trust=trust, token_identity=who)
    report = verify_envelope(
        signed.envelope,
        pins=IdentityPins(cert_identity=who.identity, cert_oidc_issuer=who.issuer),
        trust=trust,
        previous=previous_envelope,
        tools=catalog.tools,
        source="the fresh envelope",
    )
    if not report.ok:
        first = report.failed[0]
        raise VerificationFailed(
            f"the fresh envelope failed verification ({first.axis}: {first.detail}); "
            "nothing was written"
        )
    outcome.envelope, outcome.report = signed.envelope, report
    outcome.summary_markdown = summary_markdown(outcome, catalog)
    snapshot_doc = snapshot if snapshot is not None else {
        "tools": [dict(t.raw) for t in catalog.tools]
    }
    contents = {
        "envelope": signed.envelope.to_bytes(),
        "statement": signed.statement_bytes,
        "bundle": signed.bundle_json,
        "sarif": sarif.encode(),
        "summary": outcome.summary_markdown.encode(),
        "tools": (json.dumps(snapshot_doc, indent=2, ensure_ascii=False) + "\n").encode(),
    }
    paths = {role: out / OUTPUT_NAMES[role] for role in contents}
    write_all_atomic({paths[role]: data for role, data in contents.items()})
    outcome.files = paths
    return outcome


def summary_markdown(outcome: ReleaseOutcome, catalog: Catalog) -> str:
    """A short Markdown report for ``$GITHUB_STEP_SUMMARY`` and ``summary.md``."""
    req = outcome.request
    counts = count_by_severity(outcome.findings, req.strict)
    lines = [f"## histor-sign release: `{req.server}` {req.server_version}", ""]
    if outcome.envelope is None:
        lines += [
            f"**Gate failed** at `--fail-on {req.fail_on.value}`: nothing was signed.",
            "",
        ]
    else:
        stmt = outcome.envelope.statement
        log = outcome.envelope.transparency_log
        lines += [
            "| | |",
            "|---|---|",
            f"| revision | {stmt['revision']} |",
            f"| tools | {len(stmt['toolDigests'])} |",
            f"| manifest digest | `{stmt['manifestDigest']}` |",
            f"| previous manifest | `{stmt['previousManifestDigest']}` |",
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
            lines.append(f"| {f.rule} | {f.severity.value} | {names} | {_md_cell(f.message)} |")
        if len(outcome.findings) > 50:
            lines.append(f"\n… and {len(outcome.findings) - 50} more in scan.sarif.")
    if outcome.report is not None:
        lines += ["", "Verification of the fresh envelope:", ""]
        lines += [f"- {a.axis}: {a.status} — {a.detail}" for a in outcome.report.axes]
        lines += [
            "",
            "Verify it yourself:",
            "",
            "```",
            f"histor-sign verify {OUTPUT_NAMES['envelope']} --cert-identity "
            f"{outcome.envelope.identity if outcome.envelope else ''}",
            "```",
        ]
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    """Tool names and messages are untrusted: keep them inside one Markdown table cell."""
    cell = printable(text)
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|"),
                         ("`", "&#96;")):
        cell = cell.replace(raw, escaped)
    return cell
