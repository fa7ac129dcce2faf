"""The offline demo: two chained releases of the bundled example server, signed through
the package's local Sigstore instance, then verified and drift-checked with it stopped.

It runs exactly the code paths a real release uses (stdio fetch of every page, scan gate,
keyless signing, full verification); only the Sigstore instance is local and UNTRUSTED.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from histor_sign.errors import GateFailed, OperationalError
from histor_sign.release import OUTPUT_NAMES, ReleaseOutcome, ReleaseRequest, release

SERVER = "io.github.example/notes-server"
IDENTITY = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"
DRIFTED_TOOL = "search_notes"
DRIFTED_DESCRIPTION = "Search every note, including private notebooks, and return full texts."


@dataclass(frozen=True)
class DemoResult:
    """The demo's releases and the reports it printed."""

    output: Path
    releases: list[ReleaseOutcome]
    verification: str
    drift: str
    trust_config: Path


def example_server_command(*extra: str) -> list[str]:
    """How the demo (and tests) start the bundled example server over stdio."""
    return [sys.executable, "-m", "histor_sign.demo.example_server", *extra]


def run_demo(output: Path, say: Callable[[str], None] = lambda _msg: None) -> DemoResult:
    """Release revision 1, drift one description, release revision 2, verify, check."""
    from histor_sign._internal.sigstore_dev.instance import LocalSigstore
    from histor_sign._internal.sigstore_trust import Trust
    from histor_sign.drift import compare
    from histor_sign.mcp import FetchOptions, Snapshot, Target, fetch
    from histor_sign.verify import Pins, verify

    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # e.g. a path under a regular file
        raise OperationalError(f"cannot create {output}: {exc.strerror}") from None
    releases: list[ReleaseOutcome] = []
    snapshots: list[Snapshot] = []
    with LocalSigstore(directory=output / "dev-sigstore") as sigstore:
        say(f"started a local Sigstore instance at {sigstore.url} (UNTRUSTED, demo only)")
        trust = Trust.from_trust_config(sigstore.trust_config_path)
        token = sigstore.mint_token(IDENTITY)
        for revision, (version, extra) in enumerate(
            [("1.0.0", ()), ("1.1.0", ("--description", f"{DRIFTED_TOOL}={DRIFTED_DESCRIPTION}"))],
            start=1,
        ):
            target = Target.stdio(example_server_command(*extra))
            snapshot = fetch(target, FetchOptions())
            snapshots.append(snapshot)
            say(
                f"fetched {len(snapshot.tools)} tools in {snapshot.capture.get('pages')} pages "
                f"({snapshot.capture.get('era')} era) from the example server"
            )
            previous = releases[-1].files["envelope"] if releases else None
            request = ReleaseRequest(
                server=SERVER,
                server_version=version,
                out_dir=output / f"revision-{revision}",
                previous=previous,
                trust=trust,
                identity_token=token,
            )
            try:
                outcome = release(snapshot, request)
            except GateFailed as exc:  # the bundled server is built to pass the gate
                raise OperationalError(f"the example server failed the scan gate: {exc}") \
                    from None
            assert outcome.envelope is not None
            releases.append(outcome)
            say(
                f"signed revision {revision}: manifest "
                f"{outcome.envelope.statement.manifest_digest}, Rekor log index "
                f"{outcome.envelope.transparency_log.log_index}"
            )
    say("stopped the local Sigstore instance; verifying offline")
    first, second = releases
    report = verify(
        second.files["envelope"],
        pins=Pins(cert_identity=IDENTITY),
        trust=Trust.from_trust_config(sigstore.trust_config_path),
        previous=first.files["envelope"],
        tools=second.files["tools"],
    )
    report.raise_for_failure()
    assert first.envelope is not None
    drift = compare(first.envelope, snapshots[1].to_catalog("served now"),
                    signed_tools=snapshots[0].to_catalog("revision-1 snapshot"))
    return DemoResult(
        output=output,
        releases=releases,
        verification=report.to_text(),
        drift=drift.to_text(),
        trust_config=sigstore.trust_config_path,
    )


def guide(result: DemoResult) -> str:
    """What each file is, and how the same runs in GitHub Actions."""
    rev = result.output / "revision-2"
    names = OUTPUT_NAMES
    return f"""
Files in {rev}/ (revision-1/ has the same):
  {names['envelope']:<20} the signed revision envelope (statement + signer + Sigstore bundle)
  {names['statement']:<20} the exact signed bytes (RFC 8785), for upstream sigstore/cosign
  {names['bundle']:<20} the Sigstore bundle (certificate, signature, Rekor inclusion proof)
  {names['tools']:<20} what the server served (every page, in order) + capture context
  {names['sarif']:<20} collision scan + contract lint, SARIF 2.1.0 for GitHub code scanning
  {names['summary']:<20} the Markdown summary (also written to $GITHUB_STEP_SUMMARY in CI)
  dev-sigstore/ holds the local instance's trust config: trust it for this demo only.

Verify it yourself (offline):
  histor-sign verify {rev}/envelope.json --previous {result.output}/revision-1/envelope.json \\
      --trust-config {result.trust_config} --cert-identity {IDENTITY}

In GitHub Actions (permissions: id-token: write), the same release against public Sigstore:
  - uses: histor-sign/histor-sign@<sha>
    with:
      server: io.github.OWNER/NAME
      server-version: ${{{{ github.ref_name }}}}
      stdio: node dist/index.js
      previous: revisions/latest.envelope.json
"""
