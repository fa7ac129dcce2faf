"""Published artifacts as attestation subjects, and the evidence an installed package keeps.

A signed revision says which tool definitions a publisher released, not which code answers
the calls. ``release --artifact`` binds the two: each artifact the publisher built becomes
an in-toto subject of the revision's attestation, named by package URL so the name says what
it is, with the digests its ecosystem uses:

==========================  =====================================================  ===========
artifact                    subject name                                           digests
==========================  =====================================================  ===========
npm tarball (``npm pack``)  ``pkg:npm/%40acme/search@2.3.0`` (from package.json)   sha256, sha512
wheel / sdist               ``pkg:pypi/acme-search@2.3.0?file_name=<file>``         sha256
OCI image by digest         ``pkg:oci/search@sha256%3A<hex>?repository_url=<repo>``  sha256
any other file              ``pkg:generic/<file name>``                            sha256
==========================  =====================================================  ===========

sha512 is npm's: its lockfiles record ``integrity`` as ``sha512-<base64>`` of the tarball.

For a package already installed, :func:`installed_evidence` reads what each ecosystem
honestly keeps about where it came from (nothing here trusts more than that):

* **npm** — the lockfile's ``integrity`` of the package's path (``node_modules/.package-lock
  .json``, else ``package-lock.json`` / ``npm-shrinkwrap.json`` beside ``node_modules``): the
  digest of the tarball npm installed. npm keeps no digest of the unpacked files, so a file
  edited after install cannot be detected.
* **pypi** — ``direct_url.json`` in the ``.dist-info`` directory: pip records
  ``archive_info.hashes`` when it installs a wheel or sdist from a file or URL (not from an
  index, where it keeps no digest of what it downloaded). Its ``RECORD`` lists the SHA-256
  of every installed file: each one is checked against the disk, so a file edited after
  install is named (RECORD itself and ``direct_url.json`` can be rewritten by whoever can
  write the directory).
* **oci** — the image's repository digest, which is in the reference itself
  (``REPO@sha256:…``): a tag alone names no content.

Nothing here fetches or verifies a signature; :mod:`histor_sign.binding` decides.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import tarfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from histor_sign._escape import printable
from histor_sign._limits import MAX_ARTIFACTS, MAX_PACKAGE_METADATA_BYTES
from histor_sign.canonical import parse_json
from histor_sign.errors import InputError, LimitExceeded
from histor_sign.models import ArtifactSubject

#: ``oci:`` before an image reference names an OCI image instead of a file.
OCI_PREFIX = "oci:"
#: Ecosystems ``installed_evidence`` reads.
ECOSYSTEMS = ("npm", "pypi", "oci")

_OCI_REF = re.compile(
    r"(?P<repository>(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9._/-]*[a-z0-9])"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?@sha256:(?P<digest>[0-9a-f]{64})"
)
_WHEEL = re.compile(
    r"(?P<name>[A-Za-z0-9._]+)-(?P<version>[^-]+)(?:-[0-9][^-]*)?-[^-]+-[^-]+-[^-]+\.whl"
)
_SDIST = re.compile(r"(?P<name>[A-Za-z0-9._-]+)-(?P<version>[0-9][^-]*)\.(?:tar\.gz|zip)")
_CHUNK = 1 << 20


def file_digests(path: Path, algorithms: Sequence[str] = ("sha256",)) -> dict[str, str]:
    """Hex digests of a file's bytes, read once in chunks (any size)."""
    hashes = {alg: hashlib.new(alg) for alg in algorithms}
    try:
        with path.open("rb") as fh:
            while chunk := fh.read(_CHUNK):
                for h in hashes.values():
                    h.update(chunk)
    except OSError as exc:
        raise InputError(f"cannot read artifact {printable(str(path))}: {exc.strerror}",
                         param="artifact") from None
    return {alg: h.hexdigest() for alg, h in hashes.items()}


def _npx_package_spec(command: Sequence[str]) -> str | None:
    """Step: the one package an ``npx [-y] PACKAGE`` command names, if it is one."""
    if not command or Path(command[0]).name not in _NPX:
        return None
    rest = [a for a in command[1:] if a not in ("-y", "--yes")]
    if not rest or rest[0].startswith("-"):
        return None  # --package, -c and other forms name no single package
    return rest[0]


def _npx_spec(spec: str) -> tuple[str, str | None]:
    """Step: an npx package spec's name and requested version (``name@version``)."""
    at = spec.find("@", 1)
    return (spec[:at], spec[at + 1:]) if at > 0 else (spec, None)


def _npm_package(path: Path) -> tuple[str, str] | None:
    """(name, version) from ``package/package.json`` in an npm tarball, or None when the
    file is not one."""
    try:
        with tarfile.open(path, "r:gz") as archive:
            for member in archive:
                if member.name.lstrip("./") != "package/package.json" or not member.isfile():
                    continue
                return _package_identity(archive, member, path)
    except (tarfile.TarError, OSError, EOFError):
        return None
    return None


