"""Drift triage: give every difference between two tool definitions a kind and a risk.

The rubric (documented for users in docs/drift.md) rates a change by what it lets a server
do that the signed revision did not: text a model will read as instructions, a tool that
now claims to destroy or reach the open world, inputs accepted that were refused. Changes
that only make calls fail (narrowing, a removed tool) are low; changes that alter the
contract callers rely on are medium; changes that can steer a model or widen what a tool
may do without the caller noticing are high. Every rule is deterministic: fixed word
lists, exact name matches, and the scan's schema algebra with witnesses re-validated by
``jsonschema`` as published. When the algebra cannot decide, the change is reported as
"schema changed" with risk medium and the reason, never as "no change".
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from histor_sign._schema.validation import SchemaRoot, plain_class, prepare_root
from histor_sign.canonical import canonical_bytes

#: How similar two descriptions must be (difflib ratio) for a removed and an added tool with
#: the same input schema to be one rename.
RENAME_SIMILARITY = 0.9
#: Bounds on rename matching over a hostile catalog: description pairs compared, and the
#: characters of each description that count.
MAX_RENAME_COMPARISONS = 10_000
MAX_RENAME_TEXT = 4_096
#: Schema-algebra time per solver call (seconds); the scan's other bounds apply.
SCHEMA_SECONDS = 1.0
#: Time for one direction of one tool's schema verdict, all solver calls together (seconds).
DIRECTION_SECONDS = 2.0
#: Time for all schema verdicts of one comparison (a hostile catalog cannot stall a check).
TOTAL_SCHEMA_SECONDS = 20.0


class SchemaClock:
    """The schema-verdict time left for one comparison."""

    def __init__(self, seconds: float = TOTAL_SCHEMA_SECONDS) -> None:
        self.end = time.monotonic() + seconds

    def deadline(self) -> float:
        """When the next direction must stop: its own bound or the comparison's, earlier."""
        return min(self.end, time.monotonic() + DIRECTION_SECONDS)

    @property
    def spent(self) -> bool:
        return time.monotonic() > self.end


class Risk(StrEnum):
    """How much a change can hurt a client that trusted the signed revision."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Risk.LOW: 0, Risk.MEDIUM: 1, Risk.HIGH: 2}


def max_risk(risks: Iterable[Risk]) -> Risk | None:
    """The highest of ``risks`` (None when there are none)."""
    best: Risk | None = None
    for risk in risks:
        if best is None or risk.rank > best.rank:
            best = risk
    return best


class DriftKind(StrEnum):
    """What kind of change one triaged difference is."""

    TOOL_ADDED = "tool added"
    TOOL_REMOVED = "tool removed"
    TOOL_RENAMED = "tool renamed"
    DEFINITION_UNKNOWN = "definition unknown"
    TITLE = "title changed"
    DESCRIPTION_WORDING = "description wording"
    DESCRIPTION_INSTRUCTIONS = "description adds instructions"
    DESCRIPTION_NAMES_TOOLS = "description names other tools"
    ANNOTATION_RISKIER = "annotation riskier"
    ANNOTATION_SAFER = "annotation safer"
    ARGUMENT_ADDED = "argument added"
    REQUIRED_ARGUMENT_ADDED = "new required argument"
    ARGUMENT_REMOVED = "argument removed"
    ARGUMENT_TYPE = "argument type changed"
    SCHEMA_WIDENED = "schema widened"
    SCHEMA_NARROWED = "schema narrowed"
    SCHEMA_WORDING = "schema wording"
    SCHEMA_CHANGED = "schema changed"
    OUTPUT_SCHEMA = "output schema changed"
    EXECUTION = "execution changed"


@dataclass(frozen=True)
class DriftChange:
    """One triaged difference. ``detail`` is built from untrusted text: print it through
    ``printable``. ``witness`` (schema widened/narrowed) is an argument object valid under
    one schema and invalid under the other, checked with ``jsonschema``."""

    kind: DriftKind
    risk: Risk
    detail: str
    witness: Any = None
    has_witness: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind.value, "risk": self.risk.value,
                               "detail": self.detail}
        if self.has_witness:
            out["witness"] = self.witness
        return out


# --- descriptions ---------------------------------------------------------------------

#: Phrases that turn a description into instructions to the model (matched, case-insensitive
#: and on word boundaries, in text the new description *adds*).
IMPERATIVE_PHRASES: tuple[str, ...] = (
    "ignore", "disregard", "forget", "override", "always", "never", "must", "must not",
    "do not", "don't", "dont", "you should", "you must", "you need to", "make sure",
    "be sure to", "before calling", "before using", "after calling", "after using",
    "instead of", "instead call", "instead use", "important", "instruction", "instructions",
    "do not tell", "don't tell", "do not mention", "don't mention", "without telling",
    "secretly", "system prompt", "<important>", "<system>", "pass the contents",
    "read the file", "send the", "include the contents", "required first", "first call",
    "call this tool", "use this tool instead",
)
_IMPERATIVE = re.compile(
    r"(?<![\w])(?:" + "|".join(re.escape(p) for p in
                                sorted(IMPERATIVE_PHRASES, key=len, reverse=True)) + r")(?![\w])",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S+")


def added_text(old: str, new: str) -> str:
    """The words ``new`` inserts or substitutes relative to ``old`` (space-joined runs)."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    runs = [" ".join(b[j1:j2]) for op, _, _, j1, j2 in matcher.get_opcodes()
            if op in ("insert", "replace")]
    return " \n ".join(runs)


