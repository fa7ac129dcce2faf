"""Client trust: pin a publisher once, then accept only its fresh, chained revisions.

A :class:`PinStore` is a small JSON file mapping an MCP server name to the publisher it
trusts (GitHub repository, optionally the workflow file, and the numeric owner/repository
ids learned from the first verified certificate), where the publisher's signed revisions
live (see :mod:`histor_sign._chain_store` for the layout), and the highest
revision verified so far with its manifest digest.

:func:`verify_pinned` fetches a publisher's latest envelope, verifies it under the pin
(signature, the pinned identity, the pinned server name) and judges its freshness:

* a lower revision than the pinned one is a **rollback**;
* the same revision with another manifest digest is a **fork**;
* a higher revision must **chain** from the pinned one — every revision in between is
  fetched from the pinned location and verified under the same pin — before the pin
  advances; a gap, an unverifiable link or another history is a **broken chain**.

:func:`check_served` adds the drift comparison with what a server serves now. What is
proved: the tools were signed by the pinned publisher's workflow as revision N, and N
descends from every revision this client saw before; when revision N's attestation is
published, the same workflow signed the surface digests (instructions, prompts, resource
templates) the served surface was compared with — otherwise the surface baseline is the
unsigned snapshot, and the result says so. Not that the tools are safe.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from histor_sign._atomic import locked_beside, write_atomic
from histor_sign._chain_store import NotPublished, ReleaseLocation
from histor_sign._escape import printable
from histor_sign._limits import MAX_PIN_FILE_BYTES
from histor_sign._verified_cache import active
from histor_sign.canonical import parse_json, read_bytes
from histor_sign.errors import InputError, LimitExceeded, UsageError, VerificationFailed
from histor_sign.models import (
    GITHUB_ACTIONS_ISSUER,
    Snapshot,
    namespace_owner,
    parse_envelope,
    validate_server_name,
)

# The one rule for each pin form lives with the policies; re-exported for pin callers.
from histor_sign.verification.policy import validate_ref_pattern as validate_ref_pattern
from histor_sign.verification.policy import validate_workflow as validate_workflow

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.attestation import Attestation
    from histor_sign.catalog import ToolsLike
    from histor_sign.drift import DriftResult
    from histor_sign.models import Catalog, SignedEnvelope, Snapshot, SurfaceDigests
    from histor_sign.verification.policy import Pins

#: Format version of the pin file; a newer one is refused rather than half understood.
#: Version 2 holds each pin's workflow and ref pattern and whether its publisher attests; a
#: version 1 file is read by narrowing each pin to what its recorded signer shows
#: (:func:`_upgraded`), never by widening it, and written back as version 2.
PINS_VERSION = 2
#: Servers one pin file may hold.
MAX_PINNED_SERVERS = 10_000
#: Revisions :func:`verify_pinned` follows from the pinned one to the latest.
DEFAULT_MAX_CHAIN = 1000

_REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
_NUMERIC_ID = re.compile(r"^[0-9]{1,20}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_ENTRY_KEYS_V1 = (
    "envelope", "issuer", "manifestDigest", "ownerId", "repository", "repositoryId",
    "revision", "signer", "workflow",
)
_ENTRY_KEYS = (*_ENTRY_KEYS_V1, "refPattern", "attested")


class Freshness(StrEnum):
    """How a verified revision relates to the pinned one."""

    FIRST_USE = "first-use"
    CURRENT = "current"
    ADVANCED = "advanced"
    ROLLBACK = "rollback"
    FORK = "fork"
    BROKEN_CHAIN = "broken-chain"
    #: The revision verified and chains, but its publisher yanked it and no later
    #: revision is published to follow to.
    YANKED = "yanked"

    @property
    def ok(self) -> bool:
        """True when the revision may be used (and the pin may move to it)."""
        return self in (Freshness.FIRST_USE, Freshness.CURRENT, Freshness.ADVANCED)


# ---------------------------------------------------------------------- validation
def validate_repository(repository: str, param: str = "repository") -> str:
    """``OWNER/REPO`` as GitHub spells it."""
    if not isinstance(repository, str) or not _REPOSITORY.match(repository):
        raise UsageError(
            f"`{param}` must be a GitHub repository OWNER/REPO, got "
            f"{printable(str(repository), 120)!r}",
            param=param,
        )
    return repository


def ref_pattern_for(ref: str | None) -> str | None:
    """The refs a pin allows after a revision signed from ``ref``: any tag when it was a tag
    (releases move from tag to tag), else that exact ref (a branch: another branch is
    anyone with push access)."""
    if ref is None:
        return None
    return "refs/tags/**" if ref.startswith("refs/tags/") else ref


def _upgraded(entry: PinEntry, where: str) -> PinEntry:
    """A version 1 pin (any workflow of the repository, any ref) narrowed to the workflow
    file and ref its recorded signer shows; one whose signer shows neither is refused
    rather than kept wide."""
    from histor_sign.verification._certificate import parse_workflow_identity

    parts = parse_workflow_identity(entry.signer)
    if parts is None:
        raise InputError(
            f"{where}: a version 1 pin whose signer {printable(entry.signer, 200)!r} names no "
            "workflow cannot be narrowed to one; pin the server again"
        )
    workflow = entry.workflow
    if workflow is None:
        same = parts.repository.lower() == entry.repository.lower()
        workflow = parts.path if same else f"{parts.repository}/{parts.path}"
    return replace(entry, workflow=workflow, ref_pattern=ref_pattern_for(parts.ref))


def _yanked_from_json(value: Any, where: str) -> tuple[tuple[int, str], ...]:
    """A pin's ``yanked`` member: ``{"<revision>": "<reason>"}``."""
    from histor_sign.models import validate_yank_reason

    if not isinstance(value, dict) or len(value) > DEFAULT_MAX_CHAIN:
        raise InputError(f"{where}.yanked must be an object of at most {DEFAULT_MAX_CHAIN} "
                         "revisions")
    out: list[tuple[int, str]] = []
    for key, reason in value.items():
        if not (_NUMERIC_ID.match(key) and key[0] != "0" and len(key) < 16):
            raise InputError(f"{where}.yanked: {printable(key, 40)!r} is not a revision number")
        out.append((int(key), validate_yank_reason(reason, f"{where}.yanked.{key}")))
    return tuple(sorted(out))


def _validate_id(value: str | None, param: str) -> str | None:
    if value is not None and (not isinstance(value, str) or not _NUMERIC_ID.match(value)):
        raise UsageError(f"`{param}` must be a decimal number", param=param)
    return value


# ---------------------------------------------------------------------- acceptance
class Acceptance(StrEnum):
    """Which verified, chained revisions a pin follows without the user's word.

    A signature proves who signed, not that a change is benign: a publisher (or whoever
    holds its workflow) can sign a harmful description. ``confirm-high`` (the default)
    holds back a revision whose triaged changes since the accepted one include a high
    risk; ``confirm-all`` any changed revision; ``follow`` none (the chain alone)."""

    FOLLOW = "follow"
    CONFIRM_HIGH = "confirm-high"
    CONFIRM_ALL = "confirm-all"


def _acceptance_from_json(value: Any, where: str) -> str:
    if value not in tuple(Acceptance):
        raise InputError(f"{where}.acceptance must be one of "
                         f"{', '.join(a.value for a in Acceptance)}")
    return str(value)


@dataclass(frozen=True)
class Pending:
    """A revision that waits for acceptance: its number, manifest and triaged risk
    (``None`` when its changes could not be triaged: treated as high)."""

    revision: int
    manifest_digest: str
    risk: str | None

    def to_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "manifestDigest": self.manifest_digest,
                "risk": self.risk}

    @classmethod
    def from_json(cls, value: Any, where: str) -> Pending:
        if (not isinstance(value, dict) or set(value) != {"revision", "manifestDigest", "risk"}
                or not isinstance(value["revision"], int) or isinstance(value["revision"], bool)
                or value["revision"] < 1 or not isinstance(value["manifestDigest"], str)
                or not _DIGEST.match(value["manifestDigest"])
                or value["risk"] not in (None, "low", "medium", "high")):
            raise InputError(f"{where} must be {{revision, manifestDigest, risk}}")
        return cls(value["revision"], value["manifestDigest"], value["risk"])


