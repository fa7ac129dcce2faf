"""Publish a revision's in-toto attestation to GitHub's attestations store, so anyone can
check it with ``gh attestation verify`` (gh ≥ 2.49) as well as with ``histor-sign verify``.

The request is GitHub's REST "create an attestation" call: ``POST
{api}/repos/{owner}/{repo}/attestations`` with ``{"bundle": <Sigstore bundle>}``, a token
allowed ``attestations: write`` (the workflow's ``GITHUB_TOKEN``), ``Accept:
application/vnd.github+json`` and the API version header. Each part of a multi-part
attestation is one bundle, published one by one. The token is sent only there (https, or
http to a loopback host for tests) and never appears in a message; redirects are not
followed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from histor_sign._chain_store import _checked_url
from histor_sign._escape import printable
from histor_sign._limits import DEFAULT_TIMEOUT
from histor_sign.canonical import parse_json
from histor_sign.errors import FetchError, InputError
from histor_sign.pins import validate_repository

if TYPE_CHECKING:
    import httpx

GITHUB_API_URL = "https://api.github.com"
GITHUB_API_VERSION = "2022-11-28"
#: Bytes of a GitHub answer read (its ``id``, or an error message).
_MAX_ANSWER = 64 * 1024


@dataclass(frozen=True)
class AttestationRequest:
    """One ``POST``: where, with which headers (the token among them), and the body."""

    url: str
    headers: dict[str, str]
    body: bytes


def attestation_request(
    bundle: bytes, repository: str, *, token: str, api_url: str = GITHUB_API_URL,
    source: str = "attestation",
) -> AttestationRequest:
    """The request that stores ``bundle`` (a Sigstore bundle JSON holding a DSSE
    envelope) as an attestation of ``repository`` (``OWNER/REPO``)."""
    repository = validate_repository(repository)
    base = _checked_url(api_url.rstrip("/"), "api_url")
    document: Any = parse_json(bundle, source)
    if not (isinstance(document, dict) and isinstance(document.get("dsseEnvelope"), dict)):
        raise InputError(f"{source}: not a Sigstore bundle of an attestation (no dsseEnvelope)")
    return AttestationRequest(
        url=f"{base}/repos/{repository}/attestations",
        headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": GITHUB_API_VERSION,
            "Content-Type": "application/json",
        },
        body=json.dumps({"bundle": document}, ensure_ascii=False,
                        separators=(",", ":")).encode(),
    )


def publish_attestations(
    bundles: Sequence[tuple[str, bytes]], repository: str, *, token: str,
    api_url: str = GITHUB_API_URL, timeout: float = DEFAULT_TIMEOUT,
) -> list[int]:
    """POST each ``(source, bundle)`` in order; the attestation ids GitHub gave them.
    A refusal (HTTP status other than 200/201) or a network failure is :class:`FetchError`
    with GitHub's message (clipped, escaped; never the token)."""
    import httpx

    requests = [attestation_request(data, repository, token=token, api_url=api_url,
                                    source=source) for source, data in bundles]
    ids: list[int] = []
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        for request in requests:
            try:
                response = client.post(request.url, headers=request.headers,
                                       content=request.body)
            except httpx.HTTPError as exc:
                raise FetchError(f"cannot reach {request.url}: "
                                 f"{printable(str(exc) or type(exc).__name__, 200)}") from None
            ids.append(_attestation_id(response, request.url))
    return ids


def _attestation_id(response: httpx.Response, url: str) -> int:
    """Step: the id in GitHub's answer to one POST; a refusal names GitHub's message."""
    answer = response.content[:_MAX_ANSWER]
    try:
        doc: Any = json.loads(answer)
    except ValueError:
        doc = None
    if response.status_code not in (200, 201):
        message = doc.get("message") if isinstance(doc, dict) else None
        raise FetchError(
            f"{url} refused the attestation: HTTP {response.status_code}"
            + (f": {printable(message, 200)}" if isinstance(message, str) else ""))
    if not (isinstance(doc, dict) and isinstance(doc.get("id"), int)):
        raise FetchError(f"{url} answered without an attestation id")
    ident: int = doc["id"]
    return ident
