"""Build the findings of the collision rules: TC001–TC005, TC010, TC011 (scan), TC006–TC009
(replay).

Rule ids, names, default severities and help live in
:data:`histor_sign.report._findings.RULES`; this module says, for each rule, which facts
make a finding and how its message reads. Messages quote server-chosen names with
``repr`` and are escaped once more by every renderer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from histor_sign._schema.witness import Decision
from histor_sign.collisions._lexical import Profile, Similarity
from histor_sign.effects import READ_ONLY, StatedEffect, contradiction, stated_effect
from histor_sign.models import CallRef, Finding, Severity, Tool
from histor_sign.report._findings import new_finding


def _where(tool: Tool) -> str:
    return f"{tool.name!r} ({tool.location})"


def short_json(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def duplicate_name(first: Tool, other: Tool) -> Finding:
    return new_finding(
        "TC001", tools=[first.ref, other.ref],
        message=f"duplicate tool name {first.name!r}: {first.location} and {other.location}",
    )


def normalized_collision(first: Tool, other: Tool, key: str) -> Finding:
    return new_finding(
        "TC002", tools=[first.ref, other.ref],
        message=(f"names {first.name!r} and {other.name!r} collide after separator and case "
                 f"normalization ({key!r}): {first.location} and {other.location}"),
        properties={"normalizedName": key},
    )


def _effect(stated: StatedEffect, profile: Profile | None) -> tuple[str | None, str]:
    """(effect class, how it is known): the stated hints first, else the action word."""
    if stated.effect is not None:
        return stated.effect, "hints"
    if profile is not None and profile.effect is not None:
        return profile.effect, f"inferred from {profile.action_word!r}"
    return None, ""


def _said(tool: Tool, effect: str | None, source: str, stated: StatedEffect) -> str:
    """One side of an effect message: the tool, its effect and how it is known, and which
    hints it stated (``'a' (destructive, inferred from 'delete'; states no effect hints)``)."""
    how = stated.says() if source == "hints" else f"{source}; {stated.says()}"
    return f"{_where(tool)} ({effect or 'effect unknown'}: {how})"


def _divergent(ea: str | None, eb: str | None, similarity: Similarity | None,
               inferred: bool) -> bool:
    """HS201: the pair's effects differ as their words say — contrasting actions on one
    object (unless both only read), one item vs every item, or read vs change where an effect
    was inferred from a verb (two stated effects contradict only as TC004)."""
    if similarity is not None and similarity.contrasting:
        return not ea == eb == READ_ONLY
    if similarity is not None and similarity.bulk:
        return True
    return (inferred and ea is not None and eb is not None and ea != eb
            and READ_ONLY in (ea, eb))


def pair_findings(
    a: Tool, b: Tool, decision: Decision, similarity: Similarity | None, basis: str,
    profiles: tuple[Profile, Profile] | None = None,
) -> list[Finding]:
    """TC003 (a proven overlap, with its witness), TC011 (a note: confusable but the schemas
    are proven disjoint), TC004 when an overlapping pair's explicit hints contradict, HS201
    when its effects differ as its words say, TC005 for an undecided pair."""
    props: dict[str, Any] = {"basis": basis}
    if similarity is not None:
        props["similarity"] = similarity.to_json()
    refs = [a.ref, b.ref]
    why = basis if similarity is None else (
        similarity.why() if basis == "lexical" else f"{basis}; {similarity.why()}")
    if decision.outcome == "unknown":
        props["reason"] = decision.reason
        return [new_finding(
            "TC005", tools=refs, outcome="unknown",
            incomplete=True, properties=props,
            message=(f"{_where(a)} and {_where(b)} are confusable ({why}) but their input "
                     f"schemas could not be decided: {decision.reason}"),
        )]
    if decision.outcome == "disjoint":
        return [new_finding(
            "TC011", tools=refs, outcome="disjoint", properties=props,
            message=(f"{_where(a)} and {_where(b)} are confusable ({why}); their input "
                     "schemas do not overlap, so a wrong pick fails validation instead of "
                     "running"),
        )]
    out = [new_finding(
        "TC003", tools=refs, outcome="overlap",
        witness=decision.witness, has_witness=True, properties=props,
        message=(f"{_where(a)} and {_where(b)} are confusable ({why}) and both accept "
                 f"{short_json(decision.witness)}"),
    )]
    effect = _effect_finding(a, b, decision, similarity, why, props, profiles)
    return out if effect is None else [*out, effect]


def _effect_finding(a: Tool, b: Tool, decision: Decision, similarity: Similarity | None,
                    why: str, props: dict[str, Any],
                    profiles: tuple[Profile, Profile] | None) -> Finding | None:
    """TC004 when the two tools' stated effects contradict (explicit hints, MCP semantics:
    :mod:`histor_sign.effects`); else HS201 when their effects differ as their words say."""
    sa, sb = stated_effect(a.annotations), stated_effect(b.annotations)
    pa, pb = profiles if profiles is not None else (None, None)
    (ea, how_a), (eb, how_b) = _effect(sa, pa), _effect(sb, pb)
    clash = contradiction(sa, sb)
    inferred = sa.effect is None or sb.effect is None
    if clash is None and not _divergent(ea, eb, similarity, inferred):
        return None
    hint_props = dict(props)
    hint_props["effects"] = [{"effect": ea, "source": how_a}, {"effect": eb, "source": how_b}]
    hint_props["contradictions"] = list(clash.hints) if clash else []
    hint_props["hints"] = [sa.hints, sb.hints]
    side_a, side_b = _said(a, ea, how_a, sa), _said(b, eb, how_b, sb)
    if clash is not None:
        rule, severity = "TC004", Severity.error if clash.grave else Severity.warning
        effects = f"{side_a} and {side_b}: their explicit effect hints contradict"
    else:
        rule, severity = "HS201", Severity.warning
        effects = _divergence(side_a, side_b, similarity)
    return new_finding(
        rule, tools=[a.ref, b.ref], outcome="overlap", severity=severity,
        witness=decision.witness, has_witness=True, properties=hint_props,
        message=(f"{effects}; they are confusable ({why}) and both accept "
                 f"{short_json(decision.witness)}"),
    )


def _divergence(side_a: str, side_b: str, similarity: Similarity | None) -> str:
    """What an HS201 message says the two tools do differently."""
    if similarity is not None and similarity.contrasting:
        return f"{side_a} and {side_b} do different things to the same object"
    if similarity is not None and similarity.bulk:
        return f"{side_a} and {side_b} change different items: one of them every item"
    return f"{side_a} and {side_b} have different effects, not both stated"


def not_analysed(a: Tool, b: Tool, similarity: Similarity | None, basis: str,
                 limit: int, *, budget: float | None = None) -> Finding:
    """A candidate pair left undecided: beyond the pair bound, or (``budget`` given) after
    the scan's time budget ran out."""
    if budget is None:
        reason = f"candidate pair bound ({limit}) reached"
        why = f"more candidate pairs than the bound of {limit}"
    else:
        reason = why = f"scan budget ({budget:g} s) ran out"
    props: dict[str, Any] = {"basis": basis, "reason": reason}
    if similarity is not None:
        props["similarity"] = similarity.to_json()
    return new_finding(
        "TC005", tools=[a.ref, b.ref],
        outcome="unknown", incomplete=True, properties=props,
        message=f"{_where(a)} and {_where(b)} are confusable but were not analysed: {why}",
    )


