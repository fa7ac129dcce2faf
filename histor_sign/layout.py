"""Every file name histor-sign publishes or writes beside a signature, in one place.

Three layouts share these names, and a verifier (ours, cosign, sigstore-go) finds a file only
if writer and reader agree, so no other module spells one:

* **companions** of an envelope: ``X.envelope.json`` beside ``X.statement.json`` (the signed
  bytes), ``X.sigstore.json`` (their bundle), ``X.intoto.sigstore.json`` (the attestation)
  and, when ``sign`` is given the tools (``--snapshot``), ``X.manifest.json`` (the manifest's
  canonical bytes);
* a **release directory** (``release --out-dir``): :data:`OUTPUT_NAMES`;
* the **chain directory** a publisher serves, ``<base>/<server name>/``::

    latest.envelope.json       the newest signed revision
    <n>.envelope.json          revision n, never overwritten (a client follows a chain with it)
    <n>.tools.snapshot.json    the tools revision n signed (drift triage, the guard's contract)
    <n>.intoto.sigstore.json   the in-toto attestation of revision n: the only signature over
                               the surface digests; parts <n>.intoto.<k>.sigstore.json beyond
                               1,023 tools
    latest.intoto.sigstore.json  the newest attestation (for cosign and other verifiers)
    <n>.manifest.json          the manifest's canonical bytes (RFC 8785), the file whose
                               SHA-256 is the attestation's ``manifest`` subject and the
                               envelope's manifestDigest (``cosign verify-blob-attestation``)
    latest.manifest.json       the newest one
    <n>.yank.envelope.json     the publisher's signed withdrawal of revision n (never
                               overwritten; a client refuses revision n while it exists)
    <n>.yank.intoto.sigstore.json  the same withdrawal as an in-toto attestation (predicate
                               ``https://histor-sign.dev/yank/v1``, for cosign and other
                               verifiers)
    monitor.checkpoint.json    the publisher's ``monitor`` state: the last verified log
                               checkpoint and the first entry not yet read (not read by
                               clients)

An attestation of more than :data:`MAX_SUBJECTS` subjects is split into parts named by
:func:`part_addresses`.
"""

from __future__ import annotations

import re
from pathlib import Path

from histor_sign._escape import printable
from histor_sign._limits import DEFAULT_MAX_TOOLS
from histor_sign.errors import InputError

ENVELOPE_SUFFIX = ".envelope.json"


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


#: Subjects per statement (GitHub's attest action caps a statement at 1,024).
MAX_SUBJECTS = 1024


#: Parts read for one attestation: enough for ``DEFAULT_MAX_TOOLS`` tools, and a bound on
#: the files (each at most ``DEFAULT_MAX_FILE_BYTES``) a hostile part 1 can make us read.
MAX_PARTS = -(-DEFAULT_MAX_TOOLS // (MAX_SUBJECTS - 1))


ATTESTATION_SUFFIX = ".intoto.sigstore.json"


_BUNDLE_SUFFIX = ".sigstore.json"


def attestation_path(output: str | Path) -> Path:
    """``X.envelope.json`` → ``X.intoto.sigstore.json`` (same stem rule as the companions)."""
    statement_path, _ = companion_paths(output)
    stem = statement_path.name[: -len(".statement.json")]
    return statement_path.with_name(stem + ATTESTATION_SUFFIX)


def manifest_path(output: str | Path) -> Path:
    """``X.envelope.json`` → ``X.manifest.json``: the manifest's canonical bytes beside a
    ``sign`` output (same stem rule as the companions)."""
    statement_path, _ = companion_paths(output)
    stem = statement_path.name[: -len(".statement.json")]
    return statement_path.with_name(f"{stem}.manifest.json")


def part_paths(first: str | Path, count: int) -> list[Path]:
    """Paths of an attestation's parts: ``A.sigstore.json``, ``A.2.sigstore.json``, …"""
    path = Path(first)
    return [path] + [path.with_name(name) for name in part_addresses(path.name, count)[1:]]


def part_addresses(first: str, count: int) -> list[str]:
    """The same names for any address (a path or a URL): only the end of ``first`` changes."""
    stem = first[: -len(_BUNDLE_SUFFIX)] if first.endswith(_BUNDLE_SUFFIX) else first
    return [first] + [f"{stem}.{k}{_BUNDLE_SUFFIX}" for k in range(2, count + 1)]


LATEST_NAME = "latest.envelope.json"


ENVELOPE_NAME = "{n}.envelope.json"


SNAPSHOT_NAME = "{n}.tools.snapshot.json"


ATTESTATION_NAME = "{n}.intoto.sigstore.json"


MANIFEST_NAME = "{n}.manifest.json"


YANK_NAME = "{n}.yank.envelope.json"


YANK_ATTESTATION_NAME = "{n}.yank.intoto.sigstore.json"


MONITOR_CHECKPOINT_NAME = "monitor.checkpoint.json"


_SEGMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def chain_dir(root: str | Path, server: str) -> Path:
    """The directory of ``server``'s chain under ``root``; refuses names that are not a plain
    relative path (``..``, absolute, empty or odd segments)."""
    segments = server.split("/")
    if not all(_SEGMENT.fullmatch(s) and ".." not in s for s in segments):
        raise InputError(
            f"`server` {printable(server)!r} cannot name a revisions directory (letters, "
            "digits, '.', '_', '-' and '/' between segments only)",
            param="server",
        )
    return Path(root).joinpath(*segments)


#: Output files of a release, by role, inside ``out_dir``.
OUTPUT_NAMES: dict[str, str] = {
    "envelope": "envelope.json",
    "statement": "statement.json",
    "bundle": "sigstore.json",
    "sarif": "scan.sarif",
    "summary": "summary.md",
    "tools": "tools.snapshot.json",
    "attestation": "intoto.sigstore.json",
    "manifest": "manifest.json",
    "registry": "registry-meta.json",
}


def output_names() -> list[str]:
    """Every file name a release may write: :data:`OUTPUT_NAMES` and the attestation's
    further parts (``intoto.2.sigstore.json`` …, for servers beyond 1,023 tools)."""

    parts = part_paths(Path(OUTPUT_NAMES["attestation"]), MAX_PARTS)
    return [*OUTPUT_NAMES.values(), *(p.name for p in parts[1:])]
