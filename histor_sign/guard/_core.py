"""The pre-dispatch argument guard.

``Guard`` is built once from the contract (a catalog, or a catalog bound to a signed
envelope) and decides calls: :meth:`Guard.check` returns a :class:`Decision` with every
reason, never raises for anything a model could have produced, and never runs a tool.
A call is allowed only when there are no reasons at all (fail closed).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from histor_sign import effects
from histor_sign._call_import import (
    _PLAIN_KEYS,
    PLAIN_NAME,
    CallProblem,
    decode_arguments,
    import_call,
    import_call_bytes,
    shown_name,
    shown_pointer,
)
from histor_sign._limits import DEFAULT_MAX_ARGUMENT_BYTES
from histor_sign.canonical import JsonValue, fits_json_bound, unescape_pointer_token
from histor_sign.catalog import ToolsLike, as_tools, reject_duplicates
from histor_sign.errors import InputError
from histor_sign.guard._policy import Policy
from histor_sign.guard._schema import (
    ENGINES,
    PATTERN_UNDECIDABLE,
    Reason,
    SchemaProblem,
    compile_validator,
    json_type,
    pattern_matches,
    schema_reasons,
)
from histor_sign.models import ObservedCall, Provider, Tool, statement_of

if TYPE_CHECKING:
    from histor_sign.models import StatementLike

NOT_SIGNED = "not-signed"
#: Reason codes a person may approve past (:attr:`Decision.needs_approval`).
APPROVABLE = frozenset({"dry-run-required", "effect-over-budget"})


@dataclass(slots=True)
class Decision:
    """The guard's answer for one call. ``allowed`` is true only with no reasons."""

    allowed: bool
    tool: str | None
    reasons: list[Reason] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "allow" if self.allowed else "deny"

    @property
    def needs_approval(self) -> bool:
        """Denied only for what a person may approve (:data:`APPROVABLE`: a destructive
        call without its dry run, an effect over the budget), never for a broken contract:
        a front end that can ask its user (the proxy, through MCP elicitation) may forward
        such a call on an explicit accept. The verdict stays ``deny``."""
        return not self.allowed and bool(self.reasons) and all(
            r.code in APPROVABLE for r in self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.verdict,
            "tool": self.tool,
            "reasons": [r.to_json() for r in self.reasons],
        }


def is_destructive(tool: Tool) -> bool:
    """The tool's annotations state that it is destructive: ``destructiveHint: true`` on a
    tool that does not say ``readOnlyHint: true`` (MCP's semantics, as the scan reads them:
    :func:`histor_sign.effects.stated_effect`; the Python SDK writes
    ``ToolAnnotations(destructiveHint=True)`` without ``readOnlyHint``).

    Annotations are untrusted metadata and an unwritten ``destructiveHint`` is not replaced
    by the MCP default (which would call every unannotated tool destructive); a policy can
    still force ``require_dry_run`` for any tool.
    """
    return effects.is_destructive(tool.annotations)


def requires_dry_run(tool: Tool, policy: Policy) -> bool:
    own = policy.for_tool(tool.name).require_dry_run
    if own is not None:
        return own
    return policy.require_dry_run_for_destructive and is_destructive(tool)


class _AllowPlan:
    """What an allowed call of one tool must satisfy, precomputed from the contract and
    the policy, so deciding an allowed call is the engine's ``is_valid`` plus a few lookups.

    :meth:`allows` answers True only when the full rules (:meth:`Guard._reasons`) would
    find no reason at all; anything it is not sure about returns False and the full rules
    decide (and explain). So decisions are the same with or without the plan.
    """

    __slots__ = ("declared", "dry_run", "effect", "is_valid")

    def __init__(self, is_valid: Any, declared: frozenset[str] | None, dry_run: str | None,
                 effect: tuple[str, int] | None) -> None:
        self.is_valid = is_valid
        self.declared = declared  # None: unknown arguments are not denied
        self.dry_run = dry_run  # the argument that must be true, if any
        self.effect = effect  # (argument, budget), if bounded

    def allows(self, args: dict[str, Any]) -> bool:
        try:
            if not self.is_valid(args):
                return False
        except Exception:  # the full rules decide (and explain) this one
            return False
        if self.declared is not None and not self.declared.issuperset(args):
            return False
        if self.dry_run is not None and args.get(self.dry_run) is not True:
            return False
        if self.effect is not None:
            source, budget = self.effect
            value = args.get(source)
            kind = type(value)
            if kind is list:
                return len(value) <= budget  # type: ignore[arg-type]
            if kind is int:
                return value <= budget  # type: ignore[operator]
            return False
        return True


