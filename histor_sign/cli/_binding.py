"""``check --server NAME --artifact FILE`` / ``--installed ECOSYSTEM:PATH``: the printing
side of :func:`histor_sign.binding.check_binding` (the library decides)."""


from pathlib import Path

import typer

from histor_sign.cli.app import OutputFormat, emit, json_document, warn
from histor_sign.cli.signing_commands import VerifyFlags
from histor_sign.errors import UsageError

ARTIFACT_OPT = typer.Option(
    None, "--artifact", metavar="FILE|oci:REF@sha256:…",
    help="With --server: exit 0 only if the pinned publisher's latest verified revision "
    "attests this artifact (an npm tarball, wheel, sdist, any file, or an image by "
    "digest); exit 1 naming what differs.",
)
INSTALLED_OPT = typer.Option(
    None, "--installed", metavar="npm:PATH|pypi:PATH|oci:REF@sha256:…",
    help="With --server: the same for an installed package, from the evidence its "
    "ecosystem keeps (npm: the lockfile integrity of node_modules/PKG; pypi: the "
    ".dist-info's direct_url.json hash and RECORD; oci: the repository digest). See "
    "docs/binding.md for what each can and cannot prove.",
)


def check_binding(
    server: str | None, artifact: str | None, installed: str | None, flags: VerifyFlags,
    pins: Path | None, format: OutputFormat, output: Path | None, *, others: tuple[object, ...],
) -> None:
    """Parse and print; exit 1 when the artifact is not attested (or a check failed).
    ``others`` are check's inputs for a tools comparison, which must all be unset."""
    from histor_sign.binding import check_binding as decide
    from histor_sign.cli.trust_commands import pinned_store

    if server is None:
        raise UsageError("--artifact/--installed need --server NAME (a pinned publisher)")
    if artifact is not None and installed is not None:
        raise UsageError("give --artifact or --installed, not both")
    if any(other is not None for other in others):
        raise UsageError("--artifact/--installed check a package against the pinned revision: "
                         "drop TOOLS_FILE, --stdio/--url, --envelope, --signed-tools, "
                         "--attestation, --fail-on and --lock (check the tools in another run)")
    store = pinned_store(server, flags, pins)
    trust = flags.trust_for_pin(store.get(server))
    warn(trust.warning())
    result = decide(server, trust=trust, store=store, artifact=artifact, installed=installed)
    if format is OutputFormat.json:
        emit(json_document(result.to_json()), output)
    else:
        emit(result.to_text(), output)
    if not result.ok:
        raise typer.Exit(1)
