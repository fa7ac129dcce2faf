"""Watch the transparency logs for signatures the publisher did not make.

A keyless signature is only as safe as the publisher's chance of noticing a signature in its
name that it did not make: anyone who can run its workflow (a pushed branch, a compromised
action, a stolen token) can sign, and only the log shows it. And the signer picks the log:
a trusted root lists every log clients accept (production: Rekor v1 and the Rekor v2 log), so
:func:`monitor` watches **every active log of the trusted root**, each from its own stored
checkpoint on, and reports:

* an **alarm** for every entry one of whose certificates meets the identity policy (the
  pins a client holds: repository, workflow file, refs) but is not a document of the
  published chain — a revision envelope, an attestation part or a yank, matched by log,
  index *and* the exact entry body. A chain file counts only when it verifies as what its
  name says (its bundle carries exactly one log entry and verifies over the file's own
  content; the revision and server are the file's); anything else under the chain path is
  reported (a warning naming the file), never trusted;
* a **warning** for an entry from the same repository by another workflow or ref (a
  client's pins refuse it, but someone can sign there);
* an **alarm** when a log does not extend the stored checkpoint: a smaller tree (shrink),
  another root at the same size or a failed consistency proof (fork), another origin, or
  an entry whose proof does not lead to the verified tree. Never a silent reset.

Logs: Rekor v1 (``/api/v1/log``, ``/api/v1/log/proof``, ``/api/v1/log/entries?logIndex=``;
a sharded log's inactive shards are counted before the active tree, each bound to its own
signed tree head) and Rekor v2's tiled log (C2SP tlog-tiles: ``/checkpoint``,
``/tile/<L>/<N>``, ``/tile/entries/<N>``), told apart by the log key the trusted root holds
(Ed25519: v2). Every checkpoint's signature is checked with that key; every entry read is
bound to the verified tree (v1: its inclusion proof; v2: its leaf hash in the tiles, hashed
up to the checked root). A log that cannot be read is reported by name, never passed over.

**State** (the ``since`` file, version 2): per log the signed checkpoint (verified with the
log's key on every load) and a cursor, the first entry not yet read; the acknowledgements;
with a state key an HMAC over all of it. A run reads at most ``max_entries`` entries per
log from the cursor and writes the state again (atomically) only when it raised no alarm
and read every log; an interrupted or failed run leaves it as it was, so the next run
reads the same entries again: none is ever skipped. A first run in a log starts at the
chain's first entry there (or a given index; the log's first entry when the chain has
none there), never at the log's current size. A state that does not verify is refused; a
state the key did not authenticate is not resumed from (the run starts over).

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
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
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
    FetchError,
    InputError,
    LimitExceeded,
    OperationalError,
    UsageError,
    VerificationFailed,
)
from histor_sign.layout import MAX_PARTS, chain_dir, part_addresses
from histor_sign.models import GITHUB_ACTIONS_ISSUER, Finding, ToolRef, namespace_owner

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

    from histor_sign._sigstore_trust import LogKey, Trust
    from histor_sign.verification._certificate import CertificateFacts
    from histor_sign.verification.policy import Pins

#: Format version of the state file (1: one log, read and upgraded; 2: every watched log).
STATE_VERSION = 2
#: Revisions of the chain the monitor indexes.
MAX_CHAIN_REVISIONS = 1000

ALARM, WARNING, ACKNOWLEDGED = "alarm", "warning", "acknowledged"
#: Acknowledgements a state file holds (each is bound to one entry).
MAX_ACKNOWLEDGEMENTS = 1000
#: The rule of each kind of event (see :data:`histor_sign.report._findings.RULES`).
RULE_OF = {"unpublished-signature": "HM001", "other-workflow-signature": "HM002",
           "log-inconsistent": "HM003", "unverified-chain-file": "HM004"}


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
        if _note_signature_verifies(line, key, public, signed):
            return Checkpoint(lines[0], size, root, note)
    raise VerificationFailed(f"{source}: the checkpoint is not signed by the log's key "
                             "in the trusted root")


def _note_signature_verifies(line: str, key: LogKey, public: Any, signed: bytes) -> bool:
    """Step: one signature line of a note is the log key's (by key hash) and verifies."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    name, _, encoded = line.removeprefix("\u2014 ").rpartition(" ")
    if not line.startswith("\u2014 ") or not name:
        return False
    try:
        raw = base64.b64decode(encoded, validate=True)
    except binascii.Error:
        return False
    if raw[:4] != key.log_id[:4]:
        return False
    try:
        if isinstance(public, ec.EllipticCurvePublicKey):
            public.verify(raw[4:], signed, ec.ECDSA(hashes.SHA256()))
        elif isinstance(public, ed25519.Ed25519PublicKey):
            public.verify(raw[4:], signed)
        else:
            return False
    except InvalidSignature:
        return False
    return True


# ---------------------------------------------------------------------- the logs
class _Reader:
    """The bounded fetch of one log's read API."""

    def __init__(self, key: LogKey, base: str, timeout: float) -> None:
        self.key, self.base, self.timeout = key, base.rstrip("/"), timeout
        self.requests = 0
        #: Global index of the first entry of the tree the checkpoint signs (Rekor v1:
        #: the entries of its inactive shards come first; a tiled log has no shards).
        self.offset = 0

    def get(self, path: str) -> bytes:
        self.requests += 1
        # A log of the trusted root (the user may have named none): the URL says which.
        return fetch_bytes(f"{self.base}/{path}", param="transparency_log",
                           max_bytes=MAX_LOG_RESPONSE_BYTES, timeout=self.timeout)

    def json(self, path: str) -> Any:
        return parse_json(self.get(path), f"{self.base}/{path}")


@dataclass(frozen=True)
class _Shard:
    """A frozen (inactive) Rekor v1 shard: its global index range and signed tree head."""

    start: int
    head: Checkpoint

    @property
    def tree_id(self) -> str:
        return self.head.origin.rpartition(" - ")[2]