def _refuse(args: dict[str, Any]) -> bool:
    return False


#: The plan of a call with no fast answer: the full rules decide it.
_ALLOWS_NOTHING = _AllowPlan(_refuse, None, None, None)


class _Contract:
    """One tool's compiled contract (the validator is built on first use)."""

    __slots__ = ("_plan", "_validator", "closed", "declared", "engine", "patterns", "plain_name",
                 "problem", "tool", "unsigned")

    def __init__(self, tool: Tool, engine: str) -> None:
        self.tool = tool
        self.engine = engine
        self.unsigned: str | None = None
        self.problem: SchemaProblem | None = None
        self._validator: Any = None
        self._plan: tuple[Policy, _AllowPlan | None] | None = None
        schema = tool.input_schema if tool.has_input_schema else {"type": "object"}
        self.declared, self.patterns = declared_arguments(schema)
        # A schema that itself refuses every argument its root does not declare leaves the
        # allow plan nothing to check about unknown arguments once the engine said valid.
        self.closed = _closed_object(schema)
        # A plain {"name", "arguments"} call naming this tool imports (a name that does
        # not match is a malformed call, decided by the full path).
        self.plain_name = PLAIN_NAME.fullmatch(tool.name) is not None

    def plan(self, policy: Policy) -> _AllowPlan | None:
        """The allow plan under ``policy`` (made once per policy), or None when this
        contract has no fast answer (unsigned, a broken schema)."""
        cached = self._plan
        if cached is not None and cached[0] is policy:
            return cached[1]
        validator = self.validator()
        plan: _AllowPlan | None = None
        if self.unsigned is None and validator is not None:
            name = self.tool.name
            rules = policy.for_tool(name)
            dry_run = (policy.dry_run_parameter_for(name, self.declared)
                       if requires_dry_run(self.tool, policy) else None)
            effect = ((rules.effect_from, rules.max_effect)
                      if rules.max_effect is not None and rules.effect_from is not None
                      else None)
            declared = (self.declared if policy.deny_unknown_for(name) and not self.closed
                        else None)
            plan = _AllowPlan(validator.check, declared, dry_run, effect)
        self._plan = (policy, plan)
        return plan

    def validator(self) -> Any:
        if self._validator is None and self.problem is None:
            schema = self.tool.input_schema if self.tool.has_input_schema else {"type": "object"}
            try:
                self._validator = compile_validator(schema, self.engine)
            except SchemaProblem as exc:
                self.problem = exc
        return self._validator


def declared_arguments(schema: Any) -> tuple[frozenset[str], tuple[str, ...]]:
    """Argument names a schema declares at its root (also in allOf/anyOf/oneOf, if/then/else
    branches and local ``$ref``s one level deep) and its ``patternProperties`` patterns
    (matched with :func:`~histor_sign.guard._schema.pattern_matches`, never Python ``re``)."""
    names: set[str] = set()
    patterns: list[str] = []
    if not isinstance(schema, dict):
        return frozenset(), ()
    for node in _declaring_nodes(schema):
        if not isinstance(node, dict):
            continue
        props = node.get("properties")
        if isinstance(props, dict):
            names.update(props)
        pats = node.get("patternProperties")
        if isinstance(pats, dict):
            patterns.extend(p for p in pats if isinstance(p, str))
    return frozenset(names), tuple(patterns)


