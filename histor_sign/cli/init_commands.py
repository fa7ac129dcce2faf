"""``init``: write the GitHub Actions workflow that releases a server, for the maintainer's case.

The default is the two-job form: a ``snapshot`` job that runs the (untrusted) server with
read-only permissions and uploads what it served, and a ``sign`` job that holds the OIDC
token, never runs server code, re-checks the snapshot and signs it. ``--single-job`` writes
the one-job form, where the server can obtain the signing token (a process of the same user
reads it from ``/proc``): only for the maintainer's own server code, and said so.
"""


import json
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from histor_sign._atomic import output_exists
from histor_sign._escape import printable
from histor_sign._version import __version__
from histor_sign.cli.app import PROG, app, emit, warn
from histor_sign.errors import UsageError
from histor_sign.models import namespace_owner

#: Third-party actions the workflow uses, pinned by commit (tag in the comment).
CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1"
DOWNLOAD_ARTIFACT = "actions/download-artifact@3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c # v8.0.1"
UPLOAD_ARTIFACT = "actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0"
DEFAULT_ACTION = f"histor-sign/histor-sign@v{__version__}"
_RELEASE_WORKFLOW = Path(".github/workflows/sign.yml")
#: A full-length commit SHA: the only ref GitHub treats as immutable.
_FULL_SHA = re.compile(r"[0-9a-f]{40}")


def _q(value: str) -> str:
    """A YAML scalar for any string (JSON strings are YAML flow scalars)."""
    return json.dumps(value, ensure_ascii=False)


def _target(stdio: str | None, url: str | None, indent: str) -> str:
    return f"{indent}stdio: {_q(stdio)}\n" if stdio else f"{indent}url: {_q(url or '')}\n"


def _build_step(build: str | None) -> str:
    if build:
        return f"      - name: Build the server\n        run: {_q(build)}\n"
    return "      # Build the server here (e.g. - run: npm ci && npm run build).\n"


def _action(action: str, sub: str = "") -> str:
    """``OWNER/REPO@REF`` (or a local ``./path``) with an optional sub-action directory."""
    if action.startswith("./"):
        return f"{action.rstrip('/')}/{sub}" if sub else action
    repo, _, ref = action.partition("@")
    return f"{repo}/{sub}@{ref}" if sub else action


def _workflow_head(server: str) -> str:
    """The release workflow's header: release-only trigger, no default permissions, one
    chain writer at a time."""
    return f"""# Signs the complete tools/list of {server} on every published release and keeps the
# chain on the histor-revisions branch (revisions/{server}/latest.envelope.json), where
# clients read it. Written by `{PROG} init`; pin the histor-sign action to a commit SHA.
name: sign-tools
# Only published releases sign: a manual run from any branch could otherwise sign a
# revision, and a pin made from a tag accepts only tags.
on:
  release:
    types: [published]
permissions: {{}}
concurrency:
  group: histor-sign-chain
  cancel-in-progress: false
jobs:
"""


def render_workflow(
    server: str, stdio: str | None, url: str | None, *, single_job: bool, action: str,
    build: str | None,
) -> str:
    """The workflow text for this server (two-job unless ``single_job``)."""
    head = _workflow_head(server)
    sign_with = (
        f"          server: {_q(server)}\n"
        "          server-version: ${{ github.event.release.tag_name || github.sha }}\n"
        "          previous: auto\n"
    )
    assets = """      - name: Attach the envelope to the release
        if: github.event_name == 'release'
        env:
          GH_TOKEN: ${{ github.token }}
          TAG: ${{ github.event.release.tag_name }}
        run: >-
          gh release upload "$TAG" --clobber
          histor-release/envelope.json histor-release/tools.snapshot.json
"""
    if single_job:
        trusted = "          server-is-trusted-code: true\n" if stdio else ""
        return head + f"""  sign:
    # Runs the server in the job that can sign: the server can obtain the signing token
    # here (as the same user it reads it from /proc), so this form is only for your own
    # server code. The two-job form (no --single-job) keeps the server away from it.
    runs-on: ubuntu-latest
    permissions:
      id-token: write   # keyless signing: GitHub OIDC -> Fulcio
      contents: write   # push the chain to the histor-revisions branch
    steps:
      - uses: {CHECKOUT}
{_build_step(build)}      - id: release
        uses: {_action(action)}
        with:
{sign_with}{_target(stdio, url, "          ")}{trusted}{assets}"""
    return head + f"""  snapshot:
    # Runs the server (untrusted code): read-only, no id-token, no credentials.
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: {CHECKOUT}
        with:
          persist-credentials: false
{_build_step(build)}      - uses: {_action(action, "snapshot")}
        with:
{_target(stdio, url, "          ")}
  sign:
    # Holds the signing identity; never executes server code: it re-runs the duplicate
    # check and the scan gate on the snapshot, and signs it under its own server name.
    needs: snapshot
    runs-on: ubuntu-latest
    permissions:
      id-token: write   # keyless signing: GitHub OIDC -> Fulcio
      contents: write   # push the chain to the histor-revisions branch
    steps:
      - uses: {CHECKOUT}
      - uses: {DOWNLOAD_ARTIFACT}
        with:
          name: histor-snapshot
          path: histor-snapshot
      - id: release
        uses: {_action(action)}
        with:
{sign_with}          tools: histor-snapshot/tools.snapshot.json
{assets}"""


