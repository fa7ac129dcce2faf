"""Watch the transparency log for signatures the publisher did not make.

A keyless signature is only as safe as the publisher's chance of noticing a signature in its
name that it did not make: anyone who can run its workflow (a pushed branch, a compromised
action, a stolen token) can sign, and only the log shows it. :func:`monitor` reads the log
from a stored checkpoint on and reports:

* an **alarm** for every entry whose certificate meets the identity policy (the pins a
  client holds: repository, workflow file, refs) but is not a document of the published
  chain — a revision envelope, an attestation part or a yank, matched by log index *and*
  the exact entry body their bundles carry;
* a **warning** for an entry from the same repository by another workflow or ref (a
  client's pins refuse it, but someone can sign there);
* an **alarm** when the log does not extend the stored checkpoint: a smaller tree (shrink),
  another root at the same size or a failed consistency proof (fork), another origin, or
  an entry whose proof does not lead to the verified tree. Never a silent reset.

Logs: Rekor v1 (``/api/v1/log``, ``/api/v1/log/proof``, ``/api/v1/log/entries?logIndex=``)
and Rekor v2's tiled log (C2SP tlog-tiles: ``/checkpoint``, ``/tile/<L>/<N>``,
``/tile/entries/<N>``), told apart by the log key the trusted root holds (Ed25519: v2).
Every checkpoint's signature is checked with that key; every entry read is bound to the
verified tree (v1: its inclusion proof; v2: its leaf hash in the tiles, hashed up to the
checked root).

**State** (the ``since`` file): the last verified checkpoint and a cursor, the first entry
not yet read. A run reads at most ``max_entries`` entries from the cursor and writes the
state again (atomically) only when it raised no alarm; an interrupted or failed run leaves
it as it was, so the next run reads the same entries again: none is ever skipped. Without
a state file the first run starts at the chain's first log entry (the current tree size
when nothing is published yet) and trusts the current checkpoint as signed by the log.

The chain is read after the entries, so a release published while the monitor ran is
found; a release signed but not yet published is an alarm until it is.

**Acknowledgements**: an unpublished-signature alarm blocks the state, so it is raised
again on every run until the publisher acts. Once investigated (the run was the
publisher's own, say, or its revision is yanked), the publisher acknowledges that entry
explicitly (``acknowledge`` with a ``reason``): the acknowledgement is bound to the log,
the index *and* the SHA-256 of the entry's body, may only be given for an entry that
alarms in the same run (never in advance), and is recorded in the state file with its
reason and time. Such an entry is then reported as acknowledged (a note, with the reason)
instead of an alarm; every run lists the acknowledgements the state holds. A log
inconsistency can never be acknowledged.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._atomic import locked_beside, output_exists, write_atomic
from histor_sign._chain_store import NotPublished, ReleaseLocation, fetch_bytes, is_url
from histor_sign._escape import printable
from histor_sign._limits import (
    DEFAULT_MAX_LOG_ENTRIES,
    DEFAULT_TIMEOUT,
    MAX_LOG_RESPONSE_BYTES,
    MAX_MONITOR_STATE_BYTES,
)
from histor_sign._merkle import (
    TILE_HEIGHT,
    TILE_WIDTH,
    consistent,
    leaf_hash,
    node_hash,
    root_from_inclusion,
    root_from_subtrees,
    tile_path,
)
from histor_sign.canonical import JsonValue, parse_json, read_bytes
from histor_sign.errors import (
    InputError,
    LimitExceeded,
    OperationalError,
    UsageError,
    VerificationFailed,
)
from histor_sign.layout import MAX_PARTS, chain_dir, part_addresses
from histor_sign.models import GITHUB_ACTIONS_ISSUER, Finding, ToolRef, namespace_owner

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import LogKey, Trust
    from histor_sign.verification._certificate import CertificateFacts
    from histor_sign.verification.policy import Pins

#: Format version of the state file.
STATE_VERSION = 1
#: Revisions of the chain the monitor indexes.
MAX_CHAIN_REVISIONS = 1000

ALARM, WARNING, ACKNOWLEDGED = "alarm", "warning", "acknowledged"
#: Acknowledgements a state file holds (each is bound to one entry).
MAX_ACKNOWLEDGEMENTS = 1000
#: The rule of each kind of event (see :data:`histor_sign.report._findings.RULES`).
RULE_OF = {"unpublished-signature": "HM001", "other-workflow-signature": "HM002",
           "log-inconsistent": "HM003"}


class LogInconsistent(Exception):
    """The log does not extend what was verified before (raised inside a run, reported as
    an alarm)."""


# ---------------------------------------------------------------------- checkpoints
@dataclass(frozen=True)
class Checkpoint:
    """A log's signed tree head: origin line, tree size, root hash and the note's text."""

    origin: str
    size: int
    root: bytes
    note: str


def parse_checkpoint(note: str, key: LogKey, source: str) -> Checkpoint:
    """Parse a signed note (C2SP) and check its signature by the log's key; raise
    :class:`VerificationFailed` when no signature line verifies."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519
    from cryptography.hazmat.primitives.serialization import load_der_public_key

    body, separator, signatures = note.partition("\n\n")
    lines = body.split("\n")
    try:
        if not separator or len(lines) < 3:
            raise ValueError("not a signed note")
        size, root = int(lines[1]), base64.b64decode(lines[2], validate=True)
        if size < 0 or len(root) != 32 or not lines[0]:
            raise ValueError("bad tree size or root")
    except (ValueError, binascii.Error) as exc:
        raise InputError(f"{source}: not a checkpoint ({exc})") from None
    public = load_der_public_key(key.public_key)
    signed = (body + "\n").encode()
    for line in signatures.splitlines():
        name, _, encoded = line.removeprefix("\u2014 ").rpartition(" ")
        if not line.startswith("\u2014 ") or not name:
            continue
        try:
            raw = base64.b64decode(encoded, validate=True)
        except binascii.Error:
            continue
        if raw[:4] != key.log_id[:4]:
            continue
        try:
            if isinstance(public, ec.EllipticCurvePublicKey):
                public.verify(raw[4:], signed, ec.ECDSA(hashes.SHA256()))
            elif isinstance(public, ed25519.Ed25519PublicKey):
                public.verify(raw[4:], signed)
            else:
                continue
        except InvalidSignature:
            continue
        return Checkpoint(lines[0], size, root, note)
    raise VerificationFailed(f"{source}: the checkpoint is not signed by the log's key "
                             "in the trusted root")


