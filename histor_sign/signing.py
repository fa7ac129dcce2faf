"""Keyless signing of a revision statement.

identity token (given, or ambient GitHub Actions OIDC) → sigstore
``SigningContext`` from the chosen trust → ``sign_artifact(signed bytes)`` (an ordinary
``hashedrekord`` bundle) → the **full Verifier** on the fresh bundle, because the signer
itself never checks what Rekor answered → ``transparencyLog`` copied from the bundle →
envelope, statement bytes and bundle, written all-or-nothing.

Every sigstore / requests / cryptography error is turned into a :class:`SigningError`
(exit 2) or :class:`InputError`; sigstore is imported lazily.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from histor_sign._atomic import ReservedOutputs, reserve_outputs, write_all_atomic
from histor_sign._sigstore_trust import Trust, _first_line
from histor_sign.errors import HistorError, InputError, SigningError, VerificationFailed
from histor_sign.layout import attestation_path, companion_paths, manifest_path, part_paths
from histor_sign.models import GITHUB_ACTIONS_ISSUER, SignedEnvelope, signed_bytes, statement_of
from histor_sign.verification._certificate import CertificateFacts

if TYPE_CHECKING:
    from sigstore.oidc import IdentityToken

    from histor_sign.models import ArtifactSubject, StatementLike

class NoIdentityToken(SigningError):
    """No ``identity_token`` was given and no ambient credential was found."""

    def __init__(self) -> None:
        super().__init__(
            "no identity token: pass `identity_token`, or run in GitHub Actions with "
            "'permissions: id-token: write'",
            param="identity_token",
        )

_GITHUB_PERMISSION = (
    "GitHub Actions did not provide an OIDC token: the workflow (or job) needs "
    "'permissions: id-token: write' (pull requests from forks never get one)"
)


@dataclass(frozen=True)
class SignedRevision:
    """A freshly signed and verified revision: the envelope and its two companion files."""

    envelope: SignedEnvelope
    statement_bytes: bytes
    bundle_json: bytes
    #: The in-toto attestation's bundles, one per part (see :mod:`histor_sign.attestation`).
    attestation_json: tuple[bytes, ...] = ()
    #: The manifest's canonical bytes (:func:`histor_sign.revision.manifest_bytes`), when the
    #: signer had the tools: the statement carries only their digest. Empty: not written.
    manifest_json: bytes = b""

    def files(self, output: str | Path) -> dict[Path, bytes]:
        """Envelope, statement bytes, bundle, attestation part(s) and, when known, the
        manifest's bytes (``X.manifest.json``), keyed by the path each is written to."""

        statement_path, bundle_path = companion_paths(output)
        files = {
            Path(output): self.envelope.to_bytes(),
            statement_path: self.statement_bytes,
            bundle_path: self.bundle_json,
        }
        if self.attestation_json:
            paths = part_paths(attestation_path(output), len(self.attestation_json))
            files.update(zip(paths, self.attestation_json, strict=True))
        if self.manifest_json:
            files[manifest_path(output)] = self.manifest_json
        return files

    def write(self, output: str | Path, reserved: ReservedOutputs | None = None) -> list[Path]:
        """Write envelope, ``*.statement.json``, ``*.sigstore.json``,
        ``*.intoto.sigstore.json`` and (when known) ``*.manifest.json`` atomically (all or
        none); ``reserved`` is what :func:`reserve_signed_outputs` checked before signing."""
        files = self.files(output)
        write_all_atomic(files, reserved=reserved)
        return list(files)


def reserve_signed_outputs(output: str | Path, statement_size: int, *,
                           manifest: bool = False) -> ReservedOutputs:
    """Check, before anything is signed, that the files :meth:`SignedRevision.write` will
    write for ``output`` can be written: a full or read-only file system, a parent that is
    a file, a FIFO no reader opens within the bound — each is one
    :class:`~histor_sign.errors.OperationalError` now, not after a log entry exists.
    ``statement_size`` (the statement's bytes) sizes the room checked free; ``manifest``
    reserves ``X.manifest.json`` too (a revision that will carry its manifest's bytes)."""
    from histor_sign._limits import OUTPUT_ROOM_SLACK

    statement_path, bundle_path = companion_paths(output)
    paths = [Path(output), statement_path, bundle_path, attestation_path(output)]
    if manifest:
        paths.append(manifest_path(output))
    return reserve_outputs(paths, room=4 * statement_size + OUTPUT_ROOM_SLACK)