def _declaring_nodes(schema: dict[str, Any]) -> list[Any]:
    """The root, its allOf/anyOf/oneOf and if/then/else branches, then each of their local
    ``$ref`` targets (None where there is none): where :func:`declared_arguments` looks."""
    nodes: list[Any] = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            nodes.extend(schema[key])
    nodes.extend(schema.get(k) for k in ("then", "else", "if"))
    return [*nodes, *(_local_ref(schema, n) for n in nodes)]


def _closed_object(schema: Any) -> bool:
    """Whether an instance valid against ``schema`` can only have the members its root
    ``properties`` names (``additionalProperties: false``, and no ``patternProperties``
    or ``$ref`` beside it); those are among :func:`declared_arguments`."""
    return (isinstance(schema, dict) and schema.get("additionalProperties") is False
            and isinstance(schema.get("properties"), dict) and "patternProperties" not in schema
            and "$ref" not in schema)  # before 2019-09, $ref made its siblings ignored


def _local_ref(root: Mapping[str, Any], node: Any) -> Any:
    if not isinstance(node, dict) or not isinstance(node.get("$ref"), str):
        return None
    ref = node["$ref"]
    if not ref.startswith("#/"):
        return None
    target: Any = root
    for part in ref[2:].split("/"):
        part = unescape_pointer_token(part)
        if not isinstance(target, dict) or part not in target:
            return None
        target = target[part]
    return target