def imperative_phrases(text: str) -> list[str]:
    """The instruction phrases found in ``text`` (lower-cased, first occurrence order)."""
    seen: list[str] = []
    for match in _IMPERATIVE.finditer(text):
        phrase = match.group(0).lower()
        if phrase not in seen:
            seen.append(phrase)
    return seen


def named_tools(text: str, names: Iterable[str], own: str) -> list[str]:
    """Names from ``names`` (other than ``own``) that ``text`` mentions as a whole token."""
    found = []
    for name in sorted(set(names) - {own}):
        if len(name) < 3:
            continue
        if re.search(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text):
            found.append(name)
    return found


def description_changes(
    old: str, new: str, own: str, tool_names: Iterable[str], *, where: str = "description"
) -> list[DriftChange]:
    """Triage a description change: instructions or other tools' names (high), else wording."""
    added = added_text(old, new)
    out: list[DriftChange] = []
    phrases = imperative_phrases(added)
    if phrases:
        out.append(DriftChange(DriftKind.DESCRIPTION_INSTRUCTIONS, Risk.HIGH,
                          f"{where} adds instructions ({', '.join(repr(p) for p in phrases[:4])})"))
    names = named_tools(added, tool_names, own)
    if names:
        out.append(DriftChange(DriftKind.DESCRIPTION_NAMES_TOOLS, Risk.HIGH,
                          f"{where} names other tools ({', '.join(names[:4])})"))
    if not out:
        kind = DriftKind.DESCRIPTION_WORDING if where == "description" else DriftKind.SCHEMA_WORDING
        out.append(DriftChange(kind, Risk.LOW, f"{where} wording changed"))
    return out


# --- annotations ----------------------------------------------------------------------

# hint -> (MCP default, value that is riskier)
_HINTS: dict[str, tuple[bool, bool]] = {
    "readOnlyHint": (False, False),
    "destructiveHint": (True, True),
    "openWorldHint": (True, True),
    "idempotentHint": (False, False),
}


def _hint(annotations: Any, key: str) -> bool:
    default = _HINTS[key][0]
    if isinstance(annotations, Mapping):
        value = annotations.get(key, default)
        return value if isinstance(value, bool) else default
    return default


