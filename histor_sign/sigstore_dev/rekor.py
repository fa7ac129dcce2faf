"""Local Rekor, API v1 or v2: a real Merkle tree and a signed checkpoint (note) over every
new tree head; v1 also signs an entry timestamp (SET) per entry.

- **v1** (``/api/v1/log/entries``): ``hashedrekord``/``dsse`` 0.0.1 bodies, ECDSA P-256 log
  key, log id = SHA-256 of the key's SPKI, an ``integratedTime`` vouched for by the SET.
- **v2** (``/api/v2/log/entries``, what production Rekor v2 shards such as
  ``log2025-1.rekor.sigstore.dev`` speak): ``hashedrekord`` 0.0.2 bodies only (DSSE is logged
  as a hashedrekord over the PAE), Ed25519 log key, log id = the C2SP signed-note key id,
  **no integrated time and no SET** — a bundle's time then comes only from an RFC 3161
  timestamp, so v2 signing needs a timestamp authority.

The checkpoint signer name is the log's ``name``; ``LocalSigstore`` sets it to the
host (without the port) of the log's ``baseUrl``, because @sigstore/verify only
accepts a checkpoint whose signer name occurs in that URL (real Rekor: name
``rekor.sigstore.dev``, URL ``https://rekor.sigstore.dev``).

Entries start at ``first_index``: that many placeholder leaves are logged first. The default
1 keeps every signed bundle off index 0, which cosign 2.x reads as "missing"
("nil value in transaction log entry"); ``first_index=0`` gives the first signature index 0,
as the first entry of a real log has.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from typing import Any

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from histor_sign._limits import MAX_FIRST_INDEX
from histor_sign.canonical import canonical_bytes
from histor_sign.sigstore_dev.encoding import b64, key_id
from histor_sign.sigstore_dev.merkle import MerkleTree

DEFAULT_NAME = "rekor.dev-sigstore.local"
#: Rekor v1 origins carry a tree id after the name ("rekor.sigstore.dev - 1193050959916656506").
TREE_ID = "1"
#: The hash the log records for a v2 signature, by the signer's key details.
V2_DIGEST_ALGORITHMS = {
    "PKIX_ECDSA_P256_SHA_256": "SHA2_256",
    "PKIX_ECDSA_P384_SHA_384": "SHA2_384",
    "PKIX_ECDSA_P521_SHA_512": "SHA2_512",
}


def canonical_body(proposed: dict[str, Any]) -> bytes:
    """The entry body Rekor v1 stores for a proposed ``hashedrekord`` or ``dsse`` entry."""
    kind = proposed.get("kind")
    spec = proposed.get("spec")
    if not isinstance(spec, dict):
        raise ValueError("entry has no spec")
    if kind == "hashedrekord":
        body: dict[str, Any] = {
            "apiVersion": "0.0.1",
            "kind": "hashedrekord",
            "spec": {
                "data": {"hash": spec["data"]["hash"]},
                "signature": {
                    "content": spec["signature"]["content"],
                    "publicKey": {"content": spec["signature"]["publicKey"]["content"]},
                },
            },
        }
    elif kind == "dsse":
        proposed_content = spec["proposedContent"]
        envelope = json.loads(proposed_content["envelope"])
        payload = base64.b64decode(envelope["payload"])
        body = {
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "envelopeHash": {
                    "algorithm": "sha256",
                    "value": hashlib.sha256(canonical_bytes(envelope)).hexdigest(),
                },
                "payloadHash": {
                    "algorithm": "sha256",
                    "value": hashlib.sha256(payload).hexdigest(),
                },
                "signatures": [
                    {"signature": s["sig"], "verifier": proposed_content["verifiers"][0]}
                    for s in envelope["signatures"]
                ],
            },
        }
    else:
        raise ValueError(f"unsupported entry kind {kind!r}")
    return canonical_bytes(body)


def canonical_body_v2(proposed: dict[str, Any]) -> bytes:
    """The ``hashedrekord`` 0.0.2 body Rekor v2 stores for a ``CreateEntryRequest``."""
    request = proposed.get("hashedRekordRequestV002")
    if not isinstance(request, dict):
        raise ValueError("Rekor v2 accepts only hashedRekordRequestV002 entries here")
    signature = request["signature"]
    verifier = signature["verifier"]
    details = verifier["keyDetails"]
    if details not in V2_DIGEST_ALGORITHMS:
        raise ValueError(f"unsupported key details {details!r}")
    if not isinstance(verifier.get("x509Certificate", {}).get("rawBytes"), str):
        raise ValueError("verifier must be an X.509 certificate")
    body = {
        "apiVersion": "0.0.2",
        "kind": "hashedrekord",
        "spec": {
            "hashedRekordV002": {
                "data": {"algorithm": V2_DIGEST_ALGORITHMS[details], "digest": request["digest"]},
                "signature": {
                    "content": signature["content"],
                    "verifier": {
                        "x509Certificate": {"rawBytes": verifier["x509Certificate"]["rawBytes"]},
                        "keyDetails": details,
                    },
                },
            }
        },
    }
    return canonical_bytes(body)


class TransparencyLog:
    """An in-memory Rekor log shard (API ``version`` 1 or 2) with its own signing key."""

    def __init__(self, *, version: int = 1, first_index: int = 1,
                 name: str = DEFAULT_NAME) -> None:
        if version not in (1, 2):
            raise ValueError(f"Rekor API version must be 1 or 2, not {version}")
        if not 0 <= first_index <= MAX_FIRST_INDEX:
            raise ValueError(f"`first_index` must be between 0 and {MAX_FIRST_INDEX}")
        self.version = version
        self.key: ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey = (
            ec.generate_private_key(ec.SECP256R1()) if version == 1
            else ed25519.Ed25519PrivateKey.generate()
        )
        #: Checkpoint signer name; must occur in the trusted root's ``baseUrl`` for the log.
        self.name = name
        self.tree = MerkleTree()
        #: Every entry's body, by index (what the read APIs serve).
        self.bodies: list[bytes] = []
        self._lock = threading.Lock()
        #: v1: the SET and time of each signed entry, by index.
        self._stamps: dict[int, tuple[int, str]] = {}
        #: v1: the tree id of the active tree, and the frozen (inactive) shards before it:
        #: (tree id, tree, bodies). Entries are numbered across shards, as Rekor v1 does.
        self.tree_id = TREE_ID
        self.shards: list[tuple[str, MerkleTree, list[bytes]]] = []
        # placeholders no bundle will ever point at
        self._extend([canonical_bytes({"kind": "dev-sigstore-placeholder", "index": index})
                      for index in range(first_index)])

    def _extend(self, bodies: list[bytes]) -> None:
        with self._lock:
            self.tree.extend(bodies)
            self.bodies.extend(bodies)

    def _append(self, body: bytes) -> tuple[int, int, bytes, list[bytes]]:
        with self._lock:
            appended = self.tree.append(body)
            self.bodies.append(body)
        return appended

    def pad(self, count: int, tag: str = "filler") -> None:
        """Test hook: log ``count`` placeholder entries (marked ``tag``, so two histories
        padded with different tags differ), as other signers' entries fill a real log."""
        start = len(self.bodies)
        self._extend([canonical_bytes({"kind": "dev-sigstore-placeholder", "tag": tag,
                                       "index": start + k}) for k in range(count)])

    def rotate(self, tree_id: str) -> None:
        """Test hook (v1): freeze the active tree as an inactive shard and continue in a
        fresh tree ``tree_id``, as production Rekor v1 rotates its shards: later entries
        keep counting from where the shards end (a global index), their inclusion proofs
        and checkpoints are the new tree's."""
        with self._lock:
            self.shards.append((self.tree_id, self.tree, self.bodies))
            self.tree, self.bodies, self.tree_id, self._stamps = MerkleTree(), [], tree_id, {}

    @property
    def offset(self) -> int:
        """Entries in the inactive shards: the global index of the active tree's first."""
        return sum(len(tree) for _, tree, _ in self.shards)

    def rewrite(self, keep: int) -> None:
        """Test hook: forget every entry from index ``keep`` on, so the log serves a
        shorter tree (a shrink) and, once entries are added again, another history under
        the same key (a fork) — what a monitor must report, never accept."""
        with self._lock:
            kept = self.bodies[:keep]
            self.tree = MerkleTree()
            self.tree.extend(kept)
            self.bodies = kept
            self._stamps = {i: v for i, v in self._stamps.items() if i < keep}

    @property
    def origin(self) -> str:
        """The checkpoint's first line (v1: ``name - tree id``; v2: the name alone)."""
        return f"{self.name} - {self.tree_id}" if self.version == 1 else self.name

    @property
    def public_key_der(self) -> bytes:
        return self.key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    @property
    def key_details(self) -> str:
        return "PKIX_ECDSA_P256_SHA_256" if self.version == 1 else "PKIX_ED25519"

    @property
    def log_id(self) -> bytes:
        """v1: SHA-256 of the SPKI; v2: the C2SP note key id (SHA-256 of name, 0x0A, 0x01, key)."""
        public = self.key.public_key()
        if isinstance(public, ec.EllipticCurvePublicKey):
            return key_id(public)
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return hashlib.sha256(self.name.encode() + b"\n\x01" + raw).digest()

    def _sign(self, data: bytes) -> bytes:
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        return self.key.sign(data)

    def checkpoint(self, size: int, root: bytes, origin: str | None = None) -> str:
        """A signed note: origin, size, root; signature line = key hint (4 bytes) + sig."""
        text = f"{origin or self.origin}\n{size}\n{b64(root)}\n"
        signature = self._sign(text.encode())
        return f"{text}\n\u2014 {self.name} {b64(self.log_id[:4] + signature)}\n"

    def add(self, proposed: dict[str, Any]) -> dict[str, Any]:
        """Append an entry; return what this log version answers to ``POST .../log/entries``."""
        if self.version == 2:
            return self._add_v2(proposed)
        body = canonical_body(proposed)
        local, size, root, path = self._append(body)
        index = self.offset + local
        integrated_time = int(time.time())
        log_id_hex = self.log_id.hex()
        set_payload = canonical_bytes(
            {
                "body": b64(body),
                "integratedTime": integrated_time,
                "logID": log_id_hex,
                "logIndex": index,
            }
        )
        stamp = b64(self._sign(set_payload))
        self._stamps[local] = (integrated_time, stamp)
        return {
            hashlib.sha256(body).hexdigest(): {
                "body": b64(body),
                "integratedTime": integrated_time,
                "logID": log_id_hex,
                "logIndex": index,
                "verification": {
                    "signedEntryTimestamp": stamp,
                    "inclusionProof": {
                        "logIndex": local,
                        "treeSize": size,
                        "rootHash": root.hex(),
                        "hashes": [h.hex() for h in path],
                        "checkpoint": self.checkpoint(size, root),
                    },
                },
            }
        }

    def _add_v2(self, proposed: dict[str, Any]) -> dict[str, Any]:
        """A ``TransparencyLogEntry`` (protobuf JSON): no ``integratedTime``, no SET."""
        body = canonical_body_v2(proposed)
        index, size, root, path = self._append(body)
        return {
            "logIndex": str(index),
            "logId": {"keyId": b64(self.log_id)},
            "kindVersion": {"kind": "hashedrekord", "version": "0.0.2"},
            "inclusionProof": {
                "logIndex": str(index),
                "rootHash": b64(root),
                "treeSize": str(size),
                "hashes": [b64(h) for h in path],
                "checkpoint": {"envelope": self.checkpoint(size, root)},
            },
            "canonicalizedBody": b64(body),
        }

    # ------------------------------------------------------------------ read APIs
    def current_checkpoint(self) -> tuple[int, bytes, str]:
        """(size, root, signed checkpoint) of the tree as it is now."""
        with self._lock:
            size, root = len(self.tree), self.tree.root()
        return size, root, self.checkpoint(size, root)

    def log_info(self) -> dict[str, Any]:
        """v1 ``GET /api/v1/log``."""
        size, root, note = self.current_checkpoint()
        inactive = []
        for tree_id, tree, _ in self.shards:
            origin = f"{self.name} - {tree_id}"
            inactive.append({"rootHash": tree.root().hex(), "treeSize": len(tree),
                             "treeID": tree_id,
                             "signedTreeHead": self.checkpoint(len(tree), tree.root(), origin)})
        return {"rootHash": root.hex(), "treeSize": size, "signedTreeHead": note,
                "treeID": self.tree_id, "inactiveShards": inactive}

    def consistency_proof(self, first: int, last: int,
                          tree_id: str | None = None) -> dict[str, Any]:
        """v1 ``GET /api/v1/log/proof?firstSize=&lastSize=[&treeID=]`` (an inactive shard
        by its tree id)."""
        tree = next((t for i, t, _ in self.shards if i == tree_id), self.tree)
        if not 0 <= first <= last <= len(tree):
            raise ValueError(f"no proof from size {first} to {last} in a tree of "
                             f"{len(tree)}")
        return {"rootHash": tree.root(last).hex(),
                "hashes": [h.hex() for h in tree.consistency(first, last)]}

    def entry(self, index: int) -> dict[str, Any]:
        """v1 ``GET /api/v1/log/entries?logIndex=N`` (a global index): the entry with an
        inclusion proof and checkpoint for its shard's tree as it is now."""
        size, root, note = self.current_checkpoint()
        tree, bodies, local, stamps = self.tree, self.bodies, index - self.offset, self._stamps
        start = 0
        for tree_id, frozen, kept in self.shards:
            if start <= index < start + len(frozen):
                tree, bodies, local, stamps = frozen, kept, index - start, {}
                size, root = len(frozen), frozen.root()
                note = self.checkpoint(size, root, f"{self.name} - {tree_id}")
                break
            start += len(frozen)
        if not 0 <= local < size:
            raise KeyError(index)
        body = bodies[local]
        integrated, stamp = stamps.get(local, (0, ""))
        return {hashlib.sha256(body).hexdigest(): {
            "body": b64(body), "integratedTime": integrated, "logID": self.log_id.hex(),
            "logIndex": index,
            "verification": {
                "signedEntryTimestamp": stamp,
                "inclusionProof": {
                    "logIndex": local, "treeSize": size, "rootHash": root.hex(),
                    "hashes": [h.hex() for h in tree.inclusion(local, size)],
                    "checkpoint": note,
                },
            },
        }}

    def tile(self, level: str, index: int, width: int) -> bytes | None:
        """v2 (C2SP tlog-tiles) ``GET /tile/<L>/<N>[.p/<W>]`` and ``/tile/entries/…`` for
        the tree as it is now; None when there is no such tile."""
        with self._lock:
            size = len(self.tree)
            bodies = self.bodies[:size]
        if level == "entries":
            first = index * 256
            if width < 1 or first + width > size or (width < 256 and first + width != size):
                return None
            return b"".join(len(b).to_bytes(2, "big") + b for b in bodies[first:first + width])
        return self.tree.tile(int(level), index, width, size)
