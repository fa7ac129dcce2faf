"""The signed revision envelope: statement members + ``signer`` + ``transparencyLog``.

Signed bytes = JCS(envelope without ``signer.signature`` and without ``transparencyLog``),
i.e. the statement plus ``signer.issuer``/``signer.identity``. Those exact bytes are also
written beside the envelope (``*.statement.json``) so upstream tools can verify the bundle
(``*.sigstore.json``) on their own. Parsing is strict: unknown or missing members, wrong
types and non-I-JSON input are bad input, never silently accepted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from histor_sign.canonical import JsonValue, canonical_bytes, read_json_file
from histor_sign.errors import InputError
from histor_sign.revision import STATEMENT_KEYS, Statement

ENVELOPE_KEYS: tuple[str, ...] = (*STATEMENT_KEYS, "signer", "transparencyLog")
SIGNER_KEYS = ("issuer", "identity", "signature")
LOG_KEYS = ("logId", "logIndex", "integratedTime")
_HEX = re.compile(r"[0-9a-f]{2,128}")  # fullmatch: "$" would allow a final newline
ENVELOPE_SUFFIX = ".envelope.json"


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


@dataclass(frozen=True)
class SignedEnvelope:
    """A signed revision: the statement, who signed it, the Sigstore bundle and its log entry.

    What is signed is :meth:`signed_bytes`: the statement plus ``signer.issuer`` and
    ``signer.identity``, so the signer cannot be swapped without breaking the signature.
    Parsing with :meth:`from_json` checks structure and types only; use
    :func:`histor_sign.verify` to check the signature and identity.
    """

    statement: Statement
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
        """The statement's revision number."""
        return self.statement.revision

    def signed_bytes(self) -> bytes:
        """The exact bytes the signature covers."""
        return signed_bytes(self.statement, issuer=self.issuer, identity=self.identity)

    def to_json(self) -> dict[str, Any]:
        """The envelope document."""
        return {
            **self.statement.to_json(),
            "signer": {
                "issuer": self.issuer, "identity": self.identity, "signature": self.bundle
            },
            "transparencyLog": self.transparency_log.to_json(),
        }

    def to_bytes(self) -> bytes:
        """Pretty-printed envelope (signed bytes are rebuilt, so layout does not matter)."""
        return (json.dumps(self.to_json(), indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_json(cls, value: JsonValue, source: str = "envelope") -> SignedEnvelope:
        """Check an envelope document's structure and types; raise :class:`InputError`
        naming the member that is wrong. Unknown members are refused."""
        return parse_envelope(value, source)

    @classmethod
    def load(cls, path: str | Path) -> SignedEnvelope:
        """Read and parse an envelope file strictly (``-`` for stdin)."""
        return load_envelope(path)


def signed_bytes(statement: Statement, *, issuer: str, identity: str) -> bytes:
    """JCS of the statement members plus ``signer: {issuer, identity}``."""
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
    return SignedEnvelope(
        statement=statement,
        issuer=signer["issuer"],
        identity=signer["identity"],
        bundle=signer["signature"],
        transparency_log=TransparencyLogRef(log["logId"], log["logIndex"], log["integratedTime"]),
    )


def load_envelope(path: str | Path) -> SignedEnvelope:
    """Read and parse an envelope file strictly (``-`` for stdin)."""
    return parse_envelope(read_json_file(str(path)), str(path))


def companion_paths(output: str | Path) -> tuple[Path, Path]:
    """``X.envelope.json`` → ``X.statement.json``, ``X.sigstore.json``.

    Other names: a trailing ``.json`` is dropped, then ``.statement.json`` /
    ``.sigstore.json`` appended (``out.json`` → ``out.statement.json``; ``out`` →
    ``out.statement.json``).
    """
    path = Path(output)
    name = path.name
    if name.endswith(ENVELOPE_SUFFIX) and len(name) > len(ENVELOPE_SUFFIX):
        stem = name[: -len(ENVELOPE_SUFFIX)]
    elif name.endswith(".json") and len(name) > len(".json"):
        stem = name[: -len(".json")]
    else:
        stem = name
    return path.with_name(f"{stem}.statement.json"), path.with_name(f"{stem}.sigstore.json")
