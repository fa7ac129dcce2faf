"""The tools/list walk: every page, in served order, with every guard.

End of list = ``nextCursor`` absent or null; ``""`` is a cursor like any other. A cursor
seen twice is a cycle; duplicate names across pages are an error naming both positions
(or, with ``allow_duplicates``, recorded as evidence); the list's own ``list_changed``
notification (tools, prompts, or resources for templates) during the walk restarts it
once; pages, tools and bytes are bounded.

The prompts and resource-template lists are optional parts of the surface: a JSON-RPC
error answering the first page of one of them (a server that advertises the capability but
answers ``-32601 Method not found``, as several real servers do) is :class:`NotServed`,
which the fetch records instead of failing. An error on ``tools/list``, or on a later page
of any list, stays an error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from histor_sign.errors import FetchError, InputError, LimitExceeded
from histor_sign.mcp._jsonrpc import RpcError, clip
from histor_sign.mcp._session import Session
from histor_sign.mcp._target import FetchOptions

MAX_RESTARTS = 1


@dataclass
class Walk:
    tools: list[dict[str, Any]] = field(default_factory=list)
    page_sizes: list[int] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    restarts: int = 0


@dataclass(frozen=True)
class ListKind:
    """One paginated list: its method, the result's array member, and each item's key."""

    method: str
    member: str
    key: str
    noun: str
    #: The notification that says this list changed (templates: the resources one).
    changed: str
    #: An optional part of the surface: an error answer to its first page is NotServed.
    optional: bool = False


TOOLS = ListKind("tools/list", "tools", "name", "tool", "notifications/tools/list_changed")
PROMPTS = ListKind("prompts/list", "prompts", "name", "prompt",
                   "notifications/prompts/list_changed", optional=True)
RESOURCE_TEMPLATES = ListKind(
    "resources/templates/list", "resourceTemplates", "uriTemplate", "resource template",
    "notifications/resources/list_changed", optional=True,
)


class NotServed(Exception):
    """An optional list's first page was answered with a JSON-RPC error (integer code)."""

    def __init__(self, kind: ListKind, error: RpcError) -> None:
        super().__init__(error.message)
        self.kind = kind
        self.error = error
        self.code: int = error.code


def _where(kind: ListKind, page: int, item: int, index: int) -> str:
    return f"page {page} item {item} (#/{kind.member}/{index})"


async def walk_tools(session: Session, options: FetchOptions) -> Walk:
    return await walk_list(session, options, TOOLS)


async def walk_list(session: Session, options: FetchOptions, kind: ListKind) -> Walk:
    """Walk every page of ``kind`` with the same guards as tools/list."""
    channel = session.channel
    restarts = 0
    while True:
        channel.changed[kind.changed] = 0
        walk = await _walk_once(session, options, kind)
        if not channel.changed[kind.changed]:
            walk.restarts = restarts
            return walk
        if restarts >= MAX_RESTARTS:
            raise FetchError(
                f"the server's {kind.noun} list changed again ({kind.changed}) "
                "during the restarted walk; it is not stable enough to snapshot"
            )
        restarts += 1


async def _walk_once(session: Session, options: FetchOptions, kind: ListKind) -> Walk:
    walk = Walk()
    first_seen: dict[str, tuple[int, int, int]] = {}
    cursors: dict[str, int] = {}
    cursor: str | None = None
    page = 0
    while True:
        if page >= options.max_pages:
            raise LimitExceeded(
                f"{kind.method} has more than `max_pages` {options.max_pages} pages",
                limit="max_pages", value=options.max_pages,
            )
        page += 1
        result = await _call_page(session, kind, cursor, page)
        what = f"{kind.method} page {page}"
        items = _page_items(result, kind, what)
        for item_no, tool in enumerate(items):
            _take_item(walk, tool, kind, (page, item_no), first_seen, options, what)
        walk.page_sizes.append(len(items))
        if options.progress is not None:
            options.progress(page, len(walk.tools))
        if session.channel.changed.get(kind.changed):
            return walk  # the caller restarts
        nxt = _next_cursor(result, what, cursors)
        if nxt is None:
            return walk
        cursors[nxt] = page
        cursor = nxt


async def _call_page(session: Session, kind: ListKind, cursor: str | None,
                     page: int) -> dict[str, Any]:
    """Step: request one page; an optional list's error on page 1 means "not served"."""
    try:
        return await session.call(kind.method, None if cursor is None else {"cursor": cursor})
    except RpcError as exc:
        if kind.optional and page == 1 and isinstance(exc.code, int) and not isinstance(
            exc.code, bool
        ):
            raise NotServed(kind, exc) from None
        if kind.optional and page > 1:
            raise FetchError(f"{kind.method} page {page}: {exc.message} (a list that "
                             "breaks after its first page is not \"not served\"; it "
                             "cannot be recorded)") from None
        raise


def _page_items(result: dict[str, Any], kind: ListKind, what: str) -> list[Any]:
    """Step: a complete page's item array; anything else fails."""
    result_type = result.get("resultType")
    if result_type is not None and result_type != "complete":
        raise FetchError(f"{what}: resultType is {clip(str(result_type), 40)!r}, "
                         "expected \"complete\"")
    items = result.get(kind.member)
    if not isinstance(items, list):
        raise InputError(f"{what}: the result has no \"{kind.member}\" array")
    return items


def _take_item(walk: Walk, tool: Any, kind: ListKind, at: tuple[int, int],
               first_seen: dict[str, tuple[int, int, int]], options: FetchOptions,
               what: str) -> None:
    """Step: check one item (an object with a string key, no unallowed duplicate) and keep
    it, within ``max_tools``."""
    page, item_no = at
    index = len(walk.tools)
    where = _where(kind, page, item_no, index)
    if not isinstance(tool, dict):
        raise InputError(f"{what}: {kind.noun} at {where} is not a JSON object")
    name = tool.get(kind.key)
    if not isinstance(name, str):
        raise InputError(f"{what}: {kind.noun} at {where} has no string \"{kind.key}\"")
    if name in first_seen:
        p, i, x = first_seen[name]
        if not options.allow_duplicates:
            raise InputError(
                f"duplicate {kind.noun} {kind.key} {clip(name, 80)!r}: "
                f"{_where(kind, p, i, x)} and {where} "
                "(use `allow_duplicates` to keep both as evidence)",
                param="allow_duplicates",
            )
        walk.duplicates.append({"name": name, "first": x, "second": index})
    else:
        first_seen[name] = (page, item_no, index)
    walk.tools.append(tool)
    if len(walk.tools) > options.max_tools:
        raise LimitExceeded(
            f"{kind.method} has more than `max_tools` {options.max_tools} {kind.member}",
            limit="max_tools", value=options.max_tools,
        )


def _next_cursor(result: dict[str, Any], what: str, cursors: dict[str, int]) -> str | None:
    """Step: the page's ``nextCursor`` (None at the end); a cursor seen before is a cycle."""
    nxt = result.get("nextCursor")
    if nxt is None:
        return None
    if not isinstance(nxt, str):
        raise InputError(f"{what}: nextCursor must be a string or absent, got "
                         f"{clip(json.dumps(nxt), 40)}")
    if nxt in cursors:
        raise FetchError(
            f"cursor cycle: {what} returned cursor {clip(json.dumps(nxt), 60)} which "
            f"page {cursors[nxt]} already returned"
        )
    return nxt