@dataclass(frozen=True)
class TokenIdentity:
    """What the certificate will say, predicted from the token (and checked afterwards)."""

    token: IdentityToken
    issuer: str
    identity: str
    #: The token's claims (unverified here; Fulcio checks them) and the raw token, kept so a
    #: release can check the namespace before signing and keep the token from a server.
    claims: Mapping[str, Any] = field(default_factory=dict, repr=False)
    raw: str = field(default="", repr=False)


def _unverified_claims(raw: str) -> dict[str, Any]:
    import jwt

    try:
        claims: dict[str, Any] = jwt.decode(raw, options={"verify_signature": False})
    except Exception:
        raise SigningError("identity token is not a JWT") from None
    return claims


def obtain_identity(identity_token: str | None) -> TokenIdentity:
    """Load the explicit token or detect an ambient one; predict the certificate identity."""
    from sigstore.oidc import IdentityError, IdentityToken

    raw = identity_token.strip() if identity_token is not None else _ambient_token()
    claims = _unverified_claims(raw)
    _check_claims(claims)
    try:
        token = IdentityToken(raw)
    except IdentityError as exc:
        message = str(exc)
        if "validity period" in message or "expired" in message.lower():
            message = "identity token has expired (or is not valid yet)"
        raise SigningError(f"identity token rejected: {message}") from None
    issuer = token.federated_issuer
    if token.issuer == GITHUB_ACTIONS_ISSUER:
        workflow_ref = claims.get("job_workflow_ref")
        if not isinstance(workflow_ref, str) or not workflow_ref:
            raise SigningError("GitHub Actions token has no job_workflow_ref claim")
        identity = f"https://github.com/{workflow_ref}"
    else:
        identity = token.identity
    return TokenIdentity(token=token, issuer=issuer, identity=identity, claims=claims, raw=raw)


def _ambient_token() -> str:
    """Step: the ambient OIDC credential (GitHub Actions and the like), or why there is none."""
    from sigstore.oidc import IdentityError, detect_credential

    try:
        raw = detect_credential()
    except IdentityError as exc:
        if "permission" in str(exc).lower() or "ACTIONS_ID_TOKEN" in str(exc):
            raise SigningError(_GITHUB_PERMISSION) from None
        raise SigningError(f"ambient OIDC credential detection failed: {_first_line(exc)}") \
            from None
    except Exception as exc:  # urllib3/network errors inside the detector
        raise SigningError(f"ambient OIDC credential detection failed: {_first_line(exc)}") \
            from None
    if not raw:
        raise NoIdentityToken()
    return raw


def _check_claims(claims: dict[str, Any]) -> None:
    """Step: the token is for Sigstore and within its validity period (checked before
    sigstore-python parses it, for a clearer message)."""
    aud = claims.get("aud")
    audiences = aud if isinstance(aud, list) else [aud]
    if "sigstore" not in audiences:
        raise SigningError(f"identity token audience is {aud!r}, expected 'sigstore'")
    now = time.time()
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if isinstance(exp, int | float) and exp <= now:
        raise SigningError(
            f"identity token expired {int(now - exp)} s ago; request a fresh one"
        )
    if isinstance(nbf, int | float) and nbf > now + 5:
        raise SigningError("identity token is not valid yet (nbf is in the future)")


