"""``guard``: decide whether one tool call may be dispatched."""


from pathlib import Path
from typing import TYPE_CHECKING

import typer

from histor_sign.cli.app import OutputFormat, app, emit
from histor_sign.cli.signing_commands import (
    CertIdentityOpt,
    CertIdentityRegexpOpt,
    CertIssuerOpt,
    OfflineOpt,
    OwnerIdOpt,
    RefOpt,
    RefPatternOpt,
    RepositoryIdOpt,
    RepositoryOpt,
    TrustedRootOpt,
    VerifyFlags,
    VerifyStagingOpt,
    VerifyTrustConfigOpt,
    WorkflowOpt,
)
from histor_sign.cli.trust_commands import (
    PinsOpt,
    ServerOpt,
    pinned_latest,
    verified_json,
    verify_for_use,
)
from histor_sign.errors import UsageError, VerificationFailed
from histor_sign.models import GITHUB_ACTIONS_ISSUER

if TYPE_CHECKING:
    from histor_sign.guard import Decision, Guard, Policy
    from histor_sign.pins import VerifiedForUse

FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human (ALLOW/DENY and reasons) or json."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the decision to this file (atomically)."
)


_GuardCallOption = typer.Argument(
    ...,
    metavar="CALL",
    help="The call: {\"name\", \"arguments\"} or a provider call shape (OpenAI, "
    "Anthropic, MCP tools/call); - reads stdin. Content that is not a decidable call "
    "is a DENY (exit 1), not an error.",
)
_GuardCatalogOption = typer.Option(
    None, "--catalog", "--tools", metavar="FILE",
    help="Tool catalog holding the contract (each tool's inputSchema and annotations).",
)
_GuardEnvelopeOption = typer.Option(
    None, "--envelope", metavar="FILE",
    help="Bind the contract to this signed revision: tools whose digest differs from "
    "its toolDigests are denied. Checks digests only, unless --verify is given.",
)
_GuardPolicyOption = typer.Option(
    None, "--policy", metavar="FILE",
    help="TOML policy: dry-run requirements, effect budgets, secret arguments "
    "(see docs/guard.md).",
)
_GuardVerifyOption = typer.Option(
    False, "--verify",
    help="Verify the --envelope's signature, transparency-log entry and signer identity "
    "first, so the contract is the one the pinned publisher signed (pinned by 'trust "
    "add', --server, or the identity flags); a failed verification exits 1 and decides "
    "nothing.",
)


@app.command()
def guard(
    call: str = _GuardCallOption,
    catalog: str | None = _GuardCatalogOption,
    envelope: str | None = _GuardEnvelopeOption,
    policy: str | None = _GuardPolicyOption,
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    verify: bool = _GuardVerifyOption,
    server: ServerOpt = None,
    pins: PinsOpt = None,
    cert_identity: CertIdentityOpt = None,
    cert_identity_regexp: CertIdentityRegexpOpt = None,
    cert_oidc_issuer: CertIssuerOpt = GITHUB_ACTIONS_ISSUER,
    repository: RepositoryOpt = None,
    workflow: WorkflowOpt = None,
    ref: RefOpt = None,
    ref_pattern: RefPatternOpt = None,
    owner_id: OwnerIdOpt = None,
    repository_id: RepositoryIdOpt = None,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
) -> None:
    """Allow or deny one tool call against its argument contract; never runs the tool.

    With --server NAME (after 'trust add') the contract is the signed tool definitions of
    the latest revision at the pinned location, verified under the pin and fresh. With
    --envelope --verify the contract is bound to a verified, publisher-pinned signed
    revision. Exit codes: 0 allow, 1 deny (or verification failed), 2 bad input
    (unreadable files, malformed catalog, envelope or policy; bad flags).
    """
    from histor_sign.canonical import read_bytes
    from histor_sign.guard import Policy

    pinned_contract = server is not None and envelope is None
    _check_contract_flags(catalog, envelope, server, verify)
    verify = verify or server is not None
    flags = VerifyFlags(
        cert_identity, cert_oidc_issuer, repository, ref, owner_id, repository_id,
        trusted_root, trust_config, staging, offline, workflow=workflow,
        ref_pattern=ref_pattern, cert_identity_regexp=cert_identity_regexp,
    )
    flags.require_verify(verify)
    if [call, catalog, policy, envelope].count("-") > 1:
        raise UsageError("standard input (-) can be read only once")
    # Bad input first (exit 2), then verification (exit 1), then the decision.
    rules = Policy.load(policy) if policy else None
    data = read_bytes(call)
    g, verified = _contract(catalog, envelope, rules, flags, server=server, pins=pins,
                            verify=verify, pinned_contract=pinned_contract)
    decision = g.check_document(data, call)
    if format is OutputFormat.json:
        emit(verified_json(decision.to_json(), verified), output)
    else:
        emit(_decision_text(decision, verified), output)
    if not decision.allowed:
        raise typer.Exit(1)


