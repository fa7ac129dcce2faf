"""``sign``, ``verify`` and ``dev-sigstore``: keyless signing of revision envelopes.

Heavy modules (sigstore, cryptography) are imported inside the commands so that
``histor-sign --help`` stays fast.
"""


import json
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer

from histor_sign._escape import inert_line
from histor_sign._limits import MAX_FIRST_INDEX
from histor_sign._sigstore_trust import Trust
from histor_sign.cli.app import FLAGS, PROG, OutputFormat, app, emit, json_document, warn
from histor_sign.errors import UsageError
from histor_sign.models import GITHUB_ACTIONS_ISSUER

if TYPE_CHECKING:
    from histor_sign.attestation import Attestation
    from histor_sign.models import Catalog, SignedEnvelope, Snapshot, Statement
    from histor_sign.pins import PinEntry
    from histor_sign.sigstore_dev import LocalSigstore
    from histor_sign.verification import VerificationReport
    from histor_sign.verification.policy import Pins



# Identity pins and trust flags, shared by ``verify``, ``check --verify`` and ``guard --verify``.
CertIdentityOpt = Annotated[
    str | None,
    typer.Option(
        "--cert-identity",
        help="Exact signer identity to require, e.g. "
        "https://github.com/OWNER/REPO/.github/workflows/sign.yml@refs/heads/main. Outside "
        "io.github.* this, --cert-identity-regexp, or --workflow with --repository is required.",
    ),
]
CertIdentityRegexpOpt = Annotated[
    str | None,
    typer.Option(
        "--cert-identity-regexp",
        help="Regular expression the signer identity must match in full (like cosign's "
        "--certificate-identity-regexp), e.g. "
        "'https://github.com/OWNER/REPO/\\.github/workflows/sign\\.yml@refs/tags/v.*'.",
    ),
]
WorkflowOpt = Annotated[
    str | None,
    typer.Option(
        "--workflow",
        help="Require the signing workflow file, whatever branch or tag it ran for: "
        ".github/workflows/sign.yml (in the source repository) or "
        "OWNER/REPO/.github/workflows/sign.yml (a reusable workflow). With --repository it "
        "pins a publisher across tag-triggered releases.",
    ),
]
RefPatternOpt = Annotated[
    str | None,
    typer.Option(
        "--ref-pattern",
        help="Require the git ref to match this glob (* within a path segment, ** across), "
        "e.g. 'refs/tags/v*'.",
    ),
]
CertIssuerOpt = Annotated[str, typer.Option("--cert-oidc-issuer", help="OIDC issuer to require.")]
RepositoryOpt = Annotated[
    str | None,
    typer.Option("--repository", help="Require the certificate's source repository OWNER/REPO."),
]
RefOpt = Annotated[
    str | None, typer.Option("--ref", help="Require the git ref, e.g. refs/heads/main.")
]
OwnerIdOpt = Annotated[
    str | None,
    typer.Option("--owner-id", help="Require the numeric GitHub owner id (rename-proof)."),
]
RepositoryIdOpt = Annotated[
    str | None,
    typer.Option("--repository-id", help="Require the numeric GitHub repository id."),
]
TrustedRootOpt = Annotated[
    Path | None,
    typer.Option("--trusted-root", help="Sigstore TrustedRoot JSON to verify against."),
]
VerifyTrustConfigOpt = Annotated[
    Path | None,
    typer.Option("--trust-config", help="Sigstore ClientTrustConfig JSON to verify against."),
]
VerifyStagingOpt = Annotated[
    bool, typer.Option("--staging", help="Verify against Sigstore staging.")
]
OfflineOpt = Annotated[
    bool,
    typer.Option(
        "--offline",
        help="No network: use the trusted root vendored in histor-sign instead of a TUF refresh.",
    ),
]


def trust_from_flags(
    *,
    staging: bool = False,
    trusted_root: str | Path | None = None,
    trust_config: str | Path | None = None,
    offline: bool = False,
) -> Trust:
    """The :class:`Trust` named by ``--staging`` / ``--trusted-root`` / ``--trust-config``
    (at most one of them) and ``--offline``; production by default."""
    chosen = [
        flag
        for flag, given in (
            ("--staging", staging),
            ("--trusted-root", trusted_root is not None),
            ("--trust-config", trust_config is not None),
        )
        if given
    ]
    if len(chosen) > 1:
        raise UsageError(f"{' and '.join(chosen)} cannot be used together")
    if trusted_root is not None:
        return Trust.from_trusted_root(trusted_root)
    if trust_config is not None:
        return Trust.from_trust_config(trust_config)
    return Trust.staging(offline=offline) if staging else Trust.production(offline=offline)


