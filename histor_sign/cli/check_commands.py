"""``check``: compare the tools (and server surface) a server serves now with a signed
revision."""


from pathlib import Path
from typing import TYPE_CHECKING

import typer

from histor_sign.cli import target_options as t
from histor_sign.cli._binding import ARTIFACT_OPT, INSTALLED_OPT, check_binding
from histor_sign.cli.app import OutputFormat, app, emit, json_document, warn
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
    awaiting_hint,
    pinned_store,
    verify_for_use,
)
from histor_sign.errors import UsageError
from histor_sign.mcp._target import FetchOptions, Target
from histor_sign.models import GITHUB_ACTIONS_ISSUER, Risk

if TYPE_CHECKING:
    from histor_sign.drift import DriftResult
    from histor_sign.models import SurfaceDigests
    from histor_sign.pins import VerifiedForUse

FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human (summary and per-tool lines) or json."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the result to this file (atomically)."
)
ENVELOPE_OPT = typer.Option(
    None, "--envelope", metavar="FILE|URL",
    help="Signed revision envelope (or bare statement) to compare against: a file, or an "
    "https URL such as the published revisions/<server>/latest.envelope.json. Checks "
    "digests only, unless --verify or --server is given. Omit it with --server to use the "
    "latest revision from the pinned location.",
)
SIGNED_TOOLS_OPT = typer.Option(
    None, "--signed-tools", metavar="FILE",
    help="The catalog that was signed (e.g. the release snapshot); lets check name the "
    "changed fields and diff descriptions, and, as a fetch snapshot, compare the server "
    "instructions, prompts and resource templates. Must match the envelope's digests.",
)
TOOLS_ARG = typer.Argument(
    None, metavar="[TOOLS_FILE]",
    help="What the server serves now: tools/list JSON or a fetch snapshot; - for stdin. "
    "Or fetch it live with --stdio/--url.",
)
FAIL_ON_OPT = typer.Option(
    None, "--fail-on", case_sensitive=False,
    help="Exit 1 only when some change reaches this risk (low, medium or high; see "
    "docs/drift.md for the rubric). Default: any difference exits 1.",
)
VERIFY_OPT = typer.Option(
    False, "--verify",
    help="Also verify the envelope's signature and identity first; the publisher must be "
    "pinned ('trust add', --server, or the identity flags). A failed verification exits 1 "
    "before any comparison.",
)
ATTESTATION_OPT = typer.Option(
    None, "--attestation", metavar="FILE|URL",
    help="The envelope's in-toto attestation (*.intoto.sigstore.json): verified under the "
    "same pins and trust as the envelope (implies --verify), and its signed surface digests "
    "become the baseline for instructions, prompts and resource templates. Without it the "
    "surface can only be compared with --signed-tools, which is not signed.",
)

LOCK_OPT = typer.Option(
    None, "--lock", metavar="FILE",
    help="Compare with the definitions locked in this lock file ('histor-sign lock'; trust "
    "on first use, not publisher-signed) instead of a signed revision; --server NAME picks "
    "the entry (default: the only one, or the one locked from the same command or URL).",
)


ALL_OPT = typer.Option(
    False, "--all",
    help="Check every pinned server: its latest revision followed and verified under its "
    "pin (a revision that chains advances the pin). With --host-config, the servers of "
    "that file instead, fetched live. Exit 1 when any check fails.",
)
HOST_CONFIG_OPT = typer.Option(
    None, "--host-config", metavar="FILE",
    help="With --all: an MCP host config (Claude Desktop, VS Code, Cursor, Claude Code); "
    "each server in it that runs through the proxy ('histor-sign wrap') is fetched with "
    "its original command and compared with its latest revision under the pin.",
)


#: How to get the surface (instructions, prompts, resource templates) compared.
SURFACE_HINT = ("compare a fetch snapshot or --stdio/--url with the release snapshot as "
                "--signed-tools")