def _signing_failure(exc: BaseException) -> SigningError:
    """Name which service failed, without echoing tokens."""
    kind = type(exc).__name__
    module = type(exc).__module__
    if kind == "ExpiredIdentity":
        return SigningError("identity token expired before signing finished")
    if kind == "ExpiredCertificate":
        return SigningError("signing certificate expired before signing finished")
    if "fulcio" in module or kind == "FulcioClientError":
        return SigningError(f"Fulcio refused the certificate request: {_first_line(exc)}")
    if "rekor" in module or kind == "RekorClientError":
        return SigningError(f"Rekor refused the log entry: {_first_line(exc)}")
    if module.startswith(("requests", "urllib3")):
        return SigningError(f"cannot reach the Sigstore services: {_first_line(exc)}")
    return SigningError(f"signing failed ({kind}): {_first_line(exc)}")


def sign(
    statement: StatementLike,
    *,
    trust: Trust | None = None,
    identity_token: str | None = None,
) -> SignedEnvelope:
    """Sign a revision statement keyless with Sigstore and return the verified envelope.

    ``trust`` defaults to production; ``identity_token`` to ambient credentials (GitHub
    Actions with ``id-token: write``). The statement's identity must be the one the
    certificate will carry. Nothing is written; see :func:`sign_statement` for the
    companion files.
    """
    return sign_statement(statement, trust=trust, identity_token=identity_token).envelope


def sign_statement(
    statement: StatementLike,
    *,
    trust: Trust | None = None,
    identity_token: str | None = None,
    token_identity: TokenIdentity | None = None,
    capture: Mapping[str, Any] | None = None,
    surface: Mapping[str, Any] | None = None,
    require_owned_namespace: bool = True,
    capture_observed: bool = False,
    artifacts: Sequence[ArtifactSubject] = (),
) -> SignedRevision:
    """Sign a revision statement and verify the result before returning it.

    ``trust`` defaults to production. The token is ``token_identity`` (from
    :func:`obtain_identity`, e.g. when the caller first needed the identity to build the
    statement), else ``identity_token``, else ambient credentials. The statement's
    ``identity`` must equal the identity the certificate will carry (for GitHub: the
    workflow URI), so a revision can never claim a signer other than the one that signed it.

    The same signer also signs the in-toto attestation of the revision (``capture`` and
    ``surface`` go into its predicate; ``capture_observed`` says whether this process
    fetched the server itself, and the capture goes in without local paths or argument
    values: :func:`~histor_sign.attestation.public_capture`); every bundle is verified
    before anything is returned. ``artifacts`` (:func:`histor_sign.artifacts.artifact_subjects`)
    become subjects of every attestation part; the envelope and statement bytes do not
    change with them.

    An ``io.github.<owner>`` server the token's owner cannot own is refused before any
    signature (:class:`NamespaceNotOwned`): such an envelope never verifies, so signing it
    would only spend a log entry. ``require_owned_namespace=False`` signs it anyway — for
    producing the squatting envelopes that verifier tests must reject.
    """
    from histor_sign.attestation import build_attestation, public_capture
    from histor_sign.verification import log_entry_of

    trust = trust or Trust.production()
    stmt = statement_of(statement, "statement")
    who = token_identity or obtain_identity(identity_token)
    if stmt.identity != who.identity:
        raise InputError(
            f"statement identity {stmt.identity!r} is not the signing identity "
            f"{who.identity!r} from the OIDC token; rebuild the statement with that identity"
        )
    if require_owned_namespace:
        require_namespace(stmt.server, who)
    data = signed_bytes(stmt, issuer=who.issuer, identity=who.identity)
    statements = build_attestation(
        stmt, issuer=who.issuer, identity=who.identity, surface=surface, artifacts=artifacts,
        capture=public_capture(capture, observed=capture_observed) if capture is not None
        else None,
    )
    config = trust.client_trust_config()
    bundle_text, attestation_texts = _sigstore_sign(config, who, data, statements)
    _verify_fresh(config, who, data, bundle_text, attestation_texts)
    import json

    bundle_doc = json.loads(bundle_text)
    envelope = SignedEnvelope(
        statement=stmt,
        issuer=who.issuer,
        identity=who.identity,
        bundle=bundle_doc,
        transparency_log=log_entry_of(bundle_doc),
    )
    return SignedRevision(
        envelope, data, bundle_text.encode("utf-8"),
        tuple(t.encode("utf-8") for t in attestation_texts),
    )