# ---------------------------------------------------------------------- the pin
@dataclass(frozen=True)
class PinEntry:
    """What a client trusts for one server name.

    ``repository`` (``OWNER/REPO``) and, when given, ``workflow`` (the workflow file) say
    which GitHub Actions workflow may sign; ``owner_id``/``repository_id`` are the numeric
    ids learned from the first verified certificate, so a renamed or re-registered owner
    does not inherit the pin. ``location`` is where the signed revisions are published;
    ``revision``/``manifest_digest`` the highest revision verified so far and ``signer``
    its exact signing identity (shown to the user, not required of later revisions).
    ``ref_pattern`` is the git refs a revision may be signed from (a glob: ``refs/tags/**``
    when the pinned revision came from a tag, else its exact branch), so a pushed branch or
    another workflow of the repository cannot advance the pin. ``attested`` records that a
    revision's attestation verified under this pin: from then on a revision without one is
    a broken chain, not an unsigned surface.
    """

    server: str
    repository: str
    location: str
    revision: int
    manifest_digest: str
    signer: str
    workflow: str | None = None
    owner_id: str | None = None
    repository_id: str | None = None
    issuer: str = GITHUB_ACTIONS_ISSUER
    ref_pattern: str | None = None
    attested: bool = False
    trust_root: str | None = None
    #: Revisions seen yanked under this pin, with the publisher's reason: still refused
    #: when the yank is no longer served (a yank cannot be rolled back).
    yanked: tuple[tuple[int, str], ...] = ()
    #: Which changes wait for the user's acceptance before any path follows them
    #: (:class:`Acceptance`; ``confirm-high`` unless the user chose otherwise).
    acceptance: str = "confirm-high"
    #: A newer revision that verified and chains but waits for acceptance: what was
    #: triaged, so an acceptance applies to exactly the changes that were shown.
    pending: Pending | None = None

    def yank_reason(self, revision: int) -> str | None:
        """The recorded reason revision ``revision`` was yanked, or None."""
        return dict(self.yanked).get(revision)

    def trust(self) -> Trust:
        """The trust root this pin was verified under (``trust_root``, a
        :meth:`Trust.name`; production for a pin that records none)."""
        from histor_sign._sigstore_trust import Trust

        return Trust.from_name(self.trust_root) if self.trust_root else Trust.production()

    def trust_for_use(self, given: Trust | None = None, *, offline: bool = False) -> Trust:
        """The trust root every use of this pin verifies under: the one it was pinned
        under. ``given`` (a caller's explicit choice) must name that same root — a pin made
        under a private or local root is not judged under production, and a pin made under
        production is not judged under a root that can mint any identity
        (:class:`UsageError` naming ``trust``). A pin written before pins recorded their
        root is judged under ``given`` (production by default), as it always was.
        ``offline`` verifies production or staging with the vendored root instead of a TUF
        refresh."""
        if self.trust_root is None:  # pinned before roots were recorded: the caller's
            trust = given or self.trust()
            return trust.with_offline() if offline else trust
        recorded = self.trust()
        if given is not None and given.name() != recorded.name():
            raise UsageError(
                f"{self.server} is pinned under the trust root {recorded.name()}, not "
                f"{given.name()}: verify under the pinned root, or re-pin the server under "
                "the other one", param="trust")
        trust = given or recorded
        return trust.with_offline() if offline else trust

    def pins(self) -> Pins:
        """The certificate pins this entry stands for: issuer, repository, numeric ids, the
        workflow file and the ref pattern — held to every revision of a followed chain."""
        from histor_sign.verification.policy import Pins

        return Pins(
            issuer=self.issuer, repository=self.repository, owner_id=self.owner_id,
            repository_id=self.repository_id, workflow=self.workflow,
            ref_pattern=self.ref_pattern,
        )

    def to_json(self) -> dict[str, Any]:
        """The entry's member in the pin file (keyed by server name there)."""
        return {
            "repository": self.repository,
            "workflow": self.workflow,
            "ownerId": self.owner_id,
            "repositoryId": self.repository_id,
            "issuer": self.issuer,
            "refPattern": self.ref_pattern,
            "attested": self.attested,
            "envelope": self.location,
            "revision": self.revision,
            "manifestDigest": self.manifest_digest,
            "signer": self.signer,
            # Optional, so version-2 files written before it stay readable.
            **({"trustRoot": self.trust_root} if self.trust_root is not None else {}),
            **({"yanked": {str(n): r for n, r in self.yanked}} if self.yanked else {}),
            **({"acceptance": self.acceptance}
               if self.acceptance != Acceptance.CONFIRM_HIGH else {}),
            **({"pending": self.pending.to_json()} if self.pending is not None else {}),
        }

    @classmethod
    def from_json(
        cls, server: str, value: Any, source: str, *, version: int = PINS_VERSION
    ) -> PinEntry:
        """Parse one entry strictly; :class:`InputError` names the member that is wrong. A
        version 1 entry is narrowed to its recorded signer's workflow and ref."""
        where = f"{source}: servers.{printable(server, 200)}"
        try:
            validate_server_name(server)
        except InputError:
            raise InputError(f"{where}: not a server name (NAMESPACE/NAME)") from None
        if not isinstance(value, dict):
            raise InputError(f"{where} must be a JSON object")
        _check_entry_members(value, where, version)

        def text(key: str, optional: bool = False) -> Any:
            return _entry_text(value, key, where, optional)

        revision = _entry_revision(value["revision"], where)
        attested = value.get("attested", False)
        if not isinstance(attested, bool):
            raise InputError(f"{where}.attested must be true or false")
        entry = cls(
            server=server, repository=text("repository"), location=text("envelope"),
            revision=revision, manifest_digest=text("manifestDigest"), signer=text("signer"),
            workflow=text("workflow", True), owner_id=text("ownerId", True),
            repository_id=text("repositoryId", True), issuer=text("issuer"),
            ref_pattern=text("refPattern", True) if "refPattern" in value else None,
            attested=attested,
            trust_root=text("trustRoot") if "trustRoot" in value else None,
            yanked=_yanked_from_json(value.get("yanked", {}), where),
            acceptance=_acceptance_from_json(value.get("acceptance", "confirm-high"), where),
            pending=(Pending.from_json(value["pending"], f"{where}.pending")
                     if "pending" in value else None),
        )
        _check_trust_root(entry.trust_root, where)
        if version < PINS_VERSION:
            entry = _upgraded(entry, where)
        try:
            entry.validate()
        except UsageError as exc:
            raise InputError(f"{where}: {exc.message}") from None
        return entry

    def validate(self) -> None:
        """Check every member's form (raises :class:`UsageError` naming the parameter)."""
        validate_server_name(self.server)
        validate_repository(self.repository)
        if self.workflow is not None:
            validate_workflow(self.workflow)
        _validate_id(self.owner_id, "owner_id")
        _validate_id(self.repository_id, "repository_id")
        if self.ref_pattern is not None:
            validate_ref_pattern(self.ref_pattern)
        ReleaseLocation.parse(self.location, param="location")
        if not _DIGEST.match(self.manifest_digest):
            raise UsageError("`manifest_digest` must look like sha256:<64 hex>",
                             param="manifest_digest")


def _check_entry_members(value: dict[str, Any], where: str, version: int) -> None:
    """Step: a pin entry has every member of its version and no unknown one."""
    keys = set(value)
    expected = set(_ENTRY_KEYS if version == PINS_VERSION else _ENTRY_KEYS_V1)
    missing = sorted(expected - keys)
    optional = ({"trustRoot", "yanked", "acceptance", "pending"}
                if version == PINS_VERSION else set())
    unknown = sorted(keys - expected - optional)
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown member(s) {', '.join(map(printable, unknown))}"] if unknown else [])
        raise InputError(f"{where}: {'; '.join(parts)}")