@app.command()
def check(
    tools: str | None = TOOLS_ARG,
    envelope: str | None = ENVELOPE_OPT,
    server: ServerOpt = None,
    pins: PinsOpt = None,
    signed_tools: str | None = SIGNED_TOOLS_OPT,
    attestation: str | None = ATTESTATION_OPT,
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    fail_on: Risk | None = FAIL_ON_OPT,
    stdio: str | None = t.STDIO_OPTION,
    url: str | None = t.URL_OPTION,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    server_is_trusted_code: bool = t.TRUSTED_CODE_OPTION,
    timeout: float = t.TIMEOUT_OPTION,
    protocol: t.ProtocolChoice = t.PROTOCOL_OPTION,
    verify: bool = VERIFY_OPT,
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
    lock: Path | None = LOCK_OPT,
    artifact: str | None = ARTIFACT_OPT,
    installed: str | None = INSTALLED_OPT,
    all_pinned: bool = ALL_OPT,
    host_config: Path | None = HOST_CONFIG_OPT,
) -> None:
    """Detect drift between the tools a server serves now and a signed revision.

    With --server NAME (after 'trust add') the latest revision comes from the pinned location,
    verified under the pin and checked for freshness (a rollback, a fork or a broken chain exits
    1; a newer revision that chains advances the pin). With --verify the given envelope's
    signature and signer are verified first, against the pin store, --server or the identity
    flags. Every change gets a kind and a risk (low, medium, high). When both sides are fetch
    snapshots (a live fetch counts), the server instructions, each prompt and each resource
    template are compared too; otherwise the surface is "not compared". The surface baseline is
    the attestation's signed digests (--attestation, or the one published beside the pinned
    revision) or else the release snapshot, which is not signed: the report says which ("surface
    baseline: attested | unsigned snapshot"). Exit codes: 0 match (or every change below
    --fail-on), 1 different (or verification failed), 2 bad input.
    """
    target = t.target_from_flags(stdio, url, header, bearer_token_env, required=False,
                                 trusted_code=server_is_trusted_code)
    flags = VerifyFlags(cert_identity, cert_oidc_issuer, repository, ref, owner_id, repository_id,
                        trusted_root, trust_config, staging, offline, workflow=workflow,
                        ref_pattern=ref_pattern, cert_identity_regexp=cert_identity_regexp)
    if artifact is not None or installed is not None:
        return check_binding(server, artifact, installed, flags, pins, format, output, others=(
            tools, target, envelope, signed_tools, attestation, fail_on, lock))
    if lock is not None:
        return _check_lock(lock, server, tools, target, timeout, protocol, format, output,
                           fail_on, _names_signed_revision(envelope, attestation, signed_tools,
                                                           verify), flags)
    if all_pinned or host_config is not None:
        return _check_all(all_pinned, host_config, flags, pins, tools, envelope, server,
                          target, server_is_trusted_code, timeout, protocol, format, output)
    _refuse_misplaced(envelope, server, attestation, signed_tools)
    verify = verify or server is not None or attestation is not None
    flags.require_verify(verify)
    options = t.fetch_options_from_flags(timeout=timeout, protocol=protocol)
    if envelope is None:
        assert server is not None
        return _check_pinned(server, tools, target, options, flags, pins, format, output,
                             fail_on)
    result, verified = _compare_with_envelope(
        envelope, tools, target, options, flags, server=server, pins=pins,
        signed_tools=signed_tools, attestation=attestation, verify=verify, timeout=timeout,
    )
    _emit_drift(result, verified, attestation, format, output, fail_on)


def _names_signed_revision(envelope: str | None, attestation: str | None,
                           signed_tools: str | None, verify: bool) -> bool:
    """Step: a flag about a signed revision was given (``--lock`` refuses them)."""
    return bool(envelope or attestation or signed_tools or verify)


def _refuse_misplaced(
    envelope: str | None, server: str | None, attestation: str | None, signed_tools: str | None,
) -> None:
    """The signed revision must be named; --attestation and --signed-tools come with
    --envelope (with --server both come from the pinned location)."""

    if envelope is None and server is None:
        raise UsageError("give the signed revision: --envelope FILE, or --server NAME (pinned)")
    if attestation is not None and envelope is None:
        raise UsageError("--attestation needs --envelope; with --server the attestation "
                         "comes from the pinned location")
    if signed_tools is not None and envelope is None:
        raise UsageError("--signed-tools needs --envelope; with --server the signed tools "
                         "come from the pinned location")


def _check_lock(
    lock: Path, server: str | None, tools: str | None, target: "Target | None",
    timeout: float, protocol: t.ProtocolChoice, format: OutputFormat, output: Path | None,
    fail_on: Risk | None, signed_revision: bool, flags: VerifyFlags,
) -> None:
    """``check --lock FILE``: the baseline is a lock file's entry (see ``lock``);
    ``signed_revision`` says a signed-revision flag was given, which --lock refuses."""
    from histor_sign.cli.lock_commands import check_lock

    options = t.fetch_options_from_flags(timeout=timeout, protocol=protocol)
    check_lock(lock, server, tools, target, options, format, output, fail_on,
               signed_flags=signed_revision or flags.any_given())


