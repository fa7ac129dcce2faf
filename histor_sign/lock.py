"""Lock files: the tool definitions a team observed, for servers whose publishers do not sign.

A lock records, per server, what one fetch saw — the snapshot itself (every tool object,
the instructions, prompts and resource templates, the lists not served) and its digests
(manifest, per tool, surface) — in a human-readable, versioned JSON file meant to be
reviewed and committed. Later fetches are compared with it by the same drift comparison
and triage as a signed revision (:func:`histor_sign.drift.compare`), and a change is
promoted into the lock only on purpose (:func:`promote`).

What a lock is not: a signature. Its baseline is *trust on first use* — whatever the
server served when someone locked it, reviewed by whoever committed the file, signed by
nobody. Every result from here says so (:data:`TRUST`), and no output calls a locked
server publisher-signed. Nor does a lock prove which code ran: a command line's
``pkg@1.2.3`` is a request, not evidence: ``package`` records an npm package only when the
command runs one installed in a local ``node_modules`` whose lockfile keeps its integrity
(:func:`histor_sign.artifacts.npm_package_run_by`: the digest of the tarball npm installed,
not of files edited since), and is null otherwise.

A lock file from someone else is untrusted input: it is read bounded in bytes and depth,
strictly (unknown or missing members, duplicate keys, another ``lockVersion`` are errors),
and every recorded digest is recomputed from the recorded definitions — a hand-edited
digest or definition is refused, never half-used. Nothing here fetches or prints.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from histor_sign._atomic import locked_beside, output_exists, write_atomic
from histor_sign._escape import printable
from histor_sign._limits import MAX_LOCK_DEPTH, MAX_LOCK_FILE_BYTES
from histor_sign.canonical import parse_json, read_bytes
from histor_sign.drift import DriftResult, SurfaceBaseline, compare
from histor_sign.errors import CheckFailed, InputError, UsageError
from histor_sign.models import Catalog, Snapshot, Statement, SurfaceDigests
from histor_sign.revision import digests, surface_digests, surface_json

if TYPE_CHECKING:
    from histor_sign.artifacts import InstalledEvidence
    from histor_sign.models import Risk

#: The ``lockVersion`` this module reads and writes.
LOCK_VERSION = 1
#: What a locked baseline is, in every result (text and JSON).
TRUST = "locked (trust on first use), not publisher-signed"
#: The note at the top of every lock file, for whoever reviews it.
_COMMENT = ("histor-sign lock file: the MCP tool definitions observed for each server, "
            "trust on first use (not publisher-signed). Review every change before "
            "committing it.")
_FILE_KEYS = ("lockVersion", "comment", "servers")
_ENTRY_KEYS = ("trust", "target", "package", "manifestDigest", "toolDigests", "surface",
               "snapshot")
#: A lock name: what ``serverInfo.name`` or a registry name looks like (no spaces or
#: control characters, so it prints and greps safely).
_NAME = re.compile(r"[A-Za-z0-9@][A-Za-z0-9@._/:+-]{0,199}")


def validate_lock_name(name: str) -> str:
    """A name to lock a server under: 1–200 characters of letters, digits and ``@._/:+-``,
    starting with a letter, digit or ``@``. Raises :class:`UsageError` otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise UsageError(f"invalid lock name {printable(repr(name), 200)}: use 1–200 letters, "
                         "digits and @._/:+- (starting with a letter, digit or @)",
                         param="server")
    return name