# ---------------------------------------------------------------------- the logs
class _Reader:
    """The bounded fetch of one log's read API."""

    def __init__(self, key: LogKey, base: str, timeout: float) -> None:
        self.key, self.base, self.timeout = key, base.rstrip("/"), timeout
        self.requests = 0

    def get(self, path: str) -> bytes:
        self.requests += 1
        return fetch_bytes(f"{self.base}/{path}", param="rekor_url",
                           max_bytes=MAX_LOG_RESPONSE_BYTES, timeout=self.timeout)

    def json(self, path: str) -> Any:
        return parse_json(self.get(path), f"{self.base}/{path}")


class _V1Log(_Reader):
    """Rekor v1: log info, consistency proofs, entries by index."""

    def checkpoint(self) -> Checkpoint:
        info = self.json("api/v1/log")
        if not isinstance(info, dict) or not isinstance(info.get("signedTreeHead"), str):
            raise InputError(f"{self.base}/api/v1/log: no signedTreeHead")
        head = parse_checkpoint(info["signedTreeHead"], self.key, f"{self.base}/api/v1/log")
        if info.get("treeSize") != head.size or info.get("rootHash") != head.root.hex():
            raise LogInconsistent("the log info's tree size and root differ from its signed "
                                  "checkpoint")
        return head

    def _proof(self, first: int, last: int) -> tuple[list[bytes], bytes | None]:
        doc = self.json(f"api/v1/log/proof?firstSize={first}&lastSize={last}")
        try:
            hashes = [bytes.fromhex(h) for h in doc["hashes"] or []]
            root = bytes.fromhex(doc["rootHash"]) if doc.get("rootHash") else None
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(f"{self.base}: malformed consistency proof") from None
        return hashes, root

    def extends(self, size: int, root: bytes, new: Checkpoint) -> bool:
        if size == 0 or size == new.size:
            return size == 0 or root == new.root
        hashes, _ = self._proof(size, new.size)
        return consistent(size, new.size, root, new.root, hashes)

    def entries(self, start: int, end: int, new: Checkpoint) -> Iterator[tuple[int, bytes]]:
        later: dict[int, bytes] = {}
        for index in range(start, end):
            doc = self.json(f"api/v1/log/entries?logIndex={index}")
            try:
                (entry,) = doc.values()
                body = base64.b64decode(entry["body"], validate=True)
                proof = entry["verification"]["inclusionProof"]
                size, claimed = int(proof["treeSize"]), bytes.fromhex(proof["rootHash"])
                path = [bytes.fromhex(h) for h in proof["hashes"]]
                logged = int(entry["logIndex"])
            except (KeyError, TypeError, ValueError, AttributeError, binascii.Error):
                raise InputError(f"{self.base}: malformed log entry {index}") from None
            if logged != index:
                raise LogInconsistent(f"asked for entry {index}, the log answered {logged}")
            try:
                root = root_from_inclusion(leaf_hash(body), index, size, path)
            except ValueError as exc:
                raise LogInconsistent(f"entry {index}: {exc}") from None
            if root != claimed:
                raise LogInconsistent(f"entry {index}: its inclusion proof does not lead to "
                                      "the root it names")
            if size < new.size or (size == new.size and root != new.root):
                raise LogInconsistent(f"entry {index} is proven in a tree of size {size} "
                                      "that is not the verified one")
            if size > new.size:  # the log grew meanwhile: that tree must extend ours
                if later.get(size, root) != root:
                    raise LogInconsistent(f"two roots for tree size {size}")
                if size not in later:
                    hashes, _ = self._proof(new.size, size)
                    if not consistent(new.size, size, new.root, root, hashes):
                        raise LogInconsistent(f"the tree of size {size} entry {index} is "
                                              "proven in does not extend the verified one")
                    later[size] = root
            yield index, body


