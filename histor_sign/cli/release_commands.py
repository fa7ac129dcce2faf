"""``release`` (the CI gate) and ``demo`` (the same, offline, against bundled parts)."""


import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from histor_sign._escape import printable
from histor_sign._limits import DEFAULT_SCAN_THRESHOLD
from histor_sign.cli import target_options as t
from histor_sign.cli.app import PROG, app, fail, say, warn
from histor_sign.errors import OperationalError, UsageError
from histor_sign.mcp._target import refuse_server_near_push_credentials
from histor_sign.models import Severity
from histor_sign.report._findings import FailOn

if TYPE_CHECKING:
    from histor_sign.demo.walkthrough import DemoResult
    from histor_sign.guard import Policy
    from histor_sign.mcp import FetchOptions, Target
    from histor_sign.models import Catalog, SignedEnvelope, Snapshot
    from histor_sign.pipeline import ReleaseOutcome, ReleaseRequest

#: The command a release's summary.md shows for verifying the envelope it wrote.
VERIFY_COMMAND = (f"{PROG} verify {{envelope}} --repository {{repository}} "
                  f"--workflow {{workflow}} --ref-pattern {{ref_pattern}}")


def _append(path_var: str, text: str) -> None:
    """Append to a GitHub Actions environment file named by ``path_var``, if set."""
    path = os.environ.get(path_var)
    if path:
        try:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(text)
        except OSError as exc:
            raise OperationalError(
                f"cannot write ${path_var} ({printable(path)}): {exc.strerror}"
            ) from None


#: The GitHub Actions files a release appends to, checked before anything is signed.
GITHUB_FILES = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")