def _entry_revision(revision: Any, where: str) -> int:
    """Step: a pin entry's revision is a positive integer."""
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InputError(f"{where}.revision must be a positive integer")
    return revision


def _entry_text(value: dict[str, Any], key: str, where: str, optional: bool) -> Any:
    """Step: a string member of a pin entry (non-empty, bounded; null when ``optional``)."""
    item = value[key]
    if item is None and optional:
        return None
    if not isinstance(item, str) or not item or len(item) > 2048:
        raise InputError(f"{where}.{key} must be a non-empty string"
                         + (" or null" if optional else ""))
    return item


def _check_trust_root(trust_root: str | None, where: str) -> None:
    """Step: a recorded trust root names one this installation knows."""
    if trust_root is None:
        return
    from histor_sign._sigstore_trust import Trust

    try:
        Trust.from_name(trust_root)
    except InputError as exc:
        raise InputError(f"{where}.trustRoot: {exc.message}") from None


#: The branch the histor-sign action commits each server's chain to (its
#: ``revisions-branch`` input's default, and what ``init``'s workflow uses).
PUBLISHED_BRANCH = "histor-revisions"


def published_location(server: str, repository: str) -> str:
    """Where the histor-sign action publishes ``server``'s latest envelope for
    ``repository`` with its defaults: ``revisions/<server>/latest.envelope.json`` on the
    ``histor-revisions`` branch, read over https without credentials. The default
    location of a first pin; a publisher who moved it must be given the location."""
    return (
        f"https://raw.githubusercontent.com/{repository}/{PUBLISHED_BRANCH}/revisions/"
        f"{server}/latest.envelope.json"
    )


def default_pins_path() -> Path:
    """The per-user pin file: ``$XDG_CONFIG_HOME/histor-sign/pins.json`` (``~/.config``
    when unset; ``%APPDATA%`` on Windows)."""
    base = os.environ.get("XDG_CONFIG_HOME")
    if not base and sys.platform == "win32":
        base = os.environ.get("APPDATA")
    root = Path(base) if base else Path.home() / ".config"
    return root / "histor-sign" / "pins.json"


@dataclass(frozen=True)
class PinStore:
    """The pins of one file, as read. Changes (:meth:`add`, :meth:`remove`,
    :meth:`advance`) are made on the file under a lock, written atomically, and return the
    store as it is afterwards; a file that does not parse is never overwritten."""

    path: Path
    entries: Mapping[str, PinEntry] = field(default_factory=dict)

    # -- reading
    @classmethod
    def load(cls, path: str | Path | None = None) -> PinStore:
        """Read the pin file (the per-user default when ``path`` is None); a missing file
        is an empty store. A malformed one raises :class:`InputError`."""

        target = Path(path) if path is not None else default_pins_path()
        try:
            os.stat(target)
        except FileNotFoundError:
            return cls(target, {})
        except OSError:
            pass  # a symlink loop, a name too long: unreadable, which read_bytes reports
        source = f"pins file {target}"
        data = read_bytes(str(target), max_bytes=MAX_PIN_FILE_BYTES)
        try:
            document = parse_json(data, source, max_depth=8, max_bytes=MAX_PIN_FILE_BYTES)
        except InputError as exc:
            raise InputError(f"{exc.message} (the file was left as it is)") from None
        return cls(target, _parse_store(document, source))

    def get(self, server: str) -> PinEntry | None:
        """The pin for ``server``, or None."""
        return self.entries.get(server)

    def __contains__(self, server: object) -> bool:
        return server in self.entries

    def __len__(self) -> int:
        return len(self.entries)

    def to_bytes(self) -> bytes:
        """The file's bytes: indented, keys sorted, one trailing newline."""
        document = {
            "version": PINS_VERSION,
            "servers": {name: self.entries[name].to_json() for name in sorted(self.entries)},
        }
        return (json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
                + "\n").encode("utf-8")

    # -- changing
    def add(self, entry: PinEntry, *, replace_existing: bool = False) -> PinStore:
        """Pin ``entry.server``; refuses to replace an existing pin unless asked to."""
        entry.validate()

        def change(current: dict[str, PinEntry]) -> None:
            if entry.server in current and not replace_existing:
                raise UsageError(
                    f"{entry.server} is already pinned (repository "
                    f"{current[entry.server].repository}); pass `replace_existing` to re-pin it",
                    param="replace_existing",
                )
            current[entry.server] = entry

        return self._update(change)

    def remove(self, server: str) -> PinStore:
        """Forget the pin for ``server`` (:class:`UsageError` when there is none)."""

        def change(current: dict[str, PinEntry]) -> None:
            if current.pop(server, None) is None:
                raise UsageError(f"{printable(server, 200)} is not pinned in {self.path}")

        return self._update(change)

    def advance(self, entry: PinEntry) -> PinStore:
        """Move a pin to a newer verified revision. Never moves it back: if another
        process recorded a newer revision meanwhile, that one stays; the same revision
        with another digest is a fork (:class:`VerificationFailed`)."""

        def change(current: dict[str, PinEntry]) -> None:
            now = current.get(entry.server)
            if now is None:
                raise UsageError(f"{entry.server} is no longer pinned in {self.path}")
            if (now.repository, now.workflow, now.owner_id, now.repository_id,
                    now.ref_pattern) != (entry.repository, entry.workflow, entry.owner_id,
                                         entry.repository_id, entry.ref_pattern):
                raise VerificationFailed(
                    f"{entry.server}: the pin was changed by another process meanwhile; "
                    "run the check again"
                )
            yanked = tuple(sorted((dict(now.yanked) | dict(entry.yanked)).items()))
            if now.revision > entry.revision:
                current[entry.server] = replace(now, yanked=yanked)
                return
            if now.revision == entry.revision and now.manifest_digest != entry.manifest_digest:
                raise VerificationFailed(
                    f"{entry.server}: fork: revision {entry.revision} was recorded with "
                    f"manifest {now.manifest_digest} meanwhile, not {entry.manifest_digest}"
                )
            current[entry.server] = replace(entry, yanked=yanked)

        return self._update(change)

    def _update(self, change: Callable[[dict[str, PinEntry]], None]) -> PinStore:
        with locked_beside(self.path):
            fresh = PinStore.load(self.path)
            entries = dict(fresh.entries)
            change(entries)
            if len(entries) > MAX_PINNED_SERVERS:
                raise LimitExceeded(
                    f"more than {MAX_PINNED_SERVERS} servers in {self.path}",
                    limit="max_servers", value=MAX_PINNED_SERVERS,
                )
            updated = PinStore(self.path, entries)
            write_atomic(self.path, updated.to_bytes())
            return updated


def _parse_store(document: Any, source: str) -> dict[str, PinEntry]:
    if not isinstance(document, dict):
        raise InputError(f"{source}: must be a JSON object")
    version = _store_version(document.get("version"), source)
    unknown = sorted(set(document) - {"version", "servers"})
    if unknown:
        raise InputError(f"{source}: unknown member(s) {', '.join(map(printable, unknown))}")
    servers = document.get("servers")
    if not isinstance(servers, dict):
        raise InputError(f"{source}: servers must be a JSON object")
    if len(servers) > MAX_PINNED_SERVERS:
        raise LimitExceeded(f"{source}: more than {MAX_PINNED_SERVERS} servers",
                            limit="max_servers", value=MAX_PINNED_SERVERS)
    return {name: PinEntry.from_json(name, value, source, version=version)
            for name, value in servers.items()}


def _store_version(version: Any, source: str) -> int:
    """Step: the pin file's format version (1 or the current one; newer: upgrade)."""
    if isinstance(version, int) and not isinstance(version, bool) and version > PINS_VERSION:
        raise InputError(
            f"{source}: format version {version} is newer than this histor-sign understands "
            f"({PINS_VERSION}); upgrade histor-sign"
        )
    if version not in (1, PINS_VERSION) or isinstance(version, bool):
        raise InputError(f"{source}: version must be {PINS_VERSION}")
    return cast(int, version)  # 1 or PINS_VERSION (a JSON 1.0 compares equal: kept as read)