def _check_contract_flags(catalog: str | None, envelope: str | None, server: str | None,
                          verify: bool) -> None:
    """Step: the flags name exactly one contract, and ``--verify`` something to verify."""
    pinned_contract = server is not None and envelope is None
    if pinned_contract and catalog is not None:
        raise UsageError("--server without --envelope takes the contract from the pinned "
                         "location; drop --catalog, or give --envelope with it")
    if catalog is None and not pinned_contract:
        raise UsageError(
            "guard needs the contract: --catalog TOOLS, --envelope E --tools TOOLS, or "
            "--server NAME (pinned)"
        )
    if verify and envelope is None and server is None:
        raise UsageError("--verify needs --envelope: it verifies the signed revision")


def _decision_text(decision: "Decision", verified: "VerifiedForUse | None") -> str:
    """Step: the verdict, one line per reason, and the contract it was decided against."""
    from histor_sign._call_import import printable

    lines = [f"{decision.verdict.upper()} {printable(decision.tool or '(no tool)')}"]
    for reason in decision.reasons:
        lines.append(f"  {reason.pointer or '-'}  {reason.code}: {reason.message}")
    if verified is not None:
        lines.append(f"  contract: {verified.headline}")
    return "\n".join(lines)


def _contract(
    catalog: str | None, envelope: str | None, rules: "Policy | None", flags: VerifyFlags, *,
    server: str | None, pins: Path | None, verify: bool, pinned_contract: bool,
) -> "tuple[Guard, VerifiedForUse | None]":
    """The guard for the contract the flags name: the pinned publisher's latest signed tools,
    a catalog bound to a signed envelope (verified for use with ``--verify``), or a bare
    catalog."""
    from histor_sign.canonical import read_json_file
    from histor_sign.catalog import load_catalog
    from histor_sign.guard import Guard
    from histor_sign.models import statement_of
    from histor_sign.pins import VerifiedForUse

    if pinned_contract:
        assert server is not None
        pinned = pinned_latest(server, flags, pins, signed_tools=True)
        assert pinned.signed_tools is not None
        verified = VerifiedForUse(pinned.envelope, pinned.headline(), pinned)
        return Guard.from_envelope(pinned.envelope, pinned.signed_tools.tools, rules), verified
    assert catalog is not None
    tools = load_catalog(catalog).tools
    if envelope is None:
        return Guard.from_catalog(tools, rules), None
    signed = read_json_file(envelope)
    g = Guard.from_envelope(signed, tools, rules)
    if not verify:
        return g, None
    verified = verify_for_use(signed, envelope, flags, server=server, pins=pins)
    given = statement_of(signed, envelope).revision
    if verified.envelope.revision != given:
        # The given revision is yanked and a later one was verified in its place: the
        # catalog given is the yanked revision's, so it is no contract.
        raise VerificationFailed(
            f"{envelope}: revision {given} is yanked; its catalog is no contract (use "
            f"revision {verified.envelope.revision}: {verified.headline})")
    return g, verified
