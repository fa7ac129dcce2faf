"""Digests and chained revision statements (SPEC §2, §4; HISTOR-compatible API).

``digests(tools)`` and ``build_statement(...)`` mirror HISTOR's Python API so its example
runs with only the import changed. The manifest is keyed by tool name and holds the
projected tools themselves, so its digest commits to every definition, not just names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from histor_sign.canonical import (
    JsonValue,
    canonical_bytes,
    canonical_object_from_parts,
    sha256_digest,
)
from histor_sign.catalog import Tool, reject_duplicates, require_mcp, tools_from_dicts
from histor_sign.errors import InputError

STATEMENT_TYPE = "histor.revision/v1"
#: Members of a statement, in the order we write them.
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

# MCP registry server name: reverse-DNS namespace, exactly one "/", 3–200 characters.
_SERVER_NAME = re.compile(r"^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_GITHUB_WORKFLOW = re.compile(
    r"^https://github\.com/[A-Za-z0-9](?:[A-Za-z0-9-]*)/[A-Za-z0-9._-]+/"
    r"\.github/workflows/[^@\s]+\.ya?ml@[^\s]+$"
)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _as_tools(tools: Iterable[Any]) -> list[Tool]:
    items = list(tools)
    if all(isinstance(t, Tool) for t in items):
        return items
    return tools_from_dicts(items)


def tool_digest_parts(tools: Iterable[Any]) -> dict[str, bytes]:
    """Canonical bytes of each projected tool, keyed by name (duplicates rejected)."""
    imported = _as_tools(tools)
    reject_duplicates(imported)
    require_mcp(imported)
    return {t.name: canonical_bytes(t.projected()) for t in imported}


def digests(tools: Iterable[Any]) -> tuple[str, dict[str, str]]:
    """Return ``(manifest_digest, {tool name: tool digest})`` for MCP tool definitions."""
    parts = tool_digest_parts(tools)
    per_tool = {name: sha256_digest(data) for name, data in parts.items()}
    return sha256_digest(canonical_object_from_parts(parts)), per_tool


def validate_server_name(server: str) -> str:
    if not isinstance(server, str) or not (3 <= len(server) <= 200) or not _SERVER_NAME.match(
        server
    ):
        raise InputError(
            f"invalid server name {server!r}: expected NAMESPACE/NAME as the MCP registry "
            "allows, e.g. io.github.OWNER/REPO (3–200 characters, one '/')"
        )
    return server


def validate_identity(identity: str) -> str:
    """The signer identity a revision claims: a GitHub workflow URI, https URI or email."""
    if not isinstance(identity, str) or not identity or any(c.isspace() for c in identity):
        raise InputError(f"invalid identity {identity!r}: expected a workflow URI or email")
    if identity.startswith("https://github.com/"):
        if not _GITHUB_WORKFLOW.match(identity):
            raise InputError(
                f"invalid identity {identity!r}: a GitHub identity looks like "
                "https://github.com/OWNER/REPO/.github/workflows/FILE.yml@REF"
            )
    elif not (identity.startswith("https://") or _EMAIL.match(identity)):
        raise InputError(
            f"invalid identity {identity!r}: expected an https:// workflow URI or an email"
        )
    return identity


def validate_server_version(version: str) -> str:
    if not isinstance(version, str) or not version.strip() or len(version) > 255:
        raise InputError(f"invalid server version {version!r}: expected a non-empty string")
    return version


def build_statement(
    *,
    tools: Iterable[Any],
    server: str,
    identity: str,
    server_version: str,
    previous: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a revision statement, chained to ``previous`` (a statement or envelope)."""
    validate_server_name(server)
    validate_identity(identity)
    validate_server_version(server_version)
    manifest_digest, per_tool = digests(tools)
    revision = 1
    previous_digest: str | None = None
    if previous is not None:
        prev = statement_from(previous, "previous revision")
        if prev["server"] != server:
            raise InputError(
                f"previous revision is for server {prev['server']!r}, not {server!r}"
            )
        revision = prev["revision"] + 1
        previous_digest = prev["manifestDigest"]
    return {
        "type": STATEMENT_TYPE,
        "server": server,
        "serverVersion": server_version,
        "revision": revision,
        "identity": identity,
        "manifestDigest": manifest_digest,
        "toolDigests": dict(sorted(per_tool.items())),
        "previousManifestDigest": previous_digest,
    }


def statement_from(value: JsonValue, source: str) -> dict[str, Any]:
    """Check a statement (or the statement members of an envelope) and return them.

    Raises :class:`InputError` naming the first member that is missing or mistyped.
    """
    if not isinstance(value, dict):
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
    if not isinstance(value["manifestDigest"], str) or not _DIGEST.match(value["manifestDigest"]):
        raise InputError(f"{source}: manifestDigest must look like sha256:<64 hex>")
    prev = value["previousManifestDigest"]
    if prev is not None and (not isinstance(prev, str) or not _DIGEST.match(prev)):
        raise InputError(f"{source}: previousManifestDigest must be null or sha256:<64 hex>")
    if (rev == 1) != (prev is None):
        raise InputError(
            f"{source}: revision 1 has no previousManifestDigest and later revisions must"
        )
    tool_digests = value["toolDigests"]
    if not isinstance(tool_digests, dict) or not all(
        isinstance(d, str) and _DIGEST.match(d) for d in tool_digests.values()
    ):
        raise InputError(f"{source}: toolDigests must map tool names to sha256:<64 hex>")
    return {k: value[k] for k in STATEMENT_KEYS}