def sign_bytes(data: bytes, *, who: TokenIdentity, trust: Trust) -> dict[str, Any]:
    """Sign ``data`` (an ordinary ``hashedrekord`` bundle) as ``who`` and verify the fresh
    bundle fully before returning its JSON document (:func:`sign_documents` without
    in-toto statements)."""
    return sign_documents(data, (), who=who, trust=trust)[0]


def _sigstore_sign(config: Any, who: TokenIdentity, data: bytes,
                   statements: Sequence[bytes]) -> tuple[str, list[str]]:
    """One signer (one certificate) for the revision bytes and every attestation part:
    (bundle JSON, attestation bundle JSONs). Any failure of the signing services is a
    :class:`SigningError` that says what to do."""
    try:
        from sigstore.dsse import Statement as InTotoStatement
        from sigstore.sign import SigningContext

        context = SigningContext.from_trust_config(config)
        with context.signer(who.token, cache=True) as signer:
            bundle = signer.sign_artifact(data)
            attestations = [signer.sign_dsse(InTotoStatement(s)) for s in statements]
        return bundle.to_json(), [a.to_json() for a in attestations]
    except HistorError:
        raise
    except Exception as exc:
        raise _signing_failure(exc) from None


def _verify_fresh(config: Any, who: TokenIdentity, data: bytes, bundle_text: str,
                  attestation_texts: Sequence[str]) -> None:
    """Verify what was just signed against the trust root it was signed under, and that
    every certificate names the token's identity; nothing is written otherwise."""
    import json

    from histor_sign.attestation import verify_attestation_bundle
    from histor_sign.verification import verify_artifact_bundle
    from histor_sign.verification.policy import Pins

    try:
        verify_artifact_bundle(data, bundle_text, trusted_root=config.trusted_root,
                               pins=Pins(cert_identity=who.identity, issuer=who.issuer))
    except VerificationFailed as exc:
        raise SigningError(
            f"the fresh bundle does not verify against the trust root ({exc}); "
            "nothing was written"
        ) from None
    for text in attestation_texts:
        try:
            _, facts = verify_attestation_bundle(
                json.loads(text), trusted_root=config.trusted_root
            )
        except VerificationFailed as exc:
            raise SigningError(
                f"the fresh attestation does not verify against the trust root ({exc}); "
                "nothing was written"
            ) from None
        if who.identity not in facts.sans or facts.issuer != who.issuer:
            raise SigningError("the fresh attestation's certificate names another identity")