class _V1Log(_Reader):
    """Rekor v1: log info, consistency proofs, entries by (global) index.

    A sharded log (``inactiveShards`` in the log info) numbers its entries across shards:
    the inactive shards' entries come first, then the active tree's, whose signed
    checkpoint counts only its own. Entries of an inactive shard are bound to that
    shard's signed tree head (same log key)."""

    shards: tuple[_Shard, ...] = ()

    def checkpoint(self) -> Checkpoint:
        info = self.json("api/v1/log")
        if not isinstance(info, dict) or not isinstance(info.get("signedTreeHead"), str):
            raise InputError(f"{self.base}/api/v1/log: no signedTreeHead")
        head = parse_checkpoint(info["signedTreeHead"], self.key, f"{self.base}/api/v1/log")
        if info.get("treeSize") != head.size or info.get("rootHash") != head.root.hex():
            raise LogInconsistent("the log info's tree size and root differ from its signed "
                                  "checkpoint")
        shards: list[_Shard] = []
        start = 0
        for shard in info.get("inactiveShards") or []:
            note = shard.get("signedTreeHead") if isinstance(shard, dict) else None
            if not isinstance(note, str):
                raise InputError(f"{self.base}/api/v1/log: an inactive shard without a "
                                 "signedTreeHead")
            frozen = parse_checkpoint(note, self.key, f"{self.base}/api/v1/log (shard)")
            shards.append(_Shard(start, frozen))
            start += frozen.size
        self.shards, self.offset = tuple(shards), start
        return head

    def shard_of(self, origin: str) -> _Shard | None:
        """The inactive shard whose checkpoints carry ``origin`` (a rotated-away tree)."""
        return next((s for s in self.shards if s.head.origin == origin), None)

    def _proof(self, first: int, last: int, tree_id: str | None = None
               ) -> tuple[list[bytes], bytes | None]:
        query = f"firstSize={first}&lastSize={last}" + (f"&treeID={tree_id}" if tree_id else "")
        doc = self.json(f"api/v1/log/proof?{query}")
        try:
            hashes = [bytes.fromhex(h) for h in doc["hashes"] or []]
            root = bytes.fromhex(doc["rootHash"]) if doc.get("rootHash") else None
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(f"{self.base}: malformed consistency proof") from None
        return hashes, root

    def extends(self, size: int, root: bytes, new: Checkpoint, tree_id: str | None = None
                ) -> bool:
        if size == 0 or size == new.size:
            return size == 0 or root == new.root
        hashes, _ = self._proof(size, new.size, tree_id)
        return consistent(size, new.size, root, new.root, hashes)

    def _tree_of(self, index: int) -> tuple[int, Checkpoint | None]:
        """(first global index, frozen head) of the tree holding ``index``; the head is
        None for the active tree."""
        for shard in self.shards:
            if shard.start <= index < shard.start + shard.head.size:
                return shard.start, shard.head
        return self.offset, None

    def entries(self, start: int, end: int, new: Checkpoint) -> Iterator[tuple[int, bytes]]:
        later: dict[int, bytes] = {}
        for index in range(start, end):
            first, frozen = self._tree_of(index)
            body, size, root = self._proven_entry(index, first)
            if frozen is not None:  # an inactive shard: its signed head, exactly
                if (size, root) != (frozen.size, frozen.root):
                    raise LogInconsistent(f"entry {index} is proven in a tree that is not its "
                                          f"inactive shard's signed one ({frozen.origin})")
                yield index, body
                continue
            if size < new.size or (size == new.size and root != new.root):
                raise LogInconsistent(f"entry {index} is proven in a tree of size {size} "
                                      "that is not the verified one")
            if size > new.size:  # the log grew meanwhile: that tree must extend ours
                self._check_later_tree(index, size, root, new, later)
            yield index, body

    def _proven_entry(self, index: int, first: int) -> tuple[bytes, int, bytes]:
        """Step: entry ``index``'s body, and the tree size and root its inclusion proof
        leads to (checked: the entry asked for, at its index in its tree, which starts at
        global index ``first``)."""
        doc = self.json(f"api/v1/log/entries?logIndex={index}")
        try:
            (entry,) = doc.values()
            body = base64.b64decode(entry["body"], validate=True)
            proof = entry["verification"]["inclusionProof"]
            size, claimed = int(proof["treeSize"]), bytes.fromhex(proof["rootHash"])
            path = [bytes.fromhex(h) for h in proof["hashes"]]
            logged = int(entry["logIndex"])
            local = int(proof.get("logIndex", index - self.offset))
        except (KeyError, TypeError, ValueError, AttributeError, binascii.Error):
            raise InputError(f"{self.base}: malformed log entry {index}") from None
        if logged != index:
            raise LogInconsistent(f"asked for entry {index}, the log answered {logged}")
        if local != index - first:
            raise LogInconsistent(f"entry {index} is proven at index {local} of its tree, "
                                  f"not {index - first}")
        try:
            root = root_from_inclusion(leaf_hash(body), local, size, path)
        except ValueError as exc:
            raise LogInconsistent(f"entry {index}: {exc}") from None
        if root != claimed:
            raise LogInconsistent(f"entry {index}: its inclusion proof does not lead to "
                                  "the root it names")
        return body, size, root

    def _check_later_tree(self, index: int, size: int, root: bytes, new: Checkpoint,
                          later: dict[int, bytes]) -> None:
        """Step: a tree larger than the verified one (the log grew) must extend it; each
        such size is checked once, and has one root."""
        if later.get(size, root) != root:
            raise LogInconsistent(f"two roots for tree size {size}")
        if size not in later:
            hashes, _ = self._proof(new.size, size)
            if not consistent(new.size, size, new.root, root, hashes):
                raise LogInconsistent(f"the tree of size {size} entry {index} is "
                                      "proven in does not extend the verified one")
            later[size] = root


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

    def shard_of(self, origin: str) -> None:
        return None

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

    def extends(self, size: int, root: bytes, new: Checkpoint, tree_id: str | None = None
                ) -> bool:
        """Whether the tree of ``size`` and ``root`` is a prefix of the checked one: both
        roots are computed from the tiles, and every tile read for them is then bound to
        the new root (a full tile by hashing it up, a partial one through the root), so a
        tile forged to reproduce the old root is a fork here — whatever entries the run
        goes on to read."""
        if self.root(new.size) != new.root:
            raise LogInconsistent("the tiles do not hash to the checkpoint's root")
        same = size == 0 or self.root(size) == root
        for level, index in sorted(self._tiles):
            self._bind(level, index)
        return same
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
def _certificate(encoded: Any) -> Certificate | None:
    """A certificate given base64 (PEM or DER) in an entry; None for a bare public key."""
    from cryptography import x509

    if not isinstance(encoded, str):
        return None
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        if raw.lstrip().startswith(b"-----BEGIN CERTIFICATE"):
            return x509.load_pem_x509_certificate(raw)
        if raw[:1] == b"\x30":
            return x509.load_der_x509_certificate(raw)
    except ValueError:
        return None
    return None


def _entry_certificates(doc: Any) -> list[Certificate]:
    """Every signing certificate an entry body names: each signature of a multi-signature
    DSSE or in-toto envelope, not only the first."""
    spec = doc.get("spec") if isinstance(doc, dict) else None
    if not isinstance(spec, dict):
        return []
    kind = doc.get("kind")
    found: list[Any]
    if "hashedRekordV002" in spec:
        found = [spec["hashedRekordV002"]["signature"]["verifier"]["x509Certificate"]
                 ["rawBytes"]]
    elif "dsseV002" in spec:
        found = [s["verifier"]["x509Certificate"]["rawBytes"]
                 for s in spec["dsseV002"]["signatures"]]
    else:
        found = _v1_keys(kind, spec)
    certificates = [_certificate(item) for item in found]
    return [c for c in certificates if c is not None]


def _v1_keys(kind: Any, spec: dict[str, Any]) -> list[Any]:
    """Step: the keys or certificates a Rekor v1 entry body of ``kind`` names."""
    found: list[Any] = []
    if kind in ("hashedrekord", "rekord"):
        found.append(spec["signature"]["publicKey"]["content"])
    elif kind == "dsse":
        found += [s["verifier"] for s in spec["signatures"]]
    elif kind == "intoto":
        content = spec.get("content", {})
        envelope = content.get("envelope") if isinstance(content, dict) else None
        if isinstance(envelope, dict):  # 0.0.2: each signature with its own key
            found += [s.get("publicKey") for s in envelope.get("signatures", [])]
        found.append(spec.get("publicKey"))  # 0.0.1: one key beside the envelope
    elif kind == "cose":
        found.append(spec.get("publicKey"))
    return found


