"""Local Rekor (API v1): a real Merkle tree, a signed entry timestamp (SET) per entry, and a
signed checkpoint (note) over every new tree head — the three things the sigstore Verifier
checks for a v1 ``hashedrekord`` entry.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from histor_sign._internal.sigstore_dev.encoding import b64, key_id
from histor_sign._internal.sigstore_dev.merkle import MerkleTree
from histor_sign.canonical import canonical_bytes


def canonical_body(proposed: dict[str, Any]) -> bytes:
    """The entry body Rekor stores for a proposed ``hashedrekord`` or ``dsse`` entry."""
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


class TransparencyLog:
    """An in-memory Rekor v1 log shard with its own signing key."""

    def __init__(self, origin: str = "rekor.dev-sigstore.local - 1") -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.origin = origin
        self.note_name = origin.split(" ", 1)[0]
        self.tree = MerkleTree()

    @property
    def log_id(self) -> bytes:
        return key_id(self.key.public_key())

    def _sign(self, data: bytes) -> bytes:
        return self.key.sign(data, ec.ECDSA(hashes.SHA256()))

    def checkpoint(self, size: int, root: bytes) -> str:
        """A signed note: origin, size, root; signature line = key hint (4 bytes) + sig."""
        text = f"{self.origin}\n{size}\n{b64(root)}\n"
        signature = self._sign(text.encode())
        return f"{text}\n\u2014 {self.note_name} {b64(self.log_id[:4] + signature)}\n"

    def add(self, proposed: dict[str, Any]) -> dict[str, Any]:
        """Append an entry; return Rekor's ``{uuid: LogEntry}`` response document."""
        body = canonical_body(proposed)
        index, size, root, path = self.tree.append(body)
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
        return {
            hashlib.sha256(body).hexdigest(): {
                "body": b64(body),
                "integratedTime": integrated_time,
                "logID": log_id_hex,
                "logIndex": index,
                "verification": {
                    "signedEntryTimestamp": b64(self._sign(set_payload)),
                    "inclusionProof": {
                        "logIndex": index,
                        "treeSize": size,
                        "rootHash": root.hex(),
                        "hashes": [h.hex() for h in path],
                        "checkpoint": self.checkpoint(size, root),
                    },
                },
            }
        }