@dataclass(frozen=True)
class VerifyFlags:
    """The identity pins and trust flags of ``verify``, ``check --verify`` and
    ``guard --verify``: one place turns them into :class:`Pins` and :class:`Trust`."""

    cert_identity: str | None
    cert_oidc_issuer: str
    repository: str | None
    ref: str | None
    owner_id: str | None
    repository_id: str | None
    trusted_root: Path | None
    trust_config: Path | None
    staging: bool
    offline: bool
    workflow: str | None = None
    ref_pattern: str | None = None
    cert_identity_regexp: str | None = None

    def require_verify(self, verify: bool) -> None:
        """Pins and trust flags without ``--verify`` would be silently ignored: refuse them."""
        if not verify and self.any_given():
            raise UsageError("identity and trust flags need --verify")

    def any_given(self) -> bool:
        """True if any identity or trust flag was given."""
        given = (self.cert_identity, self.repository, self.ref, self.owner_id,
                 self.repository_id, self.trusted_root, self.trust_config, self.workflow,
                 self.ref_pattern, self.cert_identity_regexp)
        return any(v is not None for v in given) or self.staging or self.offline

    def names_trust(self) -> bool:
        """True if a trust root flag was given (``--staging``, ``--trusted-root`` or
        ``--trust-config``); without one a pin's recorded trust root applies."""
        return self.staging or self.trusted_root is not None or self.trust_config is not None

    def trust_for_pin(self, entry: "PinEntry | None") -> Trust:
        """The trust root ``entry`` was pinned under (a trust flag must name that same
        root: :meth:`PinEntry.trust_for_use`); the trust these flags name without a pin."""
        if entry is None:
            return self.trust()
        return entry.trust_for_use(self.given_trust(), offline=self.offline)

    def given_trust(self) -> Trust | None:
        """The trust root a flag names, or None (then a pin's recorded root applies)."""
        return self.trust() if self.names_trust() else None

    def trust(self) -> Trust:
        """The trust these flags name (production by default)."""
        return trust_from_flags(
            staging=self.staging, trusted_root=self.trusted_root,
            trust_config=self.trust_config, offline=self.offline,
        )

    def pins(self) -> "Pins":
        """The identity pins these flags name."""
        from histor_sign.verification.policy import Pins

        return Pins(
            cert_identity=self.cert_identity, issuer=self.cert_oidc_issuer,
            repository=self.repository, ref=self.ref, owner_id=self.owner_id,
            repository_id=self.repository_id, workflow=self.workflow,
            ref_pattern=self.ref_pattern, identity_regexp=self.cert_identity_regexp,
        )


_SignStatement = Annotated[
    str,
    typer.Argument(help="Revision statement JSON (from 'histor-sign build'), or - for stdin."),
]
_SignOutput = Annotated[
    Path,
    typer.Option(
        "--output",
        "-o",
        help="Envelope to write, e.g. release.envelope.json. Also writes "
        "release.statement.json "
        "(the exact signed bytes), release.sigstore.json (the Sigstore bundle) and "
        "release.intoto.sigstore.json (the in-toto attestation) beside it, and with "
        "--snapshot release.manifest.json (the manifest's canonical bytes, the "
        "attestation's manifest subject); for other names a trailing .json is replaced.",
    ),
]
_SignIdentityToken = Annotated[
    str | None,
    typer.Option(
        "--identity-token",
        envvar="SIGSTORE_IDENTITY_TOKEN",
        show_envvar=True,
        help="OIDC identity token. Default: ambient credentials (GitHub Actions with "
        "'permissions: id-token: write').",
    ),
]
_SignStaging = Annotated[
    bool, typer.Option("--staging", help="Use Sigstore staging (testing only).")
]
_SignTrustConfig = Annotated[
    Path | None,
    typer.Option(
        "--trust-config",
        help="Sigstore ClientTrustConfig JSON naming the Fulcio/Rekor to use (e.g. the file "
        "written by 'histor-sign dev-sigstore'). Default: public-good production.",
    ),
]
_SignSnapshot = Annotated[
    str | None,
    typer.Option(
        "--snapshot", metavar="FILE",
        help="The fetch snapshot the statement was built from: its capture context and "
        "a digest per prompt, per resource template and of the instructions go into the "
        "in-toto attestation, and its tools give the manifest's canonical bytes "
        "(X.manifest.json; the statement holds only their digest). Its tools must be "
        "the statement's.",
    ),
]