def entry_signers(body: bytes) -> list[CertificateFacts]:
    """The facts of every signing certificate in an entry body (Rekor v1 ``hashedrekord``,
    ``rekord``, ``dsse``, ``intoto`` 0.0.1/0.0.2 and ``cose``; Rekor v2 ``hashedrekord``
    and ``dsse`` 0.0.2), one per signature; empty for an entry signed by a bare key or of
    another kind."""
    from histor_sign.verification._certificate import certificate_facts

    try:
        doc = json.loads(body)
        certificates = _entry_certificates(doc)
    except Exception:  # anything else in the log: no certificate-signed entry
        return []
    out: list[CertificateFacts] = []
    for cert in certificates:
        try:
            out.append(certificate_facts(cert))
        except Exception:  # a certificate without the facts: nothing to match
            continue
    return out


def _chain_location(revisions: str, server: str) -> ReleaseLocation:
    """A URL names the server's chain (like a pin's location); a directory is either the
    ``revisions`` root a release publishes into or the server's chain directory itself."""
    if is_url(revisions):
        return ReleaseLocation.parse(revisions, param="revisions")
    nested = chain_dir(revisions, server)
    return ReleaseLocation(str(nested if os.path.isdir(nested) else Path(revisions)))


def _own_entry(bundle: Any) -> tuple[tuple[bytes, int], bytes]:
    """``((log id, log index), entry body)`` of the one log entry a bundle carries; a
    bundle with none or several is refused (a bundle is one signature, logged once)."""
    material = bundle.get("verificationMaterial") if isinstance(bundle, dict) else None
    entries = material.get("tlogEntries") if isinstance(material, dict) else None
    if not isinstance(entries, list) or len(entries) != 1:
        count = len(entries) if isinstance(entries, list) else 0
        raise VerificationFailed(f"the bundle carries {count} log entries, not one")
    try:
        entry = entries[0]
        log_id = base64.b64decode(entry["logId"]["keyId"], validate=True)
        return (log_id, int(entry["logIndex"])), base64.b64decode(entry["canonicalizedBody"],
                                                                   validate=True)
    except (KeyError, TypeError, ValueError, binascii.Error):
        raise VerificationFailed("the bundle's log entry is malformed") from None


@dataclass(frozen=True)
class _Chain:
    """The log entries of the published chain that verified as what their files name,
    ``(log id, index) → entry body``; the files that did not (address, why), never
    counted; and the latest envelope's bundle and signer (what the identity policy must
    match)."""

    bodies: dict[tuple[bytes, int], bytes]
    latest_bundle: Any = None
    latest_identity: str | None = None
    refused: tuple[tuple[str, str], ...] = ()

    def first_index(self, log_id: bytes) -> int | None:
        return min((i for (log, i) in self.bodies if log == log_id), default=None)


#: What a chain file must verify as, by its name: an envelope of revision n, a yank of
#: revision n, part k of revision n's attestation, the in-toto form of revision n's yank.
ENVELOPE, YANK, ATTESTATION, YANK_ATTESTATION = "envelope", "yank", "attestation", "yank-intoto"


def _statement_checks(server: str, revision: int, doc_server: Any, doc_revision: Any,
                      what: str) -> None:
    if doc_server != server or doc_revision != revision:
        raise VerificationFailed(f"it is {what} of {printable(str(doc_server))!r} revision "
                                 f"{printable(str(doc_revision))}, not of revision {revision}")


def _predicate(payload: bytes, predicate_type: str) -> dict[str, Any]:
    doc = json.loads(payload)
    if not isinstance(doc, dict) or doc.get("predicateType") != predicate_type:
        raise VerificationFailed(f"its predicate type is not {predicate_type}")
    predicate = doc.get("predicate")
    if not isinstance(predicate, dict):
        raise VerificationFailed("its predicate is not an object")
    return predicate


def _verified_entry(kind: str, revision: int, part: int, document: JsonValue, server: str,
                    trust: Trust) -> tuple[tuple[bytes, int], bytes]:
    """The log entry of a chain file, after it verified as what its name says (raises
    :class:`VerificationFailed` or :class:`InputError` otherwise)."""
    from histor_sign.attestation import ATTESTATION_PREDICATE_TYPE, verify_attestation_bundle
    from histor_sign.models import SignedEnvelope, SignedYank
    from histor_sign.verification import verify_artifact_bundle
    from histor_sign.yank import YANK_PREDICATE_TYPE

    root = trust.trusted_root()
    if kind in (ENVELOPE, YANK):
        signed: SignedEnvelope | SignedYank = (
            SignedEnvelope.from_json(document) if kind == ENVELOPE
            else SignedYank.from_json(document))
        _statement_checks(server, revision, signed.server, signed.revision,
                          "an envelope" if kind == ENVELOPE else "a yank")
        entry = _own_entry(signed.bundle)
        verify_artifact_bundle(signed.signed_bytes(), signed.bundle, trusted_root=root)
        return entry
    if not isinstance(document, dict):
        raise InputError("not a Sigstore bundle")
    entry = _own_entry(document)
    payload, _ = verify_attestation_bundle(document, trusted_root=root)
    if kind == ATTESTATION:
        predicate = _predicate(payload, ATTESTATION_PREDICATE_TYPE)
        stated = predicate.get("revision")
        stated = stated if isinstance(stated, dict) else {}
        _statement_checks(server, revision, stated.get("server"), stated.get("revision"),
                          "an attestation")
        at = predicate.get("part")
        if not isinstance(at, dict) or at.get("index") != part:
            raise VerificationFailed(f"it is not part {part} of the attestation")
    else:
        yank = _predicate(payload, YANK_PREDICATE_TYPE).get("yank")
        yank = yank if isinstance(yank, dict) else {}
        _statement_checks(server, revision, yank.get("server"), yank.get("revision"),
                          "the yank attestation")
    return entry


def read_chain(location: ReleaseLocation, timeout: float, server: str, trust: Trust,
               verified: dict[str, tuple[tuple[bytes, int], bytes]] | None = None) -> _Chain:
    """Every log entry the chain at ``location`` publishes — each revision's envelope, its
    attestation parts, its yank and the yank's in-toto form — each counted only when the
    file verifies (Sigstore bundle with exactly one log entry, signature over what the file
    holds) as what its name says: the envelope of that revision, part k of that revision's
    attestation, that revision's yank. Anything else is refused by address, never counted.
    ``verified`` caches verdicts across the reads of one run (by the file's digest)."""
    cache = verified if verified is not None else {}
    bodies: dict[tuple[bytes, int], bytes] = {}
    refused: list[tuple[str, str]] = []

    def fetch(address: str) -> JsonValue | None:
        return _published_json(location, address, timeout)

    def add(address: str, document: JsonValue, kind: str, n: int, part: int = 1) -> bool:
        return _count_entry(address, document, (kind, n, part), server, trust, cache,
                            bodies, refused)

    latest = fetch(location.latest())
    if not isinstance(latest, dict):
        return _Chain({})
    revision = _chain_length(latest, location)
    latest_ok = add(location.latest(), latest, ENVELOPE, revision)
    for n in range(1, revision + 1):
        _read_revision(location, n, fetch, add)
    signer = latest.get("signer") if latest_ok else None
    return _Chain(bodies, signer.get("signature") if isinstance(signer, dict) else None,
                  signer.get("identity") if isinstance(signer, dict) else None,
                  tuple(refused))