class _TiledLog(_Reader):
    """Rekor v2: the checkpoint and C2SP tiles; every hash read is bound to the checked
    root of the tree the tiles are read for."""

    def __init__(self, key: LogKey, base: str, timeout: float) -> None:
        super().__init__(key, base, timeout)
        self._tiles: dict[tuple[int, int], bytes] = {}
        self._bound: set[tuple[int, int]] = set()
        self.size = 0

    def checkpoint(self) -> Checkpoint:
        head = parse_checkpoint(self.get("checkpoint").decode("utf-8", "replace"), self.key,
                                f"{self.base}/checkpoint")
        self.size = head.size
        return head

    def _width(self, level: int, index: int) -> int:
        count = self.size >> (TILE_HEIGHT * level)
        return min(TILE_WIDTH, count - index * TILE_WIDTH)

    def _tile(self, level: int, index: int) -> bytes:
        if (level, index) not in self._tiles:
            width = self._width(level, index)
            if width < 1:
                raise LogInconsistent(f"tile {level}/{index} is beyond the tree")
            data = self.get(tile_path(level, index, width))
            if len(data) != 32 * width:
                raise LogInconsistent(f"tile {level}/{index} holds {len(data)} bytes, not "
                                      f"{32 * width}")
            self._tiles[level, index] = data
        return self._tiles[level, index]

    def _hash(self, level: int, index: int) -> bytes:
        tile, offset = divmod(index, TILE_WIDTH)
        return self._tile(level, tile)[32 * offset:32 * offset + 32]

    def _node(self, height: int, index: int) -> bytes:
        level, below = divmod(height, TILE_HEIGHT)
        if not below:
            return self._hash(level, index)
        return node_hash(self._node(height - 1, 2 * index), self._node(height - 1, 2 * index + 1))

    def root(self, size: int) -> bytes:
        return root_from_subtrees(size, self._node)

    def _bind(self, level: int, index: int) -> None:
        """Check a full tile against the hash one level up, and so on up to a partial
        tile, whose hashes the root itself covers."""
        while self._width(level, index) == TILE_WIDTH and (level, index) not in self._bound:
            hashes = [self._tile(level, index)[k:k + 32] for k in range(0, 32 * TILE_WIDTH, 32)]
            while len(hashes) > 1:
                hashes = [node_hash(hashes[k], hashes[k + 1]) for k in range(0, len(hashes), 2)]
            if hashes[0] != self._hash(level + 1, index):
                raise LogInconsistent(f"tile {level}/{index} does not hash to its parent")
            self._bound.add((level, index))
            level, index = level + 1, index // TILE_WIDTH

    def extends(self, size: int, root: bytes, new: Checkpoint) -> bool:
        if self.root(new.size) != new.root:
            raise LogInconsistent("the tiles do not hash to the checkpoint's root")
        return size == 0 or self.root(size) == root

    def entries(self, start: int, end: int, new: Checkpoint) -> Iterator[tuple[int, bytes]]:
        index = start
        while index < end:
            tile = index // TILE_WIDTH
            width = self._width(0, tile)
            data = self.get(tile_path("entries", tile, width))
            bodies: list[bytes] = []
            at = 0
            while at < len(data) and len(bodies) < width:
                length = int.from_bytes(data[at:at + 2], "big")
                bodies.append(data[at + 2:at + 2 + length])
                at += 2 + length
            if len(bodies) != width or at != len(data):
                raise LogInconsistent(f"entry bundle {tile} does not hold {width} entries")
            self._bind(0, tile)
            for offset, body in enumerate(bodies):
                number = tile * TILE_WIDTH + offset
                if not start <= number < end:
                    continue
                if leaf_hash(body) != self._hash(0, number):
                    raise LogInconsistent(f"entry {number} is not the leaf the tiles hold")
                yield number, body
            index = (tile + 1) * TILE_WIDTH


# ---------------------------------------------------------------------- entries
def entry_certificate_facts(body: bytes) -> CertificateFacts | None:
    """The signing certificate's facts of a ``hashedrekord`` or ``dsse`` entry body (Rekor
    v1 0.0.1 or v2 0.0.2); None for any other entry (a key, not a certificate)."""
    from cryptography import x509

    from histor_sign.verification._certificate import certificate_facts

    try:
        doc = json.loads(body)
        spec = doc["spec"]
        if "hashedRekordV002" in spec:
            raw = spec["hashedRekordV002"]["signature"]["verifier"]["x509Certificate"]
            cert = x509.load_der_x509_certificate(base64.b64decode(raw["rawBytes"]))
        elif "dsseV002" in spec:
            raw = spec["dsseV002"]["signatures"][0]["verifier"]["x509Certificate"]
            cert = x509.load_der_x509_certificate(base64.b64decode(raw["rawBytes"]))
        elif doc.get("kind") == "hashedrekord":
            pem = base64.b64decode(spec["signature"]["publicKey"]["content"])
            cert = x509.load_pem_x509_certificate(pem)
        elif doc.get("kind") == "dsse":
            pem = base64.b64decode(spec["signatures"][0]["verifier"])
            cert = x509.load_pem_x509_certificate(pem)
        else:
            return None
        return certificate_facts(cert)
    except Exception:  # anything else in the log: not a certificate-signed entry
        return None


