"""``yank``: the publisher withdraws a bad revision with a signed, chained yank statement
(:mod:`histor_sign.yank`), signed with the same flags as ``release``."""


from pathlib import Path
from typing import Annotated

import typer

from histor_sign._escape import printable
from histor_sign.cli.app import OutputFormat, app, emit, json_document
from histor_sign.cli.release_commands import (
    _ReleaseIdentityToken,
    _ReleaseStaging,
    _ReleaseTrustConfig,
)


@app.command()
def yank(
    server: Annotated[str, typer.Option("--server", help="Registry name, io.github.OWNER/NAME.")],
    revision: Annotated[int, typer.Option("--revision", min=1,
                                          help="The published revision to withdraw.")],
    reason: Annotated[str, typer.Option(
        "--reason", help="Why, in one line: every client that refuses the revision shows it.")],
    revisions: Annotated[Path, typer.Option(
        "--revisions", metavar="DIR",
        help="The chain directory the revision was published into (as for 'release'); "
        "the yank is published beside it as <n>.yank.envelope.json.")],
    identity_token: _ReleaseIdentityToken = None,
    staging: _ReleaseStaging = False,
    trust_config: _ReleaseTrustConfig = None,
    format: Annotated[OutputFormat, typer.Option("--format", "-f",
                                                 help="human or json.")] = OutputFormat.human,
) -> None:
    """Withdraw a published revision: sign a yank statement (the same keyless signing and
    workflow as the release) and publish it beside the revision.

    check, guard, trust and the proxy then refuse the revision, naming the yank and its
    reason, unless a later revision is published, which they follow to. A yank cannot be
    taken back. Exit codes: 0 published, 2 bad input (not published, already yanked, a
    signing identity other than the revision's publisher) or a signing failure.
    """
    from histor_sign.cli.signing_commands import trust_from_flags
    from histor_sign.yank import yank_revision

    trust = trust_from_flags(staging=staging, trust_config=trust_config)
    outcome = yank_revision(server, revision, reason, revisions=revisions, trust=trust,
                            identity_token=identity_token)
    y = outcome.yank
    if format is OutputFormat.json:
        emit(json_document({"server": y.server, "revision": y.revision,
                            "manifestDigest": y.statement.manifest_digest, "reason": y.reason,
                            "signer": {"issuer": y.issuer, "identity": y.identity},
                            "transparencyLog": y.transparency_log.to_json(),
                            "yank": str(outcome.path)}), None)
        return
    emit("\n".join([
        f"yanked {printable(y.server)} revision {y.revision}",
        f"  reason     {printable(y.reason)}",
        f"  signer     {printable(y.identity)}",
        f"  log index  {y.transparency_log.log_index}",
        f"  published  {outcome.path}",
    ]), None)