def check_github_files() -> None:
    """Fail before signing (before a Rekor entry exists) when a GitHub Actions file that is
    set cannot be appended to: opened for appending, nothing written."""
    for var in GITHUB_FILES:
        path = os.environ.get(var)
        if not path:
            continue
        try:
            with open(path, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            raise OperationalError(
                f"cannot write ${var} ({printable(path)}): {exc.strerror}; nothing was signed"
            ) from None


def _github_output_lines(outputs: dict[str, str]) -> str:
    """Step outputs in the delimiter form (``key<<DELIM``, value, ``DELIM``).

    A value (an output path the user chose) may hold any character; a fresh random
    delimiter that occurs in no value means no value can end its entry early or add an
    output of its own.
    """
    import secrets

    text = "".join(f"{key}{value}" for key, value in outputs.items())
    while True:
        delimiter = f"histor_sign_{secrets.token_hex(16)}"
        if delimiter not in text:
            break
    return "".join(
        f"{key}<<{delimiter}\n{value}\n{delimiter}\n" for key, value in outputs.items()
    )


def print_outcome(outcome: "ReleaseOutcome", min_severity: Severity = Severity.note) -> None:
    """Human summary on stdout: the gate, then what was signed and written (findings below
    ``min_severity`` left out here; scan.sarif and summary.md keep every one)."""
    from histor_sign.cli.scan_commands import shown_findings
    from histor_sign.report._render import render

    shown = shown_findings(list(outcome.findings), min_severity, outcome.request.strict)
    if shown:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        say(render(shown, "human", color=color), colors=color)
    if outcome.envelope is None:
        return
    stmt = outcome.envelope.statement
    say(
        f"signed {stmt.server} {stmt.server_version} revision {stmt.revision} "
        f"({len(stmt.tool_digests)} tools)\n"
        f"  {'manifest':<11} {stmt.manifest_digest}\n"
        f"  {'signer':<11} {outcome.envelope.identity}\n"
        f"  {'rekor':<11} log index {outcome.envelope.transparency_log.log_index}\n"
        + "".join(f"  {'artifact':<11} {printable(a.shown)}\n" for a in outcome.artifacts)
        + "".join(f"  {role:<11} {path}\n" for role, path in outcome.files.items())
    )


_ReleaseServerVersion = Annotated[
    str, typer.Option("--server-version", help="The server version being released.")
]
_ReleaseTools = Annotated[
    str | None,
    typer.Option(
        "--tools", metavar="FILE",
        help="Release a catalog file (tools/list JSON or a fetch snapshot) instead of "
        "fetching live.",
    ),
]
_ReleaseIdentity = Annotated[
    str | None,
    typer.Option(
        "--identity",
        help="Workflow identity the revision claims. Default: the one in the OIDC token; "
        "if given it must equal it.",
    ),
]
_ReleasePrevious = Annotated[
    str | None,
    typer.Option(
        "--previous", metavar="ENVELOPE|URL|auto",
        help="Previous envelope to chain to: a file, an https URL, or 'auto' (the latest "
        "in --revisions; none there means the first release).",
    ),
]
_ReleaseRevisions = Annotated[
    Path | None,
    typer.Option(
        "--revisions", metavar="DIR",
        help="Chain directory (revisions/<server>/latest.envelope.json, <n>.envelope.json, "
        "<n>.tools.snapshot.json, <n>.intoto.sigstore.json): --previous auto reads it; a "
        "signed release is published into it.",
    ),
]
_ReleaseArtifact = Annotated[
    list[str] | None,
    typer.Option(
        "--artifact", metavar="FILE|oci:REF@sha256:…",
        help="A published artifact to bind to the revision (repeatable): an npm tarball, a "
        "wheel or sdist, any file, or an OCI image by digest. Each becomes a subject of "
        "the attestation (sha256; sha512 too for npm), verifiable with cosign "
        "verify-blob-attestation and 'check --artifact/--installed'.",
    ),
]
_ReleasePublishedAt = Annotated[
    str | None,
    typer.Option(
        "--published-at", metavar="URL|DIR",
        help="Where the chain directory is served (the directory of latest.envelope.json), "
        "for registry-meta.json, the server.json _meta fragment. Default: the "
        "histor-revisions branch of the signing repository.",
    ),
]
_ReleaseOutDir = Annotated[
    Path,
    typer.Option(
        "--out-dir",
        help="Directory for the release files only; locked while in use and replaced "
        "in one atomic step.",
    ),
]
_ReleaseFailOn = Annotated[
    FailOn,
    typer.Option("--fail-on", help="Fail the release on findings at this level."),
]
_ReleaseStrict = Annotated[
    bool, typer.Option("--strict", help="Also fail when the scan could not decide a pair.")
]
_ReleaseThreshold = Annotated[
    float, typer.Option("--threshold", help="Scan description similarity in (0, 1].")
]
_ReleasePolicy = Annotated[
    Path | None,
    typer.Option("--policy", help="Guard policy (TOML) used by the contract lint."),
]
_ReleaseIdentityToken = Annotated[
    str | None,
    typer.Option(
        "--identity-token", envvar="SIGSTORE_IDENTITY_TOKEN",
        help="OIDC token. Default: ambient (GitHub Actions with id-token: write).",
    ),
]
_ReleaseTrustConfig = Annotated[
    Path | None,
    typer.Option("--trust-config", help="Sigstore ClientTrustConfig (private/local instance)."),
]


_ReleaseMinSeverity = Annotated[
    Severity,
    typer.Option("--min-severity", help="List only findings at this severity or above "
                 "(note, warning, error); scan.sarif and summary.md keep all, and the gate "
                 "judges all."),
]


_ReleaseServer = Annotated[
    str, typer.Option("--server", help="Registry name, io.github.OWNER/NAME.")
]
_ReleaseStaging = Annotated[bool, typer.Option("--staging", help="Sign with Sigstore staging.")]


@app.command()
def release(
    server: _ReleaseServer,
    server_version: _ReleaseServerVersion,
    stdio: str | None = t.STDIO_OPTION,
    url: str | None = t.URL_OPTION,
    tools: _ReleaseTools = None,
    identity: _ReleaseIdentity = None,
    previous: _ReleasePrevious = None,
    revisions: _ReleaseRevisions = None,
    artifact: _ReleaseArtifact = None,
    published_at: _ReleasePublishedAt = None,
    out_dir: _ReleaseOutDir = Path("histor-release"),
    fail_on: _ReleaseFailOn = FailOn.error,
    strict: _ReleaseStrict = False,
    threshold: _ReleaseThreshold = DEFAULT_SCAN_THRESHOLD,
    policy: _ReleasePolicy = None,
    identity_token: _ReleaseIdentityToken = None,
    staging: _ReleaseStaging = False,
    trust_config: _ReleaseTrustConfig = None,
    header: list[str] | None = t.HEADER_OPTION,
    bearer_token_env: str | None = t.BEARER_OPTION,
    server_is_trusted_code: bool = t.TRUSTED_CODE_OPTION,
    timeout: float = t.TIMEOUT_OPTION,
    total_timeout: float = t.TOTAL_TIMEOUT_OPTION,
    max_pages: int = t.MAX_PAGES_OPTION,
    max_tools: int = t.MAX_TOOLS_OPTION,
    max_bytes: int = t.MAX_BYTES_OPTION,
    protocol: t.ProtocolChoice = t.PROTOCOL_OPTION,
    quiet: bool = t.QUIET_OPTION,
    min_severity: _ReleaseMinSeverity = Severity.note,
) -> None:
    """Fetch → scan gate → build → sign → verify → write, in one command (for CI).

    Writes envelope.json, statement.json, sigstore.json, intoto.sigstore.json,
    manifest.json, registry-meta.json (the server.json _meta fragment), scan.sarif,
    summary.md and tools.snapshot.json into --out-dir; a failed
    gate writes only scan.sarif and summary.md and exits 1. Appends to
    $GITHUB_STEP_SUMMARY / $GITHUB_OUTPUT when set.
    """
    from histor_sign.cli.scan_commands import parse_threshold
    from histor_sign.cli.signing_commands import trust_from_flags
    from histor_sign.collisions import ScanOptions
    from histor_sign.pipeline import ReleaseRequest

    target = t.target_from_flags(stdio, url, header, bearer_token_env, required=tools is None,
                                 trusted_code=server_is_trusted_code)
    if target is not None and tools is not None:
        raise UsageError("give --tools FILE or a live server (--stdio/--url), not both")
    if target is not None:
        refuse_server_near_push_credentials(target, os.environ)
    check_github_files()
    guard_policy = _load_policy(policy)
    trust = trust_from_flags(staging=staging, trust_config=trust_config)
    chained = _resolve_previous(previous, revisions, server)
    request = ReleaseRequest(
        server=server, server_version=server_version, out_dir=out_dir, identity=identity,
        previous=chained, revisions=revisions, fail_on=fail_on, strict=strict,
        scan=ScanOptions(threshold=parse_threshold(str(threshold)), max_tools=max_tools),
        policy=guard_policy, trust=trust, identity_token=identity_token,
        verify_command=VERIFY_COMMAND, observed=target is not None,
        artifacts=tuple(artifact or ()), published_at=published_at,
    )
    options = t.fetch_options_from_flags(
        timeout=timeout, total_timeout=total_timeout, max_pages=max_pages,
        max_tools=max_tools, max_bytes=max_bytes, protocol=protocol, quiet=quiet,
    )
    if target is not None and identity_token:
        # The token we hold never reaches the server, nor what it serves (an ambient token
        # is only requested after the fetch, from variables the server does not get).
        target = replace(target, guarded_secrets=(identity_token.strip(),))
    served = _served_tools(tools, target, options, max_tools, summary=not quiet)
    warn(trust.warning())
    _release_and_report(served, request, min_severity)


def _release_and_report(served: "Snapshot | Catalog", request: "ReleaseRequest",
                        min_severity: Severity) -> None:
    """Run the release pipeline and print what it found, signed and published; a failed
    gate prints its findings and exits 1 (nothing signed)."""
    from histor_sign.errors import GateFailed
    from histor_sign.pipeline import ReleaseOutcome
    from histor_sign.pipeline import release as run_release

    try:
        outcome = run_release(served, request)
    except GateFailed as exc:
        assert isinstance(exc.outcome, ReleaseOutcome)
        _report(exc.outcome, min_severity)
        fail(f"release gate failed: findings at --fail-on {request.fail_on.value}; nothing "
             f"was signed (see {exc.outcome.files['sarif']})", 1)
    _report(outcome, min_severity)  # findings, then what was signed and written
    for path in outcome.published:
        sys.stdout.write(f"  {'published':<11} {path}\n")
    if outcome.published:
        _append("GITHUB_OUTPUT", f"published={outcome.published[1]}\n")


def _resolve_previous(
    previous: str | None, revisions: Path | None, server: str
) -> "str | SignedEnvelope | None":
    """``--previous``: a file as given, an https URL fetched (bounded), or ``auto``: the latest
    envelope in ``--revisions`` (None there: the first release, said on stderr)."""
    from histor_sign import _chain_store as chain_store
    from histor_sign import layout
    from histor_sign.pipeline import latest_published

    if previous is None:
        return None
    if previous == "auto":
        if revisions is None:
            raise UsageError("--previous auto needs --revisions DIR (where the chain is kept)")
        latest = latest_published(revisions, server)
        if latest is None:
            where = layout.chain_dir(revisions, server)
            warn(f"no previous revision in {where}: releasing revision 1 (a new chain)")
            return None
        return str(latest)
    if chain_store.is_url(previous):
        from histor_sign.canonical import parse_json
        from histor_sign.models import parse_envelope

        data = chain_store.fetch_envelope(previous, param="previous")
        return parse_envelope(parse_json(data, previous), previous)
    return previous


def _load_policy(path: Path | None) -> "Policy | None":
    if path is None:
        return None
    from histor_sign.guard import Policy

    return Policy.load(path)


def _served_tools(
    path: str | None, target: "Target | None", options: "FetchOptions", max_tools: int,
    *, summary: bool = False,
) -> "Snapshot | Catalog":
    """A live fetch (every page, with its capture context) or the catalog file; a snapshot
    file stays a Snapshot, so its capture and server surface are kept as evidence."""
    if target is not None:
        return t.fetch_snapshot(target, options, summary=summary)
    assert path is not None
    return t.snapshot_or_catalog_file(path, max_tools=max_tools)


def _report(outcome: "ReleaseOutcome", min_severity: "Severity" = Severity.note) -> None:
    """Stdout summary, then the GitHub Actions step summary and outputs (when set)."""
    print_outcome(outcome, min_severity)
    _append("GITHUB_STEP_SUMMARY", outcome.summary_markdown)
    _append("GITHUB_OUTPUT", _github_output_lines(outcome.github_outputs()))


@app.command()
def demo(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Directory for the demo's release files.")
    ] = Path("demo-release"),
) -> None:
    """Run a complete release offline: the bundled example MCP server, a local Sigstore
    instance (UNTRUSTED, demo only), two chained revisions, verification and a drift check."""
    from histor_sign.demo.walkthrough import run_demo

    def step(message: str) -> None:
        say(f"• {message}")

    result = run_demo(output, step, verify_command=VERIFY_COMMAND)
    say("\nVerification of revision 2 (chained to revision 1):\n"
        + result.verification.rstrip("\n") + "\n"
        + "\nDrift check (a description changed between the revisions):\n"
        + result.drift.rstrip("\n") + "\n"
        + _demo_guide(result))


