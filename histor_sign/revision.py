"""Digests and chained revision statements.

``digests(tools)`` and ``build_statement(...)`` take HISTOR's arguments; the statement is
typed, and :meth:`Statement.to_json` gives HISTOR's document. The manifest is keyed by
tool name and holds the projected tools themselves, so its digest commits to every
definition, not just names. camelCase member names exist only in
:meth:`Statement.to_json` / :meth:`Statement.from_json`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from histor_sign.canonical import (
    JsonValue,
    canonical_bytes,
    canonical_object_from_parts,
    sha256_digest,
)
from histor_sign.catalog import Tool, ToolsLike, as_tools, reject_duplicates, require_mcp
from histor_sign.errors import InputError

if TYPE_CHECKING:
    from typing import TypeAlias

    from histor_sign.envelope import SignedEnvelope
    from histor_sign.mcp._snapshot import Snapshot

    #: What the library accepts where it needs a statement.
    StatementLike: TypeAlias = "Statement | SignedEnvelope | Mapping[str, Any]"

STATEMENT_TYPE = "histor.revision/v1"
#: Members of a statement document, in the order we write them.
STATEMENT_KEYS: tuple[str, ...] = (
    "type",
    "server",
    "serverVersion",
    "revision",
    "identity",
    "manifestDigest",
    "toolDigests",
    "previousManifestDigest",
)

# Every pattern below is matched with ``fullmatch``: ``$`` alone also matches before a final
# newline, which would let "io.github.owner/docs\n" through.
# MCP registry server name: reverse-DNS namespace, exactly one "/", 3–200 characters.
_SERVER_NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_GITHUB_WORKFLOW = re.compile(
    r"https://github\.com/[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+/"
    r"\.github/workflows/[^@\s]+\.ya?ml@[^\s]+"
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")


def _tool_bytes(tool: Tool) -> bytes:
    return canonical_bytes(tool.projected())


def tool_digest(tool: Tool) -> str:
    """The digest of one tool: SHA-256 of the RFC 8785 bytes of its seven-field projection."""
    return sha256_digest(_tool_bytes(tool))


def tool_digest_parts(tools: ToolsLike) -> dict[str, bytes]:
    """Canonical bytes of each projected tool, keyed by name (duplicates rejected)."""
    imported = as_tools(tools)
    reject_duplicates(imported)
    require_mcp(imported)
    return {t.name: _tool_bytes(t) for t in imported}


def digests(tools: ToolsLike) -> tuple[str, dict[str, str]]:
    """Return ``(manifest_digest, {tool name: tool digest})`` for MCP tool definitions.

    Raises :class:`InputError` for duplicate names or tools of another provider.
    """
    parts = tool_digest_parts(tools)
    per_tool = {name: sha256_digest(data) for name, data in parts.items()}
    return sha256_digest(canonical_object_from_parts(parts)), per_tool


@dataclass(frozen=True)
class SurfaceDigests:
    """Digests of the non-tool surface: instructions, each prompt, each resource template.

    Each is SHA-256 of the RFC 8785 bytes of the item exactly as served (every field),
    so any change to what can steer a model changes its digest. ``None`` / empty means
    the snapshot did not capture that part. The signed tool statement stays tools-only.
    """

    instructions: str | None
    prompts: Mapping[str, str]
    resource_templates: Mapping[str, str]


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
    "resourceTemplates": {uriTemplate: digest}}``; None for anything else (a tools-only
    catalog, or a snapshot from before surface capture, says nothing about the surface)."""
    from histor_sign.mcp._snapshot import Snapshot

    if not isinstance(snapshot, Snapshot) or not snapshot.surface_captured:
        return None
    digests = surface_digests(snapshot)
    return {
        "instructions": digests.instructions,
        "prompts": dict(sorted(digests.prompts.items())),
        "resourceTemplates": dict(sorted(digests.resource_templates.items())),
    }


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
    )