def _chain_location(revisions: str, server: str) -> ReleaseLocation:
    """A URL names the server's chain (like a pin's location); a directory is either the
    ``revisions`` root a release publishes into or the server's chain directory itself."""
    if is_url(revisions):
        return ReleaseLocation.parse(revisions, param="revisions")
    nested = chain_dir(revisions, server)
    return ReleaseLocation(str(nested if os.path.isdir(nested) else Path(revisions)))


def _bundle_entries(bundle: Any) -> Iterator[tuple[tuple[bytes, int], bytes]]:
    """``((log id, log index), entry body)`` of each log entry a bundle carries."""
    material = bundle.get("verificationMaterial") if isinstance(bundle, dict) else None
    entries = material.get("tlogEntries") if isinstance(material, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        try:
            log_id = base64.b64decode(entry["logId"]["keyId"])
            yield (log_id, int(entry["logIndex"])), base64.b64decode(entry["canonicalizedBody"])
        except (KeyError, TypeError, ValueError, binascii.Error):
            continue


@dataclass(frozen=True)
class _Chain:
    """The log entries of the published chain, ``(log id, index) → entry body``, and the
    latest envelope's bundle and signer (what the identity policy must match)."""

    bodies: dict[tuple[bytes, int], bytes]
    latest_bundle: Any = None
    latest_identity: str | None = None

    def first_index(self, log_id: bytes) -> int | None:
        return min((i for (log, i) in self.bodies if log == log_id), default=None)


def read_chain(location: ReleaseLocation, timeout: float) -> _Chain:
    """Every log entry the chain at ``location`` publishes: each revision's envelope, its
    attestation parts and its yank."""

    def fetch(address: str) -> JsonValue | None:
        try:
            return location.fetch_json(address, timeout=timeout)
        except NotPublished:
            return None

    latest = fetch(location.latest())
    if not isinstance(latest, dict):
        return _Chain({})
    revision = latest.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InputError(f"{location.latest()}: no revision number")
    if revision > MAX_CHAIN_REVISIONS:
        raise LimitExceeded(f"{location.latest()}: more than {MAX_CHAIN_REVISIONS} revisions",
                            limit="max_chain", value=MAX_CHAIN_REVISIONS)
    bodies: dict[tuple[bytes, int], bytes] = {}

    def add(document: Any) -> None:
        if isinstance(document, dict):
            signer = document.get("signer")
            bundle = signer.get("signature") if isinstance(signer, dict) else document
            bodies.update(_bundle_entries(bundle))

    add(latest)
    for n in range(1, revision + 1):
        add(fetch(location.envelope(n)))
        add(fetch(location.yank(n)))
        add(fetch(location.yank_attestation(n)))
        for address in part_addresses(location.attestation(n), MAX_PARTS):
            part = fetch(address)
            if part is None:
                break
            add(part)
    signer = latest.get("signer")
    return _Chain(bodies, signer.get("signature") if isinstance(signer, dict) else None,
                  signer.get("identity") if isinstance(signer, dict) else None)


# ---------------------------------------------------------------------- state
@dataclass(frozen=True)
class MonitorState:
    """The state file: the last verified checkpoint and the first entry not yet read."""

    log_id: str
    origin: str
    size: int
    root: bytes
    checkpoint: str
    next_index: int
    acknowledged: tuple[Acknowledgement, ...] = ()

    def to_bytes(self) -> bytes:
        return (json.dumps({
            "version": STATE_VERSION, "logId": self.log_id, "origin": self.origin,
            "treeSize": self.size, "rootHash": self.root.hex(), "checkpoint": self.checkpoint,
            "nextIndex": self.next_index,
            **({"acknowledged": [a.to_json() for a in self.acknowledged]}
               if self.acknowledged else {}),
        }, indent=2) + "\n").encode()

    @classmethod
    def load(cls, path: Path) -> MonitorState | None:
        """The state in ``path``; None when there is no such file (one that cannot be looked
        up, a name too long or a symlink loop, is an error naming it)."""
        if not output_exists(path):
            return None
        source = f"checkpoint file {path}"
        doc = parse_json(read_bytes(str(path), max_bytes=MAX_MONITOR_STATE_BYTES), source)
        keys = {"version", "logId", "origin", "treeSize", "rootHash", "checkpoint",
                "nextIndex"}
        if (not isinstance(doc, dict) or not keys <= set(doc) <= keys | {"acknowledged"}
                or doc["version"] != STATE_VERSION):
            raise InputError(f"{source}: not a histor-sign monitor state (version "
                             f"{STATE_VERSION}: {', '.join(sorted(keys))})")
        size, nxt = doc["treeSize"], doc["nextIndex"]
        if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                   for v in (size, nxt)) or nxt > size:
            raise InputError(f"{source}: treeSize and nextIndex must be integers, "
                             "nextIndex ≤ treeSize")
        try:
            root = bytes.fromhex(doc["rootHash"])
        except (TypeError, ValueError):
            root = b""
        if len(root) != 32 or not all(isinstance(doc[k], str)
                                      for k in ("logId", "origin", "checkpoint")):
            raise InputError(f"{source}: rootHash, logId, origin and checkpoint are malformed")
        acknowledged = Acknowledgement.load_all(doc.get("acknowledged", []), source)
        return cls(doc["logId"], doc["origin"], size, root, doc["checkpoint"], nxt,
                   acknowledged)


