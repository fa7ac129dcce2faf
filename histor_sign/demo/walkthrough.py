"""The offline demo: two chained releases of the bundled example server, signed through
the package's local Sigstore instance, then verified and drift-checked with it stopped.

It runs exactly the code paths a real release uses (stdio fetch of every page, scan gate,
keyless signing, full verification); only the Sigstore instance is local and UNTRUSTED.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from histor_sign.errors import GateFailed, OperationalError
from histor_sign.models import Snapshot
from histor_sign.pipeline import ReleaseOutcome, ReleaseRequest, release

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




def run_demo(
    output: Path,
    say: Callable[[str], None] = lambda _msg: None,
    *,
    verify_command: str | None = None,
) -> DemoResult:
    """Release revision 1, drift one description, release revision 2, verify, check.

    ``verify_command`` is passed to each release (the command its ``summary.md`` shows).
    """
    from histor_sign._sigstore_trust import Trust
    from histor_sign.demo.example_server import server_command
    from histor_sign.drift import compare
    from histor_sign.mcp import FetchOptions, Target, fetch
    from histor_sign.sigstore_dev.instance import LocalSigstore
    from histor_sign.verification import verify
    from histor_sign.verification.policy import Pins

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
        for revision, (version, description) in enumerate(
            [("1.0.0", None), ("1.1.0", f"{DRIFTED_TOOL}={DRIFTED_DESCRIPTION}")], start=1
        ):
            target = Target.stdio(server_command(description=description))
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
                verify_command=verify_command,
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
