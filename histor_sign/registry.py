"""Being found through the MCP Registry: the ``_meta`` fragment a release writes for
server.json, and reading it back to pin a publisher.

The registry's server.json carries publisher-provided data under
``_meta["io.modelcontextprotocol.registry/publisher-provided"]`` (an open object the
registry stores as given, bounded in size). A release writes ``registry-meta.json``::

    {"_meta": {"io.modelcontextprotocol.registry/publisher-provided": {
        "dev.histor-sign/revision": {
            "version": 1, "server": …, "revision": N, "manifestDigest": "sha256:…",
            "predicateType": "https://histor-sign.dev/revision/v1",
            "location": …/latest.envelope.json, "envelope": …/N.envelope.json,
            "attestation": …/N.intoto.sigstore.json,
            "repository": "OWNER/REPO", "workflow": ".github/workflows/sign.yml"}}}}

which a publisher merges into server.json before ``mcp-publisher publish`` (``jq -s '.[0] *
.[1]' server.json registry-meta.json``). At most :data:`MAX_REGISTRY_META_BYTES` bytes.

Nothing in it is trusted: ``trust add --server-json`` takes from it only *where* to look and
*whom* to pin (repository, workflow), then verifies the latest envelope there like any first
pin, and refuses a fragment whose revision disagrees with what verified.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from histor_sign._escape import printable
from histor_sign._limits import MAX_REGISTRY_META_BYTES
from histor_sign.attestation import ATTESTATION_PREDICATE_TYPE
from histor_sign.canonical import JsonValue
from histor_sign.errors import InputError, LimitExceeded
from histor_sign.layout import ATTESTATION_NAME, ENVELOPE_NAME, LATEST_NAME
from histor_sign.models import SignedEnvelope, validate_server_name

#: The registry's member for publisher-provided data.
PUBLISHER_PROVIDED = "io.modelcontextprotocol.registry/publisher-provided"
#: histor-sign's member inside it (reverse DNS of histor-sign.dev), versioned.
HISTOR_META = "dev.histor-sign/revision"
REGISTRY_META_VERSION = 1
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_KEYS = {"version", "server", "revision", "manifestDigest", "predicateType", "location",
         "envelope", "attestation", "repository", "workflow"}


@dataclass(frozen=True)
class RegistryPin:
    """What a server.json's histor-sign fragment says: whom to pin and where to look.

    A claim, not a proof: the pin is made only after the envelope at ``location`` verifies
    under ``repository`` (and ``workflow``)."""

    server: str
    revision: int
    manifest_digest: str
    location: str
    repository: str | None
    workflow: str | None


def registry_meta(envelope: SignedEnvelope, *, base: str, repository: str | None,
                  workflow: str | None) -> bytes:
    """The ``_meta`` fragment of a fresh revision as UTF-8 JSON, its chain published at
    ``base`` (a URL or path of the chain directory, without the trailing slash). Raises
    :class:`LimitExceeded` past :data:`MAX_REGISTRY_META_BYTES` (long names can do it)."""
    stmt = envelope.statement
    member: dict[str, Any] = {
        "version": REGISTRY_META_VERSION,
        "server": stmt.server,
        "revision": stmt.revision,
        "manifestDigest": stmt.manifest_digest,
        "predicateType": ATTESTATION_PREDICATE_TYPE,
        "location": f"{base}/{LATEST_NAME}",
        "envelope": f"{base}/{ENVELOPE_NAME.format(n=stmt.revision)}",
        "attestation": f"{base}/{ATTESTATION_NAME.format(n=stmt.revision)}",
    }
    if repository is not None:
        member["repository"] = repository
    if workflow is not None:
        member["workflow"] = workflow
    data = (json.dumps({"_meta": {PUBLISHER_PROVIDED: {HISTOR_META: member}}}, indent=2,
                       ensure_ascii=False) + "\n").encode("utf-8")
    if len(data) > MAX_REGISTRY_META_BYTES:
        raise LimitExceeded(
            f"the registry _meta fragment would be {len(data)} bytes; the registry takes at "
            f"most {MAX_REGISTRY_META_BYTES}", limit="registry_meta",
            value=MAX_REGISTRY_META_BYTES,
        )
    return data


def _member(document: JsonValue, source: str) -> tuple[Mapping[str, Any], str | None]:
    """histor-sign's member and the server.json ``name`` (None for a bare fragment)."""
    if not isinstance(document, dict):
        raise InputError(f"{source}: a server.json must be a JSON object")
    name = document.get("name")
    meta = document.get("_meta")
    provided = meta.get(PUBLISHER_PROVIDED) if isinstance(meta, dict) else None
    member = provided.get(HISTOR_META) if isinstance(provided, dict) else None
    if not isinstance(member, dict):
        raise InputError(
            f"{source}: no _meta.{PUBLISHER_PROVIDED}.{HISTOR_META}: this server.json was "
            "not published with a histor-sign release's registry-meta.json"
        )
    if name is not None and not isinstance(name, str):
        raise InputError(f"{source}: name must be a string")
    return member, name