@app.command()
def sign(
    statement: _SignStatement,
    output: _SignOutput,
    identity_token: _SignIdentityToken = None,
    staging: _SignStaging = False,
    trust_config: _SignTrustConfig = None,
    snapshot: _SignSnapshot = None,
) -> None:
    """Sign a revision statement keyless with Sigstore, verify the fresh bundle, and write
    the envelope, statement bytes and bundle atomically."""
    from dataclasses import replace

    from histor_sign.canonical import read_json_file
    from histor_sign.layout import attestation_path, companion_paths, manifest_path
    from histor_sign.models import Statement
    from histor_sign.signing import reserve_signed_outputs, sign_statement

    trust = trust_from_flags(staging=staging, trust_config=trust_config)
    stmt = Statement.from_json(read_json_file(statement), statement)
    capture, surface, manifest = (_snapshot_evidence(snapshot, stmt) if snapshot
                                  else (None, None, b""))
    warn(trust.warning())
    _finish_interrupted(output)
    with reserve_signed_outputs(output, len(stmt.to_bytes()),
                                manifest=bool(manifest)) as reserved:
        signed = sign_statement(stmt, trust=trust, identity_token=identity_token,
                                capture=capture, surface=surface)
        signed = replace(signed, manifest_json=manifest)
        signed.write(output, reserved)
    statement_path, bundle_path = companion_paths(output)
    env = signed.envelope
    log = env.transparency_log
    emit(
        "\n".join(
            [
                f"signed {env.server} revision {env.revision} as {env.identity}",
                f"  envelope  {output}",
                f"  statement {statement_path}",
                f"  bundle    {bundle_path}",
                f"  attestation {attestation_path(output)} (in-toto, "
                f"{len(signed.attestation_json)} part(s))",
                *([f"  manifest  {manifest_path(output)}"] if manifest else []),
                f"  log index {log.log_index} (log id {log.log_id})",
            ]
        ),
        None,
    )


def _finish_interrupted(output: Path) -> None:
    """Settle a group a killed earlier run of this command left half renamed, and say so."""
    from histor_sign._atomic import finish_interrupted
    from histor_sign._escape import printable

    done = finish_interrupted(output)
    if done:
        warn(f"an earlier write of {printable(str(output))} was interrupted (killed between "
             f"its renames); rolled forward: {len(done)} of its complete new files put in "
             "place before this write")


def _snapshot_evidence(
    path: str, statement: "Statement"
) -> "tuple[dict[str, Any], dict[str, Any] | None, bytes]":
    """(capture, surface digests, manifest bytes) of ``sign --snapshot``; the snapshot's
    tools must be the statement's, so the attestation cannot carry another fetch's context
    and the manifest bytes hash to the signed manifestDigest."""
    from histor_sign.canonical import read_json_file
    from histor_sign.models import Snapshot
    from histor_sign.revision import digests, manifest_bytes, surface_json

    snap = Snapshot.from_json(read_json_file(path), path)
    manifest, _ = digests(snap)
    if manifest != statement.manifest_digest:
        raise UsageError(
            f"--snapshot: {path} is not the catalog the statement was built from (manifest "
            f"digest {manifest}, the statement's {statement.manifest_digest})"
        )
    return snap.capture, surface_json(snap), manifest_bytes(snap)