@dataclass(frozen=True)
class LockedServer:
    """One server's entry: the observed snapshot and the digests recomputed from it.

    ``target`` describes what was fetched (the command or URL, never a header or token);
    ``surface`` is None when the snapshot did not capture the server surface.
    """

    name: str
    snapshot: Snapshot
    manifest_digest: str
    tool_digests: Mapping[str, str]
    surface: SurfaceDigests | None
    target: Mapping[str, Any] | None = None
    #: The npm package the command ran, with its lockfile integrity, or None (see the
    #: module doc): ``{"ecosystem", "name", "version", "digests"}``.
    package: Mapping[str, Any] | None = None

    @classmethod
    def observe(cls, snapshot: Snapshot, server: str | None = None,
                package: InstalledEvidence | None = None) -> LockedServer:
        """The entry for a fetched ``snapshot``, under the name ``server`` or, when None, the
        name the server reports (``serverInfo.name``), with the ``package`` evidence of what
        ran when there is some. Raises :class:`UsageError` when neither gives a valid name,
        :class:`InputError` for duplicate or non-MCP tools."""
        name = server
        if name is None:
            info = snapshot.capture.get("serverInfo")
            reported = info.get("name") if isinstance(info, Mapping) else None
            if not isinstance(reported, str) or not _NAME.fullmatch(reported):
                raise UsageError("the server reports no usable name (serverInfo.name); "
                                 "give `server`, the name to lock it under", param="server")
            name = reported
        validate_lock_name(name)
        manifest, per_tool = digests(snapshot)
        target = snapshot.capture.get("target")
        return cls(name, snapshot, manifest, MappingProxyType(dict(sorted(per_tool.items()))),
                   surface_digests(snapshot) if snapshot.surface_captured else None,
                   target if isinstance(target, Mapping) else None,
                   _package_json(package) if package is not None else None)

    def matches_target(self, target: Mapping[str, Any] | None) -> bool:
        """Whether this entry was fetched from ``target`` (a capture's ``target``)."""
        return target is not None and self.target == target

    def statement(self) -> Statement:
        """The locked digests as a statement, so the drift comparison used for signed
        revisions applies unchanged. Internal: it is signed by nobody and never written
        (revision 1, no identity)."""
        info = self.snapshot.capture.get("serverInfo")
        version = info.get("version") if isinstance(info, Mapping) else None
        return Statement(server=self.name,
                         server_version=version if isinstance(version, str) else "unknown",
                         revision=1, identity="", manifest_digest=self.manifest_digest,
                         tool_digests=self.tool_digests)

    def to_json(self) -> dict[str, Any]:
        """The entry's JSON (stable member order)."""
        return {
            "trust": TRUST,
            "target": dict(self.target) if self.target is not None else None,
            "package": ({**self.package, "digests": dict(self.package["digests"])}
                        if self.package is not None else None),
            "manifestDigest": self.manifest_digest,
            "toolDigests": dict(self.tool_digests),
            "surface": surface_json(self.snapshot),
            "snapshot": self.snapshot.to_json(),
        }

    def summary_json(self) -> dict[str, Any]:
        """What a check reports about the baseline (no definitions)."""
        return {"name": self.name, "trust": TRUST, "publisherSigned": False,
                "manifestDigest": self.manifest_digest, "tools": len(self.tool_digests),
                "target": dict(self.target) if self.target is not None else None}