def _read_revision(location: ReleaseLocation, n: int,
                   fetch: Callable[[str], JsonValue | None],
                   add: Callable[..., bool]) -> None:
    """Step: count revision ``n``'s envelope, yank, yank attestation and attestation parts
    (the parts up to the first one not published)."""
    for address, kind in ((location.envelope(n), ENVELOPE), (location.yank(n), YANK),
                          (location.yank_attestation(n), YANK_ATTESTATION)):
        document = fetch(address)
        if document is not None:
            add(address, document, kind, n)
    for number, address in enumerate(part_addresses(location.attestation(n), MAX_PARTS),
                                      start=1):
        document = fetch(address)
        if document is None:
            break
        add(address, document, ATTESTATION, n, number)


def _published_json(location: ReleaseLocation, address: str,
                    timeout: float) -> JsonValue | None:
    """Step: a chain file's JSON, or None when it is not published."""
    try:
        return location.fetch_json(address, timeout=timeout)
    except NotPublished:
        return None


def _chain_length(latest: dict[str, Any], location: ReleaseLocation) -> int:
    """Step: the latest revision's number: how many revisions the chain has (bounded)."""
    revision = latest.get("revision")
    if not isinstance(revision, int) or isinstance(revision, bool) or revision < 1:
        raise InputError(f"{location.latest()}: no revision number")
    if revision > MAX_CHAIN_REVISIONS:
        raise LimitExceeded(f"{location.latest()}: more than {MAX_CHAIN_REVISIONS} revisions",
                            limit="max_chain", value=MAX_CHAIN_REVISIONS)
    return revision


def _count_entry(address: str, document: JsonValue, what: tuple[str, int, int], server: str,
                 trust: Trust, cache: dict[str, tuple[tuple[bytes, int], bytes]],
                 bodies: dict[tuple[bytes, int], bytes], refused: list[tuple[str, str]],
                 ) -> bool:
    """Step: count one chain file's log entry when it verifies as ``what`` (kind, revision,
    part), else record it as refused; verdicts are cached by the file's digest."""
    import hashlib

    kind, n, part = what
    digest = hashlib.sha256(f"{kind}\n{n}\n{part}\n".encode() + json.dumps(
        document, sort_keys=True).encode()).hexdigest()
    try:
        if digest not in cache:
            cache[digest] = _verified_entry(kind, n, part, document, server, trust)
    except (VerificationFailed, InputError, ValueError, TypeError, KeyError,
            AttributeError) as exc:  # whatever a hostile file provokes: not counted
        refused.append((address, printable(getattr(exc, "message", str(exc)), 300)))
        return False
    key, body = cache[digest]
    bodies[key] = body
    return True


# ---------------------------------------------------------------------- state
@dataclass(frozen=True)
class LogState:
    """What the state holds for one log: its signed checkpoint (verified with the log's
    key when loaded: size, root and origin are read from it, never stored beside it) and
    the cursor, the first (global) entry index not yet read."""

    log_id: str
    checkpoint: Checkpoint
    next_index: int

    def to_json(self) -> dict[str, Any]:
        return {"logId": self.log_id, "checkpoint": self.checkpoint.note,
                "nextIndex": self.next_index}