@dataclass(frozen=True)
class Acknowledgement:
    """The publisher's word that an alarming entry was investigated: bound to the entry's
    log index and the SHA-256 of its body (so it covers that entry and no other), with the
    signer the entry named, the reason and when (UTC) it was given."""

    log_index: int
    entry_sha256: str
    identity: str
    reason: str
    at: str

    def to_json(self) -> dict[str, Any]:
        return {"logIndex": self.log_index, "entrySha256": self.entry_sha256,
                "identity": self.identity, "reason": self.reason, "at": self.at}

    @classmethod
    def load_all(cls, value: Any, source: str) -> tuple[Acknowledgement, ...]:
        from histor_sign.models import validate_yank_reason

        shape = {"logIndex", "entrySha256", "identity", "reason", "at"}
        if not isinstance(value, list) or len(value) > MAX_ACKNOWLEDGEMENTS:
            raise InputError(f"{source}: acknowledged must be a list of at most "
                             f"{MAX_ACKNOWLEDGEMENTS} entries")
        out: list[Acknowledgement] = []
        for n, item in enumerate(value):
            where = f"{source}: acknowledged[{n}]"
            if (not isinstance(item, dict) or set(item) != shape
                    or not isinstance(item["logIndex"], int)
                    or isinstance(item["logIndex"], bool) or item["logIndex"] < 0
                    or not all(isinstance(item[k], str)
                               for k in ("entrySha256", "identity", "at"))
                    or len(item["entrySha256"]) != 64
                    or item["entrySha256"].strip("0123456789abcdef")):
                raise InputError(f"{where}: needs {', '.join(sorted(shape))} (logIndex an "
                                 "integer, entrySha256 64 hex digits)")
            reason = validate_yank_reason(item["reason"], f"{where}.reason", "acknowledgement")
            out.append(cls(item["logIndex"], item["entrySha256"], printable(item["identity"],
                                                                          1000),
                           reason, printable(item["at"], 40)))
        if len({a.log_index for a in out}) != len(out):
            raise InputError(f"{source}: an entry is acknowledged twice")
        return tuple(out)


# ---------------------------------------------------------------------- the run
@dataclass(frozen=True)
class MonitorEvent:
    """One thing a run found: ``level`` alarm or warning, ``kind`` (a key of
    :data:`RULE_OF`), the log index and signer when it is about an entry."""

    level: str
    kind: str
    message: str
    log_index: int | None = None
    identity: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "kind": self.kind, "rule": RULE_OF[self.kind],
                "logIndex": self.log_index, "identity": self.identity,
                "message": self.message}


@dataclass(frozen=True)
class MonitorResult:
    """What one run established. ``stored`` says whether the state file was written (only
    after a run without alarms); ``complete`` whether every entry up to the checkpoint was
    read (a bounded run leaves the rest to the next one)."""

    server: str
    log: str
    state_path: Path
    previous_size: int | None
    size: int
    first_index: int
    next_index: int
    publisher_entries: int
    events: tuple[MonitorEvent, ...] = field(default=())
    stored: bool = False
    #: Every acknowledgement the state holds after this run (stored or, with ``stored``
    #: False, as it would have been stored): listed on each run, never hidden.
    acknowledged: tuple[Acknowledgement, ...] = field(default=())

    @property
    def alarm(self) -> bool:
        return any(e.level == ALARM for e in self.events)

    @property
    def complete(self) -> bool:
        return self.next_index >= self.size

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server, "log": self.log, "alarm": self.alarm,
            "previousTreeSize": self.previous_size, "treeSize": self.size,
            "entriesRead": {"from": self.first_index, "to": self.next_index},
            "complete": self.complete, "publisherEntries": self.publisher_entries,
            "checkpointStored": self.stored, "state": str(self.state_path),
            "events": [e.to_json() for e in self.events],
            "acknowledged": [a.to_json() for a in self.acknowledged],
        }

    def to_text(self) -> str:
        head = "ALARM" if self.alarm else "ok"
        read = self.next_index - self.first_index
        lines = [
            f"{head}: {printable(self.server)} in {printable(self.log)}: {read} entries read "
            f"({self.first_index}..{self.next_index}) of a tree of {self.size}",
            f"  publisher entries in the chain  {self.publisher_entries}",
            "  checkpoint                      "
            + (f"stored in {self.state_path}" if self.stored else "NOT stored (alarm)"),
        ]
        if not self.complete:
            lines.append(f"  {self.size - self.next_index} entries left for the next run")
        lines += [f"  {e.level:<8} {RULE_OF[e.kind]} "
                  + (f"entry {e.log_index}: " if e.log_index is not None else "")
                  + printable(e.message, 500) for e in self.events]
        if self.acknowledged:
            lines.append(f"  {len(self.acknowledged)} acknowledged entr"
                         f"{'y' if len(self.acknowledged) == 1 else 'ies'} in the state:")
            lines += [f"    entry {a.log_index} ({printable(a.identity, 200)}), {a.at}: "
                      f"{printable(a.reason)}" for a in self.acknowledged]
        return "\n".join(lines)

    def findings(self) -> list[Finding]:
        """The events as findings (SARIF/JSON reports): each located at the state file,
        named by its log entry."""
        from histor_sign.models import Severity
        from histor_sign.report._findings import new_finding

        return [new_finding(RULE_OF[e.kind], e.message, [ToolRef(
            f"log entry {e.log_index}" if e.log_index is not None else "log",
            str(self.state_path), e.log_index if e.log_index is not None else -1)],
            # An acknowledged alarm stays in the report, as a note.
            severity=Severity.note if e.level == ACKNOWLEDGED else None,
            properties={"logIndex": e.log_index, "identity": e.identity,
                        **({"acknowledged": True} if e.level == ACKNOWLEDGED else {})})
            for e in self.events]


