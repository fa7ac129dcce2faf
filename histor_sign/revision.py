"""Digests and chained revision statements.

``digests(tools)`` and ``build_statement(...)`` take HISTOR's arguments; the statement is
typed, and :meth:`Statement.to_json` gives HISTOR's document. The manifest is keyed by
tool name and holds the projected tools themselves, so its digest commits to every
definition, not just names. camelCase member names exist only in
:meth:`Statement.to_json` / :meth:`Statement.from_json`.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from histor_sign.canonical import (
    canonical_bytes,
    canonical_object_from_parts,
    sha256_digest,
)
from histor_sign.catalog import ToolsLike, as_tools, reject_duplicates, require_mcp
from histor_sign.errors import InputError
from histor_sign.models import (
    NOT_SERVED,
    Snapshot,
    Statement,
    SurfaceDigests,
    Tool,
    not_served_json,
    statement_of,
    validate_identity,
    validate_server_name,
    validate_server_version,
)

if TYPE_CHECKING:
    from histor_sign.models import Snapshot, StatementLike



def _tool_bytes(tool: Tool) -> bytes:
    return tool.canonical_projection()


def tool_digest(tool: Tool) -> str:
    """The digest of one tool: SHA-256 of the RFC 8785 bytes of its seven-field projection."""
    return sha256_digest(_tool_bytes(tool))


def tool_digest_parts(tools: ToolsLike) -> dict[str, bytes]:
    """Canonical bytes of each projected tool, keyed by name (duplicates rejected)."""
    imported = as_tools(tools)
    reject_duplicates(imported)
    require_mcp(imported)
    return {t.name: t.canonical_projection() for t in imported}


def manifest_bytes(tools: ToolsLike) -> bytes:
    """The manifest's RFC 8785 bytes: the file whose SHA-256 is ``manifestDigest`` and the
    attestation's ``manifest`` subject (published as ``manifest.json``)."""
    return canonical_object_from_parts(tool_digest_parts(tools))


def digests(tools: ToolsLike) -> tuple[str, dict[str, str]]:
    """Return ``(manifest_digest, {tool name: tool digest})`` for MCP tool definitions.

    Raises :class:`InputError` for duplicate names or tools of another provider.
    """
    parts = tool_digest_parts(tools)
    per_tool = {name: sha256_digest(data) for name, data in parts.items()}
    return sha256_digest(canonical_object_from_parts(parts)), per_tool


def _keyed_digests(items: list[dict[str, Any]] | None, key: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for index, item in enumerate(items or []):
        name = item[key]
        if name in out:
            raise InputError(f"duplicate {what} {key} {name!r} at #/{index}")
        out[name] = sha256_digest(canonical_bytes(item))
    return out


def surface_json(snapshot: object) -> dict[str, Any] | None:
    """The attestation's ``surface`` member for a fetch snapshot that captured the server
    surface: ``{"instructions": digest | null, "prompts": {name: digest},
    "resourceTemplates": {uriTemplate: digest}}``, plus ``"notServed": {"prompts":
    {"code": -32601}}`` when the server advertised a list but answered it with an error;
    None for anything else (a tools-only catalog, or a snapshot from before surface capture,
    says nothing about the surface)."""

    if not isinstance(snapshot, Snapshot) or not snapshot.surface_captured:
        return None
    digests = surface_digests(snapshot)
    out: dict[str, Any] = {
        "instructions": digests.instructions,
        "prompts": dict(sorted(digests.prompts.items())),
        "resourceTemplates": dict(sorted(digests.resource_templates.items())),
    }
    if digests.not_served:
        out[NOT_SERVED] = not_served_json(digests.not_served)
    return out


def surface_digests(snapshot: Snapshot) -> SurfaceDigests:
    """Per-item digests of a snapshot's instructions, prompts and resource templates."""
    instructions = snapshot.instructions
    return SurfaceDigests(
        instructions=None if instructions is None
        else sha256_digest(canonical_bytes(instructions)),
        prompts=MappingProxyType(_keyed_digests(snapshot.prompts, "name", "prompt")),
        resource_templates=MappingProxyType(
            _keyed_digests(snapshot.resource_templates, "uriTemplate", "resource template")
        ),
        not_served=MappingProxyType(snapshot.not_served),
    )


def build_statement(
    tools: ToolsLike,
    *,
    server: str,
    identity: str,
    server_version: str,
    previous: StatementLike | None = None,
) -> Statement:
    """Build a revision statement, chained to ``previous``.

    ``tools`` is anything :func:`~histor_sign.catalog.as_tools` accepts; ``previous`` a
    :class:`Statement`, a signed envelope, or either's JSON document. The new revision is
    ``previous.revision + 1`` and records its manifest digest; a previous revision of
    another server is refused.
    """
    validate_server_name(server)
    validate_identity(identity)
    validate_server_version(server_version)
    manifest_digest, per_tool = digests(tools)
    revision = 1
    previous_digest: str | None = None
    if previous is not None:
        prev = statement_of(previous, "previous revision")
        if prev.server != server:
            raise InputError(
                f"previous revision is for server {prev.server!r}, not {server!r}"
            )
        revision = prev.revision + 1
        previous_digest = prev.manifest_digest
    return Statement(
        server=server,
        server_version=server_version,
        revision=revision,
        identity=identity,
        manifest_digest=manifest_digest,
        tool_digests=dict(sorted(per_tool.items())),
        previous_manifest_digest=previous_digest,
    )