_VerifyEnvelope = Annotated[
    str | None, typer.Argument(help="Signed revision envelope (*.envelope.json).")
]
_VerifyPrevious = Annotated[
    str | None,
    typer.Option(
        "--previous",
        help="Previous envelope: check same server, revision+1, digest chain, its "
        "signature under the same pins, and the same publisher (numeric owner and "
        "repository ids, workflow file).",
    ),
]
_VerifyTools = Annotated[
    str | None,
    typer.Option("--tools", help="Tool catalog whose digests must equal the signed ones; "
                 "with --attestation, a fetch snapshot (e.g. the release's "
                 "tools.snapshot.json) is also checked against the attested digests of "
                 "its instructions, prompts and resource templates."),
]
_VerifyFormat = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="Report format: human or json.")
]
_VerifyAttestation = Annotated[
    str | None,
    typer.Option(
        "--attestation",
        help="In-toto attestation (*.intoto.sigstore.json) to verify on the same axes; "
        "with an envelope, its subjects must equal the envelope's digests.",
    ),
]


_VerifyAnyWorkflow = Annotated[
    bool,
    typer.Option(
        "--any-workflow-of-owner",
        help="Verify with no signer pinned: accept ANY workflow of the io.github namespace "
        "owner (prints a warning). Without it, verify needs --repository (with --workflow), "
        "--cert-identity or --cert-identity-regexp.",
    ),
]


@app.command()
def verify(
    envelope: _VerifyEnvelope = None,
    cert_identity: CertIdentityOpt = None,
    cert_identity_regexp: CertIdentityRegexpOpt = None,
    cert_oidc_issuer: CertIssuerOpt = GITHUB_ACTIONS_ISSUER,
    repository: RepositoryOpt = None,
    workflow: WorkflowOpt = None,
    ref: RefOpt = None,
    ref_pattern: RefPatternOpt = None,
    owner_id: OwnerIdOpt = None,
    repository_id: RepositoryIdOpt = None,
    previous: _VerifyPrevious = None,
    tools: _VerifyTools = None,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
    format: _VerifyFormat = OutputFormat.human,
    attestation: _VerifyAttestation = None,
    any_workflow_of_owner: _VerifyAnyWorkflow = False,
) -> None:
    """Verify a signed envelope and/or its in-toto attestation: well-formed,
    signature/chain/SCT/inclusion, identity, transparency-log copy, revision chain and tool
    digests — each reported separately."""
    from histor_sign.models import load_envelope
    from histor_sign.verification import require_signer_pin
    from histor_sign.verification import verify as verify_envelope

    flags = VerifyFlags(
        cert_identity, cert_oidc_issuer, repository, ref, owner_id, repository_id,
        trusted_root, trust_config, staging, offline, workflow=workflow,
        ref_pattern=ref_pattern, cert_identity_regexp=cert_identity_regexp,
    )
    if envelope is None and attestation is None:
        raise UsageError("give an envelope, `attestation`, or both", param="attestation")
    trust = flags.trust()
    # Bad input first (exit 2, one line), then the trust warning, then the checks.
    signed = load_envelope(envelope) if envelope is not None else None
    attested, prev, catalog = _verify_inputs(attestation, previous, tools)
    pins = flags.pins()
    unpinned = require_signer_pin(pins, any_workflow_of_owner=any_workflow_of_owner)
    warn(trust.warning())
    warn(unpinned)
    reports = []
    if signed is not None:
        reports.append(verify_envelope(
            signed, pins=pins, trust=trust, previous=prev, tools=catalog, source=envelope,
            previous_source=previous, tools_source=tools,
        ))
    if attested is not None:
        from histor_sign.attestation import verify_attestation

        reports.append(verify_attestation(
            attested, pins=pins, trust=trust, previous=prev, tools=catalog, envelope=signed,
            source=attestation, previous_source=previous, tools_source=tools,
        ))
    if reports and signed is not None:
        from histor_sign.yank import with_yank_axis

        reports[0] = with_yank_axis(reports[0], pins=pins, trust=trust)
    _emit_reports([_skips_named_by_flag(r) for r in reports], format)


_VerifyInputs = tuple["Attestation | None", "SignedEnvelope | None", "Snapshot | Catalog | None"]


def _verify_inputs(attestation: str | None, previous: str | None,
                   tools: str | None) -> "_VerifyInputs":
    """Step: load the attestation, previous envelope and tools given (in that order)."""
    from histor_sign.models import load_envelope

    attested: Attestation | None = None
    catalog: Snapshot | Catalog | None = None
    if attestation is not None:  # each import only when its flag is given
        from histor_sign.attestation import load_attestation

        attested = load_attestation(attestation)
    prev = load_envelope(previous) if previous is not None else None
    if tools is not None:
        from histor_sign.cli.target_options import snapshot_or_catalog_file

        catalog = snapshot_or_catalog_file(tools)
    return attested, prev, catalog