def _pypi_name(name: str) -> str:
    """PEP 503 normalized project name (what purl's pypi type uses)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def oci_subject(reference: str) -> ArtifactSubject:
    """``REGISTRY/REPO[:TAG]@sha256:HEX`` as a subject (the digest is the image's own)."""
    match = _OCI_REF.fullmatch(reference)
    if match is None:
        raise InputError(
            f"oci:{printable(reference, 200)} is not an image reference by digest "
            "(REGISTRY/REPOSITORY@sha256:<64 hex>); a tag alone names no content",
            param="artifact",
        )
    repository, digest = match.group("repository"), match.group("digest")
    last = repository.rsplit("/", 1)[-1]
    name = (f"pkg:oci/{quote(last, safe='')}@sha256%3A{digest}"
            f"?repository_url={quote(repository, safe='/:')}")
    return ArtifactSubject(name=name, digest={"sha256": digest}, label=f"oci:{reference}")


def artifact_subject(spec: str | Path) -> ArtifactSubject:
    """One ``--artifact``: a file (npm tarball, wheel, sdist or anything else) or
    ``oci:REF@sha256:…``; see the module's table for names and digests."""
    text = str(spec)
    if text.startswith(OCI_PREFIX):
        return oci_subject(text[len(OCI_PREFIX):])
    path = Path(text)
    if not path.is_file():
        raise InputError(f"artifact {printable(text)} is not a regular file (an image is "
                         "given as oci:REF@sha256:…)", param="artifact")
    file_name = path.name
    wheel, sdist = _WHEEL.fullmatch(file_name), _SDIST.fullmatch(file_name)
    npm = _npm_package(path) if file_name.endswith((".tgz", ".tar.gz")) else None
    if npm is not None:
        name, version = npm
        return ArtifactSubject(name=f"pkg:npm/{quote(name, safe='/')}@{quote(version)}",
                               digest=file_digests(path, ("sha256", "sha512")), label=file_name)
    if wheel or sdist:
        match = wheel or sdist
        assert match is not None
        project, version = _pypi_name(match.group("name")), match.group("version")
        return ArtifactSubject(
            name=f"pkg:pypi/{project}@{quote(version)}?file_name={quote(file_name)}",
            digest=file_digests(path), label=file_name,
        )
    return ArtifactSubject(name=f"pkg:generic/{quote(file_name)}", digest=file_digests(path),
                           label=file_name)


def artifact_subjects(specs: Iterable[str | Path | ArtifactSubject]) -> tuple[ArtifactSubject, ...]:
    """Every ``--artifact``, in the order given; two artifacts with the same subject name
    (the same package twice) are refused, as are more than :data:`MAX_ARTIFACTS`."""
    subjects = [s if isinstance(s, ArtifactSubject) else artifact_subject(s) for s in specs]
    if len(subjects) > MAX_ARTIFACTS:
        raise LimitExceeded(f"{len(subjects)} artifacts; at most {MAX_ARTIFACTS} per release",
                            limit="artifacts", value=MAX_ARTIFACTS)
    seen: set[str] = set()
    for subject in subjects:
        if subject.name in seen:
            raise InputError(f"artifact {printable(subject.shown)} is given twice",
                             param="artifact")
        seen.add(subject.name)
    return tuple(subjects)


# ---------------------------------------------------------------------- installed packages
@dataclass(frozen=True)
class InstalledEvidence:
    """What an installed package's ecosystem recorded about the artifact it came from.

    ``digests`` (algorithm → hex) identify that artifact; ``problems`` are local
    inconsistencies found on the way (a file that no longer matches RECORD, a lockfile entry
    for another version): any one fails the check. ``proves`` and ``cannot_prove`` say in
    words what this evidence can and cannot establish.
    """

    ecosystem: str
    label: str
    digests: Mapping[str, str]
    source: str
    proves: str
    cannot_prove: str
    problems: tuple[str, ...] = field(default_factory=tuple)
    #: The installed version, where the package records one (npm's package.json).
    version: str | None = None


def installed_evidence(spec: str) -> InstalledEvidence:
    """``npm:PATH`` (the package directory under node_modules), ``pypi:PATH`` (its
    ``.dist-info`` directory) or ``oci:REF@sha256:…``. Raises :class:`InputError` when the
    ecosystem keeps no digest for it (said plainly, with what would)."""
    ecosystem, sep, rest = spec.partition(":")
    if not sep or ecosystem not in ECOSYSTEMS or not rest:
        raise InputError(
            f"installed package {printable(spec, 200)!r}: give npm:PATH (under node_modules), "
            "pypi:PATH (a .dist-info directory) or oci:REF@sha256:…", param="installed",
        )
    if ecosystem == "oci":
        subject = oci_subject(rest)
        return InstalledEvidence(
            "oci", subject.label, dict(subject.digest), "the image reference",
            proves="the image with this repository digest is the attested one",
            cannot_prove="that a container runs this image (compare `docker inspect` of the "
            "container's image with the reference)",
        )
    return _npm_evidence(Path(rest)) if ecosystem == "npm" else _pypi_evidence(Path(rest))


_NPM_LOCKFILES = ("node_modules/.package-lock.json", "npm-shrinkwrap.json", "package-lock.json")


def _package_identity(archive: tarfile.TarFile, member: tarfile.TarInfo,
                      path: Path) -> tuple[str, str] | None:
    """Step: (name, version) of an npm tarball's ``package.json`` member, bounded; None
    when it is no JSON object."""
    if member.size > MAX_PACKAGE_METADATA_BYTES:
        raise LimitExceeded(f"{printable(str(path))}: package.json is too large",
                            limit="package_metadata",
                            value=MAX_PACKAGE_METADATA_BYTES)
    data = archive.extractfile(member)
    document = parse_json(data.read() if data else b"", f"{path}: package.json")
    if not isinstance(document, dict):
        return None
    name, version = document.get("name"), document.get("version")
    if isinstance(name, str) and isinstance(version, str) and name and version:
        return name, version
    raise InputError(f"{printable(str(path))}: package.json has no name or version",
                     param="artifact")


def _npm_evidence(package: Path) -> InstalledEvidence:
    resolved = package.resolve()
    if not (resolved / "package.json").is_file():
        raise InputError(f"npm:{printable(str(package))} is not an installed package "
                         "directory (no package.json)", param="installed")
    root = next((p.parent for p in resolved.parents if p.name == "node_modules"), None)
    if root is None:
        raise InputError(f"npm:{printable(str(package))} is not under a node_modules "
                         "directory", param="installed")
    key = resolved.relative_to(root).as_posix()
    for name in _NPM_LOCKFILES:
        lockfile = root / name
        if not lockfile.is_file():
            continue
        entry = _lock_entry(lockfile, key)
        if entry is None:
            continue
        return _locked_npm_evidence(entry, lockfile, key, resolved)
    raise InputError(f"no npm lockfile beside {printable(str(root))} records {key}: npm "
                     "keeps the tarball's integrity only there", param="installed")


def _locked_npm_evidence(entry: Mapping[str, object], lockfile: Path, key: str,
                         resolved: Path) -> InstalledEvidence:
    """Step: the evidence a lockfile entry gives for the package installed at ``key``
    (its integrity; a version other than the installed one is a problem)."""
    integrity = entry.get("integrity")
    if not isinstance(integrity, str):
        raise InputError(f"{printable(str(lockfile))}: {key} has no integrity (npm "
                         "records none for a linked or git dependency)", param="installed")
    digests = _sri_digests(integrity, str(lockfile))
    problems: list[str] = []
    installed_version = _package_version(resolved / "package.json")
    if entry.get("version") != installed_version:
        problems.append(f"{key} is version {installed_version!r}, but {lockfile.name} "
                        f"records {entry.get('version')!r}")
    return InstalledEvidence(
        "npm", key, digests, f"{lockfile} (integrity of {key})",
        proves="the tarball npm installed at this path is the attested one",
        cannot_prove="that its files were not edited after install (npm keeps no "
        "per-file digests)", problems=tuple(problems),
        version=installed_version if isinstance(installed_version, str) else None,
    )


_NPX = ("npx", "npx.cmd")
_NPM_NAME = re.compile(r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*")


def npm_package_run_by(command: Sequence[str], cwd: str | Path | None = None
                       ) -> InstalledEvidence | None:
    """The installed npm package a stdio ``command`` runs, with its lockfile integrity, when
    that is certain; None otherwise (never a guess).

    Certain means: an argument is a file inside ``node_modules/PKG`` (``node
    node_modules/PKG/dist/index.js``), or the command is ``npx [-y] PKG[@VERSION] …`` and
    ``node_modules/PKG`` under ``cwd`` holds that version (``npx`` runs a project's installed
    package before fetching one); and the package's lockfile records an integrity that agrees
    with its installed version. A version range, ``--package``, a package npx would download
    or a package without integrity gives None: the command line is a request, not evidence.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    directory = _npm_path_argument(command, base) or _npx_package(command, base)
    if directory is None:
        return None
    try:
        evidence = _npm_evidence(directory)
    except InputError:
        return None
    return None if evidence.problems else evidence


def _npm_path_argument(command: Sequence[str], base: Path) -> Path | None:
    for arg in command[1:]:
        parts = Path(arg).parts
        if "node_modules" not in parts or not (base / arg).is_file():
            continue
        at = len(parts) - 1 - parts[::-1].index("node_modules")
        width = 2 if parts[at + 1:at + 2] and parts[at + 1].startswith("@") else 1
        if len(parts) > at + width + 1:  # a file inside the package, not the package itself
            return base.joinpath(*parts[: at + 1 + width])
    return None


def _npx_package(command: Sequence[str], base: Path) -> Path | None:
    spec = _npx_package_spec(command)
    if spec is None:
        return None
    name, version = _npx_spec(spec)
    if not _NPM_NAME.fullmatch(name):
        return None
    directory = base / "node_modules" / name
    if not (directory / "package.json").is_file():
        return None
    if version is not None and _package_version(directory / "package.json") != version:
        return None  # npx would fetch the requested version, not run this one
    return directory


def _lock_entry(lockfile: Path, key: str) -> Mapping[str, object] | None:
    from histor_sign.canonical import read_json_file

    document = read_json_file(str(lockfile))
    packages = document.get("packages") if isinstance(document, dict) else None
    entry = packages.get(key) if isinstance(packages, dict) else None
    return entry if isinstance(entry, dict) else None


def _package_version(path: Path) -> object:
    from histor_sign.canonical import read_json_file

    document = read_json_file(str(path))
    return document.get("version") if isinstance(document, dict) else None


def _sri_digests(integrity: str, source: str) -> dict[str, str]:
    """``sha512-<base64> …`` (Subresource Integrity) as hex digests we compare."""
    digests: dict[str, str] = {}
    for token in integrity.split():
        alg, _, value = token.partition("-")
        if alg not in ("sha256", "sha512"):
            continue
        try:
            digests[alg] = base64.b64decode(value.split("?")[0], validate=True).hex()
        except (binascii.Error, ValueError):
            raise InputError(f"{source}: integrity {printable(token, 120)!r} is not base64",
                             param="installed") from None
    if not digests:
        raise InputError(f"{source}: integrity has no sha256 or sha512 digest",
                         param="installed")
    return digests


def _pypi_evidence(dist_info: Path) -> InstalledEvidence:
    if not (dist_info.name.endswith(".dist-info") and (dist_info / "RECORD").is_file()):
        raise InputError(f"pypi:{printable(str(dist_info))} is not an installed "
                         ".dist-info directory with a RECORD", param="installed")
    direct = dist_info / "direct_url.json"
    hashes: object = None
    if direct.is_file():
        from histor_sign.canonical import read_json_file

        document = read_json_file(str(direct))
        archive = document.get("archive_info") if isinstance(document, dict) else None
        hashes = archive.get("hashes") if isinstance(archive, dict) else None
    if not isinstance(hashes, dict) or not isinstance(hashes.get("sha256"), str):
        raise InputError(
            f"{printable(str(dist_info))} records no digest of the distribution it came from: "
            "pip writes direct_url.json archive_info.hashes only when it installs a file or "
            "URL, not from an index; install the released wheel by file (pip install "
            "./NAME.whl), or check the downloaded wheel file itself", param="installed",
        )
    return InstalledEvidence(
        "pypi", dist_info.name, {"sha256": hashes["sha256"]}, str(direct),
        proves="pip installed this distribution from the attested wheel or sdist, and every "
        "file RECORD lists still has its recorded digest",
        cannot_prove="that RECORD and direct_url.json themselves were not rewritten, nor "
        "what files RECORD does not list",
        problems=tuple(_record_problems(dist_info)),
    )


def _record_problems(dist_info: Path) -> list[str]:
    """Files RECORD lists with a digest whose bytes differ now (or that are gone)."""
    import csv
    import io

    site = dist_info.parent
    prefix = site.resolve().parents[2] if len(site.resolve().parents) > 2 else site.resolve()
    record = dist_info / "RECORD"
    if record.stat().st_size > MAX_PACKAGE_METADATA_BYTES:
        raise LimitExceeded(f"{printable(str(record))} is too large",
                            limit="package_metadata", value=MAX_PACKAGE_METADATA_BYTES)
    text = record.read_text(encoding="utf-8", errors="replace")
    problems: list[str] = []
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 2 or not row[1]:
            continue
        alg, _, expected = row[1].partition("=")
        path = (site / row[0]).resolve()
        if alg != "sha256" or not path.is_relative_to(prefix):  # scripts: ../../../bin
            continue
        if not path.is_file():
            problems.append(f"{row[0]} (in RECORD) is missing")
            continue
        actual = base64.urlsafe_b64encode(bytes.fromhex(file_digests(path)["sha256"]))
        if actual.rstrip(b"=").decode() != expected:
            problems.append(f"{row[0]} differs from its RECORD digest")
    return problems