def partners_not_analysed(tool: Tool, first: Tool, count: int, limit: int) -> Finding:
    """One tool of a same-name group larger than the per-tool bound: ``count`` of its
    partners (``first`` among them) were not compared — one finding per tool, not per pair."""
    return new_finding(
        "TC005", tools=[tool.ref, first.ref],
        outcome="unknown", incomplete=True,
        properties={"basis": "name", "reason": f"per-tool partner bound ({limit}) reached",
                    "partnersNotAnalysed": count},
        message=(f"{_where(tool)} has {count} more confusable tools (such as {_where(first)}) "
                 f"than the per-tool bound of {limit}; those pairs were not analysed"),
    )


# --- replay: TC006-TC009 ----------------------------------------------------------------

MAX_LISTED_TOOLS = 20


@dataclass(frozen=True)
class CallOutcome:
    """What the catalog said about one observed call, before it becomes findings."""

    ref: CallRef
    selected: Sequence[Tool]  # catalog tools with the call's name
    accepted: Sequence[Tool]  # every catalog tool whose schema accepts the arguments
    unknown: Sequence[tuple[Tool, str]]  # tools that could not be decided, with the reason
    selected_rejected: int  # how many of ``selected`` reject the arguments

    @property
    def label(self) -> str:
        return f"call {self.ref.index} in {self.ref.source} selected {self.ref.tool!r}"

    @property
    def counts(self) -> dict[str, Any]:
        return {"accepted": len(self.accepted), "unknown": len(self.unknown)}