def _demo_guide(result: "DemoResult") -> str:
    """What each file is, and how the same runs in GitHub Actions."""
    from histor_sign.layout import OUTPUT_NAMES
    from histor_sign.models import load_envelope
    from histor_sign.verification import recommended_pins

    rev = result.output / "revision-2"
    pins = recommended_pins(load_envelope(rev / OUTPUT_NAMES["envelope"]))
    assert pins is not None  # the demo signs as a GitHub workflow
    names = OUTPUT_NAMES
    return f"""
Files in {rev}/ (revision-1/ has the same):
  {names['envelope']:<20} the signed revision envelope (statement + signer + Sigstore bundle)
  {names['statement']:<20} the exact signed bytes (RFC 8785), for upstream sigstore/cosign
  {names['bundle']:<20} the Sigstore bundle (certificate, signature, Rekor inclusion proof)
  {names['attestation']:<20} the same revision as an in-toto attestation (DSSE bundle)
  {names['manifest']:<20} the manifest's canonical bytes: cosign verify-blob-attestation takes it
  {names['registry']:<20} the _meta fragment to merge into server.json for the MCP Registry
  {names['tools']:<20} what the server served (every page, in order) + capture context
  {names['sarif']:<20} collision scan + contract lint, SARIF 2.1.0 for GitHub code scanning
  {names['summary']:<20} the Markdown summary (also written to $GITHUB_STEP_SUMMARY in CI)
  dev-sigstore/ holds the local instance's trust config: trust it for this demo only.

Verify it yourself (offline):
  {PROG} verify {rev}/envelope.json --previous {result.output}/revision-1/envelope.json \\
      --trust-config {result.trust_config} --repository {pins.repository} \\
      --workflow {pins.workflow} --ref-pattern {pins.ref_pattern}
  Pin the repository and workflow, not an exact --cert-identity: that names one branch or
  tag (…@refs/tags/v1.0.0) and breaks on the next. Releases from tags: --ref-pattern 'refs/tags/v*'.

In GitHub Actions (permissions: id-token: write), the same release against public Sigstore:
  - uses: histor-sign/histor-sign@<sha>
    with:
      server: io.github.OWNER/NAME
      server-version: ${{{{ github.ref_name }}}}
      stdio: node dist/index.js
      previous: auto                 # the chain on the histor-revisions branch
  (`{PROG} init` writes the whole workflow.)
"""