@dataclass(frozen=True)
class LockFile:
    """A lock file's servers, by name (sorted when written). ``path`` is where it was read
    from or will be written to.

    Guaranteed: :meth:`load` returns only a lock whose every digest was recomputed from its
    recorded definitions (anything else raises :class:`InputError`); :meth:`write` replaces
    the file atomically with deterministic bytes; no entry is ever publisher-signed
    (:data:`TRUST`)."""

    path: Path
    servers: Mapping[str, LockedServer] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path, *, max_bytes: int = MAX_LOCK_FILE_BYTES,
             max_depth: int = MAX_LOCK_DEPTH) -> LockFile:
        """Read and check a lock file (untrusted: bounded, strict, every digest recomputed).
        Raises :class:`InputError` (:class:`~histor_sign.errors.LimitExceeded` for a bound)
        naming the file and the first problem."""
        source = f"lock file {path}"
        data = read_bytes(str(path), max_bytes=max_bytes)
        document = parse_json(data, source, max_depth=max_depth, max_bytes=max_bytes)
        return cls(Path(path), _parse_lock(document, source))

    @classmethod
    def load_or_new(cls, path: str | Path, **bounds: int) -> LockFile:
        """:meth:`load`, or an empty lock when ``path`` does not exist yet."""
        if not output_exists(path) and not Path(path).is_symlink():
            return cls(Path(path), {})
        return cls.load(path, **bounds)

    def entry(self, server: str | None = None,
              target: Mapping[str, Any] | None = None) -> LockedServer:
        """The entry named ``server``; without a name, the only one, or the one locked from
        ``target``. Raises :class:`UsageError` saying which names there are otherwise."""
        if server is not None:
            found = self.servers.get(server)
            if found is None:
                raise UsageError(f"{printable(server, 200)} is not locked in {self.path} "
                                 f"({self._names()})", param="server")
            return found
        if len(self.servers) == 1:
            return next(iter(self.servers.values()))
        same = [e for e in self.servers.values() if e.matches_target(target)]
        if len(same) == 1:
            return same[0]
        raise UsageError(f"give `server`, the entry to use from {self.path} ({self._names()})",
                         param="server")

    def _names(self) -> str:
        names = sorted(self.servers)
        if not names:
            return "it locks no server"
        shown = ", ".join(printable(n, 80) for n in names[:10])
        return "it locks " + shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")

    def with_entry(self, entry: LockedServer) -> LockFile:
        """This lock with ``entry`` added or replaced."""
        return replace(self, servers={**self.servers, entry.name: entry})

    def to_json(self) -> dict[str, Any]:
        return {
            "lockVersion": LOCK_VERSION,
            "comment": _COMMENT,
            "servers": {name: self.servers[name].to_json() for name in sorted(self.servers)},
        }

    def to_bytes(self) -> bytes:
        """Pretty, deterministic UTF-8 JSON with a trailing newline (diffs review well)."""
        return (json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n").encode()

    def write(self) -> None:
        """Write the lock atomically (a reader sees the old file or the new one)."""
        write_atomic(self.path, self.to_bytes())


def _update_lock(path: str | Path, change: Callable[[LockFile], LockFile]) -> LockFile:
    """The lock discipline (:func:`~histor_sign._atomic.locked_beside`) for a lock file:
    take the lock, re-read the file, apply ``change``, write it atomically. Two writers of
    different entries both land; one waits for the other (bounded, then one error line
    naming it)."""
    with locked_beside(path):
        updated = change(LockFile.load_or_new(path))
        updated.write()
        return updated


def add_locked(path: str | Path, entry: LockedServer) -> LockFile:
    """Add ``entry`` to the lock file at ``path`` (created if needed), merged with whatever
    another process wrote meanwhile. An entry of that name locked already (now, or by a
    concurrent run) is refused with :class:`UsageError`: a change is promoted only through
    :func:`promote_locked`."""

    def add(current: LockFile) -> LockFile:
        if entry.name in current.servers:
            raise UsageError(f"{printable(entry.name, 200)} is already locked in {path}: use "
                             "`update` to review what changed and `accept` to promote it",
                             param="update", alternatives=("accept",))
        return current.with_entry(entry)

    return _update_lock(path, add)


def promote_locked(path: str | Path, check: LockCheck,
                   package: InstalledEvidence | None = None) -> LockFile:
    """:func:`promote` the reviewed change into the lock file at ``path``, merged with the
    other entries as they are now. If the reviewed entry itself changed meanwhile (another
    ``--update --accept``), nothing is written: :class:`UsageError` says to review again."""

    def accept(current: LockFile) -> LockFile:
        now = current.servers.get(check.entry.name)
        if now is None or now.to_json() != check.entry.to_json():
            raise UsageError(f"{printable(check.entry.name, 200)} was changed in {path} by "
                             "another process meanwhile; nothing was written: run `update` "
                             "again to review it", param="update")
        return promote(current, check, package)

    return _update_lock(path, accept)


@dataclass(frozen=True)
class LockCheck:
    """A served snapshot compared with a locked entry: the drift, triaged as for a signed
    revision, with the locked side named for what it is (:data:`TRUST`)."""

    entry: LockedServer
    drift: DriftResult
    lock_path: Path
    #: The fetched snapshot, kept so an accepted change can be promoted into the lock.
    served: Snapshot | None = None
    #: The package evidence of what ran now (``package`` JSON), when the check ran the
    #: locked command itself; None when nothing ran (a file) or no evidence was found.
    observed_package: Mapping[str, Any] | None = None
    #: Whether the package was compared: the entry records one and the check ran a command.
    package_compared: bool = False

    @property
    def package_problem(self) -> str | None:
        """Why the code that ran is not the locked package, or None. A lock that records a
        package is a claim about code: a run that cannot show the same package (another
        digest or version, or no evidence at all) fails, whatever the definitions say."""
        if not self.package_compared:
            return None
        return _package_problem(self.entry.package, self.observed_package)

    @property
    def matches(self) -> bool:
        return self.drift.matches and self.package_problem is None

    def reaches(self, level: Risk | str) -> bool:
        """A package change reaches every level: the definitions may be unchanged while
        the code behind them is not."""
        return self.drift.reaches(level) or self.package_problem is not None

    def headline(self) -> str:
        """``some-server in mcp.lock · locked (trust on first use), not publisher-signed``."""
        return f"{printable(self.entry.name)} in {printable(str(self.lock_path))} · {TRUST}"

    def to_text(self) -> str:
        """The drift report as ``check --server`` prints it, with the locked baseline as the
        headline instead of a signer; where the triage says "signed" it means locked."""
        problem = self.package_problem
        differs = ", but the package that ran is not the locked one" if problem else ""
        lines = [f"{self.drift.headline()}{differs} · {self.headline()}"]
        body = [_DIFF_LABELS.get(line, line) for line in self.drift.to_text().splitlines()[1:]]
        lines += body
        if body and any(t.changes for t in self.drift.tools):
            lines.append("  (\"signed\" above means the locked definitions: nobody signed them)")
        if problem is not None:
            lines.append(f"  PACKAGE {problem}")
        elif self.package_compared and self.entry.package is not None:
            lines.append(f"  package {_package_label(self.entry.package)}: as locked")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The drift document of ``check``, with ``locked`` where a signed check has
        ``verified``; ``revision`` is null (a lock has none) and ``signed*`` members hold the
        locked values."""
        locked = self.entry.package
        return {**self.drift.to_json(), "revision": None,
                "locked": {**self.entry.summary_json(), "file": str(self.lock_path)},
                "package": {
                    "locked": _plain(locked) if locked is not None else None,
                    "observed": (_plain(self.observed_package)
                                 if self.observed_package is not None else None),
                    "compared": self.package_compared and locked is not None,
                    "problem": self.package_problem,
                }}


#: The drift's description diff names its sides signed/current; here the old side is locked.
_DIFF_LABELS = {"      --- signed": "      --- locked"}


@dataclass(frozen=True)
class LockedRevision:
    """A lock entry as the proxy's baseline, read where the proxy reads a verified
    :class:`~histor_sign.pins.PinnedRevision`: the locked digests (``envelope``, a
    statement signed by nobody), the locked snapshot (``signed_snapshot``: the tool objects
    offered to the host). ``revision`` is None — a lock has no revision — and
    :meth:`headline` says what it is."""

    entry: LockedServer
    lock_path: Path
    signed_tools: None = None

    @property
    def server(self) -> str:
        return self.entry.name

    @property
    def revision(self) -> None:
        return None

    @property
    def envelope(self) -> Statement:
        return self.entry.statement()

    @property
    def signed_snapshot(self) -> Snapshot:
        return self.entry.snapshot

    @property
    def source(self) -> str:
        return str(self.lock_path)

    def headline(self) -> str:
        """``notes in mcp.lock · locked (trust on first use), not publisher-signed``."""
        return f"{printable(self.entry.name)} in {printable(self.source)} · {TRUST}"

    def require_package(self, command: Sequence[str] | None, cwd: str | Path | None) -> None:
        """Refuse to serve (:class:`CheckFailed`) when the entry records a package and the
        stdio ``command`` about to run is not shown to run that very package (another one,
        or no evidence; a URL server, ``command`` None, shows none)."""
        if self.entry.package is None:
            return
        from histor_sign.artifacts import npm_package_run_by

        evidence = npm_package_run_by(command, cwd) if command is not None else None
        problem = _package_problem(self.entry.package,
                                   _package_json(evidence) if evidence is not None else None)
        if problem is not None:
            raise CheckFailed(problem)

    def audit_json(self) -> dict[str, Any]:
        """What the proxy's session-start record says about the baseline."""
        return {"revision": None, "manifestDigest": self.entry.manifest_digest,
                "locked": {"file": self.source, "trust": TRUST, "publisherSigned": False}}


def locked_revision(path: str | Path, server: str | None = None,
                    target: Mapping[str, Any] | None = None) -> LockedRevision:
    """The entry of the lock file at ``path`` (by name ``server``, else the only one or the
    one locked from ``target``, a target's description) as a proxy baseline. Raises
    :class:`InputError` for a bad lock file, :class:`UsageError` for no such entry."""
    lock = LockFile.load(path)
    return LockedRevision(lock.entry(server, target), lock.path)


def check_locked(lock: LockFile, served: Snapshot | Catalog,
                 server: str | None = None, *, ran_command: bool = False,
                 package: InstalledEvidence | None = None) -> LockCheck:
    """Compare ``served`` with its entry in ``lock`` (by name, ``server``, else the only entry or
    the one locked from the same target): tools field by field with the triage, the surface
    against the locked digests (a plain catalog, not a fetch snapshot, leaves the surface
    not compared and cannot be promoted). Raises :class:`UsageError` for no such entry,
    :class:`InputError` for a served catalog that is not MCP tools.

    ``ran_command``: ``served`` comes from running a stdio command just now, and
    ``package`` is the evidence of the npm package it ran
    (:func:`histor_sign.artifacts.npm_package_run_by`, None when there is none). An entry
    that records a package is then compared with it too (:attr:`LockCheck.package_problem`);
    a file of served tools is not evidence of any code and leaves the package uncompared."""
    entry = lock.entry(server, _target_of(served))
    drift = compare(entry.statement(), served, entry.snapshot, source=str(lock.path),
                    signed_surface=entry.surface, surface_baseline=SurfaceBaseline.LOCKED)
    return LockCheck(entry, drift, lock.path,
                     served if isinstance(served, Snapshot) else None,
                     _package_json(package) if package is not None else None, ran_command)


def promote(lock: LockFile, check: LockCheck,
            package: InstalledEvidence | None = None) -> LockFile:
    """The lock with the checked server's entry replaced by what it serves now (the
    reviewed change) and the ``package`` evidence of what ran. Raises :class:`UsageError`
    when the check kept no snapshot."""
    if check.served is None:
        raise UsageError("nothing to promote: the served tools are not a fetch snapshot")
    return lock.with_entry(LockedServer.observe(check.served, check.entry.name, package))


def _target_of(served: Snapshot | Catalog) -> Mapping[str, Any] | None:
    if not isinstance(served, Snapshot):
        return None
    target = served.capture.get("target")
    return target if isinstance(target, Mapping) else None


# ---------------------------------------------------------------------- parsing
def _exact(value: Any, keys: tuple[str, ...], where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{where} must be a JSON object")
    missing = [k for k in keys if k not in value]
    extra = sorted(k for k in value if k not in keys)
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    if extra:
        raise InputError(f"{where}: unknown member {printable(repr(extra[0]), 80)}")
    return value


def _parse_lock(document: Any, source: str) -> dict[str, LockedServer]:
    if not isinstance(document, Mapping):
        raise InputError(f"{source}: a lock file must be a JSON object")
    version = document.get("lockVersion")
    if version != LOCK_VERSION or isinstance(version, bool):
        raise InputError(f"{source}: lockVersion is {printable(repr(version), 40)}; this "
                         f"histor-sign reads lockVersion {LOCK_VERSION}")
    _exact(document, _FILE_KEYS, source)
    if not isinstance(document["comment"], str):
        raise InputError(f"{source}: comment must be a string")
    servers = document["servers"]
    if not isinstance(servers, Mapping):
        raise InputError(f"{source}: servers must be a JSON object")
    out: dict[str, LockedServer] = {}
    for name, value in servers.items():
        where = f"{source}: servers/{printable(name, 80)}"
        try:
            validate_lock_name(name)
        except UsageError as exc:
            raise InputError(f"{source}: {exc.message}") from None
        out[name] = _parse_entry(name, value, where)
    return out


def _parse_entry(name: str, value: Any, where: str) -> LockedServer:
    entry = _exact(value, _ENTRY_KEYS, where)
    if entry["trust"] != TRUST:
        raise InputError(f"{where}: trust must be {TRUST!r}")
    package = _parse_package(entry["package"], f"{where}/package")
    target = entry["target"]
    if target is not None and not isinstance(target, Mapping):
        raise InputError(f"{where}: target must be an object or null")
    snapshot = Snapshot.from_json(entry["snapshot"], f"{where}/snapshot")
    if target != snapshot.capture.get("target"):
        raise InputError(f"{where}: target differs from the snapshot's capture target")
    observed = LockedServer.observe(snapshot, name)
    recorded = (entry["manifestDigest"], entry["toolDigests"], entry["surface"])
    recomputed = (observed.manifest_digest, dict(observed.tool_digests),
                  surface_json(snapshot))
    for member, had, has in zip(("manifestDigest", "toolDigests", "surface"), recorded,
                                recomputed, strict=True):
        if had != has:
            raise InputError(f"{where}: {member} does not match the locked definitions "
                             "(edited by hand?); lock the server again")
    return replace(observed, package=package)


_PACKAGE_KEYS = ("ecosystem", "name", "version", "digests")
_HEX_LENGTH = {"sha256": 64, "sha512": 128}


def _package_json(evidence: InstalledEvidence) -> Mapping[str, Any]:
    # npm's lockfile key is the install path; its last node_modules/ segment is the name
    name = evidence.label.rpartition("node_modules/")[2]
    return MappingProxyType({"ecosystem": evidence.ecosystem, "name": name,
                             "version": evidence.version,
                             "digests": dict(sorted(evidence.digests.items()))})


def _package_problem(locked: Mapping[str, Any] | None,
                     observed: Mapping[str, Any] | None) -> str | None:
    """Why the package shown to run (``observed``, None: nothing shown) is not the
    ``locked`` one, or None (also when nothing is locked)."""
    if locked is None:
        return None
    if observed is None:
        return (f"the locked npm package {_package_label(locked)} is not what runs now: "
                "no installed package with lockfile integrity was found for the command")
    if _plain(observed) != _plain(locked):
        return (f"the npm package changed: locked {_package_label(locked)}, now "
                f"{_package_label(observed)}")
    return None


def _plain(package: Mapping[str, Any]) -> dict[str, Any]:
    """A ``package`` mapping as plain JSON values (comparable, printable)."""
    return {**package, "digests": dict(package["digests"])}


def _package_label(package: Mapping[str, Any]) -> str:
    """``@acme/search@2.3.0 (sha512 0a1b2c3d4e5f…)``, escaped."""
    algorithm = "sha512" if "sha512" in package["digests"] else min(package["digests"])
    return (f"{printable(str(package['name']), 200)}@{printable(str(package['version']), 80)}"
            f" ({algorithm} {package['digests'][algorithm][:12]}…)")


def _hex_digests(digests: Any) -> bool:
    """Step: a non-empty mapping of sha256/sha512 digests in lowercase hex of their length."""
    return isinstance(digests, Mapping) and bool(digests) and all(
        isinstance(v, str) and len(v) == _HEX_LENGTH.get(k, -1)
        and re.fullmatch(r"[0-9a-f]+", v) for k, v in digests.items())


def _parse_package(value: Any, where: str) -> Mapping[str, Any] | None:
    """null, or npm evidence: the package's path under node_modules, its version and the
    lockfile's integrity digests (hex), exactly those members."""
    if value is None:
        return None
    package = _exact(value, _PACKAGE_KEYS, where)
    digests = package["digests"]
    if (package["ecosystem"] != "npm" or not isinstance(package["name"], str)
            or not (package["version"] is None or isinstance(package["version"], str))
            or not _hex_digests(digests)):
        raise InputError(f"{where}: must be null or an npm package (ecosystem \"npm\", name, "
                         "version, digests of sha256/sha512 in lowercase hex)")
    return MappingProxyType({**package, "digests": MappingProxyType(dict(digests))})
