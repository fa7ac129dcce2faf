"""``trust add --server-json FILE|URL``: read a server.json's histor-sign ``_meta`` fragment
(:mod:`histor_sign.registry`) into the values ``trust add`` pins from."""


from typing import TYPE_CHECKING, Annotated

import typer

from histor_sign.errors import UsageError

if TYPE_CHECKING:
    from histor_sign.registry import RegistryPin

ServerJsonOpt = Annotated[
    str | None, typer.Option(
        "--server-json", metavar="FILE|URL",
        help="Pin from a server.json (or the registry-meta.json a release wrote): its "
        "histor-sign _meta fragment names the server, repository, workflow and where the "
        "revisions are published. The latest envelope there is verified as usual, and must "
        "not be older than the revision the server.json names.",
    )
]


def pin_from_server_json(
    source: str, server: str | None, repository: str | None, workflow: str | None,
    envelope: str | None,
) -> "RegistryPin":
    """The fragment at ``source`` (a file, or an https/loopback URL read with the bounded
    fetch), checked against the flags given alongside it."""
    from histor_sign import _chain_store as chain_store
    from histor_sign.canonical import parse_json, read_json_file
    from histor_sign.registry import merge_conflicts, read_registry_pin

    if envelope is not None:
        raise UsageError("--server-json names where the revisions are published; drop "
                         "--envelope")
    document = (parse_json(chain_store.fetch_bytes(source, param="server_json"), source)
                if chain_store.is_url(source) else read_json_file(source))
    claimed = read_registry_pin(document, source)
    conflicts = merge_conflicts(claimed, server=server, repository=repository,
                                workflow=workflow)
    if conflicts:
        raise UsageError("flags contradict the server.json: " + "; ".join(conflicts))
    if claimed.repository is None and repository is None:
        raise UsageError("the server.json names no repository: pass --repository OWNER/REPO")
    return claimed
