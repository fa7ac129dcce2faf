"""Decide one pair of tool input schemas: ``overlap`` (with a witness), ``disjoint`` or ``unknown``.

The witness comes from :mod:`.schema_algebra`; it is reported only after the exact
validator, ``jsonschema`` as published and ``jsonschema-rs`` all accept it for *both*
original schemas (each intersected with ``{"type": "object"}``, because tool arguments
are objects). A rejected witness is ``unknown``, never ``overlap``. Where ``jsonschema-rs``
gives the verdict of the other two provably (:func:`~.validation.rs_exact`: Draft 2020-12
without regexes, ``multipleOf`` and the other keywords engines differ on), its acceptance
alone stands for all three; everywhere else all three run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from histor_sign._limits import DEFAULT_MAX_WITNESS_BYTES
from histor_sign._schema.algebra import Bounds, Budget, Found, Sub, Undecided, solve
from histor_sign._schema.validation import SchemaRoot, Untrusted, prepare_root
from histor_sign.canonical import canonical_bytes

OVERLAP = "overlap"
DISJOINT = "disjoint"
UNKNOWN = "unknown"

_OBJECT_ROOT = prepare_root({"type": "object"}, "<tool arguments>", check=False)


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: str
    witness: Any = None
    reason: str = ""


def decide_roots(
    a: SchemaRoot,
    b: SchemaRoot,
    bounds: Bounds | None = None,
    *,
    max_witness_bytes: int = DEFAULT_MAX_WITNESS_BYTES,
    arguments: bool = True,
) -> Decision:
    """Intersect two prepared tool schemas (and the object type) within ``bounds``.

    ``arguments=False`` drops the object type: the schemas are intersected as they are
    (used to check the engine against general-purpose schema suites).
    """
    for root in (a, b):
        if root.problem is not None:
            return Decision(UNKNOWN, reason=f"{root.label}: {root.problem}" if root.label
                            else root.problem)
    conj = [Sub(a.schema, a), Sub(b.schema, b)]
    if arguments:
        conj.append(Sub(_OBJECT_ROOT.schema, _OBJECT_ROOT))
    found = _solved(conj, Budget(bounds or Bounds()))
    if isinstance(found, Decision):
        return found
    if found is None:
        return Decision(DISJOINT, reason="the constraints contradict")
    return _checked_witness(a, b, found.value, max_witness_bytes, arguments)


def _solved(conj: list[Sub], budget: Budget) -> Found | Decision | None:
    """Step 1 of :func:`decide_roots`: a candidate witness of the conjunction, None when it
    is empty, or an unknown decision saying why the engine could not tell."""
    try:
        return solve(conj, budget)
    except Undecided as exc:
        return Decision(UNKNOWN, reason=exc.reason)
    except RecursionError:
        return Decision(UNKNOWN, reason="schema nesting exceeded the recursion bound")
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError,
            OverflowError) as exc:
        # Malformed schema shapes the meta-schema did not catch: fail closed, never crash.
        return Decision(UNKNOWN, reason=f"schema could not be analysed ({type(exc).__name__})")


def _checked_witness(a: SchemaRoot, b: SchemaRoot, witness: Any, max_witness_bytes: int,
                     arguments: bool) -> Decision:
    """Step 2 of :func:`decide_roots`: overlap only when the witness is small enough and
    every validator (the fast exact one where it is provably exact) accepts it."""
    try:
        size = len(canonical_bytes(witness))
    except Exception:  # pragma: no cover - witnesses are plain JSON values
        return Decision(UNKNOWN, reason="witness is not canonical JSON")
    if size > max_witness_bytes:
        return Decision(UNKNOWN, reason=f"witness larger than {max_witness_bytes} bytes")
    shaped = isinstance(witness, dict) or not arguments
    if shaped and a.fast_accepts(witness) and b.fast_accepts(witness):
        # jsonschema-rs where its verdict is provably every judge's (validation.rs_exact)
        return Decision(OVERLAP, witness=witness, reason="both schemas accept the witness")
    return _validated(a, b, witness, shaped)


def _validated(a: SchemaRoot, b: SchemaRoot, witness: Any, shaped: bool) -> Decision:
    """The exact validator, then every judge, on both schemas: overlap only if all accept."""
    try:
        ok = shaped and a.accepts(witness) and b.accepts(witness)
    except Untrusted as exc:
        return Decision(UNKNOWN, reason=f"witness could not be validated exactly: {exc.reason}")
    if not ok:
        return Decision(UNKNOWN, reason="candidate witness failed independent validation")
    for root in (a, b):
        judge = root.judges_reject(witness)
        if judge is not None:
            return Decision(UNKNOWN, reason=f"candidate witness rejected by {judge}")
    return Decision(OVERLAP, witness=witness, reason="both schemas accept the witness")


def decide(a: Any, b: Any, bounds: Bounds | None = None, *, arguments: bool = True) -> Decision:
    """Convenience: decide two raw schemas (meta-validated first)."""
    return decide_roots(prepare_root(a, "A"), prepare_root(b, "B"), bounds, arguments=arguments)
