"""``trust add|list|remove``: the client's pinned publishers, and the one rule
``check``/``guard`` follow before they use a signed revision: it must come from a pinned
publisher (a pin-store entry, ``--server``, or an explicit identity pin)."""


import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from histor_sign._escape import printable
from histor_sign.canonical import JsonValue
from histor_sign.cli._server_json import ServerJsonOpt, pin_from_server_json
from histor_sign.cli.app import PROG, OutputFormat, app, emit, json_document, note, warn
from histor_sign.cli.signing_commands import (
    OfflineOpt,
    OwnerIdOpt,
    RepositoryIdOpt,
    TrustedRootOpt,
    VerifyFlags,
    VerifyStagingOpt,
    VerifyTrustConfigOpt,
    trust_from_flags,
)
from histor_sign.errors import UsageError
from histor_sign.models import GITHUB_ACTIONS_ISSUER, namespace_owner

if TYPE_CHECKING:
    from histor_sign.pins import PinEntry, PinnedRevision, PinStore, VerifiedForUse
    from histor_sign.registry import RegistryPin

PinsOpt = Annotated[
    Path | None,
    typer.Option(
        "--pins", metavar="FILE",
        help="Pin file to use (e.g. a project-local one to commit). Default: the per-user "
        "$XDG_CONFIG_HOME/histor-sign/pins.json (~/.config/histor-sign/pins.json).",
    ),
]
ServerOpt = Annotated[
    str | None,
    typer.Option(
        "--server", metavar="NAME",
        help="The MCP server name (e.g. io.github.OWNER/NAME). With a pin ('trust add') the "
        "latest revision comes from the pinned location, verified under the pin; it implies "
        "--verify.",
    ),
]

