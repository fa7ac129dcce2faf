"""Turn catalog facts into findings TC001–TC005 (ToolClash semantics, seed 000)."""

from __future__ import annotations

import json
from typing import Any

from histor_sign.catalog import Tool
from histor_sign.report._findings import RULES, Finding, ToolRef
from histor_sign.scan._effects import contradictions, describe, explicit_hints
from histor_sign.scan._lexical import Similarity
from histor_sign.scan._witness import Decision


def tool_ref(tool: Tool) -> ToolRef:
    return ToolRef(name=tool.name, source=tool.source, index=tool.index, pointer=tool.pointer)


def _where(tool: Tool) -> str:
    return f"{tool.name!r} ({tool.location})"


def short_json(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def duplicate_name(first: Tool, other: Tool) -> Finding:
    return Finding(
        rule="TC001", severity=RULES["TC001"].severity, tools=[tool_ref(first), tool_ref(other)],
        message=f"duplicate tool name {first.name!r}: {first.location} and {other.location}",
    )


def normalized_collision(first: Tool, other: Tool, key: str) -> Finding:
    return Finding(
        rule="TC002", severity=RULES["TC002"].severity, tools=[tool_ref(first), tool_ref(other)],
        message=(f"names {first.name!r} and {other.name!r} collide after separator and case "
                 f"normalization ({key!r}): {first.location} and {other.location}"),
        properties={"normalizedName": key},
    )


def pair_findings(
    a: Tool, b: Tool, decision: Decision, similarity: Similarity | None, basis: str
) -> list[Finding]:
    """TC003/TC004 for a proven overlap, TC005 for an undecided pair, nothing if disjoint."""
    props: dict[str, Any] = {"basis": basis}
    if similarity is not None:
        props["similarity"] = similarity.to_json()
    refs = [tool_ref(a), tool_ref(b)]
    why = (f"similarity {similarity.score:.2f}" if similarity is not None and basis == "lexical"
           else basis)
    if decision.outcome == "unknown":
        props["reason"] = decision.reason
        return [Finding(
            rule="TC005", severity=RULES["TC005"].severity, tools=refs, outcome="unknown",
            incomplete=True, properties=props,
            message=(f"{_where(a)} and {_where(b)} are confusable ({why}) but their input "
                     f"schemas could not be decided: {decision.reason}"),
        )]
    if decision.outcome != "overlap":
        return []
    out = [Finding(
        rule="TC003", severity=RULES["TC003"].severity, tools=refs, outcome="overlap",
        witness=decision.witness, has_witness=True, properties=dict(props),
        message=(f"{_where(a)} and {_where(b)} are confusable ({why}) and both accept "
                 f"{short_json(decision.witness)}"),
    )]
    clash = contradictions(a.annotations, b.annotations)
    if clash:
        ha, hb = explicit_hints(a.annotations), explicit_hints(b.annotations)
        hint_props = dict(props)
        hint_props["contradictions"] = clash
        hint_props["hints"] = [ha, hb]
        out.append(Finding(
            rule="TC004", severity=RULES["TC004"].severity, tools=refs, outcome="overlap",
            witness=decision.witness, has_witness=True, properties=hint_props,
            message=(f"{_where(a)} is {describe(ha)} but {_where(b)} is {describe(hb)} "
                     f"({', '.join(clash)} differ), and both accept "
                     f"{short_json(decision.witness)}"),
        ))
    return out


def not_analysed(a: Tool, b: Tool, similarity: Similarity | None, basis: str,
                 limit: int) -> Finding:
    props: dict[str, Any] = {"basis": basis, "reason": f"--max-candidates {limit} reached"}
    if similarity is not None:
        props["similarity"] = similarity.to_json()
    return Finding(
        rule="TC005", severity=RULES["TC005"].severity, tools=[tool_ref(a), tool_ref(b)],
        outcome="unknown", incomplete=True, properties=props,
        message=(f"{_where(a)} and {_where(b)} are confusable but were not analysed: "
                 f"more candidate pairs than --max-candidates {limit}"),
    )