# ---------------------------------------------------------------------- verification
@dataclass(frozen=True)
class PinnedRevision:
    """A revision verified under a pin, and how it relates to the pinned one.

    ``pin`` is the entry as it should be afterwards (advanced for ``ADVANCED`` and
    ``FIRST_USE``, unchanged otherwise). ``followed`` lists the intermediate revisions
    fetched to check the chain. ``signed_tools`` is the signed catalog fetched from the
    location when asked for (its digests verified against the envelope), else None.
    """

    server: str
    envelope: SignedEnvelope
    freshness: Freshness
    detail: str
    pinned_revision: int | None
    pin: PinEntry
    source: str
    followed: tuple[int, ...] = ()
    signed_tools: Catalog | None = None
    signed_tools_source: str | None = None
    #: The signed catalog as published, when it is a fetch snapshot (its server surface is
    #: what ``check`` compares the served surface with; the envelope does not sign it).
    signed_snapshot: Snapshot | None = None
    #: Revisions passed over because their publisher yanked them: ``(revision, reason)``.
    yanked: tuple[tuple[int, str], ...] = ()
    #: A yank published for this revision that was not honoured, and why (another
    #: identity signed it, or it names another manifest): it withdraws nothing.
    rejected_yank: str | None = None
    #: The revision's attestation, verified under the pin (its address), and the surface
    #: digests it signs; None when none is published (allowed until one verified).
    attestation: str | None = None
    surface: SurfaceDigests | None = None
    #: A newer revision that verified and chains but waits for the user's acceptance;
    #: this revision (the accepted one) is what is used meanwhile.
    awaiting: Awaiting | None = None
    #: What changed from the previously accepted revision to this one (None: nothing
    #: advanced, or it could not be triaged — ``untriaged`` says why).
    changes: DriftResult | None = None
    untriaged: str | None = None

    @property
    def revision(self) -> int:
        return self.envelope.revision

    @property
    def signer(self) -> str:
        """The exact signing identity (the certificate's SAN, verified)."""
        return self.envelope.identity

    def raise_for_freshness(self) -> None:
        """Raise :class:`VerificationFailed` for a rollback, fork or broken chain."""
        if not self.freshness.ok:
            raise VerificationFailed(f"{self.server}: {self.freshness.value}: {self.detail}")

    def headline(self) -> str:
        """``io.github.o/n revision 7 · signed by https://…@refs/tags/v2.3.0``."""
        return f"{self.server} revision {self.revision} · signed by {printable(self.signer)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "revision": self.revision,
            "manifestDigest": self.envelope.statement.manifest_digest,
            "signer": {"issuer": self.envelope.issuer, "identity": self.signer},
            "freshness": self.freshness.value,
            "freshnessDetail": self.detail,
            "pinnedRevision": self.pinned_revision,
            "followed": list(self.followed),
            "envelope": self.source,
            "yanked": [{"revision": n, "reason": r} for n, r in self.yanked],
            "rejectedYank": self.rejected_yank,
            "awaitingAcceptance": (self.awaiting.to_json() if self.awaiting is not None
                                   else None),
        }


@dataclass(frozen=True)
class Awaiting:
    """A verified, chained revision held back until the user accepts its changes."""

    revision: int
    manifest_digest: str
    #: The triaged changes since the accepted revision (None: they could not be triaged,
    #: ``why`` says why, and they count as high risk).
    changes: DriftResult | None
    why: str | None

    @property
    def risk(self) -> str | None:
        risk = self.changes.risk if self.changes is not None else None
        return risk.value if risk is not None else None

    def summary(self) -> str:
        """``revision 3 waits for acceptance: different — risk: high (…)`` (escaped)."""
        what = (self.changes.headline() if self.changes is not None
                else f"changes not triaged ({self.why})")
        return f"revision {self.revision} waits for acceptance: {what}"

    def to_json(self) -> dict[str, Any]:
        return {"revision": self.revision, "manifestDigest": self.manifest_digest,
                "risk": self.risk, "why": self.why,
                "changes": self.changes.to_json() if self.changes is not None else None}


def _verified(
    entry: PinEntry,
    env: SignedEnvelope,
    source: str,
    trust: Trust,
    *,
    previous: SignedEnvelope | None = None,
    tools: Catalog | None = None,
    tools_source: str | None = None,
) -> None:
    """Verify ``env`` under the pin (and its chain link / tools when given); raise
    :class:`VerificationFailed` naming the axis that failed."""
    if env.server != entry.server:
        raise VerificationFailed(
            f"{source}: identity: the envelope is for {printable(env.server, 200)!r}, "
            f"not the pinned server {entry.server!r}"
        )
    key = _cache_key(entry, env, trust, previous=previous, tools=tools)
    if _recorded(key, source, lambda: _recheck(env, entry)):
        return
    from histor_sign.verification import verify

    report = verify(
        env, pins=entry.pins(), trust=trust, previous=previous, tools=tools, source=source,
        previous_source="the previous revision", tools_source=tools_source,
    )
    report.raise_for_failure()
    _record(key)


def _cache_key(entry: PinEntry, env: SignedEnvelope, trust: Trust, *,
               previous: SignedEnvelope | None = None, tools: Catalog | None = None,
               attestation: Sequence[Mapping[str, Any]] | None = None) -> str | None:
    """Step: the active verified cache's entry for verifying these inputs under the pin
    (:mod:`histor_sign._verified_cache`: a caller opts in; it says why a hit is sound)."""
    cache = active()
    return cache.key(env, pins=entry.pins(), trust=trust, previous=previous, tools=tools,
                     pin=entry.to_json(), attestation=attestation) if cache else None


def _recorded(key: str | None, source: str, recheck: Callable[[], list[str]]) -> bool:
    """Step: True when the active verified cache records ``key`` and the pin's identity
    checks (``recheck``) pass again — only the signature cryptography is skipped, never a
    pin's check; a failed recheck raises :class:`VerificationFailed`."""
    cache = active()
    if key is None or cache is None or not cache.hit(key):
        return False
    problems = recheck()
    if problems:
        raise VerificationFailed(f"{source}: identity: {'; '.join(problems)}")
    return True


def _record(key: str | None) -> None:
    """Step: a verification of ``key``'s inputs succeeded: record it in the active cache."""
    cache = active()
    if key is not None and cache is not None:
        cache.add(key)