def _names(tools: Sequence[Tool]) -> str:
    shown = ", ".join(_where(t) for t in tools[:5])
    return shown + (f" and {len(tools) - 5} more" if len(tools) > 5 else "")


def replay_findings(outcome: CallOutcome) -> list[Finding]:
    """TC008 (selected tool missing or rejecting), TC006/TC007 (several accept, with
    contradictory hints) and TC009 (undecided schemas) for one call."""
    return [*_selected_rejects(outcome), *_multiple_accept(outcome), *_incomplete(outcome)]


def _selected_rejects(o: CallOutcome) -> list[Finding]:
    if not o.selected:
        return [new_finding(
            "TC008", f"{o.label}, but no catalog tool has that name", [], call=o.ref,
            properties={**o.counts, "reason": "missing"})]
    if o.selected_rejected != len(o.selected):
        return []
    return [new_finding(
        "TC008",
        f"{o.label}, but every catalog schema with that name rejects its arguments "
        f"({o.ref.arguments_digest})",
        [t.ref for t in o.selected], call=o.ref, outcome="disjoint",
        properties={**o.counts, "reason": "rejected"})]


def _multiple_accept(o: CallOutcome) -> list[Finding]:
    acc = o.accepted
    if len(acc) < 2:
        return []
    out = [new_finding(
        "TC006",
        f"{o.label}; {len(acc)} catalog tools accept the same arguments "
        f"({o.ref.arguments_digest}): {_names(acc)}",
        [t.ref for t in acc[:MAX_LISTED_TOOLS]], call=o.ref, outcome="overlap",
        properties=dict(o.counts))]
    clashes = _clashes(acc)
    if clashes:
        involved = sorted({i for pair in clashes for i in pair[:2]})
        out.append(new_finding(
            "TC007",
            f"{o.label}; accepting tools have contradictory explicit effect hints: "
            + "; ".join(f"{acc[a].name!r} vs {acc[b].name!r} ({', '.join(keys)})"
                        for a, b, keys in clashes[:5]),
            [acc[i].ref for i in involved], call=o.ref, outcome="overlap",
            properties={**o.counts, "contradictions": [
                {"tools": [acc[a].name, acc[b].name], "hints": keys} for a, b, keys in clashes]},
        ))
    return out


def _clashes(accepted: Sequence[Tool]) -> list[tuple[int, int, list[str]]]:
    """Pairs of accepting tools (by position) whose stated effects contradict (the scan's
    TC004 reading, :func:`histor_sign.effects.contradiction`), with the hints they differ on."""
    out = []
    stated = [stated_effect(t.annotations) for t in accepted]
    hinted = [i for i, s in enumerate(stated) if s.effect is not None]
    for x, a in enumerate(hinted):
        for b in hinted[x + 1:]:
            clash = contradiction(stated[a], stated[b])
            if clash is not None:
                out.append((a, b, list(clash.hints)))
    return out


def _incomplete(o: CallOutcome) -> list[Finding]:
    if not o.unknown:
        return []
    reasons = sorted({reason for _, reason in o.unknown})
    more = f" (and {len(reasons) - 1} other reasons)" if len(reasons) > 1 else ""
    return [new_finding(
        "TC009",
        f"{o.label}; {len(o.unknown)} catalog schema(s) could not be decided: {reasons[0]}{more}",
        [t.ref for t, _ in o.unknown[:MAX_LISTED_TOOLS]], call=o.ref, outcome="unknown",
        incomplete=True, properties={**o.counts, "reasons": reasons[:10]})]
