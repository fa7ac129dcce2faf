"""What the proxy offers: the signed revision, the served tools compared with it, the guard.

Only a tool whose served definition has the signed digest is offered (``withhold``), and
what the host sees is the signed snapshot's own tool object. ``warn`` offers what is served
and records every difference; ``block`` refuses the session on a difference at or above
the risk it was given (any difference without one).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from histor_sign._call_import import shown_name
from histor_sign.errors import InputError

if TYPE_CHECKING:
    from histor_sign.drift import DriftResult, ToolDrift
    from histor_sign.guard import Guard, Policy
    from histor_sign.lock import LockedRevision
    from histor_sign.models import Risk, Tool
    from histor_sign.pins import PinnedRevision


class OnDrift(StrEnum):
    """What the proxy does with a served tool that is not the signed one."""

    WITHHOLD = "withhold"
    BLOCK = "block"
    WARN = "warn"


@dataclass(frozen=True)
class Withheld:
    """A tool the host is not offered (or, under ``warn``, offered although it differs).

    ``change`` is ``changed``, ``added`` (served, never signed) or ``renamed``; ``fields``
    the projected fields that differ (names only). A signed tool the server does not offer
    this session is no difference: it is not offered, as the server decided.
    ``name`` of an added tool is server-chosen text: escape it before printing.
    """

    name: str
    change: str
    risk: str
    fields: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.name, "change": self.change, "risk": self.risk}
        if self.fields is not None:
            out["fields"] = list(self.fields)
        return out

    def line(self) -> str:
        """``'name' (changed: description; risk high)`` — escaped, one line."""
        what = self.change + (f": {', '.join(self.fields)}" if self.fields else "")
        return f"{shown_name(self.name)} ({what}; risk {self.risk})"


@dataclass(frozen=True)
class Contract:
    """The state calls are decided against: offered tool objects in signed order, their
    names, what differs, and the guard over the signed definitions."""

    revision: PinnedRevision | LockedRevision
    offered: tuple[Mapping[str, Any], ...]
    offered_names: frozenset[str]
    differences: tuple[Withheld, ...]
    drift: DriftResult
    guard: Guard
    on_drift: OnDrift

    @property
    def withheld(self) -> tuple[Withheld, ...]:
        """The differences the host does not see (none under ``warn``)."""
        return () if self.on_drift is OnDrift.WARN else self.differences


class Blocked(Exception):
    """``block``: the served tools differ from the signed ones at or above the given risk."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def build_contract(
    revision: PinnedRevision | LockedRevision,
    served: list[dict[str, Any]],
    *,
    on_drift: OnDrift,
    fail_on: Risk | None,
    policy: Policy | None,
) -> Contract:
    """Compare ``served`` with the verified ``revision`` and decide what is offered.

    Raises :class:`Blocked` (``block`` mode), :class:`InputError` when the served list is
    not a list of MCP tools or the policy names a tool the signed revision lacks.
    ``revision`` may be a lock file's entry instead (:class:`~histor_sign.lock.LockedRevision`,
    trust on first use): served the same way, named for what it is.
    """
    from histor_sign.catalog import as_tools
    from histor_sign.drift import compare
    from histor_sign.models import statement_of

    signed_catalog = revision.signed_snapshot or revision.signed_tools
    if signed_catalog is None:  # pragma: no cover - latest_for_use(signed_tools=True)
        raise InputError(f"{revision.server}: the signed tools of revision "
                         f"{revision.revision} are not published")
    signed_tools = as_tools(signed_catalog)
    drift = compare(revision.envelope, served, signed_catalog, source=revision.source)
    digests = statement_of(revision.envelope).tool_digests
    served_tools = {t.name: t for t in as_tools(served)}
    drifted = _drifted(drift)
    differences = _differences(drifted)
    _refuse_if_blocked(revision, drifted, differences, on_drift, fail_on)
    offered_tools = _signed_and_served(signed_tools, served_tools, digests)
    if on_drift is OnDrift.WARN:
        offered_objects, names, guard = _offer_served(offered_tools, served_tools, policy)
    else:
        from histor_sign.guard import Guard

        offered_objects = [t.raw for t in offered_tools]
        guard = Guard.from_envelope(revision.envelope, signed_tools, policy)
        names = frozenset(t.name for t in offered_tools)
    return Contract(revision, tuple(offered_objects), names, differences, drift, guard,
                    on_drift)


def _drifted(drift: DriftResult) -> list[ToolDrift]:
    """Step: the drift entries that count as differences (a signed tool not served is none).

    A signed tool the server does not offer this session is not drift: servers offer
    some tools only to hosts that declare a capability (roots, sampling, elicitation),
    and the signed list is what a fully capable host is offered. It is simply not
    offered here; what is served must still be what was signed.
    """
    from histor_sign.drift import ChangeKind

    return [d for d in drift.tools if d.change is not ChangeKind.REMOVED]


def _differences(drifted: list[ToolDrift]) -> tuple[Withheld, ...]:
    """Step: each counted drift entry as a :class:`Withheld` line."""
    from histor_sign.drift import ChangeKind

    return tuple(
        Withheld(d.name, d.change.value, d.risk.value,
                 d.fields if d.change in (ChangeKind.CHANGED, ChangeKind.RENAMED) else None)
        for d in drifted
    )


def _refuse_if_blocked(
    revision: PinnedRevision | LockedRevision,
    drifted: list[ToolDrift],
    differences: tuple[Withheld, ...],
    on_drift: OnDrift,
    fail_on: Risk | None,
) -> None:
    """Step: under ``block``, raise :class:`Blocked` if the worst difference reaches ``fail_on``."""
    if on_drift is not OnDrift.BLOCK:
        return
    from histor_sign.models import max_risk

    risk = max_risk(d.risk for d in drifted)
    if risk is None or (fail_on is not None and risk.rank < fail_on.rank):
        return
    shown = "; ".join(w.line() for w in differences[:5])
    more = f" and {len(differences) - 5} more" if len(differences) > 5 else ""
    baseline = (f"signed revision {revision.revision}" if revision.revision is not None
                else "the locked definitions (trust on first use)")
    raise Blocked(f"the served tools differ from {baseline} "
                  f"({risk.value} risk): {shown}{more}")


def _signed_and_served(
    signed_tools: list[Tool], served_tools: dict[str, Tool], digests: Mapping[str, str],
) -> list[Tool]:
    """Step: the signed tools served with their signed digest, in signed order."""
    from histor_sign.revision import tool_digest

    return [
        t for t in signed_tools if t.name in served_tools
        and tool_digest(served_tools[t.name]) == digests.get(t.name)
    ]


def _offer_served(
    offered_tools: list[Tool], served_tools: dict[str, Tool], policy: Policy | None,
) -> tuple[list[Mapping[str, Any]], frozenset[str], Guard]:
    """Step (``warn``): the signed-and-served tools, then every other served tool, guarded."""
    from histor_sign.guard import Guard

    offered_objects: list[Mapping[str, Any]] = [t.raw for t in offered_tools]
    same = {t.name for t in offered_tools}
    extra = [t for t in served_tools.values() if t.name not in same]
    offered_objects += [t.raw for t in extra]
    guard = Guard(offered_tools + extra, _policy_for(policy, {
        t.name for t in offered_tools + extra}))
    return offered_objects, frozenset(same | {t.name for t in extra}), guard


def _policy_for(policy: Policy | None, names: set[str]) -> Policy | None:
    """Under ``warn`` the served set decides which per-tool rules apply."""
    if policy is None:
        return None
    return replace(policy, tools={k: v for k, v in policy.tools.items() if k in names})
