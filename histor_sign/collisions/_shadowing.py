"""TC010: tool shadowing — a description that steers the model toward or away from another tool.

A description is untrusted text the model reads as instructions. "Use this instead of
`send_email`", "always call `x` first" or "never use the other server's `delete_*`" redirect
calls meant for *another* tool in the same scan (often another server's). The rule is lexical
and deterministic (no model, no network):

1. **Mentions.** Words of the description that are the exact name of another tool in the scan
   (``send_email``, ``getUser``), or a glob ``prefix*`` matching at least one. A name that is a
   single plain word (``fetch``, ``search``) counts only when quoted (backquotes or quotes), so
   ordinary prose does not match.
2. **Imperative.** The sentence holding the mention must steer: *redirect* ("instead (of)",
   "rather than", "never", "do not", "don't", "avoid", "deprecated", "prefer", "replace",
   "ignore") or impose an *order* ("always", "must", "first", "before", "prior to", "only
   after"). A sentence with both counts as redirect.
3. **Severity.** Across sources: redirect → error, order → warning. Within one source the
   author steers between their own tools (a deprecation, a workflow): note. A name the
   describing tool's own source serves means that sibling, never another server's tool of
   the same name (a server that names its own ``search`` is not steering to another's).

Each finding carries the quoted sentence (``span``), the named tools and the imperative.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from histor_sign.collisions._caseless import cannot_match
from histor_sign.models import Finding, Severity, Tool
from histor_sign.report._findings import new_finding

#: Longest description text read per tool (a description is bounded by the catalog anyway).
MAX_DESCRIPTION_CHARS = 20_000
#: Longest quoted span in a finding.
MAX_SPAN_CHARS = 240

AWAY = ("instead of", "instead", "rather than", "in place of", "never", "do not", "don't", "dont",
        "avoid", "deprecated", "prefer", "replaces", "replace", "ignore", "not use")
ORDER = ("always", "must", "first", "before", "prior to", "only after")
_IMPERATIVE = re.compile(
    r"\b(" + "|".join(re.escape(w) for w in sorted(AWAY + ORDER, key=len, reverse=True))
    + r")\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_MENTION = re.compile(r"([`'\"‘“]?)([A-Za-z0-9][A-Za-z0-9_.\-]*(\*)|[A-Za-z0-9][A-Za-z0-9_.\-]*"
                      r"[A-Za-z0-9]|[A-Za-z])([`'\"’”]?)")
_PLAIN = re.compile(r"[a-z]+|[A-Z][a-z]*|[A-Z]+")


@dataclass(frozen=True)
class Steering:
    """One description sentence that steers toward or away from named tools."""

    span: str
    named: tuple[str, ...]
    imperative: str
    kind: str  # "redirect" (instead of, never, ...) or "order" (always, first, ...)


def _is_plain_word(name: str) -> bool:
    """``fetch`` or ``Search``: a word prose uses, so it counts only when quoted."""
    return _PLAIN.fullmatch(name) is not None


class _Names:
    """The scan's tool names, for exact lookups and ``prefix*`` globs."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self.by_name: dict[str, list[int]] = {}
        for i, t in enumerate(tools):
            self.by_name.setdefault(t.name, []).append(i)
        self.sorted = sorted(self.by_name)

    def match(self, word: str, glob: bool) -> list[str]:
        if not glob:
            return [word] if word in self.by_name else []
        prefix = word[:-1]
        if len(prefix) < 3:
            return []
        start = bisect.bisect_left(self.sorted, prefix)
        out = []
        for name in self.sorted[start:]:
            if not name.startswith(prefix):
                break
            out.append(name)
        return out


def _mentions(text: str) -> list[tuple[str, bool]]:
    """(word, is a ``prefix*`` glob) for each possible tool name in ``text`` by the mention
    rules: a single plain word counts only when quoted."""
    out = []
    for m in _MENTION.finditer(text):
        word, glob = m.group(2), m.group(3) is not None
        if glob or not _is_plain_word(word) or (m.group(1) and m.group(4)):
            out.append((word, glob))
    return out


def steering(tool: Tool, names: _Names) -> list[tuple[Steering, list[str]]]:
    """The steering sentences of ``tool``'s description, each with the other tools named."""
    text = tool.description[:MAX_DESCRIPTION_CHARS]
    out: list[tuple[Steering, list[str]]] = []
    if cannot_match(text, AWAY + ORDER):  # no imperative, so no steering sentence
        return out
    for sentence in _SENTENCE.finditer(text):
        body = sentence.group()
        imperatives = list(_IMPERATIVE.finditer(body))
        if not imperatives:
            continue
        named = _others_named(body, tool.name, names)
        if named:
            out.append((_steering_of(body, imperatives, named), named))
    return out


