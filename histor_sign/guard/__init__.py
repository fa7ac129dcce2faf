"""Pre-dispatch argument contract guard and its release-time lint.

``Guard.from_catalog(tools, policy)`` / ``Guard.from_envelope(envelope, tools, policy)``
build a guard; ``guard.check(call)`` returns a :class:`Decision`. ``lint_catalog`` turns
the same contract rules into findings for the release gate.
"""

from __future__ import annotations

from histor_sign.guard._core import (
    APPROVABLE,
    Decision,
    Guard,
    is_destructive,
    requires_dry_run,
)
from histor_sign.guard._lint import lint_catalog
from histor_sign.guard._policy import DRY_RUN_NAMES, Policy, ToolPolicy
from histor_sign.guard._schema import Reason

__all__ = [
    "APPROVABLE",
    "DRY_RUN_NAMES",
    "Decision",
    "Guard",
    "Policy",
    "Reason",
    "ToolPolicy",
    "is_destructive",
    "lint_catalog",
    "requires_dry_run",
]