def _emit_reports(reports: "list[VerificationReport]", format: OutputFormat) -> None:
    """Step: print the envelope's and/or the attestation's report; fail on either."""
    if format is OutputFormat.json:
        document = reports[0].to_json()
        if len(reports) == 2:
            document["attestation"] = reports[1].to_json()
            document["verified"] = all(r.ok for r in reports)
        emit(json_document(document), None)
    else:
        emit("\n".join(r.to_text() for r in reports), None)
    for report in reports:
        report.raise_for_failure()


#: The parameter whose absence skips an optional axis; the CLI names it by its flag.
_SKIPPED_FOR = {"chain": "previous", "tools": "tools"}


def _flags_spelled(text: str) -> str:
    """The library names a parameter as `name`; the report shows this CLI's flag, as the
    error line on stderr does (:func:`histor_sign.cli.app.cli_message`)."""
    for name, flag in FLAGS.items():
        mention = f"`{name}`"
        if mention in text:
            text = text.replace(mention, flag)
    return text


def _skips_named_by_flag(report: "VerificationReport") -> "VerificationReport":
    from dataclasses import replace

    from histor_sign.verification import AxisStatus

    axes = tuple(
        replace(a, detail=f"no {FLAGS[_SKIPPED_FOR[a.axis]]} given")
        if a.status is AxisStatus.SKIPPED and a.axis in _SKIPPED_FOR
        else replace(a, detail=_flags_spelled(a.detail))
        for a in report.axes
    )
    return replace(report, axes=axes)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


_DevSigstoreTrustConfigOut = Annotated[
    Path,
    typer.Option(
        "--trust-config-out",
        help="Write the instance's ClientTrustConfig JSON here (pass it to --trust-config).",
    ),
]
_DevSigstoreTrustedRootOut = Annotated[
    Path | None,
    typer.Option("--trusted-root-out", help="Also write the bare TrustedRoot JSON here."),
]
_DevSigstorePort = Annotated[
    int, typer.Option("--port", min=0, max=65535, help="Port to bind (0 = any free port).")
]
_DevSigstoreTokenFor = Annotated[
    list[str] | None,
    typer.Option(
        "--token-for",
        help="Mint a GitHub-Actions-style identity token for this workflow identity "
        "(https://github.com/OWNER/REPO/.github/workflows/FILE.yml@REF). Repeat it with one "
        "--token-out each (in the same order) for several identities.",
    ),
]
_DevSigstoreState = Annotated[
    Path | None,
    typer.Option(
        "--state", metavar="DIR",
        help="Keep the instance's keys, certificates and log in DIR across restarts (0600 "
        "state file), so releases signed before a restart still verify and chain on the "
        "same trust root. Use a fixed --port to keep its URLs too.",
    ),
]
_DevSigstoreTokenRepository = Annotated[
    str | None,
    typer.Option(
        "--token-repository",
        help="Calling repository OWNER/REPO for the token (default: the workflow's own).",
    ),
]
_DevSigstoreTokenOut = Annotated[
    list[Path] | None,
    typer.Option("--token-out", help="File to write the minted token to (never printed); "
                 "one per --token-for."),
]
_DevSigstoreTokenLifetime = Annotated[
    int, typer.Option("--token-lifetime", min=1, max=86400, help="Token lifetime in seconds.")
]
_DevSigstoreGithubEnvOut = Annotated[
    Path | None,
    typer.Option(
        "--github-env-out",
        help="Write GITHUB_ACTIONS / ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN lines (KEY=VALUE) "
        "for --token-for, to exercise ambient detection.",
    ),
]
_DevSigstoreRekorVersion = Annotated[
    int,
    typer.Option(
        "--rekor-version", min=1, max=2,
        help="Transparency log API: 1 = hashedrekord 0.0.1 with integrated time and SET; "
        "2 = hashedrekord 0.0.2, checkpoint only, no integrated time (production Rekor v2: "
        "the signed time comes from the timestamp authority, so it needs --tsa).",
    ),
]
_DevSigstoreTsa = Annotated[
    bool | None,
    typer.Option(
        "--tsa/--no-tsa",
        help="Run an RFC 3161 timestamp authority and list it in the signing config and "
        "trusted root, so signatures carry a signed timestamp. "
        "Default: on with --rekor-version 2, off with 1.",
        show_default=False,
    ),
]
_DevSigstoreFirstIndex = Annotated[
    int,
    typer.Option(
        "--first-index", min=0, max=MAX_FIRST_INDEX,
        help="Log index of the first signature (earlier indexes are placeholders). "
        "0 is what the first entry of a real log gets, but cosign 2.x reads index 0 as "
        "missing, hence the default 1.",
    ),
]