@dataclass(frozen=True)
class Statement:
    """A revision statement: which tools a server version served, chained to the last one.

    ``tool_digests`` is a read-only mapping (sorted by name when built here). ``revision`` 1 has no
    ``previous_manifest_digest``; every later revision has one. Build with
    :func:`build_statement` or read with :meth:`from_json`; both guarantee those rules.
    """

    server: str
    server_version: str
    revision: int
    identity: str
    manifest_digest: str
    tool_digests: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    previous_manifest_digest: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tool_digests, MappingProxyType):
            object.__setattr__(
                self, "tool_digests", MappingProxyType(dict(self.tool_digests))
            )

    def to_json(self) -> dict[str, Any]:
        """The statement document (camelCase members, in the order we write them)."""
        return {
            "type": STATEMENT_TYPE,
            "server": self.server,
            "serverVersion": self.server_version,
            "revision": self.revision,
            "identity": self.identity,
            "manifestDigest": self.manifest_digest,
            "toolDigests": dict(self.tool_digests),
            "previousManifestDigest": self.previous_manifest_digest,
        }

    def to_bytes(self) -> bytes:
        """The statement's RFC 8785 canonical bytes (what ``build`` writes)."""
        return canonical_bytes(self.to_json())

    @classmethod
    def from_json(
        cls, value: JsonValue | Mapping[str, Any], source: str = "statement"
    ) -> Statement:
        """Check a statement document and return it typed.

        Members beyond the statement's own (an envelope's ``signer`` and
        ``transparencyLog``) are ignored, so an envelope document reads as its statement.
        Raises :class:`InputError` naming the first member that is missing or mistyped.
        """
        return _statement_from_json(value, source)


def validate_server_name(server: str) -> str:
    if not isinstance(server, str) or not (3 <= len(server) <= 200) or not _SERVER_NAME.fullmatch(
        server
    ):
        raise InputError(
            f"invalid server name {server!r}: expected NAMESPACE/NAME as the MCP registry "
            "allows, e.g. io.github.OWNER/REPO (3–200 characters, one '/')"
        )
    return server


def validate_identity(identity: str) -> str:
    """The signer identity a revision claims: a GitHub workflow URI, https URI or email."""
    if not isinstance(identity, str) or not identity or not identity.isprintable() or any(
        c.isspace() for c in identity
    ):
        raise InputError(
            f"invalid identity {identity!r}: expected a workflow URI or email (printable, no "
            "spaces)"
        )
    if identity.startswith("https://github.com/"):
        if not _GITHUB_WORKFLOW.fullmatch(identity):
            raise InputError(
                f"invalid identity {identity!r}: a GitHub identity looks like "
                "https://github.com/OWNER/REPO/.github/workflows/FILE.yml@REF"
            )
    elif not (identity.startswith("https://") or _EMAIL.fullmatch(identity)):
        raise InputError(
            f"invalid identity {identity!r}: expected an https:// workflow URI or an email"
        )
    return identity


def validate_server_version(version: str) -> str:
    """A server version: 1–255 characters of printable text (no control, format or line
    separator characters), not only spaces."""
    if (
        not isinstance(version, str) or not version.strip() or len(version) > 255
        or not version.isprintable()
    ):
        raise InputError(
            f"invalid server version {version!r}: expected non-empty printable text "
            "(at most 255 characters)"
        )
    return version


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


def statement_of(value: StatementLike | JsonValue, source: str = "statement") -> Statement:
    """The statement of a :class:`Statement`, a signed envelope, or a JSON document."""
    if isinstance(value, Statement):
        return value
    inner = getattr(value, "statement", None)
    if isinstance(inner, Statement):
        return inner
    return _statement_from_json(value, source)


def _statement_from_json(value: Any, source: str) -> Statement:
    if not isinstance(value, Mapping):
        raise InputError(f"{source}: a revision statement must be a JSON object")
    missing = [k for k in STATEMENT_KEYS if k not in value]
    if missing:
        raise InputError(f"{source}: not a revision statement: missing {', '.join(missing)}")
    if value["type"] != STATEMENT_TYPE:
        raise InputError(f"{source}: type is {value['type']!r}, expected {STATEMENT_TYPE!r}")
    try:
        validate_server_name(value["server"])
        validate_identity(value["identity"])
        validate_server_version(value["serverVersion"])
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    rev = value["revision"]
    if isinstance(rev, bool) or not isinstance(rev, int) or rev < 1:
        raise InputError(f"{source}: revision must be a positive integer")
    digest = value["manifestDigest"]
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise InputError(f"{source}: manifestDigest must look like sha256:<64 hex>")
    prev = value["previousManifestDigest"]
    if prev is not None and (not isinstance(prev, str) or not _DIGEST.fullmatch(prev)):
        raise InputError(f"{source}: previousManifestDigest must be null or sha256:<64 hex>")
    if (rev == 1) != (prev is None):
        raise InputError(
            f"{source}: revision 1 has no previousManifestDigest and later revisions must"
        )
    tool_digests = value["toolDigests"]
    if not isinstance(tool_digests, dict) or not all(
        isinstance(d, str) and _DIGEST.fullmatch(d) for d in tool_digests.values()
    ):
        raise InputError(f"{source}: toolDigests must map tool names to sha256:<64 hex>")
    return Statement(
        server=value["server"],
        server_version=value["serverVersion"],
        revision=rev,
        identity=value["identity"],
        manifest_digest=value["manifestDigest"],
        tool_digests=tool_digests,
        previous_manifest_digest=prev,
    )
