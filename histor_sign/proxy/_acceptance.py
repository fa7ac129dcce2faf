"""Accepting a held-back revision from inside a session: when the pinned server's latest
revision waits for acceptance (:attr:`histor_sign.pins.PinnedRevision.awaiting`) and the
host can ask its user (it declared ``elicitation``), the proxy shows the triaged changes
and asks once. Accepted, the pin follows exactly that revision (:func:`histor_sign.pins.
use_pinned` with ``accept``, the same rule ``trust update --accept`` applies) and the
session serves it; declined or unanswered, the accepted revision stays in use.

Everything shown is escaped (server text: tool names, descriptions) and bounded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from histor_sign._escape import printable

if TYPE_CHECKING:
    from histor_sign.pins import Awaiting, PinnedRevision

#: The most lines, and characters per line, of triaged changes one question shows.
MAX_LINES, MAX_LINE = 60, 300


def question(server: str, awaiting: Awaiting, current: int) -> dict[str, Any]:
    """The ``elicitation/create`` params: what waits, its triaged changes, one boolean."""
    changes = (awaiting.changes.to_text() if awaiting.changes is not None
               else f"(not triaged: {awaiting.why})").splitlines()
    shown = [printable(line, MAX_LINE) for line in changes[:MAX_LINES]]
    if len(changes) > MAX_LINES:
        shown.append(f"… {len(changes) - MAX_LINES} more line(s): histor-sign trust update")
    text = "\n".join([
        f"histor-sign proxy: {printable(server, 200)} {awaiting.summary()}. Revision "
        f"{current} stays in use unless you accept. Changes since revision {current}:",
        *shown])
    schema = {"type": "object", "properties": {"accept": {
        "type": "boolean", "title": f"Use revision {awaiting.revision} from now on",
        "default": False}}, "required": ["accept"]}
    return {"message": text, "requestedSchema": schema}


def accepted(reply: dict[str, Any]) -> bool:
    """The host's answer says the user accepted (anything else: not accepted)."""
    result = reply.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    return (isinstance(result, dict) and result.get("action") == "accept"
            and isinstance(content, dict) and content.get("accept") is True)


def accept(revision: PinnedRevision, *, store: Any, trust: Any, offline: bool
           ) -> PinnedRevision:
    """Accept ``revision.awaiting`` under the pin (verified again; the revision recorded as
    pending must still be the latest): the revision to serve from now on."""
    from histor_sign._verified_cache import VerifiedCache, using
    from histor_sign.errors import VerificationFailed
    from histor_sign.pins import PinStore, use_pinned

    loaded = store if isinstance(store, PinStore) else PinStore.load(store)
    with using(VerifiedCache(loaded.path)):
        now = use_pinned(loaded, revision.server, trust=trust, offline=offline,
                         signed_tools=True, accept=True)
    if now.awaiting is not None:
        raise VerificationFailed(f"{revision.server}: {now.awaiting.summary()} (published "
                                 "since the question was asked: not accepted)")
    return now