def annotation_changes(old: Any, new: Any) -> list[DriftChange]:
    """Hint flips with MCP defaults applied: toward destructive, open-world, not read-only
    or not idempotent is riskier (high; idempotent medium), the reverse safer (low)."""
    out: list[DriftChange] = []
    for key, (_, risky) in _HINTS.items():
        before, after = _hint(old, key), _hint(new, key)
        if before == after:
            continue
        text = f"{key} {str(before).lower()} → {str(after).lower()}"
        if after == risky:
            risk = Risk.MEDIUM if key == "idempotentHint" else Risk.HIGH
            out.append(DriftChange(DriftKind.ANNOTATION_RISKIER, risk, text))
        else:
            out.append(DriftChange(DriftKind.ANNOTATION_SAFER, Risk.LOW, text))
    old_title = old.get("title") if isinstance(old, Mapping) else None
    new_title = new.get("title") if isinstance(new, Mapping) else None
    if old_title != new_title:
        out.append(DriftChange(DriftKind.TITLE, Risk.LOW, "annotations.title changed"))
    return out


# --- input schemas --------------------------------------------------------------------


def _props(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return dict(props) if isinstance(props, Mapping) else {}


def _required(schema: Any) -> set[str]:
    req = schema.get("required") if isinstance(schema, Mapping) else None
    return {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()


def _type_of(sub: Any) -> str:
    if not isinstance(sub, Mapping):
        return "any" if sub is True or sub == {} else "none"
    kind = sub.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if isinstance(kind, str):
        return kind
    for key in ("$ref", "anyOf", "oneOf", "enum", "const"):
        if key in sub:
            return key
    return "any"


def argument_changes(old: Any, new: Any) -> list[DriftChange]:
    """Top-level property changes: a new required argument (medium: today's calls are
    refused), a removed argument (high when it was required — a gate such as ``confirm``
    may be gone — else medium), a type change (medium), a new optional argument (low)."""
    out: list[DriftChange] = []
    op, np_ = _props(old), _props(new)
    oreq, nreq = _required(old), _required(new)
    for name in sorted(set(np_) | nreq):
        if name not in oreq and name in nreq:
            out.append(DriftChange(DriftKind.REQUIRED_ARGUMENT_ADDED, Risk.MEDIUM,
                              f'new required argument "{name}"'))
        elif name not in op and name in np_:
            out.append(DriftChange(DriftKind.ARGUMENT_ADDED, Risk.LOW,
                                   f'new optional argument "{name}"'))
    for name in sorted(set(op) - set(np_)):
        risk, which = (Risk.HIGH, "required") if name in oreq else (Risk.MEDIUM, "optional")
        out.append(DriftChange(DriftKind.ARGUMENT_REMOVED, risk,
                               f'{which} argument "{name}" removed'))
    for name in sorted(set(op) & set(np_)):
        before, after = _type_of(op[name]), _type_of(np_[name])
        if before != after:
            out.append(DriftChange(DriftKind.ARGUMENT_TYPE, Risk.MEDIUM,
                              f'argument "{name}" type {before} → {after}'))
    return out


_OBJECT = {"type": "object"}


@dataclass(frozen=True)
class Difference:
    """Whether some argument object is valid under ``new`` and invalid under ``old``:
    ``found`` with a witness, ``none`` (proved empty), or ``unknown`` with the reason."""

    outcome: str
    witness: Any = None
    reason: str = ""


def schema_difference(
    new: SchemaRoot, old: SchemaRoot, clock: SchemaClock | None = None
) -> Difference:
    """Decide ``new ∧ ¬old`` (over objects) with the scan's algebra.

    A witness is returned only when the exact validator and ``jsonschema`` as published both
    accept it under ``new`` and reject it under ``old``; anything else is ``unknown``.
    """
    from histor_sign._schema.algebra import Sub

    clock = clock or SchemaClock()
    if clock.spent:
        return Difference("unknown", reason=f"the comparison's schema time "
                                            f"({TOTAL_SCHEMA_SECONDS:g} s) is spent")
    deadline = clock.deadline()
    for root in (new, old):
        if root.problem is not None:
            return Difference("unknown", reason=root.problem)
    object_root = prepare_root(_OBJECT, "<tool arguments>", check=False)
    conj = [Sub(new.schema, new), Sub({"not": old.schema}, old), Sub(_OBJECT, object_root)]
    found, reason = _solve(conj, deadline)
    if found is _NONE:
        return Difference("none", reason="every argument object the new schema accepts, "
                                         "the old one accepted")
    if found is not _UNKNOWN:
        checked = _witness(found, new, old)
        if isinstance(checked, Difference):
            return checked
        reason = "candidate witness failed independent validation"
    # The algebra relaxes some negations (e.g. of a closed object); try the per-argument
    # candidates it can decide exactly. Sound: a candidate counts only once validated.
    for candidate in _argument_candidates(new, old, object_root, deadline):
        checked = _witness(candidate, new, old)
        if isinstance(checked, Difference):
            return checked
    if _properties_contained(new, old, deadline):
        return Difference("none", reason="each argument's new schema is within its old one")
    return Difference("unknown", reason=reason)


def _properties_contained(new: SchemaRoot, old: SchemaRoot, deadline: float) -> bool:
    """A sufficient proof that ``new`` accepts nothing ``old`` refuses: the schemas differ
    only inside ``properties`` (the same names, or fewer when both are closed), and each new
    property schema is proved (by the algebra) to accept nothing its old one refuses."""
    from histor_sign._schema.algebra import Sub

    if not (isinstance(new.schema, dict) and isinstance(old.schema, dict)):
        return False
    rest_new = {k: v for k, v in new.schema.items() if k != "properties"}
    rest_old = {k: v for k, v in old.schema.items() if k != "properties"}
    new_props, old_props = _props(new.schema), _props(old.schema)
    if (canonical_bytes(_strip_descriptions(rest_new))
            != canonical_bytes(_strip_descriptions(rest_old))
            or not (set(new_props) == set(old_props) or (
                set(new_props) <= set(old_props) and rest_new.get("additionalProperties")
                is False and "patternProperties" not in rest_new))
            or "$ref" in str(canonical_bytes(rest_new))):
        return False
    for name, sub in new_props.items():
        if time.monotonic() > deadline:
            return False
        value, _ = _solve([Sub(sub, new), Sub({"not": old_props[name]}, old)], deadline)
        if value is not _NONE:
            return False
    return True


_NONE, _UNKNOWN = object(), object()


def _solve(conj: list[Any], deadline: float) -> tuple[Any, str]:
    """One value satisfying ``conj``; ``_NONE`` when proved empty, ``_UNKNOWN`` + reason."""
    from histor_sign._schema.algebra import Bounds, Budget, Undecided, solve

    seconds = min(SCHEMA_SECONDS, deadline - time.monotonic())
    if seconds <= 0:
        return _UNKNOWN, "time bound reached"
    try:
        found = solve(conj, Budget(Bounds(seconds=seconds)))
    except Undecided as exc:
        return _UNKNOWN, exc.reason
    except RecursionError:
        return _UNKNOWN, "schema nesting exceeded the recursion bound"
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError,
            OverflowError) as exc:
        return _UNKNOWN, f"schema could not be analysed ({type(exc).__name__})"
    return (_NONE, "") if found is None else (found.value, "")


def _witness(value: Any, new: SchemaRoot, old: SchemaRoot) -> Difference | None:
    """``found`` when every validator accepts ``value`` under new and rejects it under old."""
    try:
        ok = (isinstance(value, dict) and new.accepts(value) and not old.accepts(value)
              and plain_class(new.dialect)(new.schema).is_valid(value)
              and not plain_class(old.dialect)(old.schema).is_valid(value))
    except Exception:  # a validator failing on a hostile schema: not a witness
        return None
    return Difference("found", witness=value) if ok else None


def _argument_candidates(
    new: SchemaRoot, old: SchemaRoot, object_root: SchemaRoot, deadline: float
) -> list[Any]:
    """Argument objects valid under ``new`` that differ from one of its instances in one
    argument, chosen where ``old`` constrains that argument differently."""
    from histor_sign._schema.algebra import Sub

    base, _ = _solve([Sub(new.schema, new), Sub(_OBJECT, object_root)], deadline)
    if not isinstance(base, dict):
        return []
    new_props, old_props = _props(new.schema), _props(old.schema)
    old_extra = old.schema.get("additionalProperties", True)
    out: list[Any] = []
    for name, sub in new_props.items():
        before = old_props.get(name, old_extra)
        if before is True:
            continue
        if time.monotonic() > deadline:
            break
        value, _ = _solve([Sub(sub, new), Sub({"not": before}, old)], deadline)
        if value is not _NONE and value is not _UNKNOWN:
            out.append({**base, name: value})
    if old_extra is False and new.schema.get("additionalProperties", True) is True:
        fresh = next(f"extra{i}" for i in range(len(old_props) + len(new_props) + 1)
                     if f"extra{i}" not in old_props and f"extra{i}" not in new_props)
        out.append({**base, fresh: None})
    return out[:16]


def _witness_text(value: Any) -> str:
    text = canonical_bytes(value).decode("utf-8")
    return text if len(text) <= 120 else text[:119] + "…"


def _descriptions(schema: Any, path: str = "") -> dict[str, str]:
    """Every ``description``/``title`` string in a schema, by where it sits."""
    out: dict[str, str] = {}
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            where = f"{path}/{key}"
            if key in ("description", "title") and isinstance(value, str):
                out[where] = value
            else:
                out.update(_descriptions(value, where))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            out.update(_descriptions(value, f"{path}/{i}"))
    return out


def _strip_descriptions(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _strip_descriptions(v) for k, v in schema.items()
                if not (k in ("description", "title") and isinstance(v, str))}
    if isinstance(schema, list):
        return [_strip_descriptions(v) for v in schema]
    return schema


def input_schema_changes(
    old: Any, new: Any, own: str, tool_names: Iterable[str], clock: SchemaClock | None = None
) -> list[DriftChange]:
    """Argument-level changes, then the algebra's verdict in both directions (widened with
    a witness accepted now and refused before; narrowed the reverse), then the wording of
    descriptions inside the schema (which a model reads like the tool's description)."""
    names = list(tool_names)
    out = argument_changes(old, new)
    old_text, new_text = _descriptions(old), _descriptions(new)
    for where in sorted(new_text):
        before, after = old_text.get(where), new_text[where]
        if before != after:
            found = description_changes(before or "", after, own, names,
                                        where=f"inputSchema{where}")
            # Text that went away or came with a new argument is no wording change of its own.
            out += found if before is not None else [c for c in found if c.risk is Risk.HIGH]
    if canonical_bytes(_strip_descriptions(old)) == canonical_bytes(_strip_descriptions(new)):
        return out
    new_root, old_root = prepare_root(new, "new inputSchema"), prepare_root(old, "old inputSchema")
    clock = clock or SchemaClock()
    wider = schema_difference(new_root, old_root, clock)
    narrower = schema_difference(old_root, new_root, clock)
    if wider.outcome == "found":
        # A widening is rated medium already: an undecided narrowing cannot raise it.
        also = ("; whether it also refuses arguments it accepted is undecided"
                if narrower.outcome == "unknown" else "")
        out.append(DriftChange(DriftKind.SCHEMA_WIDENED, Risk.MEDIUM,
                               f"accepts {_witness_text(wider.witness)}, refused before{also}",
                               wider.witness, True))
    if narrower.outcome == "found":
        out.append(DriftChange(DriftKind.SCHEMA_NARROWED, Risk.LOW,
                               f"refuses {_witness_text(narrower.witness)}, accepted before",
                               narrower.witness, True))
    if wider.outcome == narrower.outcome == "none":
        out.append(DriftChange(DriftKind.SCHEMA_WORDING, Risk.LOW,
                               "schema rewritten; it accepts exactly the same arguments"))
    if wider.outcome == "unknown":
        out.append(DriftChange(DriftKind.SCHEMA_CHANGED, Risk.MEDIUM,
                               "undecided whether it accepts arguments it refused (unknown, "
                               f"rated medium): {wider.reason}"))
    elif wider.outcome == "none" and narrower.outcome == "unknown":
        out.append(DriftChange(DriftKind.SCHEMA_CHANGED, Risk.LOW,
                               "accepts nothing it refused; whether it refuses arguments it "
                               f"accepted is undecided: {narrower.reason}"))
    return out


# --- whole tools ----------------------------------------------------------------------


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else canonical_bytes(value).decode("utf-8")


def tool_changes(old: Mapping[str, Any], new: Mapping[str, Any],
                 tool_names: Sequence[str], clock: SchemaClock | None = None
                 ) -> list[DriftChange]:
    """Every triaged change between two projected definitions of one tool (name aside)."""
    own = _text(new.get("name"))
    out: list[DriftChange] = []
    if old.get("title") != new.get("title"):
        out.append(DriftChange(DriftKind.TITLE, Risk.LOW, "title changed"))
    if old.get("description") != new.get("description"):
        out += description_changes(_text(old.get("description")), _text(new.get("description")),
                                   own, tool_names)
    if canonical_bytes(old.get("inputSchema")) != canonical_bytes(new.get("inputSchema")):
        out += input_schema_changes(old.get("inputSchema"), new.get("inputSchema"), own,
                                    tool_names, clock)
    if canonical_bytes(old.get("outputSchema")) != canonical_bytes(new.get("outputSchema")):
        what = ("added" if "outputSchema" not in old else
                "removed" if "outputSchema" not in new else "changed")
        out.append(DriftChange(DriftKind.OUTPUT_SCHEMA, Risk.MEDIUM, f"output schema {what}"))
    if canonical_bytes(old.get("annotations")) != canonical_bytes(new.get("annotations")):
        out += annotation_changes(old.get("annotations"), new.get("annotations"))
    if canonical_bytes(old.get("execution")) != canonical_bytes(new.get("execution")):
        out.append(DriftChange(DriftKind.EXECUTION, Risk.MEDIUM, "execution changed"))
    return out


def added_tool_changes(new: Mapping[str, Any], tool_names: Sequence[str]) -> list[DriftChange]:
    """A tool the signed revision did not have: a new, unreviewed capability (medium); high
    when its description already instructs the model or names other tools."""
    out = [DriftChange(DriftKind.TOOL_ADDED, Risk.MEDIUM, "new tool, not in the signed revision")]
    text = _text(new.get("description"))
    extra = description_changes("", text, _text(new.get("name")), tool_names)
    out += [c for c in extra if c.risk is Risk.HIGH]
    return out


def renames(removed: Mapping[str, Mapping[str, Any]],
            added: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(old name, new name) pairs: a removed and an added tool with the same input schema
    and descriptions at least :data:`RENAME_SIMILARITY` alike (best pairs first)."""
    scored: list[tuple[float, str, str]] = []
    schemas = {name: canonical_bytes(t.get("inputSchema")) for name, t in added.items()}
    budget = MAX_RENAME_COMPARISONS
    for old_name, old in removed.items():
        schema = canonical_bytes(old.get("inputSchema"))
        for new_name, new in added.items():
            if schemas[new_name] != schema:
                continue
            a = _text(old.get("description"))[:MAX_RENAME_TEXT]
            b = _text(new.get("description"))[:MAX_RENAME_TEXT]
            if a == b:
                scored.append((-1.0, old_name, new_name))
                continue
            if 2 * min(len(a), len(b)) < RENAME_SIMILARITY * (len(a) + len(b)):
                continue  # the lengths alone rule it out (difflib's real_quick_ratio)
            budget -= 1
            if budget < 0:
                return _pairs(scored)
            ratio = difflib.SequenceMatcher(a=a, b=b, autojunk=False).ratio()
            if ratio >= RENAME_SIMILARITY:
                scored.append((-ratio, old_name, new_name))
    return _pairs(scored)


def _pairs(scored: list[tuple[float, str, str]]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for _, old_name, new_name in sorted(scored):
        if old_name in used_old or new_name in used_new:
            continue
        used_old.add(old_name)
        used_new.add(new_name)
        pairs.append((old_name, new_name))
    return pairs


def rename_changes(old: Mapping[str, Any], new: Mapping[str, Any],
                   tool_names: Sequence[str], clock: SchemaClock | None = None
                   ) -> list[DriftChange]:
    """A rename (low: the same contract under a new name; calls to the old name fail
    closed) plus whatever else changed between the two definitions."""
    head = DriftChange(DriftKind.TOOL_RENAMED, Risk.LOW,
                  f"renamed from {_text(old.get('name'))}")
    return [head, *tool_changes(old, new, tool_names, clock)]