def _repository(repository: str | None) -> str | None:
    """``--repository``, else the GitHub repository of this checkout's ``origin`` remote."""
    from histor_sign._git import github_repository, origin_url
    from histor_sign.pins import validate_repository

    if repository is not None:
        return validate_repository(repository, param="repository")
    url = origin_url(Path.cwd())
    return github_repository(url) if url else None


def _server_and_repository(server: str | None, repository: str | None) -> tuple[str, str | None]:
    """``--server`` (default ``io.github.OWNER/REPO`` of the repository) and the repository
    (``--repository``, else this checkout's GitHub origin); the name must work as a chain
    path."""
    from histor_sign.layout import chain_dir

    repository = _repository(repository)
    if server is None:
        if repository is None:
            raise UsageError("give --server io.github.OWNER/NAME or --repository OWNER/REPO: "
                             "this directory has no GitHub origin remote to read them from")
        server = f"io.github.{repository}"
    chain_dir("revisions", server)
    return server, repository


def _action_sha_hint(action: str) -> str:
    """For the default action tag: its full commit SHA when this installation is a git
    checkout that has the tag (offline), else how to look it up."""
    from histor_sign._git import tag_commit

    repo, _, tag = action.partition("@")
    sha = tag_commit(Path(__file__).resolve().parents[2], tag)
    if sha is not None:
        return (f"  pin the histor-sign action to its commit: --action {repo}@{sha}\n"
                f"    ({tag} in the git checkout histor-sign runs from; compare it with "
                f"https://github.com/{repo}/releases/tag/{tag})\n")
    return (f"  pin the histor-sign action to a full commit SHA (now {_action(action)}, a "
            f"ref that can move): --action {repo}@<sha>\n"
            f"    ({tag} cannot be resolved offline here; look it up with: git ls-remote "
            f"https://github.com/{repo} refs/tags/{tag})\n")
def _monitor_store_job(checkpoint: str) -> str:
    """The monitor workflow's second job: git only (never histor-sign or the log's answers),
    it commits the checkpoint of a run without alarms to the revisions branch."""
    from histor_sign.layout import MONITOR_CHECKPOINT_NAME
    from histor_sign.pins import PUBLISHED_BRANCH

    return f"""  store:
    # Commits the checkpoint of a run without alarms to the {PUBLISHED_BRANCH} branch; runs
    # git only, never histor-sign or the log's answers.
    needs: monitor
    runs-on: ubuntu-latest
    permissions:
      contents: write
    concurrency:
      group: histor-sign-chain
      cancel-in-progress: false
    steps:
      - uses: {CHECKOUT}
        with:
          ref: {PUBLISHED_BRANCH}
      - uses: {DOWNLOAD_ARTIFACT}
        with:
          name: histor-monitor-checkpoint
          path: histor-monitor
      - name: Commit the checkpoint
        env:
          CHECKPOINT: {_q(checkpoint)}
        run: |
          cp histor-monitor/{MONITOR_CHECKPOINT_NAME} "$CHECKPOINT"
          git add "$CHECKPOINT"
          if git diff --cached --quiet; then exit 0; fi
          git -c user.name="github-actions[bot]" \\
            -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \\
            commit --quiet -m "histor-sign monitor: checkpoint"
          git push --quiet origin "HEAD:refs/heads/{PUBLISHED_BRANCH}"
"""