def _recheck(env: SignedEnvelope, entry: PinEntry,
             further: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    from histor_sign.verification import recheck_identity

    return recheck_identity(env, entry.pins(), further)


def _fetch_envelope(location: ReleaseLocation, address: str) -> SignedEnvelope:

    return parse_envelope(location.fetch_json(address), address)


def _signed_tools_of(
    location: ReleaseLocation, revision: int, signed_tools: bool | None,
) -> tuple[Catalog | None, Snapshot | None, str | None]:
    """Step: the signed tools of ``revision`` when asked for (and the snapshot they come
    from, if one), with where they were fetched."""
    tools: Catalog | None = None
    snapshot: Snapshot | None = None
    tools_source: str | None = None
    if signed_tools is not False:
        fetched, tools_source = _fetch_signed_tools(location, revision, bool(signed_tools))
        if isinstance(fetched, Snapshot):
            snapshot, tools = fetched, fetched.to_catalog()
        else:
            tools = fetched
    return tools, snapshot, tools_source


def _fetch_signed_tools(
    location: ReleaseLocation, revision: int, required: bool
) -> tuple[Snapshot | Catalog | None, str | None]:
    from histor_sign.catalog import snapshot_or_catalog

    address = location.snapshot(revision)
    try:
        document = location.fetch_json(address)
    except NotPublished:
        if required:
            raise
        return None, None
    return snapshot_or_catalog(document, address), address


def verify_pinned(
    entry: PinEntry,
    *,
    trust: Trust | None = None,
    envelope: SignedEnvelope | None = None,
    source: str | None = None,
    signed_tools: bool | None = False,
    max_chain: int = DEFAULT_MAX_CHAIN,
) -> PinnedRevision:
    """Fetch the latest envelope from the pinned location (or take ``envelope``), verify it
    under the pin and judge its freshness.

    Raises :class:`VerificationFailed` when the envelope itself does not verify under the
    pin (another owner, repository, workflow, numeric id or server name); a rollback, fork
    or broken chain is *returned* (see :meth:`PinnedRevision.raise_for_freshness`) so the
    caller can show it. ``signed_tools``: True requires the signed snapshot of the revision
    from the location, None fetches it when published, False skips it.

    A fresh revision its publisher yanked (a yank at the location that verifies under the
    pin, or one the pin recorded) is passed over for the next numbered revision when that
    one is published, chains and is not yanked itself; with none it is returned as
    :attr:`Freshness.YANKED`, the pin moved to it and the yank recorded in ``pin``.
    """
    from histor_sign._sigstore_trust import Trust

    trust = trust or Trust.production()
    pinned = _judged_pinned(entry, trust=trust, envelope=envelope, source=source,
                            signed_tools=signed_tools, max_chain=max_chain)
    if not pinned.freshness.ok:
        return pinned
    return _past_yanks(entry, pinned, trust, signed_tools, max_chain)


def _past_yanks(
    entry: PinEntry, pinned: PinnedRevision, trust: Trust, signed_tools: bool | None,
    max_chain: int,
) -> PinnedRevision:
    """``pinned`` (fresh) when it is not yanked; else the next unyanked revision it chains
    to, or ``pinned`` as :attr:`Freshness.YANKED` (see :func:`verify_pinned`)."""
    from histor_sign.yank import read_yank

    location = ReleaseLocation.parse(entry.location, param="pinned_location")
    yanked = dict(entry.yanked)
    passed: list[tuple[int, str]] = []
    current = pinned
    for _ in range(max_chain + 1):
        check = read_yank(location, current.envelope, pins=entry.pins(), trust=trust)
        number = current.revision
        reason = check.yank.reason if check.yank is not None else yanked.get(number)
        if reason is None:
            pin = replace(current.pin, yanked=tuple(sorted(yanked.items())))
            return replace(current, pin=pin, yanked=tuple(passed),
                           rejected_yank=check.rejected)
        yanked[number] = reason
        passed.append((number, reason))
        address = location.envelope(number + 1)
        try:
            later = _fetch_envelope(location, address)
        except NotPublished:
            pin = replace(current.pin, yanked=tuple(sorted(yanked.items())))
            return replace(
                current, freshness=Freshness.YANKED, pin=pin, yanked=tuple(passed),
                detail=f"revision {number} is yanked by its publisher: "
                f"{printable(reason, 300)!r} ({check.address}); no later revision is "
                "published to use instead",
            )
        following = _judged_pinned(entry, trust=trust, envelope=later, source=address,
                                   signed_tools=signed_tools, max_chain=max_chain)
        if not following.freshness.ok:
            return following
        current = replace(following, detail=f"{following.detail} (revision {number} is "
                          f"yanked: {printable(reason, 300)!r})")
    raise LimitExceeded(f"{entry.server}: more than {max_chain} yanked revisions in a row",
                        limit="max_chain", value=max_chain)


def _judged_pinned(
    entry: PinEntry,
    *,
    trust: Trust,
    envelope: SignedEnvelope | None,
    source: str | None,
    signed_tools: bool | None,
    max_chain: int,
) -> PinnedRevision:
    """:func:`verify_pinned` without the yank rule."""
    location = ReleaseLocation.parse(entry.location, param="pinned_location")
    if envelope is None:
        source = location.latest()
        envelope = _fetch_envelope(location, source)
    source = source or "<envelope>"

    tools, snapshot, tools_source = _signed_tools_of(location, envelope.revision, signed_tools)
    _verified(entry, envelope, source, trust, tools=tools, tools_source=tools_source)

    def outcome(
        freshness: Freshness, detail: str, followed: tuple[int, ...] = ()
    ) -> PinnedRevision:
        pin = entry
        if freshness.ok:
            pin = replace(entry, revision=envelope.revision, signer=envelope.identity,
                          manifest_digest=envelope.statement.manifest_digest)
        return PinnedRevision(
            server=entry.server, envelope=envelope, freshness=freshness, detail=detail,
            pinned_revision=entry.revision, pin=pin, source=source or "<envelope>",
            followed=followed, signed_tools=tools, signed_tools_source=tools_source,
            signed_snapshot=snapshot,
        )

    digest = envelope.statement.manifest_digest
    if envelope.revision < entry.revision:
        return outcome(Freshness.ROLLBACK, f"revision {envelope.revision} is older than the "
                       f"pinned revision {entry.revision}")
    if envelope.revision == entry.revision:
        if digest == entry.manifest_digest:
            return outcome(Freshness.CURRENT, f"revision {entry.revision} is the pinned one")
        return outcome(Freshness.FORK, f"revision {entry.revision} has manifest {digest}, but "
                       f"the pinned revision {entry.revision} has {entry.manifest_digest}")
    gap = envelope.revision - entry.revision - 1
    if gap > max_chain:
        raise LimitExceeded(
            f"{entry.server}: {gap} revisions between the pinned revision {entry.revision} and "
            f"{envelope.revision}: more than the limit of {max_chain} to follow",
            limit="max_chain", value=max_chain,
        )
    problem, followed = _follow_chain(entry, envelope, location, trust)
    if problem is not None:
        return outcome(Freshness.BROKEN_CHAIN, problem, followed)
    via = f" through {', '.join(map(str, followed))}" if followed else ""
    return outcome(Freshness.ADVANCED, f"revision {envelope.revision} chains from the pinned "
                   f"revision {entry.revision}{via}", followed)


def _follow_chain(
    entry: PinEntry, latest: SignedEnvelope, location: ReleaseLocation, trust: Trust
) -> tuple[str | None, tuple[int, ...]]:
    """Check every link from the pinned revision to ``latest``; (problem, revisions fetched)."""
    previous: SignedEnvelope | None = None
    followed: list[int] = []
    for number in range(entry.revision + 1, latest.revision + 1):
        if number == latest.revision:
            current, address = latest, "the latest revision"
        else:
            address = location.envelope(number)
            try:
                current = _fetch_envelope(location, address)
            except NotPublished:
                return (f"revision {number} (between the pinned {entry.revision} and "
                        f"{latest.revision}) is not published at {address}", tuple(followed))
            except InputError as exc:
                return f"revision {number}: {exc.message}", tuple(followed)
            followed.append(number)
            if current.revision != number:
                return (f"{address} holds revision {current.revision}, not {number}",
                        tuple(followed))
        if previous is None:
            if current.statement.previous_manifest_digest != entry.manifest_digest:
                return (
                    f"revision {number} does not descend from the pinned revision "
                    f"{entry.revision}: its previousManifestDigest is "
                    f"{current.statement.previous_manifest_digest}, the pinned manifest is "
                    f"{entry.manifest_digest}", tuple(followed),
                )
        try:
            _verified(entry, current, address, trust, previous=previous)
        except VerificationFailed as exc:
            return f"revision {number}: {exc.message}", tuple(followed)
        previous = current
    return None, tuple(followed)


# ---------------------------------------------------------------------- first use
def draft_pin(
    server: str,
    *,
    repository: str,
    location: str,
    workflow: str | None = None,
    owner_id: str | None = None,
    repository_id: str | None = None,
    issuer: str = GITHUB_ACTIONS_ISSUER,
    ref_pattern: str | None = None,
) -> PinEntry:
    """Check a first pin's parameters before anything is fetched; the returned entry has
    no revision yet (revision 1, a zero digest) and is what :func:`pin_first_use` fills in.

    Only ``io.github.<owner>/…`` names can be pinned by repository, and ``repository`` must
    belong to ``<owner>``; :class:`UsageError` names the parameter otherwise.
    """

    validate_server_name(server)
    validate_repository(repository)
    if workflow is not None:
        validate_workflow(workflow)
    if ref_pattern is not None:
        validate_ref_pattern(ref_pattern)
    _validate_id(owner_id, "owner_id")
    _validate_id(repository_id, "repository_id")
    owner = namespace_owner(server)
    if owner is None:
        # Any other namespace (io.gitlab.*, a reverse-DNS domain) is proven to the registry
        # by means a certificate does not carry, so a repository pin would tie nothing.
        raise UsageError(
            f"{printable(server, 200)} is outside io.github.*: only io.github.<owner>/… names, "
            "whose namespace is tied to a GitHub owner, can be pinned by repository; check "
            "any other server against an explicit signer each time (`cert_identity`, "
            "`identity_regexp`, or `workflow` with `repository`)",
            alternatives=("cert_identity", "identity_regexp", "workflow", "repository"),
        )
    if repository.split("/", 1)[0].lower() != owner.lower():
        raise UsageError(
            f"`repository` {repository} is not owned by {owner}, the owner of the "
            f"io.github.{owner} namespace", param="repository",
        )
    ReleaseLocation.parse(location, param="location")
    if "://" not in location:
        # Stored as typed, a relative path would name another place from another directory.
        import os

        location = os.path.abspath(location)
    return PinEntry(
        server=server, repository=repository, location=location, revision=1,
        manifest_digest="sha256:" + "0" * 64, signer="-", workflow=workflow,
        owner_id=owner_id, repository_id=repository_id, issuer=issuer, ref_pattern=ref_pattern,
    )


def pin_first_use(
    server: str,
    *,
    repository: str,
    location: str,
    workflow: str | None = None,
    owner_id: str | None = None,
    repository_id: str | None = None,
    issuer: str = GITHUB_ACTIONS_ISSUER,
    trust: Trust | None = None,
    ref_pattern: str | None = None,
) -> PinnedRevision:
    """Verify the latest envelope at ``location`` for a first pin of ``server``.

    The envelope must be for ``server``, signed from ``repository`` (and ``workflow``,
    ``ref_pattern`` and the numeric ids when given); the numeric owner and repository ids,
    the workflow file and the refs (:func:`ref_pattern_for`: any tag after a tag, else the
    same branch) are then learned from its verified certificate and pinned, so neither a
    later owner of the same names nor another workflow or branch of the repository inherits
    the trust. The returned ``pin`` is not saved: pass it to
    :meth:`PinStore.add`. Parameters are checked as :func:`draft_pin` does.
    """
    from histor_sign._sigstore_trust import Trust
    from histor_sign.verification import load_bundle_certificate
    from histor_sign.verification._certificate import certificate_facts

    draft = draft_pin(server, repository=repository, location=location, workflow=workflow,
                      owner_id=owner_id, repository_id=repository_id, issuer=issuer,
                      ref_pattern=ref_pattern)
    parsed = ReleaseLocation.parse(draft.location, param="location")
    trust = trust or Trust.production()
    source = parsed.latest()
    envelope = _fetch_envelope(parsed, source)
    _verified(draft, envelope, source, trust)
    facts = certificate_facts(load_bundle_certificate(envelope.bundle))
    pin = replace(
        draft, revision=envelope.revision, manifest_digest=envelope.statement.manifest_digest,
        signer=envelope.identity, owner_id=facts.owner_id, repository_id=facts.repository_id,
        workflow=workflow or facts.workflow,
        ref_pattern=ref_pattern or ref_pattern_for(facts.ref), trust_root=trust.name(),
    )
    first = PinnedRevision(
        server=server, envelope=envelope, freshness=Freshness.FIRST_USE,
        detail=f"first use: revision {envelope.revision} verified", pinned_revision=None,
        pin=pin, source=source,
    )
    first = _first_unyanked(first, trust)
    # A verified attestation marks the pin attested: from now on its absence is a broken
    # chain. (A first pin has nothing recorded yet, so none published is no refusal.)
    return _with_attestation(first.pin, first, trust)


def _first_unyanked(first: PinnedRevision, trust: Trust) -> PinnedRevision:
    """A first pin follows past a yanked latest revision like any pin; with nothing to
    follow to it is refused (:class:`VerificationFailed`)."""
    checked = _past_yanks(first.pin, replace(first, freshness=Freshness.CURRENT), trust,
                          False, DEFAULT_MAX_CHAIN)
    checked.raise_for_freshness()
    if checked.envelope is first.envelope:
        return replace(first, pin=checked.pin, rejected_yank=checked.rejected_yank)
    return replace(checked, freshness=Freshness.FIRST_USE, pinned_revision=None,
                   detail=f"first use: revision {checked.revision} verified; {checked.detail}")


# ---------------------------------------------------------------------- check served
@dataclass(frozen=True)
class CheckServedResult:
    """What :func:`check_served` established: the verified revision under the pin, its
    freshness, and (when fresh) the drift between it and the served tools."""

    revision: PinnedRevision
    drift: DriftResult | None
    #: The verified attestation whose surface digests were the baseline (None: the
    #: revision has none published, so any surface baseline is the unsigned snapshot).
    attestation: str | None = None

    @property
    def ok(self) -> bool:
        """Fresh, and the served tools are exactly the signed ones."""
        return self.revision.freshness.ok and self.drift is not None and self.drift.matches

    @property
    def freshness(self) -> Freshness:
        return self.revision.freshness

    def to_json(self) -> dict[str, Any]:
        """The JSON document of a pinned check: the drift document plus ``verified``."""
        drift = self.drift.to_json() if self.drift is not None else {"status": None}
        verified = {**self.revision.to_json(), "attestation": self.attestation}
        return {**drift, "verified": verified}

    def to_text(self) -> str:
        """``match · io.github.o/n revision 7 · signed by …`` then the drift lines."""
        rev = self.revision
        if self.drift is None:
            return f"{rev.freshness.value} · {rev.headline()}: {rev.detail}"
        advanced = rev.detail if rev.freshness is Freshness.ADVANCED else None
        text = verified_drift_text(self.drift, rev.headline(), advanced=advanced)
        if rev.awaiting is None:
            return text
        first, _, rest = text.partition("\n")
        return "\n".join(x for x in (first, f"  {rev.awaiting.summary()}", rest) if x)


def verified_drift_text(
    drift: DriftResult, headline: str, *, advanced: str | None = None,
    fields_hint: str = "pass signed_tools to name them",
    surface_hint: str | None = None,
) -> str:
    """The drift report of a verified revision: the status, who signed which revision
    (``headline``), whether the pin advanced, then the per-tool lines; a difference carries
    its risk and summary on the first line (``different — risk: high  (…) · …``)."""
    lines = [f"{drift.headline()} · {headline}"]
    if advanced is not None:
        lines.append(f"  pin advanced: {advanced}")
    lines += drift.to_text(fields_hint=fields_hint,
                           surface_hint=surface_hint).splitlines()[1:]
    return "\n".join(lines)


# ---------------------------------------------------------------------- verify for use
class NotPinned(UsageError):
    """``server`` has no pin in the store, and nothing else names its publisher.

    ``server`` and ``store_path`` say which; ``outside_github`` is True for a name no
    repository pin can hold (not ``io.github.*``). A front end names its own way to pin.
    """

    def __init__(self, server: str, store_path: Path) -> None:

        super().__init__(f"{printable(server, 200)} is not pinned in {store_path}",
                         param="server")
        self.server = server
        self.store_path = store_path
        self.outside_github = namespace_owner(server) is None


@dataclass(frozen=True)
class VerifiedForUse:
    """A signed revision that passed the rule for use, and the line that says who signed it.

    ``pinned`` is set when a pin vouched for it; ``pins`` and ``trust`` are what it verified
    under (what its attestation must verify under too).
    """

    envelope: SignedEnvelope
    headline: str
    pinned: PinnedRevision | None = None
    pins: Pins | None = None
    trust: Trust | None = None

    def to_json(self) -> dict[str, Any]:
        if self.pinned is not None:
            return self.pinned.to_json()
        env = self.envelope
        return {
            "server": env.server, "revision": env.revision,
            "manifestDigest": env.statement.manifest_digest,
            "signer": {"issuer": env.issuer, "identity": env.identity},
        }


def _store(store: PinStore | str | Path | None) -> PinStore:
    return store if isinstance(store, PinStore) else PinStore.load(store)


def verify_for_use(
    envelope: SignedEnvelope,
    *,
    trust: Trust,
    pins: Pins,
    store: PinStore | str | Path | None = None,
    server: str | None = None,
    source: str = "envelope",
) -> VerifiedForUse:
    """The one rule before a signed revision is *used* (``check``, ``guard``, a proxy):
    it must come from a publisher the caller named.

    ``pins`` that name the publisher (:meth:`Pins.names_publisher`) decide alone. Otherwise
    the pin for ``server`` (or the envelope's own server name) in ``store`` (a
    :class:`PinStore`, its file, or None for the per-user file — read only when needed)
    decides, freshness
    included, and a revision that chains from the pinned one advances the pin. Otherwise
    ``server`` alone pins the name (and with it the ``io.github`` namespace owner). With
    none of these :class:`NotPinned` is raised: any validly signed envelope of any owner
    would pass. A failed check raises :class:`VerificationFailed`.
    """
    from histor_sign.verification import verify

    if server is not None and envelope.server != server:
        raise VerificationFailed(
            f"{source}: identity: the envelope is for {printable(envelope.server, 200)!r}, "
            f"not `server` {server!r}", param="server"
        )
    if not pins.names_publisher():
        loaded = _store(store)
        entry = loaded.get(server or envelope.server)
        if entry is not None:
            pinned = use_pinned(loaded, entry.server, trust=trust, envelope=envelope,
                                source=source, signed_tools=False)
            if pinned.awaiting is not None and pinned.awaiting.revision == envelope.revision:
                raise VerificationFailed(f"{source}: {pinned.awaiting.summary()}")
            # A yanked envelope is passed over for the later revision it chains to.
            return VerifiedForUse(pinned.envelope, pinned.headline(), pinned, entry.pins(),
                                  entry.trust_for_use(trust))
        if server is None:
            raise NotPinned(envelope.server, loaded.path)
    verify(envelope, pins=pins, trust=trust, source=source).raise_for_failure()
    envelope, note = _unyanked(envelope, source, pins, trust)
    headline = (f"{envelope.server} revision {envelope.revision} · signed by "
                f"{printable(envelope.identity)}{note}")
    return VerifiedForUse(envelope, headline, pins=pins, trust=trust)


def _unyanked(
    envelope: SignedEnvelope, source: str, pins: Pins, trust: Trust
) -> tuple[SignedEnvelope, str]:
    """The yank rule without a pin: a revision yanked beside ``source`` (a chain location)
    is passed over for the next numbered revision there, verified under the same pins and
    chained to it; with none :class:`VerificationFailed`. Returns the revision to use and a
    note naming what was passed over."""
    from histor_sign.verification import verify
    from histor_sign.yank import read_yank

    try:
        location = ReleaseLocation.parse(source, param="envelope")
    except UsageError:
        return envelope, ""
    passed: list[str] = []
    for _ in range(DEFAULT_MAX_CHAIN):
        check = read_yank(location, envelope, pins=pins, trust=trust)
        if check.yank is None:
            return envelope, "".join(passed)
        number, reason = envelope.revision, printable(check.yank.reason, 300)
        address = location.envelope(number + 1)
        try:
            later = _fetch_envelope(location, address)
        except NotPublished:
            raise VerificationFailed(
                f"{envelope.server}: {Freshness.YANKED.value}: revision {number} is yanked by "
                f"its publisher: {reason!r} ({check.address}); no later revision is "
                "published to use instead") from None
        verify(later, pins=pins, trust=trust, previous=envelope, source=address,
               previous_source=f"the yanked revision {number}").raise_for_failure()
        passed.append(f" (revision {number} is yanked: {reason!r})")
        envelope = later
    raise LimitExceeded(f"{envelope.server}: more than {DEFAULT_MAX_CHAIN} yanked revisions "
                        "in a row", limit="max_chain", value=DEFAULT_MAX_CHAIN)


def use_pinned(
    store: PinStore | str | Path | None,
    server: str,
    *,
    trust: Trust | None = None,
    offline: bool = False,
    envelope: SignedEnvelope | None = None,
    source: str | None = None,
    signed_tools: bool | None = None,
    accept: bool = False,
) -> PinnedRevision:
    """THE decision before a pinned server's tools are used — by ``check``, ``guard``,
    the proxy, ``trust update``, ``check --all``, ``lock`` and the artifact binding alike —
    and the one place that records what it learned in the pin.

    The latest revision at the pinned location (or ``envelope``) must verify under the pin
    and the trust root it was pinned under (:meth:`PinEntry.trust_for_use`), chain from
    the pinned revision (no rollback, fork or broken chain), not be yanked (a yank seen is
    remembered even when the revision is refused), and carry its attestation once this
    publisher's attestation verified before. A revision whose changes since the accepted
    one the pin's :class:`Acceptance` holds back is not followed: the accepted revision is
    returned with :attr:`PinnedRevision.awaiting` naming the newer one, until
    ``accept`` is given for exactly the revision recorded as pending. ``signed_tools``:
    True requires the signed tools of the revision used, None fetches them when
    published. Raises :class:`NotPinned`, or :class:`VerificationFailed` with the reason.
    """
    store = _store(store)
    entry = store.get(server)
    if entry is None:
        raise NotPinned(server, store.path)
    trust = entry.trust_for_use(trust, offline=offline)
    pinned = verify_pinned(entry, trust=trust, envelope=envelope, source=source,
                           signed_tools=None if signed_tools is False else signed_tools)
    if pinned.freshness.ok:
        pinned = _with_attestation(entry, pinned, trust)
    if pinned.freshness is Freshness.ADVANCED:
        pinned = _acceptance(entry, pinned, trust, accept=accept,
                             signed_tools=signed_tools)
    if pinned.pin != entry:
        store.advance(pinned.pin)  # a newer revision, a yank seen, attested, pending
    pinned.raise_for_freshness()
    return pinned


def latest_for_use(
    server: str,
    *,
    trust: Trust | None = None,
    store: PinStore | str | Path | None = None,
    signed_tools: bool | None = False,
) -> PinnedRevision:
    """The revision of a pinned ``server`` to use now (:func:`use_pinned`)."""
    return use_pinned(store, server, trust=trust, signed_tools=signed_tools)


def _with_attestation(
    entry: PinEntry, pinned: PinnedRevision, trust: Trust
) -> PinnedRevision:
    """The attestation rule: a published attestation must verify under the pin (its
    surface digests are then the signed surface); once one verified for this publisher,
    a revision without one is a broken chain, not an unsigned surface."""
    from histor_sign.attestation import read_attestation

    location = ReleaseLocation.parse(entry.location, param="pinned_location")
    address = location.attestation(pinned.envelope.revision)
    try:
        attestation = read_attestation(address, location.fetch_json)
    except NotPublished:
        if not entry.attested:
            return pinned
        return replace(
            pinned, freshness=Freshness.BROKEN_CHAIN, pin=_refused_pin(entry, pinned),
            detail=f"revision {pinned.envelope.revision} publishes no attestation at "
            f"{address}, but this publisher's attestation verified under the pin before")
    surface = _attested_surface(entry, attestation, pinned.envelope, trust, address)
    return replace(pinned, attestation=address, surface=surface,
                   pin=replace(pinned.pin, attested=True))


def _attested_surface(
    entry: PinEntry, attestation: Attestation, envelope: SignedEnvelope, trust: Trust,
    address: str,
) -> SurfaceDigests | None:
    """Step: ``attestation`` verified under the pin against ``envelope`` (or recorded as
    verified with these very inputs, its identity checks run again), and its surface."""
    from histor_sign.attestation import attested_surface, verified_surface

    key = _cache_key(entry, envelope, trust, attestation=attestation.bundles)
    if _recorded(key, address, lambda: _recheck(attestation.as_envelope(), entry,
                                                attestation.bundles[1:])):
        return attested_surface(attestation, address)
    surface = verified_surface(attestation, envelope, pins=entry.pins(), trust=trust,
                               source=address)
    _record(key)
    return surface


def _refused_pin(entry: PinEntry, pinned: PinnedRevision) -> PinEntry:
    """The pin after a refusal: unchanged but for the yanks the verification saw."""
    return replace(entry, yanked=pinned.pin.yanked)


def _acceptance(
    entry: PinEntry, pinned: PinnedRevision, trust: Trust, *, accept: bool,
    signed_tools: bool | None,
) -> PinnedRevision:
    """An advanced revision under the pin's :class:`Acceptance`: followed (with its
    triaged changes attached), or held back — the accepted revision returned instead,
    the newer one recorded as pending."""
    location = ReleaseLocation.parse(entry.location, param="pinned_location")
    accepted = _published(location, entry.revision)
    changes, why = _triage_since_pin(entry, pinned, location, accepted)
    pinned = replace(pinned, changes=changes, untriaged=why)
    digest = pinned.envelope.statement.manifest_digest
    if not _needs_acceptance(entry.acceptance, changes):
        return replace(pinned, pin=replace(pinned.pin, pending=None))
    if accept and entry.pending is not None and entry.pending.manifest_digest == digest:
        return replace(pinned, pin=replace(pinned.pin, pending=None))
    awaiting = Awaiting(pinned.revision, digest, changes, why)
    pending = Pending(pinned.revision, digest, awaiting.risk)
    current = _with_attestation(
        entry, _accepted_revision(entry, trust, signed_tools, location, accepted), trust)
    pin = replace(entry, yanked=pinned.pin.yanked, attested=pinned.pin.attested,
                  pending=pending)
    return replace(current, pin=pin, awaiting=awaiting, yanked=pinned.yanked)


def _needs_acceptance(acceptance: str, changes: DriftResult | None) -> bool:
    from histor_sign.models import Risk

    if acceptance == Acceptance.FOLLOW:
        return False
    if changes is None:
        return True  # not triaged: held back, as a high-risk change would be
    if acceptance == Acceptance.CONFIRM_ALL:
        return not changes.matches
    return changes.reaches(Risk.HIGH)


def _published(location: ReleaseLocation, revision: int) -> SignedEnvelope | NotPublished:
    """Step: the envelope published as ``revision`` at the location, or why it is not
    (read once for both the triage and the accepted revision's use)."""
    try:
        return _fetch_envelope(location, location.envelope(revision))
    except NotPublished as exc:
        return exc


def _triage_since_pin(
    entry: PinEntry, pinned: PinnedRevision, location: ReleaseLocation,
    old: SignedEnvelope | NotPublished,
) -> tuple[DriftResult | None, str | None]:
    """The changes from the pinned revision's signed tools (``old`` is its envelope as
    published) to ``pinned``'s, triaged, or (None, why) when either side's signed tools
    are not published."""
    from histor_sign.drift import compare

    new_tools = pinned.signed_snapshot or pinned.signed_tools
    if new_tools is None:
        return None, f"revision {pinned.revision} publishes no snapshot of its tools"
    if isinstance(old, NotPublished):
        return None, old.message
    if old.statement.manifest_digest != entry.manifest_digest:
        return None, (f"revision {entry.revision} at the location is not the pinned one "
                      f"(manifest {old.statement.manifest_digest})")
    old_tools, _ = _fetch_signed_tools(location, entry.revision, False)
    if old_tools is None:
        return None, f"revision {entry.revision} publishes no snapshot of its tools"
    return compare(old, new_tools, old_tools,
                   source=f"revision {entry.revision} (accepted)"), None


def _accepted_revision(
    entry: PinEntry, trust: Trust, signed_tools: bool | None, location: ReleaseLocation,
    envelope: SignedEnvelope | NotPublished,
) -> PinnedRevision:
    """The pinned (accepted) revision as published (``envelope``), verified again under the
    pin — what is used while a newer one waits for acceptance."""
    address = location.envelope(entry.revision)
    if isinstance(envelope, NotPublished):
        raise VerificationFailed(
            f"{entry.server}: a newer revision waits for acceptance, and the accepted "
            f"revision {entry.revision} is no longer published at {address}")
    current = _judged_pinned(entry, trust=trust, envelope=envelope, source=address,
                             signed_tools=signed_tools, max_chain=DEFAULT_MAX_CHAIN)
    if current.freshness is not Freshness.CURRENT:
        raise VerificationFailed(f"{entry.server}: {address}: {current.detail}")
    return current


def check_served(
    store: PinStore,
    server: str,
    served: ToolsLike,
    *,
    trust: Trust | None = None,
    envelope: SignedEnvelope | None = None,
) -> CheckServedResult:
    """Compare what ``server`` serves now with the revision :func:`use_pinned` says to
    use (the accepted one while a newer one waits for acceptance).

    The signed tools published beside the envelope (when present) let the drift name the
    changed fields. The surface (instructions, prompts, resource templates) is compared
    against the digests of the revision's attestation when one is published; with none
    (older layouts) the published snapshot's surface is the baseline, and the drift says
    it is unsigned (:class:`~histor_sign.drift.SurfaceBaseline`).
    """
    from histor_sign.drift import compare

    pinned = use_pinned(store, server, trust=trust, envelope=envelope, signed_tools=None)
    signed = pinned.signed_snapshot or pinned.signed_tools
    drift = compare(pinned.envelope, served, signed, source=pinned.source,
                    signed_surface=pinned.surface)
    return CheckServedResult(pinned, drift, pinned.attestation)


# ---------------------------------------------------------------------- update now
@dataclass(frozen=True)
class PinUpdate:
    """What :func:`update_pin` established: the revision in use under the pin and — when
    it advanced or waits for acceptance — the triaged changes since the accepted one."""

    revision: PinnedRevision

    @property
    def drift(self) -> DriftResult | None:
        waiting = self.revision.awaiting
        return waiting.changes if waiting is not None else self.revision.changes

    @property
    def no_drift(self) -> str | None:
        waiting = self.revision.awaiting
        return waiting.why if waiting is not None else self.revision.untriaged

    @property
    def ok(self) -> bool:
        """The latest revision is the one in use (nothing waits for acceptance)."""
        return self.revision.awaiting is None

    def to_json(self) -> dict[str, Any]:
        return {
            "verified": self.revision.to_json(),
            "drift": self.drift.to_json() if self.drift is not None else None,
            "noDrift": self.no_drift,
        }

    def to_text(self) -> str:
        rev = self.revision
        if rev.awaiting is not None:
            lines = [f"waiting for acceptance · {rev.headline()} is in use",
                     f"  {rev.awaiting.summary()}"]
        elif rev.freshness is not Freshness.ADVANCED:
            return f"{rev.freshness.value} · {rev.headline()}: {rev.detail}"
        else:
            lines = [f"advanced · {rev.headline()}", f"  pin advanced: {rev.detail}"]
        if self.drift is None:
            lines.append(f"  changes not shown: {self.no_drift}")
        else:
            since = rev.revision if rev.awaiting is not None else rev.pinned_revision
            lines.append(f"  from revision {since}: {self.drift.headline()}")
            lines += self.drift.to_text().splitlines()[1:]
        return "\n".join(lines)


def update_pin(store: PinStore, server: str, *, trust: Trust | None = None,
               accept: bool = False, offline: bool = False) -> PinUpdate:
    """Follow ``server``'s chain now (:func:`use_pinned`) and show what changed since the
    accepted revision; ``accept`` accepts the revision recorded as waiting for acceptance
    (exactly that one: a revision published since is shown, not accepted)."""
    return PinUpdate(use_pinned(store, server, trust=trust, offline=offline,
                                signed_tools=None, accept=accept))


def set_acceptance(store: PinStore, server: str, acceptance: Acceptance | str) -> PinStore:
    """Choose which changes of ``server`` wait for the user (:class:`Acceptance`)."""
    chosen = Acceptance(acceptance)

    def change(current: dict[str, PinEntry]) -> None:
        entry = current.get(server)
        if entry is None:
            raise NotPinned(server, store.path)
        current[server] = replace(entry, acceptance=chosen.value)

    return store._update(change)
