"""The data the toolkit reads, signs and reports, and its JSON forms: one module of models.

Everything here is plain data plus the strict reading and writing of its documents: tools and
catalogs, a fetch snapshot, a revision statement and its signed envelope, an observed call,
and a finding. Nothing here fetches, signs, verifies or prints; every layer above builds on
these types, so they import nothing of ours but the ground floor and :mod:`canonical`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

from histor_sign._limits import DEFAULT_MAX_FILE_BYTES
from histor_sign.canonical import (
    JsonValue,
    canonical_bytes,
    jcs_of_vouched_many,
    parse_json_vouched,
    pointer,
    read_json_file,
    sha256_digest,
)
from histor_sign.errors import InputError, LimitExceeded

#: The seven fields a tool is projected onto for digests, in the order MCP defines them.
PROJECTED_FIELDS: tuple[str, ...] = (
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "execution",
)


SNAPSHOT_TYPE = "histor.snapshot/v1"


class Risk(StrEnum):
    """How much a change can hurt a client that trusted the signed revision (the drift
    triage's verdict; here, beside the other shared types, so a command line can offer it
    as an option without importing the triage)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Risk.LOW: 0, Risk.MEDIUM: 1, Risk.HIGH: 2}


def max_risk(risks: Iterable[Risk]) -> Risk | None:
    """The highest of ``risks`` (None when there are none)."""
    best: Risk | None = None
    for risk in risks:
        if best is None or risk.rank > best.rank:
            best = risk
    return best


class Provider(StrEnum):
    """The API shape a tool definition or an observed call came in.

    Catalogs yield the first four; ``ANTHROPIC_MCP`` (``mcp_tool_use`` blocks) and ``PLAIN``
    (a bare ``{"name", "arguments"}`` object) exist only for observed calls.
    """

    MCP = "mcp"
    OPENAI_RESPONSES = "openai-responses"
    OPENAI_CHAT = "openai-chat"
    ANTHROPIC = "anthropic"
    ANTHROPIC_MCP = "anthropic-mcp"
    PLAIN = "plain"


@dataclass(frozen=True, slots=True)
class ToolRef:
    """Where a tool is — name, source, index, JSON pointer — without its content: what a
    finding keeps of each tool it is about."""

    name: str
    source: str
    index: int
    pointer: str = ""


@dataclass(frozen=True)
class Tool:
    """One imported tool: the object as found (evidence) plus where it came from.

    ``raw`` is evidence and is not to be modified. A tool imported by
    :func:`parse_catalog_bytes` (what ``load_catalog`` and the CLI read files with) keeps
    the RFC 8785 bytes of its projection as read, and :meth:`canonical_projection` — hence
    its digest — returns those: a later change to ``raw`` does not reach them. Any other
    tool (``parse_catalog`` of a value, a tool built or ``dataclasses.replace``-d by a
    caller) computes them from ``raw`` when asked.
    """

    name: str
    raw: Mapping[str, Any]
    source: str
    index: int
    pointer: str
    provider: str
    input_schema: JsonValue = None
    has_input_schema: bool = False

    @cached_property
    def ref(self) -> ToolRef:
        """This tool's :class:`ToolRef`, made once: a large scan's findings share it."""
        return ToolRef(self.name, self.source, self.index, self.pointer)

    @property
    def location(self) -> str:
        """``file#/json/pointer`` — how messages name this tool."""
        return f"{self.source}#{self.pointer}"

    @property
    def description(self) -> str:
        """The description if it is a string, else ``""`` (never trusted, never None)."""
        value = self.raw.get("description")
        return value if isinstance(value, str) else ""

    @property
    def annotations(self) -> Mapping[str, Any]:
        """MCP annotations if the tool has an object of them, else an empty mapping."""
        value = self.raw.get("annotations") if self.provider == Provider.MCP else None
        return value if isinstance(value, dict) else {}

    def canonical_projection(self) -> bytes:
        """The RFC 8785 bytes of :meth:`projected` (what the tool's digest hashes)."""
        kept = vars(self).get("_jcs")
        return kept if kept is not None else canonical_bytes(self.projected())

    def projected(self) -> dict[str, Any]:
        """The seven-field projection used for digests (only keys the server sent)."""
        if self.provider == Provider.MCP:
            return {k: self.raw[k] for k in PROJECTED_FIELDS if k in self.raw}
        # Non-MCP tools are scanned, not signed; map their schema key for comparison.
        out: dict[str, Any] = {"name": self.name}
        if self.description or "description" in self.raw:
            out["description"] = self.raw.get("description")
        if self.has_input_schema:
            out["inputSchema"] = self.input_schema
        return out


