"""GitHub-Actions-style OIDC tokens for the local instance.

Tokens carry the same claims GitHub issues (``job_workflow_ref``, ``repository``,
``repository_owner_id``, ...) so the local Fulcio can map them onto certificate extensions
exactly like the real one. They are signed with a key only this instance knows; the local
Fulcio refuses tokens it did not mint.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from dataclasses import dataclass, replace
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

from histor_sign.models import GITHUB_ACTIONS_ISSUER

SIGSTORE_AUDIENCE = "sigstore"

_WORKFLOW_URI = re.compile(
    r"https://github\.com/(?P<repository>[^/\s]+/[^/\s]+)/(?P<path>\.github/workflows/[^@\s]+)"
    r"@(?P<ref>\S+)"
)


@dataclass(frozen=True)
class WorkflowIdentity:
    """Who a minted token says is running: the workflow file, its ref, and the caller repo.

    ``repository`` is the repository whose workflow run asked for the token. It differs from
    the workflow's own repository only for reusable workflows (certificate SAN = called
    workflow, source-repository extensions = caller), which is what lets tests model
    namespace squatting.
    """

    identity: str
    repository: str
    ref: str
    owner_id: str = "1000001"
    repository_id: str = "2000001"
    sha: str = "0" * 40
    event_name: str = "push"

    @classmethod
    def parse(
        cls,
        identity: str,
        *,
        repository: str | None = None,
        ref: str | None = None,
        owner_id: str | None = None,
        repository_id: str | None = None,
        event_name: str | None = None,
    ) -> WorkflowIdentity:
        match = _WORKFLOW_URI.fullmatch(identity)
        if match is None:
            raise ValueError(
                f"not a GitHub workflow identity: {identity!r} (expected "
                "https://github.com/OWNER/REPO/.github/workflows/FILE.yml@REF)"
            )
        base = cls(
            identity=identity,
            repository=repository or match["repository"],
            ref=ref or match["ref"],
        )
        overrides = {
            k: v
            for k, v in (
                ("owner_id", owner_id),
                ("repository_id", repository_id),
                ("event_name", event_name),
            )
            if v is not None
        }
        return replace(base, **overrides)

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]

    @property
    def job_workflow_ref(self) -> str:
        return self.identity.removeprefix("https://github.com/")

    def claims(self, *, audience: str, now: int, lifetime: int) -> dict[str, Any]:
        return {
            "iss": GITHUB_ACTIONS_ISSUER,
            "aud": audience,
            "iat": now,
            "nbf": now,
            "exp": now + lifetime,
            "jti": secrets.token_hex(8),
            "sub": f"repo:{self.repository}:ref:{self.ref}",
            "repository": self.repository,
            "repository_owner": self.owner,
            "repository_id": self.repository_id,
            "repository_owner_id": self.owner_id,
            "repository_visibility": "public",
            "ref": self.ref,
            "ref_type": "tag" if self.ref.startswith("refs/tags/") else "branch",
            "sha": self.sha,
            "event_name": self.event_name,
            "workflow": "sign",
            "workflow_ref": f"{self.repository}/.github/workflows/sign.yml@{self.ref}",
            "workflow_sha": self.sha,
            "job_workflow_ref": self.job_workflow_ref,
            "job_workflow_sha": self.sha,
            "runner_environment": "github-hosted",
            "run_id": "4242",
            "run_attempt": "1",
        }


class TokenIssuer:
    """Mints and checks tokens; also backs the ``ACTIONS_ID_TOKEN_REQUEST_URL`` endpoint.

    ``register`` hands out an opaque request token (the stand-in for GitHub's
    ``ACTIONS_ID_TOKEN_REQUEST_TOKEN``) bound to one workflow identity.
    """

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self._requests: dict[str, WorkflowIdentity] = {}
        self._lock = threading.Lock()

    def mint(
        self,
        who: WorkflowIdentity,
        *,
        audience: str = SIGSTORE_AUDIENCE,
        lifetime: int = 600,
        issued_at: int | None = None,
    ) -> str:
        now = int(time.time()) if issued_at is None else issued_at
        return jwt.encode(
            who.claims(audience=audience, now=now, lifetime=lifetime), self.key, algorithm="ES256"
        )

    def verify(self, token: str) -> dict[str, Any]:
        """Claims of a token this issuer minted for Sigstore; raises ``jwt`` errors otherwise."""
        claims: dict[str, Any] = jwt.decode(
            token,
            self.key.public_key(),
            algorithms=["ES256"],
            audience=SIGSTORE_AUDIENCE,
            issuer=GITHUB_ACTIONS_ISSUER,
            options={"require": ["iss", "aud", "exp", "iat", "sub"]},
        )
        return claims

    def register(self, who: WorkflowIdentity) -> str:
        request_token = secrets.token_urlsafe(24)
        with self._lock:
            self._requests[request_token] = who
        return request_token

    def lookup(self, request_token: str) -> WorkflowIdentity | None:
        with self._lock:
            return self._requests.get(request_token)