def _others_named(body: str, own: str, names: _Names) -> list[str]:
    """The tool names (other than ``own``) a sentence mentions, in order, once each."""
    named: list[str] = []
    for word, glob in _mentions(body):
        for name in names.match(word, glob):
            if name != own and name not in named:
                named.append(name)
    return named


def _steering_of(body: str, imperatives: list[re.Match[str]], named: list[str]) -> Steering:
    """A steering sentence: its clipped span and its strongest imperative (one that sends
    the model away, else the first)."""
    words = [m.group(1).lower() for m in imperatives]
    away = [w for w in words if w in AWAY]
    imperative = away[0] if away else words[0]
    span = " ".join(body.split())
    if len(span) > MAX_SPAN_CHARS:
        span = span[: MAX_SPAN_CHARS - 1] + "…"
    return Steering(span, tuple(named), imperative, "redirect" if away else "order")


#: Words by which a description retires its own tool in favour of another.
RETIRED = ("deprecated", "superseded", "obsolete")
_RETIRED = re.compile(r"\b(" + "|".join(RETIRED) + r")\b", re.IGNORECASE)


def deprecated_aliases(tools: Sequence[Tool]) -> list[tuple[int, int]]:
    """Pairs (i, j), i < j, where one tool's description says it is deprecated (superseded,
    obsolete) and names the other, a tool of its own source (by the mention rules above:
    "[DEPRECATED] consolidated into 'manage-list-entry'"). The old name stays callable and
    does what its replacement does: a model can pick either for one request, whatever their
    names and descriptions otherwise say."""
    own: dict[tuple[str, str], list[int]] = {}
    for j, t in enumerate(tools):
        own.setdefault((t.source, t.name), []).append(j)
    out: set[tuple[int, int]] = set()
    said: dict[str, list[str]] = {}  # forks repeat descriptions: each is read once
    for i, tool in enumerate(tools):
        if tool.description not in said:
            said[tool.description] = _retiring_mentions(tool.description)
        for word in said[tool.description]:
            out.update((min(i, j), max(i, j)) for j in own.get((tool.source, word), ())
                       if j != i)
    return sorted(out)


def _retiring_mentions(description: str) -> list[str]:
    """The tool names a description that retires its tool mentions (none if it does not)."""
    text = description[:MAX_DESCRIPTION_CHARS]
    if cannot_match(text, RETIRED) or _RETIRED.search(text) is None:
        return []
    return [word for word, glob in _mentions(text) if not glob]


def shadowing_findings(tools: Sequence[Tool]) -> list[Finding]:
    """TC010 for every (describing tool, named tool) pair, at the strongest imperative."""
    names = _Names(tools)
    findings: list[Finding] = []
    # what a description says depends on it and the tool's own name only: forks repeat both
    said: dict[tuple[str, str], list[tuple[Steering, list[str]]]] = {}
    for tool in tools:
        if not tool.description:
            continue
        key = (tool.name, tool.description)
        if key not in said:
            said[key] = steering(tool, names)
        best = _strongest_per_target(tool, tools, said[key], names)
        for j, found in sorted(best.items()):
            findings.append(_finding(tool, tools[j], found))
    return findings


def _strongest_per_target(tool: Tool, tools: Sequence[Tool],
                          said: list[tuple[Steering, list[str]]],
                          names: _Names) -> dict[int, Steering]:
    """Each tool ``tool``'s steering sentences name, with the strongest sentence (a redirect
    beats an order; else the first)."""
    best: dict[int, Steering] = {}
    for found, named in said:
        for name in named:
            targets = names.by_name[name]
            # a name the describing tool's own source serves is that tool's sibling:
            # the description steers within its server, not to another server's namesake
            own = [j for j in targets if tools[j].source == tool.source]
            for j in own or targets:
                if tools[j] is tool:
                    continue
                if j not in best or (best[j].kind, found.kind) == ("order", "redirect"):
                    best[j] = found
    return best


def _finding(tool: Tool, other: Tool, found: Steering) -> Finding:
    across = tool.source != other.source
    if not across:
        severity = Severity.note
    else:
        severity = Severity.error if found.kind == "redirect" else Severity.warning
    where = "another source" if across else "the same source"
    return new_finding(
        "TC010", tools=[tool.ref, other.ref], severity=severity,
        properties={"kind": found.kind, "imperative": found.imperative,
                    "named": other.name, "span": found.span, "crossSource": across},
        message=(f"the description of {tool.name!r} ({tool.location}) names {other.name!r} "
                 f"({other.location}, {where}) with the {found.kind} imperative "
                 f"{found.imperative!r}: {found.span!r}"),
    )

