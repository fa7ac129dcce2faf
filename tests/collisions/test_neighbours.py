"""Candidates from the scanned catalogs' own token statistics (issue 38): the same operation
in two servers that cover the same ground, whatever each calls it, and near-duplicate
siblings of one source — never a pair whose effects differ, never a resource for a variant."""

from __future__ import annotations

from typing import Any

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.models import Finding, parse_catalog

UID = {"type": "object", "properties": {"uid": {"type": "string"}}, "required": ["uid"]}
FOLDER = {"type": "object", "properties": {"messageId": {"type": "string"},
                                           "folder": {"type": "string"}}}
NONE: dict[str, Any] = {"type": "object", "properties": {}}


def tool(name: str, description: str, schema: dict[str, Any] | None = None,
         **annotations: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": description,
                           "inputSchema": schema or NONE}
    if annotations:
        out["annotations"] = annotations
    return out


IMAP = [
    tool("save_attachment", "Save the attachment parts of a message envelope, addressed by "
         "its IMAP uid, into a local folder on disk.", UID),
    tool("list_mailboxes", "List the mailboxes of the IMAP account."),
    tool("move_message", "Move a message envelope by uid to another mailbox.", UID),
    tool("flag_message", "Set or clear an IMAP flag (seen, flagged) on a message by uid.", UID),
]
GMAIL = [
    tool("download_attachment", "Download the attachment parts of a Gmail message envelope "
         "into a local folder on disk.", FOLDER),
    tool("list_labels", "List the labels of the Gmail account."),
    tool("send_message", "Send an email message to a recipient."),
]
OTHERS = {
    "weather": [tool("get_forecast", "Get the weather forecast for a city."),
                tool("get_alerts", "Get active weather alerts for a region."),
                tool("geocode_city", "Turn a city name into coordinates.")],
    "calendar": [tool("create_event", "Create a calendar event with a title and a time."),
                 tool("list_events", "List the calendar events of a day."),
                 tool("delete_event", "Delete a calendar event by its id.")],
    "git": [tool("git_commit", "Record staged changes in the repository."),
            tool("git_log", "Show the commit history of the repository."),
            tool("git_diff", "Show the changes between commits.")],
}
PAIR = {"imap:save_attachment", "gmail:download_attachment"}


def scan(servers: dict[str, list[dict[str, Any]]]) -> list[Finding]:
    catalogs = [parse_catalog({"tools": tools}, name) for name, tools in servers.items()]
    return scan_catalogs(catalogs, ScanOptions(budget_seconds=None)).findings


def on(findings: list[Finding], pair: set[str]) -> list[Finding]:
    return [f for f in findings if {f"{t.source}:{t.name}" for t in f.tools} == pair]


def test_the_same_operation_in_two_servers_of_one_kind_is_confusable() -> None:
    """``save_attachment`` (IMAP) and ``download_attachment`` (Gmail) share no action class
    and no lexical reading pairs them; the catalogs say the two servers cover the same
    ground and each tool is the other's best match there."""
    found = on(scan({"imap": IMAP, "gmail": GMAIL, **OTHERS}), PAIR)
    assert [f.rule for f in found] == ["TC003"]
    basis = found[0].properties["basis"]
    assert basis.startswith("aligned across servers: 'gmail' and 'imap' are among each "
                            "other's 3 most similar catalogs in the scan, and each tool is "
                            "the other's best match there (")
    assert "attachment" in basis and basis in found[0].message
    assert found[0].witness == {"uid": "a"}


def test_two_servers_of_different_kinds_are_not_aligned() -> None:
    """The mail tool meets nothing in a weather or calendar server."""
    findings = scan({"imap": IMAP, **OTHERS})
    assert not [f for f in findings if f.properties.get("basis", "").startswith("aligned")]


def test_tools_whose_stated_effects_differ_are_never_aligned() -> None:
    """Stated hints that contradict (a destructive download vs a non-destructive save):
    the rule adds no pair, so it cannot make a TC004 on its own."""
    gmail = [dict(GMAIL[0], annotations={"destructiveHint": True}), *GMAIL[1:]]
    imap = [dict(IMAP[0], annotations={"destructiveHint": False}), *IMAP[1:]]
    assert on(scan({"imap": imap, "gmail": gmail, **OTHERS}), PAIR) == []


def test_copies_of_a_catalog_do_not_crowd_out_the_servers_of_its_kind() -> None:
    """Three forks of the IMAP server (same names and descriptions) would be its three
    nearest catalogs; copies are one source here, so the Gmail server is still its
    neighbour and the pair is found, on the first copy."""
    forks = {f"imap-fork{k}": IMAP for k in range(3)}
    findings = scan({"imap": IMAP, **forks, "gmail": GMAIL, **OTHERS})
    assert [f.rule for f in on(findings, PAIR)] == ["TC003"]
    assert on(findings, {"imap-fork0:save_attachment", "gmail:download_attachment"}) == []


REPORT = {"type": "object", "properties": {"flight": {"type": "string"},
                                           "date": {"type": "string"}},
          "required": ["flight"]}


def variant(level: str, extra: str) -> dict[str, Any]:
    return tool(f"get_flight_summary_{level}", "Returns the flight summary of one flight: "
                "takeoff and landing times, runway, gate, aircraft registration and "
                f"operator, for flights since 2016{extra}.", REPORT, readOnlyHint=True)


AIRPORTS = [tool("list_airports", "List the airports of a country."),
            tool("get_airport", "Get an airport by its code.", UID),
            tool("list_airlines", "List the airlines flying from an airport.", UID)]


def test_near_duplicate_siblings_of_one_source_are_confusable() -> None:
    """A detail level its names tell apart in a word no other action uses: TC003."""
    flights = [variant("rich", ""), variant("lean", ""), *AIRPORTS]
    found = on(scan({"flights": flights}), {"flights:get_flight_summary_rich",
                                            "flights:get_flight_summary_lean"})
    assert [f.rule for f in found] == ["TC003"]
    basis = found[0].properties["basis"]
    assert basis.startswith("near-duplicate siblings: same action 'get', identical input "
                            "schemas, descriptions 0.")
    assert basis.endswith("the names differ only in 'rich' / 'lean', words the source uses "
                          "with no other action")


def test_one_template_over_two_resources_is_not_a_near_duplicate() -> None:
    """``list_tags`` / ``list_types`` under one template: the server also gets and deletes
    tags and types, so the words name two resources, not two variants. Different schemas
    or a differing effect are no near duplicates either."""
    def listing(kind: str) -> dict[str, Any]:
        return tool(f"list_{kind}s", f"List all {kind}s of the archive, with their slug and "
                    "matching rule; read this before creating one to avoid ambiguity.")
    docs = [listing("tag"), listing("type"),
            tool("get_tag", "Get a tag by id.", UID), tool("delete_tag", "Delete a tag.", UID),
            tool("get_type", "Get a type by id.", UID),
            tool("delete_type", "Delete a type.", UID)]
    assert on(scan({"docs": docs}), {"docs:list_tags", "docs:list_types"}) == []
    other = dict(variant("lean", ""), inputSchema=UID)
    assert on(scan({"flights": [variant("rich", ""), other, *AIRPORTS]}),
              {"flights:get_flight_summary_rich", "flights:get_flight_summary_lean"}) == []
    writes = dict(variant("lean", ""), annotations={"readOnlyHint": False})
    assert on(scan({"flights": [variant("rich", ""), writes, *AIRPORTS]}),
              {"flights:get_flight_summary_rich", "flights:get_flight_summary_lean"}) == []