def _check_token_pairing(
    token_for: list[str], token_out: list[Path], github_env_out: Path | None
) -> None:
    """Step: --token-for comes with somewhere to write the token, and only with it."""
    if (token_out or github_env_out) and not token_for:
        raise UsageError("--token-out and --github-env-out need --token-for IDENTITY")
    if token_for and not (token_out or github_env_out):
        raise UsageError("--token-for needs --token-out FILE or --github-env-out FILE")


def _check_token_flags(
    token_for: list[str], token_out: list[Path], github_env_out: Path | None
) -> None:
    """--token-for pairs with --token-out in order; --github-env-out takes one identity."""
    _check_token_pairing(token_for, token_out, github_env_out)
    if token_out and len(token_out) != len(token_for):
        raise UsageError(f"give one --token-out per --token-for ({len(token_for)} identities, "
                         f"{len(token_out)} --token-out)")
    if github_env_out is not None and len(token_for) != 1:
        raise UsageError("--github-env-out takes exactly one --token-for identity")


@app.command("dev-sigstore")
def dev_sigstore(
    trust_config_out: _DevSigstoreTrustConfigOut,
    trusted_root_out: _DevSigstoreTrustedRootOut = None,
    host: Annotated[str, typer.Option("--host", help="Loopback address to bind.")] = "127.0.0.1",
    port: _DevSigstorePort = 0,
    token_for: _DevSigstoreTokenFor = None,
    token_repository: _DevSigstoreTokenRepository = None,
    token_out: _DevSigstoreTokenOut = None,
    token_lifetime: _DevSigstoreTokenLifetime = 3600,
    github_env_out: _DevSigstoreGithubEnvOut = None,
    rekor_version: _DevSigstoreRekorVersion = 1,
    tsa: _DevSigstoreTsa = None,
    first_index: _DevSigstoreFirstIndex = 1,
    state: _DevSigstoreState = None,
) -> None:
    """Run a LOCAL, UNTRUSTED Sigstore instance (Fulcio, Rekor v1 or v2, optional RFC 3161
    timestamp authority, GitHub-style OIDC) in the foreground, for tests and offline demos.
    Stop with Ctrl-C or SIGTERM."""
    from histor_sign._atomic import write_all_atomic

    _check_dev_options(host, rekor_version, tsa)
    _check_token_flags(token_for or [], token_out or [], github_env_out)
    instance = _started_dev_sigstore(host, port, rekor_version, tsa, first_index, state)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        files: dict[Path, bytes] = {
            trust_config_out: (json.dumps(instance.trust_config, indent=2) + "\n").encode()
        }
        if trusted_root_out is not None:
            files[trusted_root_out] = (
                json.dumps(instance.trust_config["trustedRoot"], indent=2) + "\n"
            ).encode()
        files.update(_dev_token_files(instance, token_for or [], token_out or [],
                                      token_repository, token_lifetime, github_env_out))
        # The tokens (and the env lines carrying one) are secrets: 0600 whatever the umask.
        write_all_atomic(files, private=[*(token_out or []),
                                         *([github_env_out] if github_env_out else [])])
        warn(
            "dev-sigstore is a LOCAL, UNTRUSTED Sigstore instance for tests and demos: anyone "
            "can mint any identity here. Never use its trust config for real releases."
        )
        _announce_dev_sigstore(instance, state, rekor_version, first_index, trust_config_out)
        instance.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        instance.stop()