def _compare_with_envelope(
    envelope: str, tools: str | None, target: "Target | None", options: "FetchOptions",
    flags: VerifyFlags, *, server: str | None, pins: Path | None, signed_tools: str | None,
    attestation: str | None, verify: bool, timeout: float,
) -> "tuple[DriftResult, VerifiedForUse | None]":
    """``check --envelope``: the envelope (file or URL), verified for use when asked, against
    what is served (a file or a live fetch)."""
    from histor_sign import _chain_store as chain_store
    from histor_sign.canonical import parse_json, read_json_file
    from histor_sign.drift import compare

    if chain_store.is_url(envelope):
        signed_statement = parse_json(chain_store.fetch_envelope(envelope, timeout=timeout),
                                      envelope)
    else:
        signed_statement = read_json_file(envelope)
    signed_catalog = t.snapshot_or_catalog_file(signed_tools) if signed_tools else None
    verified = (verify_for_use(signed_statement, envelope, flags, server=server, pins=pins)
                if verify else None)
    signed_surface = (_attested_surface(attestation, verified, timeout)
                      if attestation is not None and verified is not None else None)
    served = t.served_from_file_or_target(
        tools, target, options, what="the served tools (TOOLS_FILE)"
    )
    result = compare(verified.envelope if verified else signed_statement, served,
                     signed_catalog, source=envelope, signed_surface=signed_surface)
    return result, verified


def _emit_drift(
    result: "DriftResult", verified: "VerifiedForUse | None", attestation: str | None,
    format: OutputFormat, output: Path | None, fail_on: Risk | None,
) -> None:
    """Print the drift (with who signed, when verified); exit 1 on a difference at or above
    ``fail_on`` (any difference without it)."""
    from histor_sign.pins import Freshness, verified_drift_text

    hint = "pass --signed-tools to name them"
    if format is OutputFormat.json:
        document = result.to_json()
        if verified is not None:
            document["verified"] = {**verified.to_json(), "attestation": attestation}
        emit(json_document(document), output)
    elif verified is not None:
        pinned = verified.pinned
        advanced = (pinned.detail if pinned is not None
                    and pinned.freshness is Freshness.ADVANCED else None)
        emit(verified_drift_text(result, verified.headline, advanced=advanced,
                                 fields_hint=hint, surface_hint=SURFACE_HINT), output)
    else:  # compared with digests nobody vouched for: the verdict line says so
        head, newline, rest = result.to_text(fields_hint=hint,
                                             surface_hint=SURFACE_HINT).partition("\n")
        emit(f"{head} (signature not verified){newline}{rest}", output)
    if not result.matches if fail_on is None else result.reaches(fail_on):
        raise typer.Exit(1)


def _attested_surface(
    address: str, verified: "VerifiedForUse", timeout: float
) -> "SurfaceDigests | None":
    """The surface digests of the attestation at ``address`` (file or URL), verified under
    the pins and trust the envelope verified under."""
    from histor_sign import _chain_store as chain_store
    from histor_sign.attestation import load_attestation, read_attestation, verified_surface
    from histor_sign.canonical import JsonValue, parse_json

    def fetch(url: str) -> JsonValue:
        return parse_json(chain_store.fetch_bytes(url, param="attestation", timeout=timeout),
                          url)

    parsed = (read_attestation(address, fetch) if chain_store.is_url(address)
              else load_attestation(address))
    assert verified.pins is not None and verified.trust is not None
    return verified_surface(parsed, verified.envelope, pins=verified.pins,
                            trust=verified.trust, source=address)


def _check_pinned(
    server: str, tools: str | None, target: "Target | None", options: "FetchOptions",
    flags: VerifyFlags, pins: Path | None, format: OutputFormat, output: Path | None,
    fail_on: Risk | None,
) -> None:
    """``check --server NAME``: the latest revision under the pin vs. what is served."""
    from histor_sign.pins import check_served

    store = pinned_store(server, flags, pins)
    served = t.served_from_file_or_target(
        tools, target, options, what="the served tools (TOOLS_FILE)"
    )
    trust = flags.trust_for_pin(store.get(server))
    warn(trust.warning())
    result = check_served(store, server, served, trust=trust)
    if format is OutputFormat.json:
        emit(json_document(result.to_json()), output)
    else:
        emit(result.to_text(), output)
    awaiting_hint(result.revision)
    drift = result.drift
    fresh = result.freshness.ok and drift is not None
    if not fresh or (not result.ok if fail_on is None else drift is None
                     or drift.reaches(fail_on)):
        raise typer.Exit(1)


def _check_all(
    all_pinned: bool, host_config: Path | None, flags: VerifyFlags, pins: Path | None,
    tools: str | None, envelope: str | None, server: str | None, target: "Target | None",
    trusted_code: bool, timeout: float, protocol: t.ProtocolChoice, format: OutputFormat,
    output: Path | None,
) -> None:
    """``check --all [--host-config FILE]`` (see :mod:`histor_sign.cli._check_all`)."""
    from histor_sign.cli._check_all import check_all

    if not all_pinned:
        raise UsageError("--host-config needs --all")
    if tools is not None or envelope is not None or server is not None or target is not None:
        raise UsageError("--all checks every pinned server: give no TOOLS_FILE, --envelope, "
                         "--server, --stdio or --url with it")
    options = t.fetch_options_from_flags(timeout=timeout, protocol=protocol)
    check_all(flags, pins, host_config, options=options, trusted_code=trusted_code,
              format=format, output=output)