def sign_documents(
    data: bytes, statements: Sequence[bytes], *, who: TokenIdentity, trust: Trust
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Sign ``data`` (a ``hashedrekord`` bundle) and each in-toto statement (a DSSE
    bundle) as ``who``, and verify every fresh bundle fully — signature, chain, log, and
    the certificate naming ``who`` — before returning their JSON documents: what a
    revision's signatures get, for documents beside it (a yank)."""
    import json

    from histor_sign.attestation import verify_attestation_bundle
    from histor_sign.verification import verify_artifact_bundle
    from histor_sign.verification.policy import Pins

    config = trust.client_trust_config()
    try:
        from sigstore.dsse import Statement as InTotoStatement
        from sigstore.sign import SigningContext

        context = SigningContext.from_trust_config(config)
        with context.signer(who.token, cache=True) as signer:
            bundle_text: str = signer.sign_artifact(data).to_json()
            texts = [signer.sign_dsse(InTotoStatement(s)).to_json() for s in statements]
    except HistorError:
        raise
    except Exception as exc:
        raise _signing_failure(exc) from None
    try:
        verify_artifact_bundle(data, bundle_text, trusted_root=config.trusted_root,
                               pins=Pins(cert_identity=who.identity, issuer=who.issuer))
    except VerificationFailed as exc:
        raise SigningError(
            f"the fresh bundle does not verify against the trust root ({exc}); "
            "nothing was written"
        ) from None
    documents: list[dict[str, Any]] = [json.loads(t) for t in texts]
    for document in documents:
        try:
            _, facts = verify_attestation_bundle(document, trusted_root=config.trusted_root)
        except VerificationFailed as exc:
            raise SigningError(f"the fresh attestation does not verify against the trust "
                               f"root ({exc}); nothing was written") from None
        if who.identity not in facts.sans or facts.issuer != who.issuer:
            raise SigningError("the fresh attestation's certificate names another identity")
    bundle: dict[str, Any] = json.loads(bundle_text)
    return bundle, documents


class NamespaceNotOwned(InputError):
    """The signing identity cannot own the server's ``io.github.<owner>`` namespace, so
    the fresh envelope would fail verification: refused before anything is signed."""

    def __init__(self, server: str, problems: list[str]) -> None:
        self.server, self.problems = server, problems
        super().__init__(
            f"server {server!r} cannot be signed by this signing identity: "
            f"{'; '.join(problems)}; nothing was signed"
        )


@dataclass(frozen=True)
class ClaimedIdentity:
    """What a signing identity's token will claim, known before there is a token: enough
    for :func:`require_namespace` (issuer, workflow identity, repository and owner
    claims), nothing to sign with."""

    issuer: str
    identity: str
    claims: Mapping[str, Any] = field(default_factory=dict)


#: GitHub Actions' default variables that carry the values of the job's OIDC claims.
_ACTIONS_CLAIM_VARIABLES = {
    "repository": "GITHUB_REPOSITORY",
    "repository_owner": "GITHUB_REPOSITORY_OWNER",
    "repository_id": "GITHUB_REPOSITORY_ID",
    "repository_owner_id": "GITHUB_REPOSITORY_OWNER_ID",
    "ref": "GITHUB_REF",
}


def actions_identity(identity: str, env: Mapping[str, str]) -> ClaimedIdentity | None:
    """The claims this GitHub Actions job's OIDC token would carry, read from the runner's
    default variables (``GITHUB_REPOSITORY_OWNER``, ``GITHUB_REPOSITORY_OWNER_ID``, …), for
    ``identity``; None outside GitHub Actions (``GITHUB_ACTIONS`` is not ``true`` or the
    owner is not set). The repository owner is the calling repository's even for a
    reusable workflow, exactly as in the token, so a namespace check on it is sound."""
    if env.get("GITHUB_ACTIONS") != "true" or not env.get("GITHUB_REPOSITORY_OWNER"):
        return None
    claims = {
        claim: env[variable]
        for claim, variable in _ACTIONS_CLAIM_VARIABLES.items() if env.get(variable)
    }
    return ClaimedIdentity(GITHUB_ACTIONS_ISSUER, identity, claims)


def predicted_facts(who: TokenIdentity | ClaimedIdentity) -> CertificateFacts:
    """The certificate facts Fulcio will derive from the token (GitHub claim mapping)."""

    extensions = {"8": who.issuer}
    if who.issuer == GITHUB_ACTIONS_ISSUER:
        claims = who.claims
        for number, claim, prefix in (
            ("12", "repository", "https://github.com/"),
            ("16", "repository_owner", "https://github.com/"),
            ("14", "ref", ""),
            ("15", "repository_id", ""),
            ("17", "repository_owner_id", ""),
        ):
            value = claims.get(claim)
            if isinstance(value, str | int) and not isinstance(value, bool) and str(value):
                extensions[number] = f"{prefix}{value}"
    return CertificateFacts((who.identity,), extensions)


def require_namespace(server: str, who: TokenIdentity | ClaimedIdentity) -> CertificateFacts:
    """Refuse, before any signature is spent, a server name whose ``io.github.<owner>``
    namespace the signing identity cannot own (the envelope would never verify).
    Returns the certificate facts Fulcio will derive from the token (or, for a
    :class:`ClaimedIdentity`, from the claims it will carry)."""
    from histor_sign.verification.policy import Pins, identity_problems

    facts = predicted_facts(who)
    problems = identity_problems(facts, Pins(issuer=who.issuer), server=server)
    if problems:
        raise NamespaceNotOwned(server, problems)
    return facts