@dataclass(frozen=True)
class Catalog:
    """Tools imported from one document, in document order.

    ``shape`` says which layout was found (``tools``, ``jsonrpc``, ``array``, ``snapshot``,
    ``python``); ``capture`` is a fetch snapshot's capture context, else None.
    """

    source: str
    tools: tuple[Tool, ...]
    shape: str
    capture: Mapping[str, Any] | None = None

    @property
    def providers(self) -> set[str]:
        """Every provider shape present (``mcp``, ``openai-chat``, ...)."""
        return {t.provider for t in self.tools}


def _classify(obj: Mapping[str, Any]) -> tuple[str, Mapping[str, Any], str | None]:
    """Return (provider, the object holding name/description, schema key or None)."""
    if obj.get("type") == "function":
        fn = obj.get("function")
        if isinstance(fn, dict):
            return Provider.OPENAI_CHAT, fn, "parameters"
        return Provider.OPENAI_RESPONSES, obj, "parameters"
    if "input_schema" in obj and "inputSchema" not in obj:
        return Provider.ANTHROPIC, obj, "input_schema"
    return Provider.MCP, obj, "inputSchema"


def tool_from_object(obj: Any, source: str, index: int, ptr: str) -> Tool:
    """Import one tool object, checking only what every later step relies on."""
    if not isinstance(obj, dict):
        raise InputError(f"{source}#{ptr}: a tool must be a JSON object, got {_type_name(obj)}")
    provider, holder, schema_key = _classify(obj)
    name = holder.get("name")
    if not isinstance(name, str):
        missing = "missing" if name is None and "name" not in holder else _type_name(name)
        raise InputError(f"{source}#{ptr}: tool name must be a string, got {missing}")
    if name == "":
        raise InputError(f"{source}#{ptr}: tool name must not be empty")
    has_schema = schema_key is not None and schema_key in holder
    if provider == Provider.MCP and not has_schema:
        nested = (" (it looks like a server entry with its tools nested inside)"
                  if "tools" in obj else "")
        raise InputError(
            f"{source}#{ptr}: {name!r} is not an MCP tool: it has no \"inputSchema\"{nested}; "
            "expected a tool list: {\"tools\": [{\"name\": ..., \"inputSchema\": {...}}]}, "
            "a JSON-RPC result or fetch snapshot holding one, or an array of MCP, OpenAI or "
            "Anthropic tools"
        )
    schema = holder.get(schema_key) if has_schema and schema_key else None
    # The state Tool's generated __init__ would set, without its eight frozen-dataclass
    # object.__setattr__ calls (the larger part of importing a tool): a catalog imports
    # thousands. Equal to Tool(...) with the same fields; nothing else is checked there.
    tool = object.__new__(Tool)
    vars(tool).update(
        name=name,
        raw=obj,
        source=source,
        index=index,
        pointer=ptr,
        provider=provider,
        input_schema=schema,
        has_input_schema=has_schema,
    )
    return tool


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def parse_catalog(document: JsonValue, source: str, *, max_tools: int | None = None) -> Catalog:
    """Import tools from a parsed document of any supported shape."""
    return _import_catalog(document, source, max_tools, vouched=False)


