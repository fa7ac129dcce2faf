"""``check``: compare the tools a server serves now with a signed revision."""


import json
from pathlib import Path

import typer

from histor_sign._internal.certificate import GITHUB_ACTIONS_ISSUER
from histor_sign.cli import target_options as t
from histor_sign.cli.app import OutputFormat, app, emit
from histor_sign.cli.signing_commands import (
    CertIdentityOpt,
    CertIssuerOpt,
    OfflineOpt,
    OwnerIdOpt,
    RefOpt,
    RepositoryIdOpt,
    RepositoryOpt,
    TrustedRootOpt,
    VerifyFlags,
    VerifyStagingOpt,
    VerifyTrustConfigOpt,
    verify_signed_envelope,
)

FORMAT_OPT = typer.Option(
    OutputFormat.human, "--format", "-f", help="human (summary and per-tool lines) or json."
)
OUTPUT_OPT = typer.Option(
    None, "--output", "-o", help="Write the result to this file (atomically)."
)
ENVELOPE_OPT = typer.Option(
    ..., "--envelope", metavar="FILE|URL",
    help="Signed revision envelope (or bare statement) to compare against: a file, or an "
    "https URL such as the published revisions/<server>/latest.envelope.json. Checks "
    "digests only, unless --verify is given.",
)
SIGNED_TOOLS_OPT = typer.Option(
    None, "--signed-tools", metavar="FILE",
    help="The catalog that was signed (e.g. the release snapshot); lets check name the "
    "changed fields and diff descriptions. Must match the envelope's digests.",
)
TOOLS_ARG = typer.Argument(
    None, metavar="[TOOLS_FILE]",
    help="What the server serves now: tools/list JSON or a fetch snapshot; - for stdin. "
    "Or fetch it live with --stdio/--url.",
)
VERIFY_OPT = typer.Option(
    False, "--verify",
    help="Also verify the envelope's signature and identity first (same pins as 'verify'); "
    "a failed verification exits 1 before any comparison.",
)


@app.command()
def check(
    tools: str | None = TOOLS_ARG,
    envelope: str = ENVELOPE_OPT,
    signed_tools: str | None = SIGNED_TOOLS_OPT,
    format: OutputFormat = FORMAT_OPT,
    output: Path | None = OUTPUT_OPT,
    stdio: str | None = t.STDIO_OPTION,
    url: str | None = t.URL_OPTION,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    timeout: float = t.TIMEOUT_OPTION,
    protocol: t.ProtocolChoice = t.PROTOCOL_OPTION,
    verify: bool = VERIFY_OPT,
    cert_identity: CertIdentityOpt = None,
    cert_oidc_issuer: CertIssuerOpt = GITHUB_ACTIONS_ISSUER,
    repository: RepositoryOpt = None,
    ref: RefOpt = None,
    owner_id: OwnerIdOpt = None,
    repository_id: RepositoryIdOpt = None,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
) -> None:
    """Detect drift between the tools a server serves now and a signed revision.

    With --verify the envelope's signature and signer identity are verified first, so a
    client pins the publisher's workflow in one step. Exit codes: 0 match, 1 different
    (or verification failed), 2 bad input.
    """
    from histor_sign._internal import chain_store
    from histor_sign.canonical import parse_json, read_json_file
    from histor_sign.catalog import load_catalog
    from histor_sign.drift import compare

    target = t.target_from_flags(stdio, url, header, bearer_token_env, required=False)
    flags = VerifyFlags(
        cert_identity, cert_oidc_issuer, repository, ref, owner_id, repository_id,
        trusted_root, trust_config, staging, offline,
    )
    flags.require_verify(verify)
    if chain_store.is_url(envelope):
        signed_statement = parse_json(chain_store.fetch_envelope(envelope, timeout=timeout),
                                      envelope)
    else:
        signed_statement = read_json_file(envelope)
    signed_catalog = load_catalog(signed_tools).tools if signed_tools else None
    if verify:
        verify_signed_envelope(signed_statement, envelope, flags)
    options = t.fetch_options_from_flags(timeout=timeout, protocol=protocol)
    served = t.tools_from_file_or_target(
        tools, target, options, what="the served tools (TOOLS_FILE)"
    )
    result = compare(signed_statement, served, signed_catalog, source=envelope)
    if format is OutputFormat.json:
        emit(json.dumps(result.to_json(), indent=2, ensure_ascii=False), output)
    else:
        emit(result.to_text(fields_hint="pass --signed-tools to name them"), output)
    if not result.matches:
        raise typer.Exit(1)