def identity_policy(
    server: str, repository: str, workflow: str | None, ref_pattern: str | None
) -> tuple[Pins, Pins]:
    """The pins an entry must meet to be the publisher's (what a client pins) and the
    repository-wide pins that make it worth a warning. A policy that could never match a
    signature of ``server`` is a :class:`UsageError`."""
    from histor_sign.models import validate_server_name
    from histor_sign.pins import validate_ref_pattern, validate_repository, validate_workflow
    from histor_sign.verification.policy import Pins

    validate_server_name(server)
    validate_repository(repository)
    if workflow is not None:
        validate_workflow(workflow)
    if ref_pattern is not None:
        validate_ref_pattern(ref_pattern)
    owner = namespace_owner(server)
    if owner is None or owner.lower() != repository.split("/", 1)[0].lower():
        raise UsageError(
            f"`repository` {repository} can never sign {printable(server)}: only "
            f"io.github.<owner>/… servers verify, from a repository of <owner>",
            param="repository",
        )
    return (Pins(issuer=GITHUB_ACTIONS_ISSUER, repository=repository, workflow=workflow,
                 ref_pattern=ref_pattern),
            Pins(issuer=GITHUB_ACTIONS_ISSUER, repository=repository))


def _choose_log(trust: Trust, rekor_url: str | None, chain: _Chain) -> LogKey:
    logs = trust.transparency_logs()
    if rekor_url is not None:
        wanted = rekor_url.rstrip("/")
        for log in logs:
            if log.base_url == wanted:
                return log
        raise UsageError(f"`rekor_url` {printable(rekor_url)} is not a transparency log of "
                         "the trusted root", param="rekor_url")
    used = {log_id for (log_id, _), _ in _bundle_entries(chain.latest_bundle)}
    for log in logs:
        if log.log_id in used:
            return log
    if len(logs) != 1:
        raise UsageError("the trusted root lists several transparency logs and no published "
                         "revision names one: pass `rekor_url`", param="rekor_url")
    return logs[0]


