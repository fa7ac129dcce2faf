"""``monitor``: watch the transparency log for signatures in the publisher's name that are
not revisions of its published chain (:mod:`histor_sign.monitor`)."""


from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from histor_sign._limits import DEFAULT_MAX_LOG_ENTRIES, DEFAULT_TIMEOUT
from histor_sign.cli.app import app, emit, json_document, warn
from histor_sign.cli.signing_commands import (
    OfflineOpt,
    TrustedRootOpt,
    VerifyStagingOpt,
    VerifyTrustConfigOpt,
    trust_from_flags,
)

#: The environment variable holding the key that authenticates the state file (a secret
#: of the monitoring job): a state not written with it makes the run start over.
STATE_KEY_ENV = "HISTOR_MONITOR_STATE_KEY"


def _start_indexes(values: list[str]) -> dict[str, int]:
    """``--start-index LOG_URL=INDEX`` values as a mapping."""
    from histor_sign.errors import UsageError

    out: dict[str, int] = {}
    for value in values:
        url, sep, index = value.rpartition("=")
        if not sep or not url or not index.isdigit():
            raise UsageError("--start-index takes LOG_URL=INDEX (a log of the trusted root "
                             "and a non-negative entry index)", param="start_index")
        out[url] = int(index)
    return out


class MonitorFormat(StrEnum):
    human = "human"
    json = "json"
    sarif = "sarif"


@app.command()
def monitor(
    server: Annotated[str, typer.Option("--server", help="Registry name, io.github.OWNER/NAME.")],
    repository: Annotated[str, typer.Option(
        "--repository", metavar="OWNER/REPO", help="The repository whose workflow signs.")],
    revisions: Annotated[str, typer.Option(
        "--revisions", metavar="DIR|URL",
        help="The published chain: the --revisions directory of 'release' (or the server's "
        "chain directory), or its https URL (as for 'trust add --envelope').")],
    since: Annotated[Path, typer.Option(
        "--since", metavar="CHECKPOINT_FILE",
        help="The stored checkpoint and cursor; written (atomically) only after a run "
        "without alarms. Missing: start at the chain's first log entry.")],
    workflow: Annotated[str | None, typer.Option(
        "--workflow", metavar="PATH",
        help="The signing workflow file clients pin, e.g. .github/workflows/release.yml. "
        "Default: any workflow of the repository.")] = None,
    ref_pattern: Annotated[str | None, typer.Option(
        "--ref-pattern", metavar="GLOB",
        help="The refs clients pin, e.g. 'refs/tags/v*'. Default: any ref.")] = None,
    rekor_url: Annotated[str | None, typer.Option(
        "--rekor-url", metavar="URL",
        help="Watch only this log (one of the trusted root's). Default: every active log "
        "of the trusted root.")] = None,
    start_index: Annotated[list[str] | None, typer.Option(
        "--start-index", metavar="LOG_URL=INDEX",
        help="Where a first run starts in that log (repeatable). Default: the chain's first "
        "entry in the log, else the log's first entry.")] = None,
    max_entries: Annotated[int, typer.Option(
        "--max-entries", min=1,
        help="Entries read per run; the next run continues where this one stopped.")
    ] = DEFAULT_MAX_LOG_ENTRIES,
    timeout: Annotated[float, typer.Option(
        "--timeout", help="Seconds per request, for each read and the whole request.")
                       ] = DEFAULT_TIMEOUT,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
    format: Annotated[MonitorFormat, typer.Option(
        "--format", "-f", help="human, json or sarif (code scanning).")] = MonitorFormat.human,
    output: Annotated[Path | None, typer.Option(
        "--output", "-o", help="Write the report here instead of stdout.")] = None,
    acknowledge: Annotated[list[int] | None, typer.Option(
        "--acknowledge", metavar="LOG_INDEX", min=0,
        help="An unpublished-signature alarm you have investigated (repeatable; needs "
        "--reason): recorded in the state file, bound to the entry's body, and reported as "
        "acknowledged on later runs. Only an entry that alarms in this run.")] = None,
    reason: Annotated[str | None, typer.Option(
        "--reason", metavar="TEXT",
        help="Why the acknowledged entries are no threat (kept in the state file).")
    ] = None,
) -> None:
    """Check the transparency log for signatures in the publisher's name.

    Verifies that the log extends the stored checkpoint, reads every new entry (bounded;
    the next run resumes), and reports each entry the identity policy matches that is no
    revision, attestation or yank of the published chain (alarm), and entries from the
    repository by other workflows or refs (warning). A log that shrinks or forks is an
    alarm. An alarm repeats on every run until acknowledged (--acknowledge LOG_INDEX
    --reason TEXT) once investigated; a log inconsistency cannot be acknowledged.
    Every active log of the trusted root is watched (Rekor v1 and v2 alike), each from its
    own checkpoint; a log that cannot be read is named. With HISTOR_MONITOR_STATE_KEY set,
    the state file is authenticated with it, and a state written without it is not resumed.
    Exit codes: 0 no alarm, 1 alarm, 2 bad input or a log could not be read
    (the stored checkpoint is then left as it was).
    """
    import os

    from histor_sign.monitor import monitor as run_monitor

    starts = _start_indexes(start_index or [])
    key = os.environ.get(STATE_KEY_ENV, "")
    trust = trust_from_flags(staging=staging, trusted_root=trusted_root,
                             trust_config=trust_config, offline=offline)
    warn(trust.warning())
    result = run_monitor(server, repository=repository, revisions=revisions, since=since,
                         trust=trust, workflow=workflow, ref_pattern=ref_pattern,
                         rekor_url=rekor_url, max_entries=max_entries, timeout=timeout,
                         acknowledge=acknowledge or (), reason=reason, start_index=starts,
                         state_key=key.encode() if key else None)
    if format is MonitorFormat.sarif:
        from histor_sign.report._render import render_pieces

        emit(render_pieces(result.findings(), "sarif", command="monitor",
                           stats=result.to_json() | {"events": len(result.events)}), output)
    elif format is MonitorFormat.json:
        emit(json_document(result.to_json()), output)
    else:
        emit(result.to_text(), output)
    if result.alarm:
        raise typer.Exit(1)