def parse_catalog_bytes(
    data: bytes, source: str, *, max_tools: int | None = None,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Catalog:
    """Read a catalog document strictly (:func:`~histor_sign.canonical.parse_json`) and
    import its tools, as ``parse_catalog(parse_json(data, source), source)`` does.

    The document goes from the reader to the import with no other code in between, so
    when the reader vouches for it (:func:`~histor_sign.canonical.parse_json_vouched`)
    each MCP tool's canonical projection is written at import time by the fast exact
    serialiser and kept (see :class:`Tool`): a digest of a catalog read from bytes then
    needs no second look at its values.
    """
    document, vouched = parse_json_vouched(data, source, max_bytes=max_bytes)
    return _import_catalog(document, source, max_tools, vouched=vouched)


def _import_catalog(
    document: JsonValue, source: str, max_tools: int | None, *, vouched: bool
) -> Catalog:
    """A parsed document as a catalog: its tool list found by shape, bounded, read."""
    items, base, shape, capture = _tool_list(document, source)
    if not isinstance(items, list):
        raise InputError(f"{source}#{pointer(base)}: \"tools\" must be an array")
    if max_tools is not None and len(items) > max_tools:
        raise LimitExceeded(
            f"{source}: {len(items)} tools is more than `max_tools` {max_tools}",
            limit="max_tools", value=max_tools,
        )
    prefix = pointer(base) + "/"  # an index needs no escaping: pointer([*base, i])
    tools = tuple(
        tool_from_object(obj, source, i, f"{prefix}{i}") for i, obj in enumerate(items)
    )
    if vouched:
        _attach_vouched_jcs(tools)
    return Catalog(source=source, tools=tools, shape=shape, capture=capture)


def _tool_list(
    document: JsonValue, source: str
) -> tuple[Any, list[str], str, Mapping[str, Any] | None]:
    """Where a catalog document keeps its tools: (the list, its path, the document's shape,
    a snapshot's capture context); an error for a document of no known shape."""
    if isinstance(document, list):
        return document, [], "array", None
    if not isinstance(document, dict):
        raise InputError(
            f"{source}: not a tool catalog: the document is {_type_name(document)}"
        )
    if document.get("type") == SNAPSHOT_TYPE:
        raw_capture = document.get("capture")
        return (document.get("tools"), ["tools"], "snapshot",
                raw_capture if isinstance(raw_capture, dict) else None)
    if "tools" in document:
        return document["tools"], ["tools"], "tools", None
    if isinstance(document.get("result"), dict) and "tools" in document["result"]:
        return document["result"]["tools"], ["result", "tools"], "jsonrpc", None
    if "error" in document and "jsonrpc" in document:
        raise InputError(f"{source}: is a JSON-RPC error response, not a tool list")
    raise InputError(
        f"{source}: not a tool catalog: expected a \"tools\" array, a JSON-RPC "
        "result with tools, a fetch snapshot, or a JSON array of tools"
    )


def _attach_vouched_jcs(tools: tuple[Tool, ...]) -> None:
    """Give each MCP tool of a vouched document its canonical bytes, written in one go."""
    mcp = [tool for tool in tools if tool.provider == Provider.MCP]
    # An MCP tool's projection: parts of the vouched document under the seven ASCII
    # field names.
    projections = [tool.projected() for tool in mcp]
    for tool, jcs in zip(mcp, jcs_of_vouched_many(projections), strict=True):
        tool.__dict__["_jcs"] = jcs


#: Capture-context member a fetch sets once it has captured the whole server surface.
SURFACE_CAPTURED = "surfaceCaptured"
#: Capture-context member naming the optional lists the server advertised but answered with
#: a JSON-RPC error: ``{"prompts": {"code": -32601}}`` (keys: :data:`SURFACE_LISTS`).
NOT_SERVED = "notServed"
#: The optional surface lists, by snapshot member, with the method that lists each.
SURFACE_LISTS: dict[str, str] = {
    "prompts": "prompts/list",
    "resourceTemplates": "resources/templates/list",
}


def not_served_lists(value: Any, source: str) -> dict[str, int]:
    """``{member: error code}`` from a ``notServed`` object (a snapshot's capture member or
    an attestation's surface member); None/absent is ``{}``. Raises :class:`InputError`
    for any other shape."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"{source}: \"{NOT_SERVED}\" must be an object")
    out: dict[str, int] = {}
    for member, entry in value.items():
        code = entry.get("code") if isinstance(entry, Mapping) else None
        if (member not in SURFACE_LISTS or not isinstance(entry, Mapping) or set(entry) != {"code"}
                or not isinstance(code, int) or isinstance(code, bool)):
            raise InputError(
                f"{source}: \"{NOT_SERVED}\" maps {' or '.join(SURFACE_LISTS)} to "
                "{\"code\": integer}"
            )
        out[member] = code
    return dict(sorted(out.items()))


def not_served_json(lists: Mapping[str, int]) -> dict[str, Any]:
    """The ``notServed`` object for ``{member: error code}`` (sorted by member)."""
    return {member: {"code": code} for member, code in sorted(lists.items())}


#: Prefix of a finding location naming a live server rather than a file (see
#: :meth:`Snapshot.server_location`); the report renderers read no file for it.
SERVER_LOCATION_PREFIX = "mcp-server:"


@dataclass(frozen=True)
class Snapshot:
    """What one fetch saw: the raw tool objects as served, and how they were captured.

    ``tools`` are the served JSON objects, untouched (what is signed must be what was
    served). A Snapshot is accepted wherever the library takes tools; ``source`` names
    it in messages (the fetched target, never a secret).
    """

    tools: list[dict[str, Any]]
    capture: dict[str, Any]
    source: str = field(default="<fetch>", compare=False)
    #: The rest of the surface that steers a model; ``None`` = not offered / not captured.
    instructions: str | None = None
    prompts: list[dict[str, Any]] | None = None
    resource_templates: list[dict[str, Any]] | None = None
    #: What the caller should be told about the fetch (skipped banner lines, lists not
    #: served), one line each, server text already escaped; not part of the document.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def not_served(self) -> dict[str, int]:
        """The optional lists (``prompts``, ``resourceTemplates``) the server advertised
        but answered with a JSON-RPC error, with the error code (``capture.notServed``).
        Such a list is None here like one not offered, but it is recorded and compared:
        serving it later is a change."""
        return not_served_lists(self.capture.get(NOT_SERVED), f"{self.source}: capture")

    @property
    def surface_captured(self) -> bool:
        """True when this snapshot records the whole surface (absent parts = not offered).

        A fetch marks its capture context with ``surfaceCaptured``; a snapshot written before
        surface capture existed, or a hand-written one without any surface member, says
        nothing about the surface, so it cannot be compared for surface drift.
        """
        return self.capture.get(SURFACE_CAPTURED) is True or any(
            part is not None
            for part in (self.instructions, self.prompts, self.resource_templates)
        )

    def to_json(self) -> dict[str, Any]:
        """The snapshot document (a plain JSON value); surface members only when captured."""
        doc: dict[str, Any] = {"type": SNAPSHOT_TYPE, "capture": self.capture, "tools": self.tools}
        if self.instructions is not None:
            doc["instructions"] = self.instructions
        if self.prompts is not None:
            doc["prompts"] = self.prompts
        if self.resource_templates is not None:
            doc["resourceTemplates"] = self.resource_templates
        return doc

    def to_bytes(self) -> bytes:
        """Pretty, deterministic UTF-8 JSON with a trailing newline (what ``fetch`` writes)."""
        text = json.dumps(self.to_json(), indent=2, ensure_ascii=False)
        return (text + "\n").encode("utf-8")

    def server_location(self) -> str:
        """The location findings on a live fetch point at: ``mcp-server:NAME`` from the
        server's own ``serverInfo.name`` (``mcp-server:unnamed`` without one) — never the
        stdio command line or URL, which can carry runner paths and secrets."""
        info = self.capture.get("serverInfo")
        name = info.get("name") if isinstance(info, dict) else None
        return SERVER_LOCATION_PREFIX + (name if isinstance(name, str) and name else "unnamed")

    def to_catalog(self, source: str | None = None) -> Catalog:
        """The snapshot as a catalog, for digests, scans and checks."""
        return parse_catalog(self.to_json(), source or self.source)

    @classmethod
    def from_json(cls, value: Any, source: str = "snapshot") -> Snapshot:
        """Read a snapshot document; raises :class:`InputError` if it is not one."""
        if (
            not isinstance(value, Mapping)
            or value.get("type") != SNAPSHOT_TYPE
            or not isinstance(value.get("tools"), list)
            or not isinstance(value.get("capture"), dict)
        ):
            raise InputError(f"{source}: not a {SNAPSHOT_TYPE} document")
        parse_catalog(dict(value), source)  # every tool importable
        instructions = value.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise InputError(f"{source}: \"instructions\" must be a string")
        lists = _surface_lists(value, source)
        for member in not_served_lists(value["capture"].get(NOT_SERVED), f"{source}: capture"):
            if lists[member] is not None:
                raise InputError(
                    f"{source}: \"{member}\" is both listed and recorded as not served"
                )
        return cls(
            tools=list(value["tools"]), capture=dict(value["capture"]), source=source,
            instructions=instructions, prompts=lists["prompts"],
            resource_templates=lists["resourceTemplates"],
        )


def _surface_lists(value: Mapping[str, Any],
                   source: str) -> dict[str, list[dict[str, Any]] | None]:
    """A snapshot's prompts and resource templates (None: not captured), each an array of
    objects with its string key."""
    lists: dict[str, list[dict[str, Any]] | None] = {}
    for member, key in (("prompts", "name"), ("resourceTemplates", "uriTemplate")):
        items = value.get(member)
        if items is not None and (
            not isinstance(items, list)
            or not all(isinstance(i, dict) and isinstance(i.get(key), str) for i in items)
        ):
            raise InputError(
                f"{source}: \"{member}\" must be an array of objects with a string \"{key}\""
            )
        lists[member] = None if items is None else list(items)
    return lists


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
    #: The optional lists the server advertised but did not serve: ``{member: error code}``
    #: (``prompts``, ``resourceTemplates``). Serving one later is a change, never a match.
    not_served: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))


#: Artifact subjects of an attestation are named by package URL: ``pkg:npm/…``,
#: ``pkg:pypi/…``, ``pkg:oci/…`` or ``pkg:generic/…``.
ARTIFACT_SUBJECT_PREFIX = "pkg:"
#: Digest algorithms an artifact subject may carry (lowercase hex, in-toto's names).
ARTIFACT_DIGESTS = {"sha256": 64, "sha512": 128}
_HEX_DIGEST = re.compile(r"[0-9a-f]+")


@dataclass(frozen=True)
class ArtifactSubject:
    """A published artifact an attestation binds to its revision: an npm tarball, a Python
    distribution, an OCI image (by digest) or any other file.

    ``name`` is a package URL that says what it is (``pkg:npm/%40acme/search@2.3.0``);
    ``digest`` maps ``sha256`` (always) and ``sha512`` (where the ecosystem records it, as
    npm's ``integrity`` does) to lowercase hex. Guaranteed well-formed once built.
    """

    name: str
    digest: Mapping[str, str]
    #: What the artifact was given as (a file name or an image reference), for messages.
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if (not isinstance(self.name, str) or not self.name.startswith(ARTIFACT_SUBJECT_PREFIX)
                or len(self.name) > 1024 or not self.name.isprintable()):
            raise InputError(f"artifact subject name {self.name[:200]!r} is not a package URL")
        if "sha256" not in self.digest or any(
            ARTIFACT_DIGESTS.get(alg) != len(hex_) or not _HEX_DIGEST.fullmatch(hex_)
            for alg, hex_ in self.digest.items()
        ):
            raise InputError(
                f"artifact subject {self.name[:200]!r} needs a sha256 (and optionally sha512) "
                "digest in lowercase hex"
            )
        object.__setattr__(self, "digest", MappingProxyType(dict(sorted(self.digest.items()))))

    def to_json(self) -> dict[str, Any]:
        """The in-toto subject: ``{"name": …, "digest": {"sha256": …}}``."""
        return {"name": self.name, "digest": dict(self.digest)}

    @property
    def shown(self) -> str:
        """The name, and what it was given as when that differs."""
        return f"{self.name} ({self.label})" if self.label and self.label != self.name \
            else self.name


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


def statement_of(value: StatementLike | JsonValue, source: str = "statement") -> Statement:
    """The statement of a :class:`Statement`, a signed envelope, or a JSON document."""
    if isinstance(value, Statement):
        return value
    inner = getattr(value, "statement", None)
    if isinstance(inner, Statement):
        return inner
    return _statement_from_json(value, source)


def _statement_from_json(value: Any, source: str) -> Statement:
    """A revision statement from its JSON object, every member checked in order."""
    _check_typed(value, source, "revision statement", STATEMENT_KEYS, STATEMENT_TYPE)
    try:
        validate_server_name(value["server"])
        validate_identity(value["identity"])
        validate_server_version(value["serverVersion"])
    except InputError as exc:
        raise InputError(f"{source}: {exc}") from None
    rev, prev = _revision_chain(value, source)
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


def _check_typed(value: Any, source: str, what: str, keys: tuple[str, ...],
                 type_: str) -> None:
    """``value`` is a JSON object with every member of ``keys`` and ``type`` ``type_``."""
    if not isinstance(value, Mapping):
        raise InputError(f"{source}: a {what} must be a JSON object")
    missing = [k for k in keys if k not in value]
    if missing:
        raise InputError(f"{source}: not a {what}: missing {', '.join(missing)}")
    if value["type"] != type_:
        raise InputError(f"{source}: type is {value['type']!r}, expected {type_!r}")


def _positive_revision(value: Mapping[str, Any], source: str) -> int:
    """The ``revision`` member: a positive integer (not a boolean)."""
    rev = value["revision"]
    if isinstance(rev, bool) or not isinstance(rev, int) or rev < 1:
        raise InputError(f"{source}: revision must be a positive integer")
    return rev


def _manifest_digest(value: Mapping[str, Any], source: str) -> str:
    """The ``manifestDigest`` member: ``sha256:`` and 64 lowercase hex digits."""
    digest = value["manifestDigest"]
    if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
        raise InputError(f"{source}: manifestDigest must look like sha256:<64 hex>")
    return digest


def _revision_chain(value: Mapping[str, Any], source: str) -> tuple[int, str | None]:
    """A statement's revision and previous manifest digest, checked with its manifest
    digest: revision 1 has no previous digest, every later one has one."""
    rev = _positive_revision(value, source)
    _manifest_digest(value, source)
    prev = value["previousManifestDigest"]
    if prev is not None and (not isinstance(prev, str) or not _DIGEST.fullmatch(prev)):
        raise InputError(f"{source}: previousManifestDigest must be null or sha256:<64 hex>")
    if (rev == 1) != (prev is None):
        raise InputError(
            f"{source}: revision 1 has no previousManifestDigest and later revisions must"
        )
    return rev, prev


ENVELOPE_KEYS: tuple[str, ...] = (*STATEMENT_KEYS, "signer", "transparencyLog")


SIGNER_KEYS = ("issuer", "identity", "signature")


LOG_KEYS = ("logId", "logIndex", "integratedTime")


_HEX = re.compile(r"[0-9a-f]{2,128}")  # fullmatch: "$" would allow a final newline


#: The OIDC issuer of GitHub Actions workflow identities: the ``signer.issuer`` of every
#: revision a GitHub workflow signs (the local Sigstore instance mints its tokens too).
GITHUB_ACTIONS_ISSUER = "https://token.actions.githubusercontent.com"


@dataclass(frozen=True)
class TransparencyLogRef:
    """Where the signature was logged: Rekor log id (hex), global index, time (or null)."""

    log_id: str
    log_index: int
    integrated_time: int | None

    def to_json(self) -> dict[str, Any]:
        """The ``transparencyLog`` member."""
        return {
            "logId": self.log_id,
            "logIndex": self.log_index,
            "integratedTime": self.integrated_time,
        }


class _SignableStatement(Protocol):
    """What a signed document's statement offers: its members (signed with the signer
    appended, :func:`signed_bytes`) and the chain link it names."""

    @property
    def server(self) -> str: ...

    @property
    def revision(self) -> int: ...

    def to_json(self) -> dict[str, Any]: ...


_S = TypeVar("_S", bound=_SignableStatement)


@dataclass(frozen=True)
class _SignedDocument(Generic[_S]):
    """A statement, who signed it, its Sigstore bundle and its log entry: the one shape of
    every signed document (a revision's envelope, a yank).

    What is signed is :meth:`signed_bytes`: the statement plus ``signer.issuer`` and
    ``signer.identity``, so the signer cannot be swapped without breaking the signature.
    """

    statement: _S
    issuer: str
    identity: str
    bundle: Mapping[str, Any]
    transparency_log: TransparencyLogRef

    @property
    def server(self) -> str:
        """The statement's server name."""
        return self.statement.server

    @property
    def revision(self) -> int:
        """The revision the statement names."""
        return self.statement.revision

    def signed_bytes(self) -> bytes:
        """The exact bytes the signature covers."""
        return signed_bytes(self.statement, issuer=self.issuer, identity=self.identity)

    def to_json(self) -> dict[str, Any]:
        """The signed document."""
        return {
            **self.statement.to_json(),
            "signer": {
                "issuer": self.issuer, "identity": self.identity, "signature": self.bundle
            },
            "transparencyLog": self.transparency_log.to_json(),
        }

    def to_bytes(self) -> bytes:
        """Pretty-printed document (signed bytes are rebuilt, so layout does not matter)."""
        return (json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")


@dataclass(frozen=True)
class SignedEnvelope(_SignedDocument[Statement]):
    """A signed revision: the statement, who signed it, the Sigstore bundle and its log entry.

    What is signed is :meth:`signed_bytes`: the statement plus ``signer.issuer`` and
    ``signer.identity``, so the signer cannot be swapped without breaking the signature.
    Parsing with :meth:`from_json` checks structure and types only; use
    :func:`histor_sign.verification` to check the signature and identity.
    """

    @classmethod
    def from_json(cls, value: JsonValue, source: str = "envelope") -> SignedEnvelope:
        """Check an envelope document's structure and types; raise :class:`InputError`
        naming the member that is wrong. Unknown members are refused."""
        return parse_envelope(value, source)

    @classmethod
    def load(cls, path: str | Path) -> SignedEnvelope:
        """Read and parse an envelope file strictly (``-`` for stdin)."""
        return load_envelope(path)


def signed_bytes(statement: _SignableStatement, *, issuer: str, identity: str) -> bytes:
    """JCS of the statement members plus ``signer: {issuer, identity}`` (revisions and
    yanks alike)."""
    document = statement.to_json()
    document["signer"] = {"issuer": issuer, "identity": identity}
    return canonical_bytes(document)


def _exact_keys(value: Any, keys: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where} must be a JSON object")
    missing = [k for k in keys if k not in value]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    unknown = sorted(k for k in value if k not in keys)
    if unknown:
        raise InputError(f"{where}: unknown member(s) {', '.join(unknown)}")
    return value


def _nonneg_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_envelope(value: JsonValue, source: str) -> SignedEnvelope:
    """Check an envelope's structure and types; raise :class:`InputError` naming the member."""
    if isinstance(value, dict) and "type" in value and "transparencyLog" not in value:
        signer = value.get("signer")
        if signer is None or (isinstance(signer, dict) and "signature" not in signer):
            raise InputError(
                f"{source}: this is a revision statement (or the signed statement bytes), not "
                "a signed envelope; verify the *.envelope.json that 'histor-sign sign' wrote"
            )
    document = _exact_keys(value, ENVELOPE_KEYS, f"{source}: envelope")
    statement = Statement.from_json(document, source)
    issuer, identity, bundle, log = _signer_and_log(document, source)
    return SignedEnvelope(statement=statement, issuer=issuer, identity=identity, bundle=bundle,
                          transparency_log=log)


def load_envelope(path: str | Path) -> SignedEnvelope:
    """Read and parse an envelope file strictly (``-`` for stdin)."""
    return parse_envelope(read_json_file(str(path)), str(path))


YANK_TYPE = "histor.yank/v1"


#: Members of a yank statement document, in the order we write them.
YANK_KEYS: tuple[str, ...] = ("type", "server", "revision", "manifestDigest", "identity",
                              "reason")


#: The longest reason a yank may give (it is shown to every client that refuses it).
MAX_YANK_REASON = 1000


@dataclass(frozen=True)
class YankStatement:
    """A publisher's withdrawal of one revision of its chain.

    It names the revision and that revision's ``manifest_digest``, so it is bound to one
    link of one chain (a yank cannot be replayed onto a fork or another revision), and it
    is signed exactly as a revision is: JCS of the members plus ``signer: {issuer,
    identity}`` (:meth:`signed_bytes`). ``reason`` is the publisher's text: untrusted,
    shown only through the escaper.
    """

    server: str
    revision: int
    manifest_digest: str
    identity: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        """The yank statement document."""
        return {
            "type": YANK_TYPE, "server": self.server, "revision": self.revision,
            "manifestDigest": self.manifest_digest, "identity": self.identity,
            "reason": self.reason,
        }

    def to_bytes(self) -> bytes:
        """The statement's RFC 8785 canonical bytes."""
        return canonical_bytes(self.to_json())

    def signed_bytes(self, *, issuer: str, identity: str) -> bytes:
        """JCS of the members plus ``signer: {issuer, identity}`` (the revision rule)."""
        return signed_bytes(self, issuer=issuer, identity=identity)

    @classmethod
    def from_json(cls, value: Any, source: str = "yank") -> YankStatement:
        """Check a yank document (an envelope's extra members ignored); raise
        :class:`InputError` naming the member that is wrong."""
        _check_typed(value, source, "yank statement", YANK_KEYS, YANK_TYPE)
        validate_yank_reason(value["reason"], source)
        try:
            validate_server_name(value["server"])
            validate_identity(value["identity"])
        except InputError as exc:
            raise InputError(f"{source}: {exc}") from None
        rev = _positive_revision(value, source)
        digest = _manifest_digest(value, source)
        return cls(value["server"], rev, digest, value["identity"], value["reason"])


def validate_yank_reason(reason: Any, source: str = "reason", what: str = "yank") -> str:
    """A yank's reason (or another publisher's statement of why, ``what``: a monitor
    acknowledgement): 1–:data:`MAX_YANK_REASON` characters of printable text."""
    if (not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_YANK_REASON
            or not reason.isprintable()):
        raise InputError(
            f"{source}: a {what} reason must be printable text of 1 to {MAX_YANK_REASON} "
            "characters (no control characters or line breaks)"
        )
    return reason


@dataclass(frozen=True)
class SignedYank(_SignedDocument[YankStatement]):
    """A signed yank: the statement, who signed it, its Sigstore bundle and log entry —
    the envelope form of a revision, for a :class:`YankStatement`."""

    @property
    def reason(self) -> str:
        return self.statement.reason

    @classmethod
    def from_json(cls, value: JsonValue, source: str = "yank") -> SignedYank:
        """Check a signed yank's structure and types (nothing is verified here)."""
        document = _exact_keys(value, (*YANK_KEYS, "signer", "transparencyLog"),
                               f"{source}: yank")
        statement = YankStatement.from_json(document, source)
        issuer, identity, bundle, log = _signer_and_log(document, source)
        return cls(statement, issuer, identity, bundle, log)


def _signer_and_log(
    document: dict[str, Any], source: str
) -> tuple[str, str, dict[str, Any], TransparencyLogRef]:
    """The ``signer`` and ``transparencyLog`` members of a signed document, checked."""
    signer = _exact_keys(document["signer"], SIGNER_KEYS, f"{source}: signer")
    for key in ("issuer", "identity"):
        if not isinstance(signer[key], str) or not signer[key]:
            raise InputError(f"{source}: signer.{key} must be a non-empty string")
    if not isinstance(signer["signature"], dict):
        raise InputError(f"{source}: signer.signature must be a Sigstore bundle JSON object")
    log = _exact_keys(document["transparencyLog"], LOG_KEYS, f"{source}: transparencyLog")
    if not isinstance(log["logId"], str) or not _HEX.fullmatch(log["logId"]):
        raise InputError(f"{source}: transparencyLog.logId must be lowercase hex")
    if not _nonneg_int(log["logIndex"]):
        raise InputError(f"{source}: transparencyLog.logIndex must be a non-negative integer")
    if log["integratedTime"] is not None and not _nonneg_int(log["integratedTime"]):
        raise InputError(
            f"{source}: transparencyLog.integratedTime must be a non-negative integer or null"
        )
    return (signer["issuer"], signer["identity"], signer["signature"],
            TransparencyLogRef(log["logId"], log["logIndex"], log["integratedTime"]))


@dataclass(frozen=True)
class ObservedCall:
    """One completed call: where it was, which tool was selected, its argument object."""

    source: str
    index: int  # zero-based within its source file
    name: str
    arguments: dict[str, Any]
    provider: str
    line: int | None = None  # 1-based JSONL line, when the trace is JSONL

    @property
    def arguments_digest(self) -> str:
        """``sha256:`` of the RFC 8785 canonical argument object (safe to print)."""
        return sha256_digest(canonical_bytes(self.arguments))


class Severity(StrEnum):
    """How serious a finding is, in SARIF's levels (note < warning < error)."""

    note = "note"
    warning = "warning"
    error = "error"

    @property
    def rank(self) -> int:
        return {"note": 0, "warning": 1, "error": 2}[self.value]


@dataclass(frozen=True, slots=True)
class CallRef:
    """An observed call (replay): where it was and a digest — never its raw arguments."""

    source: str
    index: int
    tool: str
    arguments_digest: str
    pointer: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "argumentsDigest": self.arguments_digest,
            "index": self.index,
            "source": self.source,
            "tool": self.tool,
        }


@dataclass(slots=True)
class Finding:
    """One rule result: the rule, its severity, a message, and the tools (or call) it is
    about; renderers turn it into human text, JSON or SARIF."""

    rule: str
    severity: Severity
    message: str
    tools: list[ToolRef]
    outcome: str | None = None  # "overlap" | "disjoint" | "unknown" for schema results
    witness: Any = None
    has_witness: bool = False
    incomplete: bool = False  # TC005/TC009-style "analysis did not finish"
    properties: dict[str, Any] = field(default_factory=dict)
    call: CallRef | None = None  # replay findings: the observed call

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity.value,
            "outcome": self.outcome,
            "tools": [
                {"name": t.name, "source": t.source, "index": t.index} for t in self.tools
            ],
            "message": self.message,
        }
        if self.has_witness:
            out["witness"] = self.witness
        if self.call is not None:
            out["call"] = self.call.to_json()
        if self.properties:
            out["properties"] = dict(sorted(self.properties.items()))
        return out


#: What the library accepts where it needs a statement.
StatementLike: TypeAlias = "Statement | SignedEnvelope | Mapping[str, Any]"


def namespace_owner(server: str) -> str | None:
    """``io.github.<owner>/name`` → ``<owner>``; None for other namespaces."""
    namespace = server.split("/", 1)[0]
    if namespace.lower().startswith("io.github.") and len(namespace) > len("io.github."):
        return namespace[len("io.github.") :]
    return None
