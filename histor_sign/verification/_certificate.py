"""What a Fulcio certificate says about its holder: SAN, OIDC issuer, and the GitHub
Actions extensions (repository, owner, ref, numeric ids) that identity pins compare.

Fulcio writes extensions .1–.6 as raw UTF-8 bytes (legacy) and .8–.22, like the
``otherName`` SAN, as a DER UTF8String; we read both and prefer the newer one when both
are present. ``cryptography`` hands unknown extensions over as their DER bytes, and its
own DER decoder (``cryptography.hazmat.asn1``, cryptography ≥ 47) reads the UTF8String —
strictly: a wrong tag, a non-minimal length, trailing bytes or invalid UTF-8 make the
value absent, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.x509 import Certificate

#: The OIDC issuer of GitHub Actions workflow tokens, as Fulcio records it in certificates.
FULCIO_OID = "1.3.6.1.4.1.57264.1."
SIGSTORE_OTHERNAME_OID = "1.3.6.1.4.1.57264.1.7"
_LEGACY = frozenset({"1", "2", "3", "4", "5", "6"})
#: A GitHub Actions workflow identity: https://github.com/OWNER/REPO/PATH@REF.
_WORKFLOW_URI = re.compile(
    r"^https://github\.com/(?P<repository>[^/@\s]+/[^/@\s]+)/"
    r"(?P<path>\.github/workflows/[^@\s]+)@(?P<ref>\S+)$"
)


@dataclass(frozen=True)
class WorkflowIdentity:
    """The parts of a GitHub workflow identity (the certificate SAN / Build Signer URI)."""

    repository: str
    path: str
    ref: str


def parse_workflow_identity(identity: str) -> WorkflowIdentity | None:
    """``https://github.com/O/R/.github/workflows/F.yml@REF`` → its parts; None otherwise."""
    match = _WORKFLOW_URI.match(identity)
    if match is None:
        return None
    return WorkflowIdentity(match["repository"], match["path"], match["ref"])


def _der_utf8_string(der: bytes) -> str | None:
    """The text of a DER-encoded UTF8String, or None when ``der`` is not exactly one."""
    from cryptography.hazmat import asn1

    try:
        value = asn1.decode_der(str, der)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class CertificateFacts:
    """The holder's SANs and the Fulcio extensions by their last OID arc (``"12"`` is
    1.3.6.1.4.1.57264.1.12, the source repository URI)."""

    sans: tuple[str, ...]
    extensions: dict[str, str] = field(default_factory=dict)

    @property
    def identity(self) -> str | None:
        return self.sans[0] if len(self.sans) == 1 else None

    def ext(self, *numbers: str) -> str | None:
        for number in numbers:
            if number in self.extensions:
                return self.extensions[number]
        return None

    @property
    def issuer(self) -> str | None:
        return self.ext("8", "1")

    @property
    def repository(self) -> str | None:
        """``owner/repo`` of the run's source repository (ext .12, else legacy .5)."""
        uri = self.ext("12")
        if uri is not None and uri.startswith("https://github.com/"):
            return uri.removeprefix("https://github.com/")
        return self.ext("5")

    def owners(self) -> list[str]:
        """Every owner the certificate states: ext .16 owner URI and legacy .5 prefix."""
        out: list[str] = []
        owner_uri = self.ext("16")
        if owner_uri is not None:
            out.append(owner_uri.removeprefix("https://github.com/"))
        legacy_repo = self.ext("5")
        if legacy_repo is not None:
            out.append(legacy_repo.split("/", 1)[0])
        return out

    @property
    def ref(self) -> str | None:
        return self.ext("14", "6")

    @property
    def workflow(self) -> str | None:
        """The signing workflow file, tag- and branch-independent.

        ``.github/workflows/sign.yml`` when it lives in the source repository (the common
        case), ``OWNER/REPO/.github/workflows/sign.yml`` for a reusable workflow called
        from elsewhere; None when the identity is not a GitHub workflow.
        """
        parts = parse_workflow_identity(self.identity) if self.identity else None
        if parts is None:
            return None
        source = self.repository
        if source is not None and source.lower() == parts.repository.lower():
            return parts.path
        return f"{parts.repository}/{parts.path}"

    @property
    def owner_id(self) -> str | None:
        return self.ext("17")

    @property
    def repository_id(self) -> str | None:
        return self.ext("15")


def certificate_facts(cert: Certificate) -> CertificateFacts:
    """Read the facts from a certificate; extensions that do not decode are left out."""
    return CertificateFacts(tuple(_sans(cert)), _fulcio_extensions(cert))


def _sans(cert: Certificate) -> list[str]:
    """Step: the certificate's URI, email and Sigstore OtherName subject alternative names."""
    from cryptography import x509

    sans: list[str] = []
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        san = None
    if san is not None:
        sans += san.get_values_for_type(x509.UniformResourceIdentifier)
        sans += san.get_values_for_type(x509.RFC822Name)
        for other in san.get_values_for_type(x509.OtherName):
            if other.type_id.dotted_string == SIGSTORE_OTHERNAME_OID:
                decoded = _der_utf8_string(other.value)
                if decoded is not None:
                    sans.append(decoded)
    return sans


def _fulcio_extensions(cert: Certificate) -> dict[str, str]:
    """Step: the Fulcio extensions that decode, by their number under the Fulcio arc."""
    extensions: dict[str, str] = {}
    for ext in cert.extensions:
        oid = ext.oid.dotted_string
        if not oid.startswith(FULCIO_OID):
            continue
        number = oid.removeprefix(FULCIO_OID)
        raw = getattr(ext.value, "value", None)
        if not isinstance(raw, bytes):
            continue
        if number in _LEGACY:
            try:
                extensions[number] = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
        else:
            decoded = _der_utf8_string(raw)
            if decoded is not None:
                extensions[number] = decoded
    return extensions