def _check_dev_options(host: str, rekor_version: int, tsa: bool | None) -> None:
    """Step: loopback only; Rekor v2 (no integrated time) needs a timestamp authority."""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise UsageError("dev-sigstore binds loopback only (--host 127.0.0.1, localhost or ::1)")
    if rekor_version == 2 and tsa is False:
        raise UsageError(
            "--rekor-version 2 needs --tsa: its log entries carry no time, so a signature "
            "could never be checked against its certificate's validity"
        )


def _announce_dev_sigstore(instance: "LocalSigstore", state: Path | None, rekor_version: int,
                           first_index: int, trust_config_out: Path) -> None:
    """Step: one stderr line saying where the instance listens and what it runs."""
    kept = (f"; state in {state} ({'restored' if instance.restored else 'new'}, "
            f"{len(instance.log.tree)} log entries)") if state is not None else ""
    sys.stderr.write(inert_line(
        f"{PROG}: dev-sigstore listening on {instance.url}{kept} (Rekor v{rekor_version}, "
        f"{'with' if instance.tsa else 'no'} timestamp authority, first log index "
        f"{first_index}); trust config {trust_config_out}"
    ) + "\n")
    sys.stderr.flush()


def _started_dev_sigstore(host: str, port: int, rekor_version: int, tsa: bool | None,
                          first_index: int, state: Path | None) -> "LocalSigstore":
    """Step: the local instance, started (a bad ``--state`` or a busy port: usage errors)."""
    from histor_sign.sigstore_dev import LocalSigstore

    try:
        instance = LocalSigstore(host=host, port=port, rekor_version=rekor_version, tsa=tsa,
                                 first_index=first_index, state=state)
    except ValueError as exc:
        from histor_sign._escape import printable

        raise UsageError(f"--state: {printable(str(exc))}") from None
    try:
        instance.start()
    except OSError as exc:
        raise UsageError(f"cannot bind {host}:{port}: {exc.strerror}") from None
    return instance


def _dev_token_files(instance: "LocalSigstore", token_for: list[str], token_out: list[Path],
                     token_repository: str | None, token_lifetime: int,
                     github_env_out: Path | None) -> dict[Path, bytes]:
    """Step: each minted token's file, and the GitHub-style env file for the first."""
    files: dict[Path, bytes] = {}
    try:
        for identity, out in zip(token_for, token_out, strict=False):
            files[out] = instance.mint_token(identity, repository=token_repository,
                                             lifetime=token_lifetime).encode()
        if github_env_out is not None and token_for:
            env = instance.github_env(token_for[0], repository=token_repository)
            files[github_env_out] = "".join(f"{k}={v}\n" for k, v in env.items()).encode()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return files


@app.command("attest-github")
def attest_github(
    attestation: Annotated[Path, typer.Argument(
        metavar="ATTESTATION", help="The release's intoto.sigstore.json (part 1; further parts "
        "beside it are published too).")],
    repository: Annotated[str, typer.Option(
        "--repository", metavar="OWNER/REPO", envvar="GITHUB_REPOSITORY",
        help="The repository the attestation is stored for. Default: $GITHUB_REPOSITORY.")],
    token_env: Annotated[str, typer.Option(
        "--token-env", metavar="NAME",
        help="Environment variable holding a token allowed 'attestations: write'.")]
    = "GITHUB_TOKEN",
    api_url: Annotated[str, typer.Option(
        "--api-url", envvar="GITHUB_API_URL", help="GitHub REST API base URL.")]
    = "https://api.github.com",
) -> None:
    """Publish the in-toto attestation to GitHub's attestations store, so that
    'gh attestation verify' (gh >= 2.49) finds it. Exit codes: 0 published, 2 bad input or
    GitHub refused it."""
    import os

    from histor_sign.canonical import read_bytes
    from histor_sign.github_attestations import publish_attestations
    from histor_sign.layout import part_paths

    token = os.environ.get(token_env, "").strip()
    if not token:
        raise UsageError(f"--token-env: environment variable {token_env} is not set or empty")
    paths = [attestation]
    while (more := part_paths(attestation, len(paths) + 1)[-1]).exists():
        paths.append(more)
    ids = publish_attestations([(str(p), read_bytes(str(p))) for p in paths], repository,
                               token=token, api_url=api_url)
    emit("\n".join(f"published {p} to {repository} as attestation {i}"
                   for p, i in zip(paths, ids, strict=True)), None)