def read_registry_pin(document: JsonValue, source: str) -> RegistryPin:
    """Strictly read the fragment from a server.json (or the bare ``registry-meta.json``):
    version 1, known members of the right types, and the server.json's ``name`` equal to the
    fragment's ``server``."""
    member, name = _member(document, source)
    where = f"{source}: _meta.{HISTOR_META}"
    unknown = sorted(set(member) - _KEYS)
    if member.get("version") != REGISTRY_META_VERSION:
        raise InputError(f"{where}.version must be {REGISTRY_META_VERSION} (a newer "
                         "histor-sign wrote it?)")
    if unknown:
        raise InputError(f"{where} has unknown members: {printable(', '.join(unknown), 200)}")

    def text(key: str, *, required: bool = True) -> str | None:
        value = member.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value or len(value) > 2048:
            raise InputError(f"{where}.{key} must be a non-empty string")
        return value

    server = validate_server_name(str(text("server")))
    if name is not None and name != server:
        raise InputError(f"{source}: name {printable(name, 200)!r} differs from the fragment's "
                         f"server {printable(server, 200)!r}")
    revision = member.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InputError(f"{where}.revision must be a positive integer")
    digest = str(text("manifestDigest"))
    if not _DIGEST.fullmatch(digest):
        raise InputError(f"{where}.manifestDigest must be sha256:<64 hex>")
    if member.get("predicateType") != ATTESTATION_PREDICATE_TYPE:
        raise InputError(f"{where}.predicateType must be {ATTESTATION_PREDICATE_TYPE}")
    text("envelope", required=False)
    text("attestation", required=False)
    return RegistryPin(server=server, revision=revision, manifest_digest=digest,
                       location=str(text("location")), repository=text("repository",
                                                                       required=False),
                       workflow=text("workflow", required=False))


def require_agreement(claimed: RegistryPin, revision: int, manifest_digest: str) -> None:
    """The verified latest revision must not contradict the fragment: the same revision
    with the same manifest, or a later one (the chain moved on since server.json was
    published). An earlier revision, or another manifest for the same one, raises
    :class:`VerificationFailed` (the location serves something else than was registered)."""
    from histor_sign.errors import VerificationFailed

    if revision < claimed.revision or (
        revision == claimed.revision and manifest_digest != claimed.manifest_digest
    ):
        raise VerificationFailed(
            f"{claimed.server}: the server.json names revision {claimed.revision} "
            f"({claimed.manifest_digest}), but the verified latest revision at "
            f"{printable(claimed.location, 300)} is {revision} ({manifest_digest}); "
            "nothing was pinned"
        )


def merge_conflicts(claimed: RegistryPin, **given: str | None) -> list[str]:
    """Flags the user gave that contradict the fragment (``server``, ``repository``,
    ``workflow``): a pin is made from one consistent source or not at all."""
    said = {"server": claimed.server, "repository": claimed.repository,
            "workflow": claimed.workflow}
    return [f"{key} {printable(value, 200)!r} (server.json: {printable(str(said[key]), 200)!r})"
            for key, value in given.items()
            if value is not None and said[key] is not None
            and value.lower() != str(said[key]).lower()]