def render_monitor_workflow(
    server: str, *, action: str, workflow: str, ref_pattern: str | None,
    repository: str | None,
) -> str:
    """The scheduled monitor workflow: a read-only job runs ``monitor`` over a checkout of
    the revisions branch; a second job, which runs no histor-sign code, commits the new
    checkpoint there after a run without alarms."""
    from histor_sign.layout import MONITOR_CHECKPOINT_NAME
    from histor_sign.pins import PUBLISHED_BRANCH

    checkpoint = f"revisions/{server}/{MONITOR_CHECKPOINT_NAME}"
    pattern = f"          ref-pattern: {_q(ref_pattern)}\n" if ref_pattern else ""
    owner = _q(repository) if repository else "${{ github.repository }}"
    return f"""# Watches the transparency log for signatures in the name of {server} that are no
# revision, attestation or yank of its chain on the {PUBLISHED_BRANCH} branch: the job fails on
# one, and on a log that shrinks or forks. Written by `{PROG} init --monitor`; pin the
# histor-sign action to a commit SHA. Runs after the first release (it reads that branch).
name: histor-monitor
on:
  schedule:
    - cron: "23 * * * *"
  # Run by hand to acknowledge an alarm you investigated (its log index and why).
  workflow_dispatch:
    inputs:
      acknowledge:
        description: Log indexes of investigated alarms (commas or spaces)
        required: false
        default: ""
      reason:
        description: Why they are no threat (one line, kept in the checkpoint)
        required: false
        default: ""
permissions: {{}}
jobs:
  monitor:
    # Reads the log and the chain: read-only, no id-token, no credentials kept.
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - uses: {CHECKOUT}
        with:
          ref: {PUBLISHED_BRANCH}
          path: {PUBLISHED_BRANCH}
          persist-credentials: false
      - uses: {_action(action, "monitor")}
        env:
          # Authenticates the checkpoint: with this secret set (for this job only, e.g. in
          # a protected environment), a checkpoint anyone else wrote makes the run start
          # over, never skip. Unset: the checkpoint is not authenticated.
          HISTOR_MONITOR_STATE_KEY: ${{{{ secrets.HISTOR_MONITOR_STATE_KEY }}}}
        with:
          server: {_q(server)}
          repository: {owner}
          workflow: {_q(workflow)}
{pattern}          revisions: {PUBLISHED_BRANCH}/revisions
          checkpoint: {_q(f"{PUBLISHED_BRANCH}/{checkpoint}")}
          acknowledge: ${{{{ inputs.acknowledge }}}}
          reason: ${{{{ inputs.reason }}}}
      - uses: {UPLOAD_ARTIFACT}
        with:
          name: histor-monitor-checkpoint
          path: {_q(f"{PUBLISHED_BRANCH}/{checkpoint}")}
          if-no-files-found: error

""" + _monitor_store_job(checkpoint)


def _init_monitor(
    server: str, action: str, output: Path, workflow: str, ref_pattern: str | None,
    repository: str | None,
) -> None:
    """``init --monitor``: check the identity policy's form, write the monitor workflow."""
    from histor_sign.pins import validate_ref_pattern, validate_repository, validate_workflow

    validate_workflow(workflow)
    if ref_pattern is not None:
        validate_ref_pattern(ref_pattern)
    if repository is not None:
        validate_repository(repository)
    emit(render_monitor_workflow(server, action=action, workflow=workflow,
                                 ref_pattern=ref_pattern, repository=repository), output)
    sys.stdout.write(
        f"wrote {output} (hourly transparency-log monitor)\n"
        "Next:\n"
        f"  git add {output} && git commit -m 'Monitor the transparency log'\n"
        "  it runs once the histor-revisions branch exists (after the first release); a "
        "failed run is an alarm: read its summary\n"
    )


_InitServer = Annotated[
    str | None,
    typer.Option("--server", help="Registry name, io.github.OWNER/NAME (another "
                 "namespace is written with a warning: clients cannot pin it by "
                 "repository). Default: io.github.OWNER/REPO of --repository."),
]

_InitRepository = Annotated[
    str | None,
    typer.Option("--repository", metavar="OWNER/REPO",
                 help="The GitHub repository that signs (with --monitor: the signing "
                 "repository). Default: read from this checkout's origin remote (git "
                 "remote get-url origin); else, with --monitor, the repository the "
                 "workflow runs in."),
]

_InitStdio = Annotated[
    str | None,
    typer.Option("--stdio", metavar="COMMAND", help="Command that starts the server."),
]

_InitUrl = Annotated[
    str | None, typer.Option("--url", help="Streamable HTTP endpoint of the server.")
]

_InitSingleJob = Annotated[
    bool,
    typer.Option(
        "--single-job",
        help="One job that runs the server and signs. In one job the server can obtain "
        "the signing token (it reads it from /proc as the same user): only for your own "
        "server code.",
    ),
]