trust_app = typer.Typer(
    name="trust",
    help="Pin MCP server publishers: which repository (and workflow) may sign a server's "
    "revisions, where they are published, and the highest revision seen.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(trust_app, name="trust")


def load_store(pins: Path | None) -> "PinStore":
    from histor_sign.pins import PinStore

    return PinStore.load(pins)


# ---------------------------------------------------------------------- use by check/guard
def verify_for_use(
    document: JsonValue, source: str, flags: VerifyFlags, *, server: str | None,
    pins: Path | None,
) -> "VerifiedForUse":
    """``check --verify`` / ``guard --verify``: the library's rule for use
    (:func:`histor_sign.pins.verify_for_use`) with the trust and pins the flags name."""
    from histor_sign.models import parse_envelope
    from histor_sign.pins import NotPinned
    from histor_sign.pins import verify_for_use as verify_envelope_for_use

    env = parse_envelope(document, source)
    entry = (None if flags.names_trust() or flags.pins().names_publisher()
             else load_store(pins).get(server or env.server))
    trust = flags.trust_for_pin(entry)
    warn(trust.warning())  # reads the trust files: bad ones are bad input, whatever pins
    try:
        return verify_envelope_for_use(env, trust=trust, pins=flags.pins(), store=pins,
                                       server=server, source=source)
    except NotPinned as exc:
        raise UsageError(
            f"--verify accepts a signed revision only from a pinned publisher, and "
            f"{printable(exc.server, 200)} is not pinned in {exc.store_path}: "
            + (_outside_github_hint() if exc.outside_github else
               f"pin it with {_trust_add_hint(exc.server)}, or pass --server NAME or an "
               "identity pin (--cert-identity, --repository, --owner-id, --repository-id)")
        ) from None


def pinned_store(server: str, flags: VerifyFlags, pins: Path | None) -> "PinStore":
    """The pin store, which must pin ``server``; identity flags cannot loosen or replace
    the pin (``--server`` without ``--envelope`` verifies under it)."""
    if flags.pins().names_publisher():
        raise UsageError(
            "--server without --envelope verifies under the pin ('trust add'); identity flags "
            "cannot be added to it"
        )
    store = load_store(pins)
    if server not in store:
        outside = _outside_github_hint() if namespace_owner(server) is None else None
        raise UsageError(
            f"{printable(server, 200)} is not pinned in {store.path}: "
            + (outside or f"pin it first with {_trust_add_hint(server)}")
        )
    return store


def awaiting_hint(pinned: "PinnedRevision") -> None:
    """The one line that says how to accept a revision held back for acceptance."""
    if pinned.awaiting is not None:
        name = printable(pinned.server, 200)
        note(f"revision {pinned.awaiting.revision} of {name} is not used until you accept its "
             f"changes: review them with '{PROG} trust update {name}', then run it again "
             "with --accept")


def _trust_add_hint(server: str) -> str:
    return f"'{PROG} trust add {printable(server, 200)} --repository OWNER/REPO'"


def _outside_github_hint() -> str:
    """What to do for a name no repository pin can hold (io.gitlab.*, a domain): its
    namespace is proven to the registry by means no certificate carries."""
    return (
        "it is outside io.github.*, so 'trust add' cannot pin it; pass --envelope URL|FILE "
        "with an identity pin (--cert-identity, --cert-identity-regexp, or --workflow with "
        "--repository)"
    )


def pinned_latest(
    server: str, flags: VerifyFlags, pins: Path | None, *, signed_tools: bool | None
) -> "PinnedRevision":
    """``--server NAME``: the latest revision from the pinned location, verified and fresh
    (:func:`histor_sign.pins.latest_for_use`)."""
    from histor_sign.pins import latest_for_use

    store = pinned_store(server, flags, pins)
    trust = flags.trust_for_pin(store.get(server))
    warn(trust.warning())
    pinned = latest_for_use(server, trust=trust, store=store, signed_tools=signed_tools)
    awaiting_hint(pinned)
    return pinned


# ---------------------------------------------------------------------- trust add/list/remove
_TrustAddServer = Annotated[str | None, typer.Argument(
    metavar="NAME", help="MCP server name, io.github.OWNER/NAME (or from --server-json).")]
_TrustAddRepository = Annotated[
    str | None, typer.Option("--repository", metavar="OWNER/REPO",
                             help="The GitHub repository whose workflow signs the revisions "
                             "(or from --server-json).")
]
_TrustAddEnvelope = Annotated[
    str | None, typer.Option(
        "--envelope", metavar="URL|FILE",
        help="Where the revisions are published: the latest envelope "
        "(…/latest.envelope.json) or its directory; https, loopback http, or a path. "
        "Default: where the histor-sign action publishes them for --repository "
        "OWNER/REPO: revisions/NAME/latest.envelope.json on its histor-revisions "
        "branch, read from raw.githubusercontent.com.",
    )
]
_TrustAddWorkflow = Annotated[
    str | None, typer.Option(
        "--workflow", metavar="PATH",
        help="Require this workflow file, e.g. .github/workflows/sign.yml. Default: the "
        "workflow that signed the latest revision.",
    )
]
_TrustAddRefPattern = Annotated[
    str | None, typer.Option(
        "--ref-pattern", metavar="GLOB",
        help="Git refs a revision may be signed from, e.g. 'refs/tags/v*' (* within a "
        "segment, ** across). Default: any tag when the latest revision was signed from "
        "a tag, else its branch.",
    )
]
_TrustAddReplace = Annotated[
    bool, typer.Option("--replace", help="Re-pin a server that is already pinned.")
]
_TrustAddDryRun = Annotated[
    bool, typer.Option("--dry-run", help="Verify and show the pin, write nothing.")
]


@trust_app.command("add")
def trust_add(
    server: _TrustAddServer = None,
    repository: _TrustAddRepository = None,
    server_json: ServerJsonOpt = None,
    envelope: _TrustAddEnvelope = None,
    workflow: _TrustAddWorkflow = None,
    ref_pattern: _TrustAddRefPattern = None,
    owner_id: OwnerIdOpt = None,
    repository_id: RepositoryIdOpt = None,
    pins: PinsOpt = None,
    replace: _TrustAddReplace = False,
    dry_run: _TrustAddDryRun = False,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
) -> None:
    """Pin a publisher: verify its latest signed revision and record who signed it.

    The numeric GitHub owner and repository ids are learned from the verified certificate
    and required from then on, so a renamed or re-registered owner does not inherit the
    pin. Exit codes: 0 pinned, 1 the envelope does not verify under the pin, 2 bad input.
    """
    from histor_sign.pins import draft_pin, pin_first_use
    from histor_sign.registry import require_agreement

    claimed = (pin_from_server_json(server_json, server, repository, workflow, envelope)
               if server_json is not None else None)
    server, repository, workflow, envelope = _what_to_pin(
        claimed, server, repository, workflow, envelope)
    trust = trust_from_flags(staging=staging, trusted_root=trusted_root,
                             trust_config=trust_config, offline=offline)
    draft_pin(server, repository=repository, location=envelope, workflow=workflow,
              owner_id=owner_id, repository_id=repository_id, ref_pattern=ref_pattern)
    warning = trust.warning()  # reads the trust files: bad ones are bad input
    store = load_store(pins)
    if server in store and not replace:
        raise UsageError(f"{printable(server, 200)} is already pinned in {store.path}; pass "
                         "--replace to re-pin it")
    sys.stderr.write(
        f"{PROG}: pinning {printable(server, 200)} to repository {printable(repository, 200)}"
        f"{', workflow ' + printable(workflow, 200) if workflow else ''}; verifying the latest "
        f"envelope at {printable(envelope, 300)}\n"
    )
    warn(warning)
    first = pin_first_use(
        server, repository=repository, location=envelope, workflow=workflow,
        owner_id=owner_id, repository_id=repository_id, trust=trust,
        issuer=GITHUB_ACTIONS_ISSUER, ref_pattern=ref_pattern,
    )
    if claimed is not None:
        require_agreement(claimed, first.pin.revision, first.pin.manifest_digest)
    if not dry_run:
        store = store.add(first.pin, replace_existing=replace)
    head = "would pin" if dry_run else "pinned"
    emit("\n".join([f"{head} {printable(server, 200)} in {store.path}",
                    *_entry_lines(first.pin, learned=True)]), None)


def _what_to_pin(
    claimed: "RegistryPin | None", server: str | None, repository: str | None,
    workflow: str | None, envelope: str | None,
) -> tuple[str, str, str | None, str]:
    """Step: the server, repository, workflow and location to pin: the flags, filled in
    from a server.json's claim, the location defaulting to where the action publishes."""
    from histor_sign.pins import published_location

    if claimed is not None:
        server, envelope = claimed.server, claimed.location
        repository, workflow = repository or claimed.repository, workflow or claimed.workflow
    if server is None or repository is None:
        raise UsageError("give NAME and --repository OWNER/REPO, or --server-json FILE|URL")
    if envelope is None:
        envelope = published_location(server, repository)
    return server, repository, workflow, envelope


def _trust_root(entry: "PinEntry") -> dict[str, Any]:
    """The trust root a pin verifies under, and whether it is Sigstore's production one:
    ``{"root": NAME, "production": bool, "warning": str | None}`` — the warning is
    :meth:`~histor_sign._sigstore_trust.Trust.warning`'s, or why the root cannot be read."""
    from histor_sign.errors import HistorError

    name = entry.trust_root or "production"
    try:
        warning = entry.trust().warning()
    except HistorError as exc:
        warning = f"cannot read it: {exc.message}"
    return {"root": name, "production": warning is None, "warning": warning}


def _trust_root_line(entry: "PinEntry") -> str:
    """``trust root     NAME``, flagged ``[NOT PRODUCTION]`` where Sigstore's production
    root is not what verifies the pin (``--format json`` carries the warning itself)."""
    root = _trust_root(entry)
    flag = "" if root["production"] else "  [NOT PRODUCTION]"
    return f"  trust root     {printable(root['root'])}{flag}"


def _entry_lines(entry: "PinEntry", *, learned: bool = False) -> list[str]:
    note = " (learned from the certificate)" if learned else ""
    return [
        f"  repository     {entry.repository}",
        f"  workflow       {entry.workflow or 'any workflow of the repository'}",
        f"  refs           {entry.ref_pattern or 'any ref'}",
        f"  attestation    {'required (verified before)' if entry.attested else 'not seen yet'}",
        f"  owner id       {entry.owner_id or 'not pinned (the certificate has none)'}"
        f"{note if entry.owner_id else ''}",
        f"  repository id  {entry.repository_id or 'not pinned (the certificate has none)'}"
        f"{note if entry.repository_id else ''}",
        f"  revision       {entry.revision} (manifest {entry.manifest_digest})",
        f"  signed by      {printable(entry.signer)}",
        f"  envelope       {printable(entry.location)}",
        _trust_root_line(entry),
        # A yanked revision stays refused under this pin (and its reason is the publisher's
        # text, bounded when the pin file is read: escaped).
        *(f"  yanked         revision {n}: {printable(reason)}"
          for n, reason in entry.yanked),
    ]


@trust_app.command("list")
def trust_list(
    pins: PinsOpt = None,
    format: Annotated[
        OutputFormat, typer.Option(
            "--format", "-f",
            help="human or json (the pin file, with schemaVersion and each pin's trust root).")
    ] = OutputFormat.human,
) -> None:
    """Show every pinned server."""
    store = load_store(pins)
    if format is OutputFormat.json:
        import json

        document = json.loads(store.to_bytes())  # the pin file, as written
        roots = {name: _trust_root(store.entries[name]) for name in sorted(store.entries)}
        emit(json_document({**document, "pins": str(store.path), "trustRoots": roots}), None)
        return
    if not len(store):
        emit(f"no servers pinned in {store.path}", None)
        return
    lines = [f"{len(store)} pinned in {store.path}"]
    for name in sorted(store.entries):
        lines += ["", name, *_entry_lines(store.entries[name])]
    emit("\n".join(lines), None)


@trust_app.command("remove")
def trust_remove(
    server: Annotated[str, typer.Argument(metavar="NAME", help="The pinned server name.")],
    pins: PinsOpt = None,
) -> None:
    """Forget a pinned server."""
    store = load_store(pins).remove(server)
    emit(f"removed {printable(server, 200)} from {store.path}", None)


def verified_json(document: dict[str, Any], verified: "VerifiedForUse | None") -> str:
    """A command's JSON document with the ``verified`` member added when there is one."""
    if verified is not None:
        document = {**document, "verified": verified.to_json()}
    return json_document(document)


_TrustName = Annotated[str, typer.Argument(metavar="NAME", help="The pinned server name.")]
_TrustFormat = Annotated[OutputFormat, typer.Option("--format", "-f", help="human or json.")]


@trust_app.command("show")
def trust_show(
    server: _TrustName,
    pins: PinsOpt = None,
    format: _TrustFormat = OutputFormat.human,
) -> None:
    """Show one pinned server: who may sign it, where it is published, the revision
    pinned. Exit codes: 0 shown, 2 not pinned or bad input."""
    store = load_store(pins)
    entry = store.get(server)
    if entry is None:
        raise UsageError(f"{printable(server, 200)} is not pinned in {store.path}")
    if format is OutputFormat.json:
        emit(json_document({"pins": str(store.path), "server": server, **entry.to_json(),
                            "trust": _trust_root(entry)}), None)
        return
    emit("\n".join([f"{printable(server, 200)} in {store.path}", *_entry_lines(entry)]), None)


@trust_app.command("update")
def trust_update(
    server: _TrustName,
    pins: PinsOpt = None,
    format: _TrustFormat = OutputFormat.human,
    trusted_root: TrustedRootOpt = None,
    trust_config: VerifyTrustConfigOpt = None,
    staging: VerifyStagingOpt = False,
    offline: OfflineOpt = False,
    accept: Annotated[bool, typer.Option(
        "--accept", help="Accept the revision that waits for acceptance (the one whose "
        "changes an earlier run showed; a revision published since is shown, not "
        "accepted).")] = False,
    acceptance: Annotated[str | None, typer.Option(
        "--acceptance", metavar="POLICY",
        help="Set which changes wait for acceptance before any path follows them: "
        "confirm-high (the default: a change triaged high risk), confirm-all (any change) "
        "or follow (none).")] = None,
) -> None:
    """Follow a pinned server's chain now: verify every revision from the pinned one to the
    latest under the pin and show what changed (each change with its kind and risk). A
    revision whose changes the pin's acceptance policy holds back (by default: any change
    triaged high risk) is not followed by check, guard or the proxy until you accept it
    with --accept after reading its changes. Exit codes: 0 current or advanced, 1 a
    rollback, fork or broken chain (the pin is left as it was) or a revision waiting for
    acceptance, 2 not pinned or bad input."""
    from histor_sign.pins import set_acceptance, update_pin

    store = load_store(pins)
    entry = store.get(server)
    if entry is None:
        raise UsageError(f"{printable(server, 200)} is not pinned in {store.path}: pin it "
                         f"first with {_trust_add_hint(server)}")
    flags = VerifyFlags(None, GITHUB_ACTIONS_ISSUER, None, None, None, None, trusted_root,
                        trust_config, staging, offline)
    if acceptance is not None:
        try:
            store = set_acceptance(store, server, acceptance)
        except ValueError:
            raise UsageError("--acceptance must be confirm-high, confirm-all or follow",
                             param="acceptance") from None
    trust = flags.trust_for_pin(entry)
    warn(trust.warning())
    update = update_pin(store, server, trust=trust, accept=accept)
    if format is OutputFormat.json:
        emit(json_document(update.to_json()), None)
    else:
        emit(update.to_text(), None)
    if update.revision.awaiting is not None:
        awaiting_hint(update.revision)
        raise typer.Exit(1)
