"""The guard policy file: dry-run requirements, effect budgets, secret arguments.

A policy is TOML (stdlib ``tomllib``) so it can sit next to a workflow file and be
reviewed like one. Every key is checked: a typo that silently disabled a budget would be
worse than no policy, so unknown keys and wrong types stop with the file and key named.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histor_sign._limits import MAX_POLICY_BYTES
from histor_sign.canonical import read_bytes
from histor_sign.errors import InputError, LimitExceeded

#: The dry-run argument names recognised when the policy names none, in order of preference:
#: snake case (the guard's own convention) and camel case (``@modelcontextprotocol/server-
#: filesystem``'s ``edit_file`` and most TypeScript servers).
DRY_RUN_NAMES = ("dry_run", "dryRun")

_DEFAULT_KEYS = {"require_dry_run_for_destructive", "dry_run_parameter", "deny_unknown_arguments"}
_TOOL_KEYS = {
    "max_effect",
    "effect_from",
    "secret",
    "require_dry_run",
    "dry_run_parameter",
    "deny_unknown_arguments",
}


@dataclass(frozen=True)
class ToolPolicy:
    """Per-tool settings; ``None`` means "use the default"."""

    max_effect: int | None = None
    effect_from: str | None = None
    secret: frozenset[str] = frozenset()
    require_dry_run: bool | None = None
    dry_run_parameter: str | None = None
    deny_unknown_arguments: bool | None = None


@dataclass(frozen=True)
class Policy:
    """What the guard enforces beyond the schema. ``Policy()`` is the safe default."""

    require_dry_run_for_destructive: bool = True
    #: The dry-run argument for every tool; None (the default) recognises the names real
    #: servers use (:data:`DRY_RUN_NAMES`: ``dry_run``, ``dryRun``) by what the tool's
    #: schema declares.
    dry_run_parameter: str | None = None
    deny_unknown_arguments: bool = True
    tools: Mapping[str, ToolPolicy] = field(default_factory=dict)
    source: str = "<default policy>"

    def for_tool(self, name: str) -> ToolPolicy:
        return self.tools.get(name, _NO_TOOL_POLICY)

    def dry_run_parameter_for(self, name: str, declared: Iterable[str] = ()) -> str:
        """The dry-run argument of tool ``name``: the policy's (per tool, then default),
        else the first of :data:`DRY_RUN_NAMES` among the ``declared`` argument names,
        else ``dry_run``."""
        named = self.for_tool(name).dry_run_parameter or self.dry_run_parameter
        if named is not None:
            return named
        names = set(declared)
        return next((n for n in DRY_RUN_NAMES if n in names), DRY_RUN_NAMES[0])

    def deny_unknown_for(self, name: str) -> bool:
        own = self.for_tool(name).deny_unknown_arguments
        return self.deny_unknown_arguments if own is None else own

    @classmethod
    def load(cls, path: str | Path) -> Policy:
        """Read and check a TOML policy file (``-`` reads stdin)."""
        source = str(path)
        data = read_bytes(source, max_bytes=MAX_POLICY_BYTES)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{source}: invalid UTF-8 at byte {exc.start}") from None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{source}: not valid TOML: {exc}") from None
        except RecursionError:
            # tomllib recurses once per nested array or inline table.
            raise LimitExceeded(f"{source}: arrays or inline tables nested too deep") from None
        except ValueError:
            # int() refuses a decimal literal past Python's 4,300-digit conversion limit.
            raise InputError(f"{source}: not valid TOML: an integer literal is too long") \
                from None
        return cls.from_dict(doc, source)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], source: str = "<policy>") -> Policy:
        """Check a parsed policy document; errors name ``source`` and the dotted key."""
        if not isinstance(doc, Mapping):
            raise InputError(f"{source}: a policy must be a table/object")
        _no_unknown(doc, {"defaults", "tools"}, source, "")
        defaults = _table(doc.get("defaults", {}), source, "defaults")
        _no_unknown(defaults, _DEFAULT_KEYS, source, "defaults.")
        tools_table = _table(doc.get("tools", {}), source, "tools")
        tools: dict[str, ToolPolicy] = {}
        for name, raw in tools_table.items():
            key = f"tools.{_quote_key(name)}"
            table = _table(raw, source, key)
            _no_unknown(table, _TOOL_KEYS, source, key + ".")
            tools[name] = _tool_policy(table, source, key)
        return cls(
            require_dry_run_for_destructive=_bool(
                defaults, "require_dry_run_for_destructive", True, source, "defaults"
            ),
            dry_run_parameter=_name(defaults, "dry_run_parameter", source, "defaults"),
            deny_unknown_arguments=_bool(
                defaults, "deny_unknown_arguments", True, source, "defaults"
            ),
            tools=tools,
            source=source,
        )


_NO_TOOL_POLICY = ToolPolicy()


def _tool_policy(table: Mapping[str, Any], source: str, key: str) -> ToolPolicy:
    """One ``[tools.NAME]`` table, checked key by key; the first bad value is an error."""
    max_effect, effect_from = _effect_budget(table, source, key)
    secret = table.get("secret", [])
    if not isinstance(secret, list) or not all(isinstance(s, str) and s for s in secret):
        raise InputError(f"{source}: {key}.secret must be an array of argument names")
    require = _optional_bool(table, "require_dry_run", source, key)
    deny_unknown = _optional_bool(table, "deny_unknown_arguments", source, key)
    return ToolPolicy(
        max_effect=max_effect,
        effect_from=effect_from,
        secret=frozenset(secret),
        require_dry_run=require,
        dry_run_parameter=_name(table, "dry_run_parameter", source, key),
        deny_unknown_arguments=deny_unknown,
    )


def _effect_budget(table: Mapping[str, Any], source: str,
                   key: str) -> tuple[int | None, str | None]:
    """``max_effect`` and ``effect_from``: both or neither, the budget a non-negative
    integer."""
    max_effect = table.get("max_effect")
    if max_effect is not None and (
        isinstance(max_effect, bool) or not isinstance(max_effect, int) or max_effect < 0
    ):
        raise InputError(f"{source}: {key}.max_effect must be a non-negative integer")
    effect_from = _name(table, "effect_from", source, key)
    if max_effect is not None and effect_from is None:
        raise InputError(
            f"{source}: {key}.max_effect needs effect_from (the argument whose array length "
            "or integer value is the call's effect)"
        )
    if effect_from is not None and max_effect is None:
        raise InputError(f"{source}: {key}.effect_from needs max_effect")
    return max_effect, effect_from


def _optional_bool(table: Mapping[str, Any], name: str, source: str, key: str) -> bool | None:
    """A per-tool switch: true, false, or absent (None: the defaults decide)."""
    value = table.get(name)
    if value is not None and not isinstance(value, bool):
        raise InputError(f"{source}: {key}.{name} must be true or false")
    return value


def _table(value: Any, source: str, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InputError(f"{source}: {key} must be a table")
    return value


def _no_unknown(table: Mapping[str, Any], allowed: set[str], source: str, prefix: str) -> None:
    for key in table:
        if key not in allowed:
            raise InputError(
                f"{source}: unknown key {prefix}{_quote_key(key)} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )


def _bool(table: Mapping[str, Any], key: str, default: bool, source: str, where: str) -> bool:
    value = table.get(key, default)
    if not isinstance(value, bool):
        raise InputError(f"{source}: {where}.{key} must be true or false")
    return value


def _name(table: Mapping[str, Any], key: str, source: str, where: str) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise InputError(f"{source}: {where}.{key} must be a non-empty argument name")
    return value


def _quote_key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key)
    return key if bare else '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