def _mac(key: bytes, document: dict[str, Any]) -> str:
    import hashlib
    import hmac

    from histor_sign.canonical import canonical_bytes

    body = {k: v for k, v in document.items() if k != "mac"}
    return "hmac-sha256:" + hmac.new(key, canonical_bytes(body), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class MonitorState:
    """The state file (``version`` 2): per watched log its signed checkpoint and cursor,
    the acknowledgements, and — when the run has a state key — an HMAC binding it all to
    the runs that held the key."""

    server: str
    logs: dict[str, LogState]
    acknowledged: tuple[Acknowledgement, ...] = ()

    def to_bytes(self, key: bytes | None = None) -> bytes:
        doc: dict[str, Any] = {
            "version": STATE_VERSION, "server": self.server,
            "logs": [self.logs[k].to_json() for k in sorted(self.logs)],
            "acknowledged": [a.to_json() for a in self.acknowledged],
        }
        if key is not None:
            doc["mac"] = _mac(key, doc)
        return (json.dumps(doc, indent=2) + "\n").encode()

    @classmethod
    def load(cls, path: Path, server: str, keys: dict[str, LogKey],
             key: bytes | None = None) -> tuple[MonitorState | None, str | None]:
        """The state in ``path`` (None when there is no such file) and, when it cannot be
        trusted to resume from, why: then the run starts over (the returned state is None).

        Every stored checkpoint must verify with its log's key in the trusted root, else
        :class:`InputError`: a state of another log, or a checkpoint no log signed, is not
        ours to start over from silently. With ``key``, the state's ``mac`` must match:
        a state written (or moved forward) by anyone without the key makes the run start
        over from the chain's first entry in each log — it can never make it skip.
        A version 1 state (one log) is read as the state of that log."""
        if not output_exists(path):  # a name that cannot be looked up: an error
            return None, None
        source = f"checkpoint file {path}"
        doc = parse_json(read_bytes(str(path), max_bytes=MAX_MONITOR_STATE_BYTES), source)
        doc = _state_document(doc, source, server)
        logs = {}
        for item in doc["logs"]:
            state = _load_log_state(item, source, keys)
            if state.log_id in logs:
                raise InputError(f"{source}: log {state.log_id} is listed twice")
            logs[state.log_id] = state
        acknowledged = Acknowledgement.load_all(doc["acknowledged"], source)
        if key is not None:
            untrusted = _unauthenticated(doc, key)
            if untrusted is not None:
                return None, untrusted
        return cls(server, logs, acknowledged), None


def _state_document(doc: Any, source: str, server: str) -> dict[str, Any]:
    """Step: a state file's document as version 2 (version 1 upgraded), of ``server``."""
    if isinstance(doc, dict) and doc.get("version") == 1:
        doc = _upgrade_v1(doc, source, server)
    keys_v2 = {"version", "server", "logs", "acknowledged"}
    if (not isinstance(doc, dict) or not keys_v2 <= set(doc) <= keys_v2 | {"mac"}
            or doc["version"] != STATE_VERSION or not isinstance(doc["logs"], list)):
        raise InputError(f"{source}: not a histor-sign monitor state (version "
                         f"{STATE_VERSION}: {', '.join(sorted(keys_v2))})")
    if doc["server"] != server:
        raise InputError(f"{source}: is the state of {printable(str(doc['server']))}, "
                         f"not {printable(server)}")
    return doc


def _unauthenticated(doc: dict[str, Any], key: bytes) -> str | None:
    """Step: why a state's ``mac`` is not the state key's (None when it is)."""
    import hmac

    mac = doc.get("mac")
    if not isinstance(mac, str) or not hmac.compare_digest(mac, _mac(key, doc)):
        return ("the state file is not authenticated by the state key ("
                + ("no mac" if mac is None else "its mac does not match")
                + "): it was not written by a run holding the key, so no "
                "cursor or acknowledgement in it is trusted; starting over")
    return None


def _upgrade_v1(doc: dict[str, Any], source: str, server: str) -> dict[str, Any]:
    """A version 1 state (one log: checkpoint, cursor, acknowledgements) as version 2."""
    keys = {"version", "logId", "origin", "treeSize", "rootHash", "checkpoint", "nextIndex"}
    if not keys <= set(doc) <= keys | {"acknowledged"}:
        raise InputError(f"{source}: not a histor-sign monitor state (version 1: "
                         f"{', '.join(sorted(keys))})")
    acknowledged = doc.get("acknowledged", [])
    if isinstance(acknowledged, list):
        acknowledged = [{**a, "logId": doc["logId"]} if isinstance(a, dict) else a
                        for a in acknowledged]
    return {"version": STATE_VERSION, "server": server, "acknowledged": acknowledged,
            "logs": [{"logId": doc["logId"], "checkpoint": doc["checkpoint"],
                      "nextIndex": doc["nextIndex"]}]}


def _load_log_state(item: Any, source: str, keys: dict[str, LogKey]) -> LogState:
    """One log's stored state, its checkpoint verified with that log's key."""
    if (not isinstance(item, dict) or set(item) != {"logId", "checkpoint", "nextIndex"}
            or not all(isinstance(item[k], str) for k in ("logId", "checkpoint"))):
        raise InputError(f"{source}: each of logs[] needs logId, checkpoint and nextIndex")
    key = keys.get(item["logId"])
    if key is None:
        raise InputError(f"{source}: is for log {printable(item['logId'], 80)}, which the "
                         "trusted root does not list")
    nxt = item["nextIndex"]
    if not isinstance(nxt, int) or isinstance(nxt, bool) or nxt < 0:
        raise InputError(f"{source}: nextIndex must be a non-negative integer")
    try:
        checkpoint = parse_checkpoint(item["checkpoint"], key, source)
    except VerificationFailed:
        raise InputError(f"{source}: the stored checkpoint of {key.base_url} is not signed "
                         "by that log's key in the trusted root") from None
    return LogState(item["logId"], checkpoint, nxt)


@dataclass(frozen=True)
class Acknowledgement:
    """The publisher's word that an alarming entry was investigated: bound to the entry's
    log index and the SHA-256 of its body (so it covers that entry and no other), with the
    signer the entry named, the reason and when (UTC) it was given, in the log ``log_id``
    (hex)."""

    log_index: int
    entry_sha256: str
    identity: str
    reason: str
    at: str
    log_id: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"logId": self.log_id, "logIndex": self.log_index,
                "entrySha256": self.entry_sha256, "identity": self.identity,
                "reason": self.reason, "at": self.at}

    @classmethod
    def load_all(cls, value: Any, source: str) -> tuple[Acknowledgement, ...]:
        from histor_sign.models import validate_yank_reason

        shape = {"logId", "logIndex", "entrySha256", "identity", "reason", "at"}
        if not isinstance(value, list) or len(value) > MAX_ACKNOWLEDGEMENTS:
            raise InputError(f"{source}: acknowledged must be a list of at most "
                             f"{MAX_ACKNOWLEDGEMENTS} entries")
        out: list[Acknowledgement] = []
        for n, item in enumerate(value):
            where = f"{source}: acknowledged[{n}]"
            if not _acknowledgement_shaped(item, shape):
                raise InputError(f"{where}: needs {', '.join(sorted(shape))} (logIndex an "
                                 "integer, entrySha256 64 hex digits)")
            reason = validate_yank_reason(item["reason"], f"{where}.reason", "acknowledgement")
            out.append(cls(item["logIndex"], item["entrySha256"], printable(item["identity"],
                                                                          1000),
                           reason, printable(item["at"], 40), item["logId"]))
        if len({(a.log_id, a.log_index) for a in out}) != len(out):
            raise InputError(f"{source}: an entry is acknowledged twice")
        return tuple(out)


def _acknowledgement_shaped(item: Any, shape: set[str]) -> bool:
    """Step: an acknowledgement has exactly ``shape``, a non-negative integer index,
    string members and a 64-hex-digit entry digest."""
    return not (not isinstance(item, dict) or set(item) != shape
                or not isinstance(item["logIndex"], int)
                or isinstance(item["logIndex"], bool) or item["logIndex"] < 0
                or not all(isinstance(item[k], str)
                           for k in ("logId", "entrySha256", "identity", "at"))
                or len(item["entrySha256"]) != 64
                or item["entrySha256"].strip("0123456789abcdef"))


def _log_run_line(log: LogRun) -> str:
    """Step: one log's line of the text report: what was read of it, or why not."""
    if log.error is not None:
        return f"  log {printable(log.log)}: NOT READ: {printable(log.error)}"
    read = log.next_index - log.first_index
    return (f"  log {printable(log.log)}: {read} entries read "
            f"({log.first_index}..{log.next_index}) of a tree of {log.size}"
            + ("" if log.complete else
               f", {log.size - log.next_index} left for the next run"))


def _event_line(e: MonitorEvent) -> str:
    """Step: one event's line of the text report (its entry and log when it has one)."""
    return (f"  {e.level:<8} {RULE_OF[e.kind]} "
            + (f"entry {e.log_index} in {printable(e.log or '?')}: "
               if e.log_index is not None else "")
            + printable(e.message, 500))


def _acknowledged_lines(acknowledged: Sequence[Acknowledgement]) -> list[str]:
    """Step: the acknowledged entries of the state, counted, one line each."""
    lines = [f"  {len(acknowledged)} acknowledged entr"
             f"{'y' if len(acknowledged) == 1 else 'ies'} in the state:"]
    lines += [f"    entry {a.log_index} ({printable(a.identity, 200)}), {a.at}: "
              f"{printable(a.reason)}" for a in acknowledged]
    return lines


# ---------------------------------------------------------------------- the run
@dataclass(frozen=True)
class MonitorEvent:
    """One thing a run found: ``level`` alarm, warning or acknowledged, ``kind`` (a key of
    :data:`RULE_OF`), the log (its base URL) and index and the signer when it is about an
    entry."""

    level: str
    kind: str
    message: str
    log_index: int | None = None
    identity: str | None = None
    log: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"level": self.level, "kind": self.kind, "rule": RULE_OF[self.kind],
                "log": self.log, "logIndex": self.log_index, "identity": self.identity,
                "message": self.message}