_InitBuild = Annotated[
    str | None,
    typer.Option("--build", metavar="COMMAND", help="Build step run before the server."),
]

_InitAction = Annotated[
    str,
    typer.Option(
        "--action", metavar="OWNER/REPO@REF",
        help="The histor-sign action to use, or ./ in its own repo. Pin a full commit "
        "SHA (OWNER/REPO@<40 hex digits>), as GitHub's security hardening guide "
        "recommends: a tag can be moved. The default is this version's release tag "
        "because init cannot look up the commit it names (it works offline); until "
        "you pin a SHA it says so after writing the workflow.",
    ),
]

_InitOutput = Annotated[
    Path, typer.Option("--output", "-o", help="Where to write the workflow.")
]

_InitForce = Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")]

_InitMonitor = Annotated[bool, typer.Option(
    "--monitor",
    help="Write the hourly transparency-log monitor instead (read-only; the checkpoint "
    "is kept on the histor-revisions branch). Default output: "
    ".github/workflows/histor-monitor.yml.")]

_InitWorkflow = Annotated[str, typer.Option(
    "--workflow", metavar="PATH",
    help="With --monitor: the workflow file that signs the releases.")
]

_InitRefPattern = Annotated[str | None, typer.Option(
    "--ref-pattern", metavar="GLOB",
    help="With --monitor: the refs releases are signed from (others are warnings). "
    "Default: any ref of the workflow is the publisher's.")]


@app.command()
def init(
    server: _InitServer = None,
    repository: _InitRepository = None,
    stdio: _InitStdio = None,
    url: _InitUrl = None,
    single_job: _InitSingleJob = False,
    build: _InitBuild = None,
    action: _InitAction = DEFAULT_ACTION,
    output: _InitOutput = _RELEASE_WORKFLOW,
    force: _InitForce = False,
    monitor: _InitMonitor = False,
    workflow: _InitWorkflow = ".github/workflows/sign.yml",
    ref_pattern: _InitRefPattern = None,
) -> None:
    """Write the release workflow for this server (or, with --monitor, the transparency-log
    monitor) and say what to commit."""
    server, repository = _server_and_repository(server, repository)
    if monitor:
        output = _monitor_output(stdio, url, single_job, build, output)
    if not action.startswith("./") and "@" not in action:
        raise UsageError("--action must be OWNER/REPO@REF (a commit SHA) or ./")
    if output_exists(output) and not force:
        raise UsageError(f"{output} exists (--force overwrites it)")
    if monitor:
        _init_monitor(server, action, output, workflow, ref_pattern, repository)
    else:
        _init_release(server, repository, stdio, url, single_job=single_job, build=build,
                      action=action, output=output)


def _monitor_output(stdio: str | None, url: str | None, single_job: bool, build: str | None,
                    output: Path) -> Path:
    """Step (``--monitor``): no server flags; the default output is the monitor workflow."""
    if stdio is not None or url is not None or single_job or build is not None:
        raise UsageError("--monitor runs no server: --stdio, --url, --single-job and "
                         "--build do not apply")
    return Path(".github/workflows/histor-monitor.yml") if output == _RELEASE_WORKFLOW \
        else output


def _init_release(server: str, repository: str | None, stdio: str | None, url: str | None, *,
                  single_job: bool, build: str | None, action: str, output: Path) -> None:
    """Write the release workflow and say what to commit next."""
    if (stdio is None) == (url is None):
        raise UsageError("give exactly one of --stdio COMMAND or --url URL")
    if namespace_owner(server) is None:
        warn(f"{printable(server, 200)} is outside io.github.*: clients cannot pin it with "
             "'trust add'; they verify it with --envelope and an identity pin instead")
    emit(render_workflow(server, stdio, url, single_job=single_job, action=action, build=build),
         output)
    form = "single-job" if single_job else "two-job (snapshot -> sign)"
    pinned = action.startswith("./") or _FULL_SHA.fullmatch(action.partition("@")[2])
    sys.stdout.write(
        f"wrote {output} ({form})\n"
        "Next:\n"
        f"  git add {output} && git commit -m 'Sign the tools/list on release'\n"
        + ("" if pinned else _action_sha_hint(action))
        + "  publish a release: the first one starts the chain on the histor-revisions branch\n"
        "Clients then check the server against the latest signed revision:\n"
        f"  {PROG} trust add {server} --repository {repository or 'OWNER/REPO'}\n"
        f"  {PROG} check --server {server} --stdio ...\n"
    )