class Guard:
    """Decide whether tool calls may be dispatched against a pinned contract."""

    def __init__(
        self, tools: Iterable[Tool], policy: Policy | None = None, engine: str = "jsonschema-rs"
    ) -> None:
        if engine not in ENGINES:
            raise InputError(f"unknown validation engine {engine!r} (use {' or '.join(ENGINES)})")
        items = list(tools)
        reject_duplicates(items)
        self._policy = policy or Policy()
        #: The allow plan of each tool a plain call named, for the current policy (check).
        self._plain_plans: dict[str, _AllowPlan] = {}
        self.engine = engine
        self._contracts = {t.name: _Contract(t, engine) for t in items}
        unknown = sorted(set(self.policy.tools) - set(self._contracts))
        if unknown:
            raise InputError(
                f"{self.policy.source}: policy names tool {unknown[0]!r}, which is not in the "
                "catalog (a misspelled tool name would silently disable its rules)"
            )

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_catalog(
        cls,
        catalog: ToolsLike,
        policy: Policy | Mapping[str, Any] | None = None,
        *,
        engine: str = "jsonschema-rs",
    ) -> Guard:
        """A guard for every tool of ``catalog`` (anything
        :func:`~histor_sign.catalog.as_tools` accepts: a Catalog, a Snapshot, Tools, tool
        dicts, or a parsed catalog document); ``policy`` is a :class:`Policy` or a dict."""
        return cls(as_tools(catalog), _as_policy(policy), engine)

    @classmethod
    def from_envelope(
        cls,
        envelope: StatementLike | JsonValue,
        tools: ToolsLike,
        policy: Policy | Mapping[str, Any] | None = None,
        *,
        engine: str = "jsonschema-rs",
    ) -> Guard:
        """A guard whose contract is the signed revision: a tool whose digest differs
        from the signed tool digests (or that was not signed) is always denied.

        ``envelope`` is a :class:`~histor_sign.envelope.SignedEnvelope` (e.g. a verification
        report's ``envelope``), a :class:`~histor_sign.revision.Statement`, or either's JSON
        document; ``tools`` the catalog holding the schemas. This checks digests only, by
        design: verification needs trust material and identity pins, so it is a separate
        step — :func:`histor_sign.verification` first, then ``report.raise_for_failure()``.
        """
        from histor_sign.revision import tool_digest

        statement = statement_of(envelope, "envelope")
        signed = statement.tool_digests
        guard = cls(as_tools(tools), _as_policy(policy), engine)
        for name, contract in guard._contracts.items():
            if contract.tool.provider != Provider.MCP:
                raise InputError(
                    f"{contract.tool.location}: only MCP tool definitions can be bound to a "
                    "signed revision"
                )
            current = tool_digest(contract.tool)
            if name not in signed:
                contract.unsigned = f"tool {name!r} is not the signed definition: the signed " \
                    f"revision {statement.revision} of {statement.server} has no such tool"
            elif signed[name] != current:
                contract.unsigned = f"tool {name!r} is not the signed definition: its digest " \
                    f"{current[:19]}… differs from the signed {signed[name][:19]}…"
        return guard

    @property
    def policy(self) -> Policy:
        return self._policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        self._policy = policy
        self._plain_plans = {}  # made for the policy before

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._contracts)

    # --- deciding ----------------------------------------------------------------------

    def check(self, call: JsonValue) -> Decision:
        """Decide one call document (any shape :func:`histor_sign._call_import.import_call`
        reads); never raises for its content."""
        # A plain {"name", "arguments"} call with object arguments is validated as it is
        # (no import, no bytes built); anything else, and every deny, takes the full path.
        if (type(call) is dict and "name" in call and "arguments" in call
                and (len(call) == 2 or _PLAIN_KEYS.issuperset(call))):
            name = call["name"]
            args = call["arguments"]
            if type(name) is str and type(args) is dict:
                plans = self._plain_plans
                plan = plans[name] if name in plans else self._plain_plan(name)
                if fits_json_bound(args, DEFAULT_MAX_ARGUMENT_BYTES) and plan.allows(args):
                    return Decision(True, name, [])
        return self._decide(import_call(call))

    def _plain_plan(self, name: str) -> _AllowPlan:
        """The allow plan for a plain call naming ``name`` under the current policy, kept
        per name; one that allows nothing when there is no fast answer (a tool a plain call
        cannot name, unsigned, a broken schema). An unknown name is not kept: names are
        untrusted, the catalog's are bounded."""
        contract = self._contracts.get(name)
        if contract is None:
            return _ALLOWS_NOTHING
        plan = contract.plan(self._policy) if contract.plain_name else None
        if plan is None:
            plan = _ALLOWS_NOTHING
        self._plain_plans[name] = plan
        return plan

    def check_document(self, data: bytes, source: str = "call") -> Decision:
        """Decide a call given as raw bytes; text that is not strict JSON is a deny."""
        return self._decide(import_call_bytes(data, source))

    def _decide(self, call: ObservedCall | CallProblem) -> Decision:
        if isinstance(call, CallProblem):
            return _denied(call)
        return self._check(call.name, call.arguments, decoded=True)

    def check_arguments(self, name: str, arguments: Any) -> Decision:
        """Decide a call given as a tool name and arguments (an object or JSON text)."""
        return self._check(name, arguments, decoded=False)

    def _check(self, name: str, arguments: Any, decoded: bool) -> Decision:
        contract = self._contracts.get(name)
        if contract is None:
            return Decision(False, name, [
                Reason("unknown-tool", f"no tool named {shown_name(name)} in the contract")])
        if contract.unsigned is not None:
            return Decision(False, name, [Reason(NOT_SIGNED, contract.unsigned)])
        args = arguments if decoded else decode_arguments(arguments, name)
        if isinstance(args, CallProblem):
            return _denied(args)
        plan = contract.plan(self.policy)
        if plan is not None and plan.allows(args):
            return Decision(True, name, [])
        reasons = self._reasons(contract, args)
        return Decision(not reasons, name, reasons)

    def _reasons(self, contract: _Contract, args: Mapping[str, Any]) -> list[Reason]:
        """Every reason to deny a call the allow plan did not clear: the schema's, unknown
        arguments (when the policy denies them), the dry run, the effect budget; sorted."""
        tool = contract.tool
        rules = self.policy.for_tool(tool.name)
        secret = rules.secret
        validator = contract.validator()
        if contract.problem is not None:
            return [Reason(contract.problem.code, contract.problem.message)]
        try:
            reasons = schema_reasons(validator, args, secret)
        except SchemaProblem as exc:
            return [Reason(exc.code, exc.message)]
        if self.policy.deny_unknown_for(tool.name):
            reasons.extend(_undeclared_reasons(contract, args, reasons))
        dry_run = self._dry_run_reason(contract, args, secret) \
            if requires_dry_run(tool, self.policy) else None
        if dry_run is not None:
            reasons.append(dry_run)
        if rules.max_effect is not None and rules.effect_from is not None:
            reasons.extend(_effect_reasons(args, rules.effect_from, rules.max_effect, secret))
        return sorted(reasons, key=lambda r: (r.pointer, r.code, r.message))

    def _dry_run_reason(self, contract: _Contract, args: Mapping[str, Any],
                        secret: frozenset[str]) -> Reason | None:
        """Why a destructive tool's call is denied for its dry run, or None when the dry-run
        argument is true."""
        tool = contract.tool
        param = self.policy.dry_run_parameter_for(tool.name, contract.declared)
        named = (self.policy.for_tool(tool.name).dry_run_parameter
                 or self.policy.dry_run_parameter)
        if named is None and param not in contract.declared and not contract.patterns and (
                contract.closed or self.policy.deny_unknown_for(tool.name)):
            # Advice that leads somewhere: the server would reject the argument
            # ("unknown argument"), so only a person or the policy can allow the call.
            return Reason(
                "dry-run-required",
                f"{tool.name!r} is destructive and its schema has no dry-run argument: "
                "a real run needs a person's approval (a host with MCP elicitation) or "
                "the guard policy allowing it (require_dry_run = false for this tool)")
        if args.get(param) is True:
            return None
        return Reason(
            "dry-run-required",
            f"{tool.name!r} is destructive: {param} must be true"
            f"{_dry_run_state(args, param, secret)}; "
            "a real run needs approval outside the guard",
            shown_pointer([param]),
        )