@dataclass(frozen=True)
class LogRun:
    """What a run did in one log: the stored and the verified tree size, the entries read
    (``first_index`` to ``next_index``, global indexes; ``size`` counts a sharded log's
    inactive shards too), the publisher's published entries among them, and ``error``
    when the log could not be read (nothing of it is then stored)."""

    log: str
    log_id: str
    previous_size: int | None
    size: int
    first_index: int
    next_index: int
    publisher_entries: int = 0
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.error is None and self.next_index >= self.size

    def to_json(self) -> dict[str, Any]:
        return {"log": self.log, "logId": self.log_id, "previousTreeSize": self.previous_size,
                "treeSize": self.size,
                "entriesRead": {"from": self.first_index, "to": self.next_index},
                "complete": self.complete, "publisherEntries": self.publisher_entries,
                "error": self.error}


@dataclass(frozen=True)
class MonitorResult:
    """What one run established. ``logs``: each watched log (every active log of the
    trusted root, or the one ``rekor_url`` names). ``stored`` says whether the state file
    was written (only after a run without alarms in which every log was read);
    ``complete`` whether every entry up to each checkpoint was read; ``notices`` what the
    run wants the user to know about its state (a state it did not trust and started over
    from)."""

    server: str
    state_path: Path
    logs: tuple[LogRun, ...]
    events: tuple[MonitorEvent, ...] = field(default=())
    stored: bool = False
    #: Every acknowledgement the state holds after this run (stored or, with ``stored``
    #: False, as it would have been stored): listed on each run, never hidden.
    acknowledged: tuple[Acknowledgement, ...] = field(default=())
    notices: tuple[str, ...] = field(default=())

    @property
    def alarm(self) -> bool:
        return any(e.level == ALARM for e in self.events)

    @property
    def complete(self) -> bool:
        return all(log.complete for log in self.logs)

    @property
    def publisher_entries(self) -> int:
        return sum(log.publisher_entries for log in self.logs)

    @property
    def unreadable(self) -> tuple[LogRun, ...]:
        """The logs that could not be read (named in the report, never passed over)."""
        return tuple(log for log in self.logs if log.error is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server, "alarm": self.alarm, "complete": self.complete,
            "publisherEntries": self.publisher_entries, "checkpointStored": self.stored,
            "state": str(self.state_path), "logs": [log.to_json() for log in self.logs],
            "events": [e.to_json() for e in self.events],
            "acknowledged": [a.to_json() for a in self.acknowledged],
            "notices": list(self.notices),
        }

    def to_text(self) -> str:
        head = "ALARM" if self.alarm else "ok"
        lines = [f"{head}: {printable(self.server)}: {len(self.logs)} transparency "
                 f"log{'s' if len(self.logs) != 1 else ''} watched"]
        lines += [_log_run_line(log) for log in self.logs]
        lines += [
            f"  publisher entries in the chain  {self.publisher_entries}",
            "  checkpoint                      "
            + (f"stored in {self.state_path}" if self.stored else "NOT stored"
               + (" (alarm)" if self.alarm else " (a log was not read)")),
        ]
        lines += [f"  notice   {printable(n, 500)}" for n in self.notices]
        lines += [_event_line(e) for e in self.events]
        if self.acknowledged:
            lines += _acknowledged_lines(self.acknowledged)
        return "\n".join(lines)

    def findings(self) -> list[Finding]:
        """The events as findings (SARIF/JSON reports): each located at the state file,
        named by its log entry."""
        from histor_sign.models import Severity
        from histor_sign.report._findings import new_finding

        return [new_finding(RULE_OF[e.kind], e.message, [ToolRef(
            f"log entry {e.log_index} in {e.log}" if e.log_index is not None else "log",
            str(self.state_path), e.log_index if e.log_index is not None else -1)],
            # An acknowledged alarm stays in the report, as a note.
            severity=Severity.note if e.level == ACKNOWLEDGED else None,
            properties={"log": e.log, "logIndex": e.log_index, "identity": e.identity,
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


def watched_logs(trust: Trust, rekor_url: str | None) -> list[LogKey]:
    """The logs a run watches: every active transparency log of the trusted root (a log
    whose key validity ended takes no entries), or the one ``rekor_url`` names."""
    logs = trust.transparency_logs()
    if rekor_url is None:
        return [log for log in logs if log.active]
    wanted = rekor_url.rstrip("/")
    for log in logs:
        if log.base_url == wanted:
            return [log]
    raise UsageError(f"`rekor_url` {printable(rekor_url)} is not a transparency log of "
                     "the trusted root", param="rekor_url")


@dataclass
class _Run:
    """The shared parts of one run: the chain (read once, re-read once when an entry
    looks unpublished), the policy and the acknowledgements."""

    location: ReleaseLocation
    timeout: float
    server: str
    trust: Trust
    chain: _Chain
    pins: Pins
    repository_pins: Pins
    acks: _Acknowledging
    verified: dict[str, tuple[tuple[bytes, int], bytes]]
    #: The state file's bytes when the run started (None: there was none).
    read: bytes | None = None
    reread: _Chain | None = None

    def fresh_chain(self) -> _Chain:
        if self.reread is None:
            self.reread = read_chain(self.location, self.timeout, self.server, self.trust,
                                     self.verified)
        return self.reread


def _watch(run: _Run, key: LogKey, stored: LogState | None, start: int | None,
           max_entries: int, events: list[MonitorEvent]) -> tuple[LogRun, LogState | None]:
    """One log: verify its checkpoint extends the stored one, then judge the entries from
    the cursor (or, on a first run, from ``start`` or the chain's first entry in this log,
    else the log's first entry). Returns the log's run and its new state (None: keep the
    stored one — an alarm, or nothing new to store)."""
    log: _V1Log | _TiledLog = (_TiledLog if key.tiled else _V1Log)(key, key.base_url,
                                                                  run.timeout)
    name, log_id = log.base, key.log_id.hex()
    try:
        new = log.checkpoint()
    except LogInconsistent as exc:
        raise VerificationFailed(f"{log.base}: {exc}") from None
    size = log.offset + new.size
    previous = _previous_size(stored, log)
    cursor = stored.next_index if stored is not None else None
    problem = _stored_problem(stored, new, log, size)
    if problem is not None:
        events.append(MonitorEvent(ALARM, "log-inconsistent", problem, log=name))
        return LogRun(name, log_id, previous, size, cursor or 0, cursor or 0), None
    if cursor is None:
        cursor = _first_cursor(run, key, start, size)
    end = min(size, cursor + max_entries)
    before = len(events)
    try:
        matched = _judge(log.entries(cursor, end, new), run, key.log_id, name, events)
    except LogInconsistent as exc:
        del events[before:]
        events.append(MonitorEvent(ALARM, "log-inconsistent", str(exc), log=name))
        return LogRun(name, log_id, previous, size, cursor, cursor), None
    return (LogRun(name, log_id, previous, size, cursor, end, matched),
            LogState(log_id, new, end))


def _stored_problem(stored: LogState | None, new: Checkpoint, log: _V1Log | _TiledLog,
                    size: int) -> str | None:
    """Step: why the stored state cannot be resumed from in this log (its checkpoint is
    not extended, or its cursor is past the log's end), or None."""
    problem = _inconsistency(stored, new, log)
    cursor = stored.next_index if stored is not None else None
    if problem is None and cursor is not None and cursor > size:
        problem = (f"the stored cursor {cursor} is past the log's {size} entries: the state "
                   "was not written by a run over this log")
    return problem


def _previous_size(stored: LogState | None, log: _V1Log | _TiledLog) -> int | None:
    """Step: the stored checkpoint's size in global indexes (its tree's first entry on)."""
    if stored is None:
        return None
    shard = log.shard_of(stored.checkpoint.origin)
    return stored.checkpoint.size + (shard.start if shard is not None else log.offset)


def _first_cursor(run: _Run, key: LogKey, start: int | None, size: int) -> int:
    """Step: where a first run starts: ``start``, else the chain's first entry in this log,
    else the log's first entry (never past its end)."""
    chain_start = run.chain.first_index(key.log_id)
    cursor = start if start is not None else (chain_start if chain_start is not None
                                              else 0)
    return min(cursor, size)


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
    start_index: Mapping[str, int] | None = None,
    state_key: bytes | None = None,
) -> MonitorResult:
    """One monitoring run for ``server`` (see the module doc): in every active log of the
    trusted root (or the one ``rekor_url`` names) verify that the log extends the
    checkpoint stored in ``since``, read up to ``max_entries`` new entries, judge each
    under the identity policy (``repository``, ``workflow``, ``ref_pattern``) against the
    chain published at ``revisions``, and store the new state only when nothing alarmed
    and every log was read.

    ``start_index``: where a first run starts in a log (by its base URL) instead of the
    chain's first entry there (or the log's first entry when the chain has none there).
    ``state_key``: authenticates the state file (HMAC): a state not written with it makes
    the run start over, never skip (see :meth:`MonitorState.load`).

    Raises :class:`UsageError` for a policy that could never match (including one the
    publisher's own latest revision does not meet), :class:`InputError` for a malformed
    state file or a state of another log or server, and the log's error (naming it) when
    a log cannot be read and no other log alarmed (the state is then left as it was).

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
    keys = watched_logs(trust, rekor_url)
    starts = _check_start_index(start_index or {}, keys)
    state_path = Path(since)
    every = {k.log_id.hex(): k for k in trust.transparency_logs()}
    read = _state_bytes(state_path)  # what a store must still find (the lock discipline)
    state, distrust = MonitorState.load(state_path, server, every, state_key)
    location = _chain_location(revisions, server)
    verified: dict[str, tuple[tuple[bytes, int], bytes]] = {}
    chain = read_chain(location, timeout, server, trust, verified)
    _check_policy_meets_latest(chain, pins)
    held = state.acknowledged if state is not None else ()
    run = _Run(location, timeout, server, trust, chain, pins, repository_pins,
               _Acknowledging({(a.log_id, a.log_index): a for a in held}, requested, reason),
               verified, read)
    events: list[MonitorEvent] = [
        MonitorEvent(WARNING, "unverified-chain-file",
                     f"{printable(address)}: not counted as published: {why}")
        for address, why in chain.refused]
    new_states = dict(state.logs) if state is not None else {}
    logs, errors = _watch_all(run, keys, new_states, starts, max_entries, events)
    notices: tuple[str, ...] = (distrust,) if distrust else ()
    if state_key is None:
        notices += ("the state file is not authenticated (no state key): whoever can write "
                    "it could move a cursor forward unseen",)
    return _finish(run, state_path, state_key, held, requested, logs, events, new_states,
                   errors, notices)


def _watch_all(run: _Run, keys: Sequence[LogKey], new_states: dict[str, LogState],
               starts: Mapping[str, int], max_entries: int, events: list[MonitorEvent],
               ) -> tuple[list[LogRun], list[Exception]]:
    """Step: watch every log in turn (its new state joins ``new_states``); a log that
    cannot be read is recorded as such and the others are still watched."""
    logs: list[LogRun] = []
    errors: list[Exception] = []
    for key in keys:
        stored = new_states.get(key.log_id.hex())
        try:
            done, new_state = _watch(run, key, stored, starts.get(key.base_url), max_entries,
                                     events)
        except (FetchError, InputError, LimitExceeded, VerificationFailed) as exc:
            errors.append(exc)
            logs.append(LogRun(key.base_url, key.log_id.hex(), None, 0, 0, 0,
                               error=getattr(exc, "message", str(exc))))
            continue
        logs.append(done)
        if new_state is not None:
            new_states[new_state.log_id] = new_state
    return logs, errors


def _finish(run: _Run, state_path: Path, state_key: bytes | None,
            held: tuple[Acknowledgement, ...], requested: set[int], logs: list[LogRun],
            events: list[MonitorEvent], new_states: dict[str, LogState],
            errors: list[Exception], notices: tuple[str, ...]) -> MonitorResult:
    """Store the state when nothing alarmed and every log was read; else say why not (a
    log that could not be read raises its error unless another log alarmed)."""
    acks = run.acks
    if errors and not any(e.level == ALARM for e in events):
        raise errors[0]
    if not any(e.kind == "log-inconsistent" for e in events):  # else entries went unread
        _check_acknowledged(requested, acks, len(held), logs)
    acknowledged = (*held, *acks.given)
    if any(e.level == ALARM for e in events) or errors:
        events = _unrecorded(events, acks.given, logs)
        return MonitorResult(run.server, state_path, tuple(logs), tuple(events),
                             acknowledged=held, notices=notices)
    _store_state(state_path, run.read, MonitorState(run.server, new_states, acknowledged)
                 .to_bytes(state_key))
    return MonitorResult(run.server, state_path, tuple(logs), tuple(events), True,
                         acknowledged, notices)


def _unrecorded(events: list[MonitorEvent], given: list[Acknowledgement],
                logs: list[LogRun]) -> list[MonitorEvent]:
    """Step: a run with another alarm records no acknowledgement: each one given in this
    run is an alarm again, saying so."""
    keys = {(a.log_id, a.log_index) for a in given}
    return [replace(e, level=ALARM, message=e.message + "; NOT recorded: this run has "
                    "another alarm (acknowledge or resolve it too)")
            if e.level == ACKNOWLEDGED and (_log_id_of(logs, e.log), e.log_index) in keys
            else e for e in events]


def _log_id_of(logs: list[LogRun], base: str | None) -> str:
    return next((log.log_id for log in logs if log.log == base), "")


def _check_start_index(start_index: Mapping[str, int], keys: list[LogKey]) -> dict[str, int]:
    """``start_index`` by log base URL; each must name a watched log."""
    bases = {k.base_url for k in keys}
    out: dict[str, int] = {}
    for url, index in start_index.items():
        if url.rstrip("/") not in bases:
            raise UsageError(f"`start_index` names {printable(url)}, which is not a watched "
                             f"log ({', '.join(sorted(bases))})", param="start_index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise UsageError("`start_index` must be a non-negative integer",
                             param="start_index")
        out[url.rstrip("/")] = index
    return out


def _store_state(path: Path, read: bytes | None, data: bytes) -> None:
    """Store the state under the lock discipline: re-read under the lock, and write only if
    the file still holds the bytes this run started from — a concurrent run that stored
    another state meanwhile is never overwritten (this run's result would move it back, or
    drop its acknowledgements); this one then stores nothing and says so."""
    with locked_beside(path):
        if _state_bytes(path) != read:
            raise OperationalError(f"checkpoint file {printable(str(path))} was changed by "
                                   "another monitor run meanwhile; nothing was stored: run "
                                   "again")
        write_atomic(path, data)


def _state_bytes(path: Path) -> bytes | None:
    """The state file's bytes, None when there is none (bounded as the state's reader is)."""
    if not output_exists(path):
        return None
    return read_bytes(str(path), max_bytes=MAX_MONITOR_STATE_BYTES)


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


def _check_acknowledged(requested: set[int], acks: _Acknowledging, held: int,
                        logs: list[LogRun]) -> None:
    """Every acknowledgement asked for met an alarm of this run, and the state file has
    room for them; else nothing is stored."""
    unused = sorted(requested - {a.log_index for a in acks.given})
    if unused:
        read = "; ".join(f"{log.log}: {log.first_index}..{log.next_index}" for log in logs)
        raise InputError(
            f"cannot acknowledge entr{'y' if len(unused) == 1 else 'ies'} "
            f"{', '.join(map(str, unused))}: no unpublished-signature alarm in this run "
            f"(entries read: {read}); only an entry that alarms can be acknowledged, "
            "never in advance; nothing was stored", param="acknowledge")
    if held + len(acks.given) > MAX_ACKNOWLEDGEMENTS:
        raise LimitExceeded(f"the state file holds at most {MAX_ACKNOWLEDGEMENTS} "
                            "acknowledgements; nothing was stored")


#: :func:`monitor` under the name the package exports (``histor_sign.monitor`` is this
#: module, so the function cannot be ``hs.monitor``).
monitor_log = monitor


def _published(chain: _Chain, log_id: bytes) -> dict[int, bytes]:
    return {index: body for (log, index), body in chain.bodies.items() if log == log_id}


def _inconsistency(state: LogState | None, new: Checkpoint,
                   log: _V1Log | _TiledLog) -> str | None:
    """Why the log's checkpoint does not extend the stored one (None: it does). A Rekor v1
    log that rotated shards since is checked against the rotated-away shard's final
    signed tree head."""
    try:
        if state is None:
            log.extends(0, b"", new)  # a tiled log still checks its tiles against the root
            return None
        old = state.checkpoint
        target, tree_id = new, None
        if old.origin != new.origin:
            shard = log.shard_of(old.origin)
            if shard is None:
                return (f"the log's origin is {printable(new.origin)!r}, the stored "
                        f"checkpoint's {printable(old.origin)!r}: another log, or a reset one")
            target, tree_id = shard.head, shard.tree_id
        if target.size < old.size:
            return (f"the log shrank: its checkpoint has {target.size} entries, the stored one "
                    f"{old.size}")
        if target.size == old.size and target.root != old.root:
            return (f"fork: the log's root at size {target.size} is {target.root.hex()}, the "
                    f"stored one {old.root.hex()}")
        if not log.extends(old.size, old.root, target, tree_id):
            return (f"fork: the log's tree of {target.size} entries does not extend the "
                    f"stored one of {old.size} (consistency proof failed)")
    except LogInconsistent as exc:
        return str(exc)
    return None


@dataclass
class _Acknowledging:
    """The acknowledgements a run honours (``held``, from the state, by log id and index),
    the indexes asked to be acknowledged now and why, and those given in this run."""

    held: dict[tuple[str, int], Acknowledgement]
    requested: set[int]
    reason: str | None
    given: list[Acknowledgement] = field(default_factory=list)

    def event(self, log_id: str, log: str, index: int, body: bytes,
              identity: str | None) -> MonitorEvent | None:
        """The acknowledged event for an alarming entry, or None: it still alarms."""
        import datetime as dt
        import hashlib

        digest = hashlib.sha256(body).hexdigest()
        signer = printable(identity or "?")
        ack = self.held.get((log_id, index))
        if ack is not None and ack.entry_sha256 == digest:
            return MonitorEvent(ACKNOWLEDGED, "unpublished-signature",
                                f"signed by {signer}, no document of the published chain; "
                                f"acknowledged {ack.at}: {ack.reason}", index, identity, log)
        if index in self.requested and ack is None and self.reason is not None:
            at = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace(
                "+00:00", "Z")
            self.given.append(Acknowledgement(index, digest, identity or "?", self.reason, at,
                                              log_id))
            return MonitorEvent(ACKNOWLEDGED, "unpublished-signature",
                                f"signed by {signer}, no document of the published chain; "
                                f"acknowledged now: {self.reason}", index, identity, log)
        return None


def _judge(entries: Iterator[tuple[int, bytes]], run: _Run, log_id: bytes, log: str,
           events: list[MonitorEvent]) -> int:
    """Judge every entry of one log; append events; return how many were the publisher's,
    published. An entry is the publisher's when any of its signatures meets the policy."""
    from histor_sign.verification.policy import identity_problems

    suspects: list[tuple[int, bytes, str | None]] = []
    matched = 0
    bodies = _published(run.chain, log_id)
    for index, body in entries:
        signers = entry_signers(body)
        ours = [f for f in signers if not identity_problems(f, run.pins)]
        if ours:
            if bodies.get(index) == body:
                matched += 1
            else:
                suspects.append((index, body, ours[0].identity))
            continue
        near = _other_workflow_event(signers, run, index, log)
        if near is not None:
            events.append(near)
    if suspects:
        bodies = _published(run.fresh_chain(), log_id)  # published while the log was read?
    for index, body, identity in suspects:
        if bodies.get(index) == body:
            matched += 1
            continue
        events.append(_unpublished_event(run, log_id, log, index, body, identity))
    return matched


def _other_workflow_event(signers: list[CertificateFacts], run: _Run, index: int,
                          log: str) -> MonitorEvent | None:
    """Step: a warning when an entry the policy does not cover was signed from the
    publisher's repository (another workflow or ref)."""
    from histor_sign.verification.policy import identity_problems

    near = [f for f in signers if not identity_problems(f, run.repository_pins)]
    if not near:
        return None
    return MonitorEvent(
        WARNING, "other-workflow-signature",
        f"signed from the repository by {printable(near[0].identity or '?')}, which "
        "the identity policy does not cover (another workflow or ref)",
        index, near[0].identity, log)


def _unpublished_event(run: _Run, log_id: bytes, log: str, index: int, body: bytes,
                       identity: str | None) -> MonitorEvent:
    """Step: the event for a policy-matching entry the chain does not publish: its
    acknowledgement, else an alarm (saying when another body was acknowledged there)."""
    acknowledged = run.acks.event(log_id.hex(), log, index, body, identity)
    if acknowledged is not None:
        return acknowledged
    held = run.acks.held.get((log_id.hex(), index))
    return MonitorEvent(
        ALARM, "unpublished-signature",
        f"signed by {printable(identity or '?')}, which the identity policy "
        "matches, but it is no revision, attestation or yank of the published chain"
        + ("; the entry is NOT the one acknowledged at this index (its body differs)"
           if held is not None else ""),
        index, identity, log)
