"""A local, throw-away Sigstore instance (Fulcio + Rekor v1 + GitHub-style OIDC).

It exists so that signing can be tested end to end — through the real, unmodified
sigstore-python Signer and Verifier and the upstream ``sigstore`` CLI — without the public
Sigstore services. It is **never** trusted implicitly: a client uses it only when handed its
ClientTrustConfig explicitly, and histor-sign warns loudly whenever that happens. Its keys
live only in memory; anything it certifies proves nothing to anyone else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from histor_sign.models import GITHUB_ACTIONS_ISSUER
from histor_sign.sigstore_dev.trust import DEV_ORGANIZATION, is_dev_trusted_root

if TYPE_CHECKING:
    from histor_sign.sigstore_dev.instance import LocalSigstore
    from histor_sign.sigstore_dev.oidc import WorkflowIdentity

__all__ = [
    "DEV_ORGANIZATION",
    "GITHUB_ACTIONS_ISSUER",
    "LocalSigstore",
    "WorkflowIdentity",
    "is_dev_trusted_root",
]


def __getattr__(name: str) -> Any:
    # The instance pulls in an HTTP server, X.509 and JWT machinery; ``verify`` only needs
    # ``is_dev_trusted_root`` to recognise (and announce) a dev trust root, so load lazily.
    if name == "LocalSigstore":
        from histor_sign.sigstore_dev.instance import LocalSigstore

        return LocalSigstore
    if name == "WorkflowIdentity":
        from histor_sign.sigstore_dev.oidc import WorkflowIdentity

        return WorkflowIdentity
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