def monitor(
    server: str,
    *,
    repository: str,
    revisions: str,
    since: str | Path,
    trust: Trust,
    workflow: str | None = None,
    ref_pattern: str | None = None,
    rekor_url: str | None = None,
    max_entries: int = DEFAULT_MAX_LOG_ENTRIES,
    timeout: float = DEFAULT_TIMEOUT,
    acknowledge: Collection[int] = (),
    reason: str | None = None,
) -> MonitorResult:
    """One monitoring run for ``server`` (see the module doc): verify that the log extends
    the checkpoint stored in ``since``, read up to ``max_entries`` new entries, judge each
    under the identity policy (``repository``, ``workflow``, ``ref_pattern``) against the
    chain published at ``revisions``, and store the new state only when nothing alarmed.

    Raises :class:`UsageError` for a policy that could never match (including one the
    publisher's own latest revision does not meet), :class:`InputError` for a malformed
    state file or a state of another log, and an operational error when the log cannot be
    read (the state is then left as it was).

    ``acknowledge``: log indexes of unpublished-signature alarms the publisher has
    investigated, with ``reason`` (see the module doc). Each must alarm in this very run,
    else :class:`InputError` and nothing is stored; they are recorded only with a state
    that is stored (a run with another alarm records none).
    """
    if max_entries < 1:
        raise UsageError("`max_entries` must be at least 1", param="max_entries")
    requested = set(acknowledge)
    _check_acknowledge_request(requested, reason)
    pins, repository_pins = identity_policy(server, repository, workflow, ref_pattern)
    state_path = Path(since)
    state = MonitorState.load(state_path)
    location = _chain_location(revisions, server)
    chain = read_chain(location, timeout)
    key = _choose_log(trust, rekor_url, chain)
    _check_policy_meets_latest(chain, pins)
    if state is not None and state.log_id != key.log_id.hex():
        raise InputError(f"checkpoint file {state_path} is for log {state.log_id}, not "
                         f"{key.log_id.hex()} ({key.base_url})")
    log: _V1Log | _TiledLog = (_TiledLog if key.tiled else _V1Log)(
        key, rekor_url or key.base_url, timeout)
    try:
        new = log.checkpoint()
    except LogInconsistent as exc:
        raise VerificationFailed(f"{log.base}: {exc}") from None

    held = state.acknowledged if state is not None else ()

    def result(first: int, nxt: int, publisher: int, events: list[MonitorEvent],
               stored: bool = False,
               acknowledged: tuple[Acknowledgement, ...] = held) -> MonitorResult:
        return MonitorResult(server, log.base, state_path,
                             state.size if state is not None else None, new.size, first, nxt,
                             publisher, tuple(events), stored, acknowledged)

    problem = _inconsistency(state, new, log)
    if problem is not None:
        return result(state.next_index if state else 0, state.next_index if state else 0, 0,
                      [MonitorEvent(ALARM, "log-inconsistent", problem)])
    if state is not None:
        first = state.next_index
    else:
        start = chain.first_index(key.log_id)
        first = new.size if start is None else min(start, new.size)
    end = min(new.size, first + max_entries)
    events: list[MonitorEvent] = []
    acks = _Acknowledging({a.log_index: a for a in held}, requested, reason)
    try:
        matched = _judge(log.entries(first, end, new), pins, repository_pins,
                         lambda: _published(read_chain(location, timeout), key.log_id),
                         _published(chain, key.log_id), events, acks)
    except LogInconsistent as exc:
        return result(first, first, 0, [MonitorEvent(ALARM, "log-inconsistent", str(exc))])
    _check_acknowledged(requested, acks, len(held), first, end)
    acknowledged = (*held, *acks.given)
    done = result(first, end, matched, events, acknowledged=acknowledged)
    if done.alarm:  # nothing stored, so no acknowledgement recorded: say so
        given = {a.log_index for a in acks.given}
        events = [replace(e, level=ALARM, message=e.message + "; NOT recorded: this run has "
                          "another alarm (acknowledge or resolve it too)")
                  if e.level == ACKNOWLEDGED and e.log_index in given else e for e in events]
        return result(first, end, matched, events)
    _store_state(state_path, state, MonitorState(key.log_id.hex(), new.origin, new.size,
                                                 new.root, new.note, end, acknowledged))
    return result(first, end, matched, events, stored=True, acknowledged=acknowledged)


def _store_state(path: Path, read: MonitorState | None, new: MonitorState) -> None:
    """Store the checkpoint under the lock discipline: re-read under the lock, and write
    only if the file still holds the state this run started from — a concurrent run that
    stored another checkpoint meanwhile is never overwritten (this run's result would
    move it back, or drop its acknowledgements); this one then stores nothing and says so."""
    with locked_beside(path):
        if MonitorState.load(path) != read:
            raise OperationalError(f"checkpoint file {printable(str(path))} was changed by "
                                   "another monitor run meanwhile; nothing was stored: run "
                                   "again")
        write_atomic(path, new.to_bytes())


def _check_acknowledge_request(requested: set[int], reason: str | None) -> None:
    """``acknowledge`` and ``reason`` come together, and the reason is one printable line."""
    if requested and reason is None:
        raise UsageError("`acknowledge` needs `reason`: why the entry is no threat",
                         param="reason", alternatives=("acknowledge",))
    if reason is not None:
        if not requested:
            raise UsageError("`reason` goes with `acknowledge`", param="reason",
                             alternatives=("acknowledge",))
        from histor_sign.models import validate_yank_reason

        try:
            validate_yank_reason(reason, "`reason`", "acknowledgement")
        except InputError as exc:
            raise UsageError(exc.message, param="reason") from None


def _check_policy_meets_latest(chain: _Chain, pins: Pins) -> None:
    """A policy the publisher's own latest revision does not meet would never match its
    signatures: every entry would alarm. That is a mistake in the policy, said at start."""
    from histor_sign.verification import load_bundle_certificate
    from histor_sign.verification._certificate import certificate_facts
    from histor_sign.verification.policy import identity_problems

    if chain.latest_bundle is None:
        return
    problems = identity_problems(certificate_facts(load_bundle_certificate(chain.latest_bundle)),
                                 pins)
    if problems:
        raise UsageError(
            f"the identity policy does not match the publisher's own latest revision "
            f"(signed by {printable(chain.latest_identity or '?')}: {'; '.join(problems)}),"
            " so it would never match its signatures; fix `repository`, `workflow` or "
            "`ref_pattern`", param="workflow")


