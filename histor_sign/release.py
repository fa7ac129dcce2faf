"""The release gate: one pipeline from served tools to a verified, signed revision.

fetched catalog → reject duplicates → collision scan + contract lint (gate at ``fail_on``)
→ statement chained to ``previous`` → keyless signature → full verification of the fresh
envelope → every output published at once into the output directory. A failed gate
publishes only the SARIF report and the summary, so CI can still show why; a failed
signature or verification leaves the directory as it was.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._internal.atomic import OutputDirectory
from histor_sign._internal.untrusted import inert_line, printable
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
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.envelope import SignedEnvelope
    from histor_sign.guard._policy import Policy
    from histor_sign.mcp._snapshot import Snapshot
    from histor_sign.revision import Statement
    from histor_sign.scan import ScanOptions
    from histor_sign.signing import SignedRevision, TokenIdentity
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


@dataclass(frozen=True)
class ReleaseRequest:
    """What to release and how.

    ``identity`` defaults to the identity in the OIDC token (and must equal it if given);
    ``previous`` is the revision to chain to: an envelope path, a :class:`SignedEnvelope`
    (its chain is verified too) or a :class:`Statement`. ``fail_on``/``strict`` set the
    gate; ``trust`` defaults to production. ``verify_command``, when given, is the command
    line ``summary.md`` shows under "Verify it yourself", with ``{envelope}`` and
    ``{identity}`` filled in (a front end names its own verify command there).
    """

    server: str
    server_version: str
    out_dir: Path
    identity: str | None = None
    previous: str | Path | SignedEnvelope | Statement | None = None
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


def _load_previous(
    previous: str | Path | SignedEnvelope | Statement,
) -> tuple[Statement, SignedEnvelope | None]:
    """A previous revision: an envelope (chain verified too) or a bare statement."""
    from histor_sign.canonical import read_json_file
    from histor_sign.envelope import SignedEnvelope, parse_envelope
    from histor_sign.revision import Statement

    if isinstance(previous, SignedEnvelope):
        return previous.statement, previous
    if isinstance(previous, Statement):
        return previous, None
    doc = read_json_file(str(previous))
    if isinstance(doc, dict) and "signer" in doc:
        env = parse_envelope(doc, str(previous))
        return env.statement, env
    return Statement.from_json(doc, str(previous)), None


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

    ``request.out_dir`` is locked for the whole run (a concurrent release into it fails
    with :class:`~histor_sign._internal.atomic.OutputBusy` before signing) and must hold
    nothing but release outputs; its contents are replaced in one atomic step, so it holds
    the complete previous run or the complete new one, even if the process is killed.
    Raises :class:`GateFailed` (carrying the outcome; the directory then holds only the
    SARIF report and summary) when findings reach the gate, and other errors on bad input,
    signing or verification failure (the directory is left as it was).
    """
    catalog, evidence = _catalog_and_evidence(tools)
    reject_duplicates(catalog.tools)
    require_mcp(catalog.tools)
    previous, previous_envelope = (
        _load_previous(request.previous) if request.previous is not None else (None, None)
    )
    findings, stats, passed = gate(catalog, request)
    from histor_sign.report._render import render

    sarif = render(findings, "sarif", strict=request.strict, stats=stats, command="release")
    outcome = ReleaseOutcome(request=request, findings=findings, gate_passed=passed)
    # Locked before anything is signed: a concurrent release into the same directory
    # fails here, before it could make a Rekor entry.
    with OutputDirectory(request.out_dir, OUTPUT_NAMES.values()) as out:
        if not passed:
            _gate_tripped(outcome, catalog, sarif, out)
        signed, report = _sign_and_verify(catalog, request, previous, previous_envelope)
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
        written = out.publish({OUTPUT_NAMES[role]: data for role, data in contents.items()})
    return replace(outcome, files={role: written[OUTPUT_NAMES[role]] for role in contents})


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
    catalog: Catalog,
    request: ReleaseRequest,
    previous: Statement | None,
    previous_envelope: SignedEnvelope | None,
) -> tuple[SignedRevision, VerificationReport]:
    """Build, sign, and verify the fresh envelope fully before anything is written."""
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.revision import build_statement
    from histor_sign.signing import sign_statement
    from histor_sign.verify import Pins, verify

    who = _signer(request)
    statement = build_statement(
        catalog,
        server=request.server,
        identity=who.identity,
        server_version=request.server_version,
        previous=previous,
    )
    trust = request.trust or Trust.production()
    signed = sign_statement(statement, trust=trust, token_identity=who)
    report = verify(
        signed.envelope,
        pins=Pins(cert_identity=who.identity, issuer=who.issuer),
        trust=trust,
        previous=previous_envelope,
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
        stmt = outcome.envelope.statement
        log = outcome.envelope.transparency_log
        previous = stmt.previous_manifest_digest
        lines += [
            "| | |",
            "|---|---|",
            f"| revision | {stmt.revision} |",
            f"| tools | {len(stmt.tool_digests)} |",
            f"| manifest digest | {_md_code(stmt.manifest_digest)} |",
            f"| previous manifest | {_md_code(previous) if previous else 'none'} |",
            f"| signer | {_md_code(outcome.envelope.identity)} |",
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
            names = ", ".join(_md_code(t.name, 200) for t in f.tools)
            severity = effective_severity(f, req.strict).value
            lines.append(f"| {f.rule} | {severity} | {names} | {_md_code(f.message, 1000)} |")
        if len(outcome.findings) > 50:
            lines.append(f"\n… and {len(outcome.findings) - 50} more in scan.sarif.")
    if outcome.report is not None:
        lines += ["", "Verification of the fresh envelope:", ""]
        lines += [f"- {a.axis}: {a.status} — {_md_code(a.detail, 1000)}"
                  for a in outcome.report.axes]
    if outcome.envelope is not None and req.verify_command is not None:
        import shlex

        # Quoted for a shell: the summary invites copying this line into one.
        command = req.verify_command.format(
            envelope=shlex.quote(OUTPUT_NAMES["envelope"]),
            identity=shlex.quote(outcome.envelope.identity),
        )
        lines += ["", "Verify it yourself:", "", "````", printable(command), "````"]
    return "\n".join(lines) + "\n"


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
