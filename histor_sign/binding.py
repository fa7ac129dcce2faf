"""Is this the code the publisher released? An artifact against the pinned revision.

``release --artifact`` makes each published artifact a subject of the revision's attestation
(:mod:`histor_sign.artifacts`). :func:`check_binding` answers, for a downloaded file or an
installed package, whether the pinned publisher's latest verified revision attests it:

1. the latest revision comes from the pinned location, verified under the pin and fresh
   (:func:`histor_sign.pins.latest_for_use`: no rollback, fork or broken chain);
2. its attestation, published beside it, verifies under the same pin and trust and attests
   exactly that envelope's statement (:func:`histor_sign.attestation.verify_attestation`);
3. the artifact's digests (a file's own; for an installed package, the ones its ecosystem
   recorded, :func:`histor_sign.artifacts.installed_evidence`) equal one artifact subject's,
   on every algorithm both carry.

A failed step raises :class:`VerificationFailed` (exit 1); an artifact that is not attested,
or installed evidence with local problems (a file that no longer matches RECORD), is a
result that is not ``ok`` and names what differs. What a match proves is bounded by the
evidence: see each :class:`~histor_sign.artifacts.InstalledEvidence`'s ``cannot_prove``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._escape import printable
from histor_sign.artifacts import InstalledEvidence, artifact_subject, file_digests
from histor_sign.errors import VerificationFailed
from histor_sign.models import ArtifactSubject

if TYPE_CHECKING:
    from histor_sign._sigstore_trust import Trust
    from histor_sign.pins import PinnedRevision, PinStore

#: Digest algorithms compared, strongest first (the first one shown in messages).
_ALGORITHMS = ("sha512", "sha256")


@dataclass(frozen=True)
class BindingResult:
    """The pinned revision, what was checked against its attestation, and the verdict.

    ``matched`` is the attested subject whose digests equal the artifact's (None: not
    attested); ``problems`` say what differs, in words a user can act on.
    """

    pinned: PinnedRevision
    attestation: str
    checked: str
    digests: Mapping[str, str]
    attested: tuple[ArtifactSubject, ...]
    matched: ArtifactSubject | None
    problems: tuple[str, ...]
    evidence: InstalledEvidence | None = None

    @property
    def ok(self) -> bool:
        return self.matched is not None and not self.problems

    def to_json(self) -> dict[str, Any]:
        """Stable JSON (``bindingVersion`` 1)."""
        document: dict[str, Any] = {
            "bindingVersion": 1,
            "result": "attested" if self.ok else "not-attested",
            "checked": self.checked,
            "digest": dict(self.digests),
            "matched": self.matched.to_json() if self.matched else None,
            "problems": list(self.problems),
            "attestation": self.attestation,
            "attestedArtifacts": [a.to_json() for a in self.attested],
            "verified": self.pinned.to_json(),
        }
        if self.evidence is not None:
            document["evidence"] = {
                "ecosystem": self.evidence.ecosystem, "source": self.evidence.source,
                "proves": self.evidence.proves, "cannotProve": self.evidence.cannot_prove,
            }
        return document

    def to_text(self) -> str:
        """``attested · <server> revision N · signed by …`` and the detail lines."""
        head = "attested" if self.ok else "NOT attested"
        lines = [f"{head} · {printable(self.checked)} · {self.pinned.headline()}"]
        if self.matched is not None:
            lines.append(f"  subject   {printable(self.matched.name)}")
        lines += [f"  {alg:<9} {hex_}" for alg, hex_ in sorted(self.digests.items())]
        lines += [f"  problem   {printable(p)}" for p in self.problems]
        if self.evidence is not None:
            lines.append(f"  evidence  {printable(self.evidence.source)}")
            lines.append(f"  proves    {self.evidence.proves}")
            lines.append(f"  not       {self.evidence.cannot_prove}")
        lines.append(f"  attestation {printable(self.attestation)}")
        return "\n".join(lines)


def _agrees(subject: ArtifactSubject, digests: Mapping[str, str]) -> bool:
    common = [alg for alg in _ALGORITHMS if alg in subject.digest and alg in digests]
    return bool(common) and all(subject.digest[alg] == digests[alg] for alg in common)


def _same(attested: str, name: str) -> bool:
    """The same package (and version) or image repository, whatever its digest: an image's
    package URL carries its digest as its version."""
    def key(text: str) -> str:
        return re.sub(r"@sha256%3A[0-9a-f]{64}", "", text)

    return key(attested) == key(name)


def _short(digests: Mapping[str, str]) -> str:
    alg = next(a for a in _ALGORITHMS if a in digests)
    return f"{alg}:{digests[alg][:16]}…"


def _attested_artifacts(
    server: str, trust: Trust, store: PinStore
) -> tuple[PinnedRevision, str, tuple[ArtifactSubject, ...]]:
    """The latest revision under the pin, its attestation's address and the artifacts the
    verified attestation binds; raises :class:`VerificationFailed` when any step fails. A
    verified attestation marks the pin ``attested`` in ``store``, as ``check --server`` does."""
    from histor_sign._chain_store import NotPublished, ReleaseLocation
    from histor_sign.attestation import read_attestation, verify_attestation
    from histor_sign.pins import latest_for_use

    pinned = latest_for_use(server, trust=trust, store=store)
    location = ReleaseLocation.parse(pinned.pin.location, param="location")
    address = location.attestation(pinned.revision)
    try:
        attestation = read_attestation(address, location.fetch_json)
    except NotPublished:
        raise VerificationFailed(
            f"{server} revision {pinned.revision} publishes no attestation at "
            f"{printable(address)}: nothing binds an artifact to it"
        ) from None
    verify_attestation(attestation, pins=pinned.pin.pins(), trust=trust,
                       envelope=pinned.envelope, source=address).raise_for_failure()
    if not pinned.pin.attested:  # as check --server: from now on its absence is a broken chain
        pinned = replace(pinned, pin=replace(pinned.pin, attested=True))
        store.advance(pinned.pin)
    return pinned, address, attestation.artifacts


def _unmatched(
    pinned: PinnedRevision, attested: tuple[ArtifactSubject, ...], checked: str,
    digests: Mapping[str, str], name: str | None,
) -> str:
    """Step: why no attested subject matches: the same name with another digest, no
    artifact bound, or none of those bound."""
    where = f"{pinned.server} revision {pinned.revision}"
    same = next((s for s in attested if name and _same(s.name, name)), None)
    if same is not None:
        return (f"{same.name} is attested with {_short(same.digest)}, but "
                f"{checked} has {_short(digests)}")
    if not attested:
        return (f"{where}'s attestation binds no artifact (none was bound when "
                "it was released)")
    named = ", ".join(f"{s.name} ({_short(s.digest)})" for s in attested)
    return (f"{checked} ({_short(digests)}) is none of the artifacts {where} "
            f"attests: {named}")


def _verdict(
    pinned: PinnedRevision, address: str, attested: tuple[ArtifactSubject, ...],
    checked: str, digests: Mapping[str, str], name: str | None,
    evidence: InstalledEvidence | None = None,
) -> BindingResult:
    """Match ``digests`` against the attested subjects and say what differs."""
    matched = next((s for s in attested if _agrees(s, digests)), None)
    problems = list(evidence.problems) if evidence is not None else []
    if matched is None:
        problems.append(_unmatched(pinned, attested, checked, digests, name))
    return BindingResult(pinned, address, checked, dict(digests), attested, matched,
                         tuple(problems), evidence)


def check_binding(
    server: str,
    *,
    trust: Trust,
    store: PinStore,
    artifact: str | Path | None = None,
    installed: str | None = None,
) -> BindingResult:
    """Whether the pinned ``server``'s latest verified revision attests ``artifact`` (a file,
    or ``oci:REF@sha256:…``) or the ``installed`` package (``npm:PATH``, ``pypi:PATH``,
    ``oci:REF@sha256:…``); exactly one of the two. The pin advances as
    :func:`~histor_sign.pins.latest_for_use` allows, and is marked ``attested`` once the
    attestation verified.

    Guaranteed: ``ok`` only when the revision verified under the pin and is fresh (no
    rollback, fork, broken chain or yank), its attestation verified under the same pin and
    attests that very envelope, one attested subject carries the artifact's digests on every
    algorithm both have, and the installed evidence has no local problems; a failed
    verification raises :class:`VerificationFailed`, bad input :class:`InputError` before
    anything is fetched."""
    from histor_sign.artifacts import installed_evidence
    from histor_sign.errors import UsageError

    if (artifact is None) == (installed is None):
        raise UsageError("give one artifact or one installed package")
    if artifact is not None:
        subject = artifact_subject(artifact)  # bad input before anything is fetched
        digests = dict(subject.digest)
        if "sha512" not in digests and not str(artifact).startswith("oci:"):
            digests = file_digests(Path(artifact), ("sha256", "sha512"))
        pinned, address, attested = _attested_artifacts(server, trust, store)
        return _verdict(pinned, address, attested, subject.label or str(artifact), digests,
                        subject.name)
    assert installed is not None
    evidence = installed_evidence(installed)
    pinned, address, attested = _attested_artifacts(server, trust, store)
    return _verdict(pinned, address, attested, f"{evidence.ecosystem}:{evidence.label}",
                    evidence.digests, None, evidence)