def _check_acknowledged(requested: set[int], acks: _Acknowledging, held: int, first: int,
                        end: int) -> None:
    """Every acknowledgement asked for met an alarm of this run, and the state file has
    room for them; else nothing is stored."""
    unused = sorted(requested - {a.log_index for a in acks.given})
    if unused:
        raise InputError(
            f"cannot acknowledge entr{'y' if len(unused) == 1 else 'ies'} "
            f"{', '.join(map(str, unused))}: no unpublished-signature alarm in this run "
            f"(entries {first}..{end} read); only an entry that alarms can be acknowledged, "
            "never in advance; nothing was stored", param="acknowledge")
    if held + len(acks.given) > MAX_ACKNOWLEDGEMENTS:
        raise LimitExceeded(f"the state file holds at most {MAX_ACKNOWLEDGEMENTS} "
                            "acknowledgements; nothing was stored")


#: :func:`monitor` under the name the package exports (``histor_sign.monitor`` is this
#: module, so the function cannot be ``hs.monitor``).
monitor_log = monitor


def _published(chain: _Chain, log_id: bytes) -> dict[int, bytes]:
    return {index: body for (log, index), body in chain.bodies.items() if log == log_id}


def _inconsistency(state: MonitorState | None, new: Checkpoint,
                   log: _V1Log | _TiledLog) -> str | None:
    """Why the log's checkpoint does not extend the stored one (None: it does)."""
    try:
        if state is None:
            log.extends(0, b"", new)  # a tiled log still checks its tiles against the root
            return None
        if new.origin != state.origin:
            return (f"the log's origin is {printable(new.origin)!r}, the stored checkpoint's "
                    f"{printable(state.origin)!r}: another log, or a reset one")
        if new.size < state.size:
            return (f"the log shrank: its checkpoint has {new.size} entries, the stored one "
                    f"{state.size}")
        if new.size == state.size and new.root != state.root:
            return (f"fork: the log's root at size {new.size} is {new.root.hex()}, the stored "
                    f"one {state.root.hex()}")
        if not log.extends(state.size, state.root, new):
            return (f"fork: the log's tree of {new.size} entries does not extend the stored "
                    f"one of {state.size} (consistency proof failed)")
    except LogInconsistent as exc:
        return str(exc)
    return None


@dataclass
class _Acknowledging:
    """The acknowledgements a run honours (``held``, from the state), the indexes asked to
    be acknowledged now and why, and those given in this run."""

    held: dict[int, Acknowledgement]
    requested: set[int]
    reason: str | None
    given: list[Acknowledgement] = field(default_factory=list)

    def event(self, index: int, body: bytes, facts: CertificateFacts) -> MonitorEvent | None:
        """The acknowledged event for an alarming entry, or None: it still alarms."""
        import datetime as dt
        import hashlib

        digest = hashlib.sha256(body).hexdigest()
        signer = printable(facts.identity or "?")
        ack = self.held.get(index)
        if ack is not None and ack.entry_sha256 == digest:
            return MonitorEvent(ACKNOWLEDGED, "unpublished-signature",
                                f"signed by {signer}, no document of the published chain; "
                                f"acknowledged {ack.at}: {ack.reason}", index, facts.identity)
        if index in self.requested and ack is None and self.reason is not None:
            at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace(
                "+00:00", "Z")
            self.given.append(Acknowledgement(index, digest, facts.identity or "?",
                                              self.reason, at))
            return MonitorEvent(ACKNOWLEDGED, "unpublished-signature",
                                f"signed by {signer}, no document of the published chain; "
                                f"acknowledged now: {self.reason}", index, facts.identity)
        return None


def _judge(
    entries: Iterator[tuple[int, bytes]], pins: Pins, repository_pins: Pins,
    reread: Callable[[], dict[int, bytes]], bodies: dict[int, bytes],
    events: list[MonitorEvent], acks: _Acknowledging,
) -> int:
    """Judge every entry; append events; return how many were the publisher's, published."""
    from histor_sign.verification.policy import identity_problems

    suspects: list[tuple[int, bytes, CertificateFacts]] = []
    matched = 0
    for index, body in entries:
        facts = entry_certificate_facts(body)
        if facts is None:
            continue
        if not identity_problems(facts, pins):
            if bodies.get(index) == body:
                matched += 1
            else:
                suspects.append((index, body, facts))
        elif not identity_problems(facts, repository_pins):
            events.append(MonitorEvent(
                WARNING, "other-workflow-signature",
                f"signed from the repository by {printable(facts.identity or '?')}, which "
                "the identity policy does not cover (another workflow or ref)",
                index, facts.identity))
    if suspects:
        bodies = reread()  # published while the log was read?
    for index, body, facts in suspects:
        if bodies.get(index) == body:
            matched += 1
            continue
        acknowledged = acks.event(index, body, facts)
        if acknowledged is not None:
            events.append(acknowledged)
            continue
        held = acks.held.get(index)
        events.append(MonitorEvent(
            ALARM, "unpublished-signature",
            f"signed by {printable(facts.identity or '?')}, which the identity policy "
            "matches, but it is no revision, attestation or yank of the published chain"
            + ("; the entry is NOT the one acknowledged at this index (its body differs)"
               if held is not None else ""),
            index, facts.identity))
    return matched