def _dry_run_state(args: Mapping[str, Any], param: str, secret: frozenset[str]) -> str:
    """What the dry-run argument is instead of true (nothing shown for a secret one)."""
    if param not in args:
        return " (it is missing)"
    if param in secret:
        return ""
    found = args[param]
    return f" (it is {'false' if found is False else _article(json_type(found))})"


def _undeclared_reasons(contract: _Contract, args: Mapping[str, Any],
                        reasons: list[Reason]) -> list[Reason]:
    """Arguments the schema does not declare (by name or pattern), where the schema's own
    reasons did not already say so; undecidable pattern matches are reasons too."""
    reported = {r.pointer for r in reasons if r.code == "unknown-argument"}
    out: list[Reason] = []
    for key in sorted(args):
        if key in contract.declared:
            continue
        hits = [pattern_matches(p, key) for p in contract.patterns]
        if any(hits):
            continue
        where = shown_pointer([key])
        if None in hits:
            out.append(Reason(
                PATTERN_UNDECIDABLE,
                f"cannot decide whether argument {shown_name(key)} is declared: the "
                "schema's patternProperties are matched only on printable ASCII names",
                where,
            ))
        elif where not in reported:
            out.append(
                Reason(
                    "unknown-argument",
                    f"unknown argument {shown_name(key)} (the schema does not declare it)",
                    where,
                )
            )
    return out


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


def _denied(problem: CallProblem) -> Decision:
    return Decision(False, problem.tool, [Reason(problem.code, problem.message)])


def _effect_reasons(
    args: Mapping[str, Any], source: str, budget: int, secret: frozenset[str]
) -> list[Reason]:
    where = shown_pointer([source])
    value = args.get(source)
    if isinstance(value, list):
        effect = len(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        effect = value
    elif isinstance(value, float) and value.is_integer():
        effect = int(value)
    else:
        state = (" (it is missing)" if source not in args
                 else "" if source in secret else f" (it is {json_type(value)})")
        return [
            Reason(
                "effect-unknown",
                f"cannot bound the effect: {source} must be an array or integer{state}",
                where,
            )
        ]
    if effect <= budget:
        return []
    shown = "" if source in secret else f" {effect}"
    return [
        Reason(
            "effect-over-budget",
            f"effect{shown} exceeds the budget max_effect = {budget} ({source})",
            where,
        )
    ]


def _as_policy(policy: Policy | Mapping[str, Any] | None) -> Policy:
    if policy is None or isinstance(policy, Policy):
        return policy or Policy()
    return Policy.from_dict(policy)
