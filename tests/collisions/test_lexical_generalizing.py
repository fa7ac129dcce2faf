"""Rules of issue 24 that say what makes two tools confusable to a model reading names and
descriptions, independent of any one corpus: a server's template sentences, a get-all vs a
list of one collection, a search vs the details of one item, names of nouns, the server's
subject areas, and reversible vs destructive removal."""

from __future__ import annotations

from histor_sign.collisions import scan_catalogs
from histor_sign.collisions._domains import canonical_words
from histor_sign.collisions._lexical import (
    Profile,
    drop_sentences,
    profiles_of,
    repeated_sentences,
    similarity,
)
from histor_sign.models import parse_catalog

TEMPLATE = ("Use this for the specific operation described; choose a sibling tool when you "
            "need a different resource. It changes remote state and needs permission.")


def test_sentences_a_server_repeats_anywhere_are_boilerplate() -> None:
    descs = [f"{first} {TEMPLATE} Returns the result." for first in (
        "Mark every to-do item as done.", "Upload a file for markdown.", "Close an issue.")]
    repeated = repeated_sentences(descs)
    assert "It changes remote state and needs permission." in repeated
    assert "Returns the result." not in repeated  # too short to be a template's note
    assert drop_sentences(descs[1], repeated).startswith("Upload a file for markdown.")
    assert "sibling" not in drop_sentences(descs[1], repeated)
    tools = [("gitlab", n, d) for n, d in zip(("mark_all_todos_done", "upload_markdown",
                                               "close_issue"), descs, strict=True)]
    p = profiles_of(tools)
    assert "sibling" not in p[1].description
    # the shared template made these look alike (Jaccard 0.8); without it nothing is shared
    assert similarity(p[0], p[1], 0.4) is None
    # fewer than three tools repeating a sentence is not a template
    assert not repeated_sentences(descs[:2])


def test_a_get_all_and_a_list_of_the_same_collection_are_one_request() -> None:
    get = Profile.of("get_projects", "Get all projects in the workspace")
    assert get.plural and not Profile.of("get_project", "Get one project").plural
    sim = similarity(get, Profile.of("list_projects", "List projects in the workspace"), 0.4)
    assert sim is not None and sim.basis == "name" and not sim.contrasting
    # one identified item is not the collection; reading a file's content is not listing
    assert similarity(Profile.of("get_project_by_id", "Get a project by its id"),
                      Profile.of("list_projects", "List projects"), 0.0) is None
    assert similarity(Profile.of("get_project", "Get a single project"),
                      Profile.of("list_projects", "List projects"), 0.0) is None
    assert similarity(Profile.of("read_files", "Read the contents of files"),
                      Profile.of("search_files", "Search files by name"), 0.0) is None
    # other object words: other collections
    assert similarity(get, Profile.of("list_project_members", "List members"), 0.0) is None


def test_a_resource_named_before_its_verb_is_a_type_not_a_count() -> None:
    """``pods_get`` (a Kubernetes server's resource_verb names) gets one pod: the plural
    names the resource type, so it is no get-all of the collection ``pods_list`` lists."""
    get = Profile.of("pods_get", "Get a Kubernetes Pod in the current namespace with the "
                     "provided name")
    listing = Profile.of("pods_list", "List all the Kubernetes pods in the current cluster")
    assert not get.plural and get.objects == listing.objects == {"pod"}
    assert similarity(get, listing, 0.4) is None
    # after the verb the plural still asks for the items
    assert Profile.of("get_pods", "Get the pods of the cluster").plural


def test_a_search_near_a_place_is_a_variant_and_the_details_of_one_item_are_not() -> None:
    tools = [("maps", n, d) for n, d in (
        ("maps_text_search", "Search places by keywords"),
        ("maps_around_search", "Search places by keywords around a coordinate"),
        ("maps_search_detail", "Details of a place a search found, by its id"))]
    text, around, detail = profiles_of(tools)
    assert "around" in around.variants and not around.objects
    assert similarity(text, around, 0.4) is not None
    assert similarity(around, detail, 0.0) is None
    assert similarity(text, detail, 0.0) is None


def test_a_name_of_nouns_asks_for_that_thing() -> None:
    # no verb in the name and none the description starts with: a get of the nouns
    distance = Profile.of("maps_distance", "距离测量 API 可以测量两个坐标之间的距离",
                          frozenset({"maps"}))
    assert (distance.action, distance.objects, distance.effect) == (
        "get", frozenset({"distance"}), "read-only")
    assert not distance.inferred_action
    weather = Profile.of("weather", "Weather of a city: temperature and rain")
    assert (weather.action, weather.objects) == ("get", frozenset({"weather"}))
    # a statement is run, not read, whatever the description's language
    assert Profile.of("sql", "执行 SQL 语句").action == "run"
    # working a value out is getting it
    calc = Profile.of("distance_tool", "Calculate the distance between two coordinates")
    assert calc.action == "calculate" and calc.objects == {"distance"}
    sim = similarity(distance, calc, 0.4)
    assert sim is not None and sim.basis == "name"
    # a name word the description starts with is the verb, whatever the table says
    scale = Profile.of("kubectl_scale", "Scale a Kubernetes deployment")
    assert (scale.action, scale.objects) == ("scale", frozenset({"kubectl"}))
    # an unknown first word that is not in the name leaves the name's first word
    ping = Profile.of("ping", "Verify that the server is responsive")
    assert ping.action == "ping" and ping.effect is None


def test_a_tool_is_in_its_servers_subject_areas_too() -> None:
    # the filesystem server's edit_file mentions a "git-style diff"; it is still a files tool
    fs = [("filesystem", n, d) for n, d in (
        ("read_file", "Read a file in an allowed directory"),
        ("list_directory", "List a directory"),
        ("move_file", "Move a file to another directory"),
        ("edit_file", "Make line-based edits to a text file; returns a git-style diff"))]
    other = [("commander", n, d) for n, d in (
        ("write_file", "Write or append to a file"),
        ("list_processes", "List running processes"),
        ("read_file", "Read a file from the filesystem"))]
    p = profiles_of(fs + other)
    assert {"code", "files"} <= p[3].areas
    assert similarity(p[3], p[4], 0.4) is not None


def test_disabling_or_deactivating_vs_deleting_contradict() -> None:
    """Turned off and kept, or gone: HS201 (the words say it; no hint does, so no TC004)."""
    schema = {"type": "object", "properties": {"id": {"type": "string"}}}
    for verb in ("disable", "deactivate"):
        cat = parse_catalog({"tools": [
            {"name": f"{verb}_user", "description": "Turn a user off", "inputSchema": schema},
            {"name": "delete_user", "description": "Delete a user", "inputSchema": schema}]},
            "c.json")
        found = [f for f in scan_catalogs([cat]).findings if f.rule in ("TC004", "HS201")]
        assert [(f.rule, f.severity.value) for f in found] == [("HS201", "warning")], verb
        assert found[0].properties["similarity"]["contrastingActions"] is True


def test_general_abbreviations_name_one_object() -> None:
    assert canonical_words(["send", "mail"]) == ["send", "email"]
    assert Profile.of("list_pkgs", "").objects == Profile.of("list_packages", "").objects
    assert Profile.of("upgrade_release", "").action == "modify"


def test_exec_runs_a_command_inside_what_it_names() -> None:
    """``pods_exec`` runs a command in a pod, ``pods_run`` starts a pod (the Kubernetes MCP
    server's tools, whose differing destructive hints failed the gate on a false TC004);
    on a command both run it."""
    exec_ = Profile.of("pods_exec", "Execute a command in a Kubernetes Pod (shell access, run "
                       "commands in container) in the current or provided namespace with the "
                       "provided name and command")
    run = Profile.of("pods_run", "Run a Kubernetes Pod in the current or provided namespace "
                     "with the provided container image and optional name")
    assert exec_.objects == run.objects == {"pod"}
    assert similarity(exec_, run, 0.0) is None
    assert similarity(Profile.of("exec_container", "Execute a command in a running container"),
                      Profile.of("run_container", "Run a new container from an image"),
                      0.0) is None
    same = similarity(Profile.of("exec_command", "Execute a shell command"),
                      Profile.of("run_command", "Run a shell command"), 0.4)
    assert same is not None and not same.contrasting
    both = similarity(Profile.of("execute_workflow", "Execute a workflow"),
                      Profile.of("run_workflow", "Run a workflow"), 0.4)
    assert both is not None and both.basis == "name"


# --- the third tuning set's classes: interchangeable backends of one area -----------------

def _profiles(*tools: tuple[str, str, str]) -> dict[str, Profile]:
    return {f"{s}:{n}": p for (s, n, _), p in zip(tools, profiles_of(list(tools)), strict=True)}


def test_web_search_engines_of_different_services_are_one_request() -> None:
    """``google_search``, ``search_with_bing``, ``jina_search`` and a bare ``search``: the
    service names where the search happens, the web is what is searched."""
    p = _profiles(
        ("serper", "google_search", "Tool to perform web searches via Serper API"),
        ("serper", "scrape", "Tool to scrape a webpage and retrieve the text"),
        ("hyper", "search_with_bing", "Search the web using Bing. Searches bing.com"),
        ("hyper", "scrape_webpage", "Scrape a webpage and extract its content"),
        ("jina", "jina_search", "Search the web. Use jina reader for full content."),
        ("jina", "jina_reader", "Read and extract content from web page."),
        ("adenot", "search", "Perform a web search query"),
        ("adenot", "read_webpage", "Fetch and extract text content from a webpage"),
    )
    assert p["serper:google_search"].objects == p["hyper:search_with_bing"].objects == set()
    assert "google" in p["serper:google_search"].domain
    assert p["jina:jina_reader"].objects == set()  # "reader" is who reads
    searches = ["serper:google_search", "hyper:search_with_bing", "jina:jina_search",
                "adenot:search"]
    for i, a in enumerate(searches):
        for b in searches[i + 1:]:
            assert similarity(p[a], p[b], 0.4) is not None, (a, b)
    readers = ["serper:scrape", "hyper:scrape_webpage", "jina:jina_reader",
               "adenot:read_webpage"]
    for i, a in enumerate(readers):
        for b in readers[i + 1:]:
            assert similarity(p[a], p[b], 0.4) is not None, (a, b)
    # a search and a page reader stay apart
    assert similarity(p["adenot:search"], p["adenot:read_webpage"], 0.4) is None


def test_browser_interface_actions_are_about_web_pages_on_any_driver() -> None:
    p = _profiles(
        ("infra", "browser_screenshot", "Take a screenshot of the current page"),
        ("infra", "browser_click", "Click an element on the page"),
        ("infra", "browser_type", "Type text into an element"),
        ("bb", "browserbase_screenshot", "Capture a full-page screenshot and return it"),
        ("bb", "browserbase_session_create", "Create a cloud browser session"),
        ("bb", "browserbase_session_close", "Close the session"),
        ("sel", "take_screenshot", "captures a screenshot of the current page"),
        ("sel", "navigate", "navigates to a URL"),
        ("sel", "click_element", "clicks an element"),
    )
    assert p["sel:take_screenshot"].objects == set()  # "take a screenshot": no object
    assert "web" in p["bb:browserbase_screenshot"].areas
    for a, b in (("infra:browser_screenshot", "bb:browserbase_screenshot"),
                 ("infra:browser_screenshot", "sel:take_screenshot"),
                 ("bb:browserbase_screenshot", "sel:take_screenshot")):
        assert similarity(p[a], p[b], 0.4) is not None, (a, b)


def test_a_resource_that_names_end_on_a_verb_is_no_namespace() -> None:
    """``stories-search``, ``stories-get-by-id``: the stories are what the verbs act on (a
    namespace is followed by a verb *and* an object: ``jira_get_issue``)."""
    names = ["stories-create", "stories-search", "stories-update", "stories-get-by-id",
             "stories-create-comment", "stories-add-task", "stories-get-history",
             "iterations-create", "iterations-search", "iterations-get-by-id"]
    p = profiles_of([("shortcut", n, f"{n.replace('-', ' ')} in Shortcut") for n in names])
    by = dict(zip(names, p, strict=True))
    assert by["stories-search"].objects == {"story"} and not by["stories-search"].domain
    assert similarity(by["stories-search"], by["iterations-search"], 0.4) is None


def test_the_current_one_is_not_one_the_request_identifies() -> None:
    me = Profile.of("get_current_user", "Get the current authenticated user's profile")
    them = Profile.of("get_user", "Get information about a specific user by their ID")
    assert similarity(me, them, 0.0) is None
    # the current one vs another way to read the current one is one request
    assert similarity(me, Profile.of("fetch_current_user", "Fetch the user signed in"),
                      0.0) is not None


def test_drives_of_two_services_are_one_area() -> None:
    p = _profiles(
        ("gdrive-a", "gdrive_read_file", "Read contents of a file from Google Drive"),
        ("gdrive-a", "gdrive_search", "Search for files in Google Drive"),
        ("gdrive-a", "gdrive_list", "List files in Google Drive"),
        ("google-drive-b", "readTextFile", "Read content of a text file"),
        ("google-drive-b", "search", "Search for files in Google Drive, newest first"),
        ("google-drive-b", "createFolder", "Create a folder"),
    )
    assert "files" in p["google-drive-b:readTextFile"].areas
    assert similarity(p["gdrive-a:gdrive_read_file"], p["google-drive-b:readTextFile"],
                      0.4) is not None
    assert similarity(p["gdrive-a:gdrive_search"], p["google-drive-b:search"], 0.4) is not None


def test_a_statement_is_one_object_however_a_name_spells_it() -> None:
    """``execute_sql``, ``run_query`` and ``run_statement`` all run one statement; a kind of
    statement (``execute_ddl``) is a narrower object, not the same one."""
    assert canonical_words(["execute", "sql"]) == ["execute", "query"]
    assert canonical_words(["run", "sql", "query"]) == ["run", "query"]
    sql = Profile.of("execute_sql", "Executes raw SQL in the Postgres database.")
    for name in ("run_query", "execute_statement"):
        other = Profile.of(name, "Run a statement against the database.")
        assert other.objects == sql.objects == frozenset({"query"})
        sim = similarity(sql, other, 0.4)
        assert sim is not None and sim.basis == "name"
    assert Profile.of("execute_ddl", "Run DDL statements").objects == frozenset({"ddl"})


def test_a_get_narrower_than_a_list_is_one_of_its_requests() -> None:
    """A list or search takes filters, so it reaches a request for part of its collection
    (``get_target_languages`` vs ``list_languages``); a get of a whole collection does not
    reach a list of part of it (``get_projects`` vs ``list_group_projects``)."""
    narrow = Profile.of("get_target_languages", "Get list of available target languages")
    whole = Profile.of("list_languages", "Lists all supported languages")
    sim = similarity(narrow, whole, 0.4)
    assert sim is not None and sim.objects == ("language", "target")
    assert similarity(Profile.of("get_projects", "Get all projects"),
                      Profile.of("list_group_projects", "List a group's projects"), 0.0) is None
    # still one head noun: target languages are not language packs
    assert similarity(Profile.of("get_language_packs", "Get all language packs"),
                      whole, 0.0) is None


def test_the_details_of_one_item_are_not_a_collection() -> None:
    """"Get the details of a file." reads one identified file, whatever the name's plural
    says: it is no get-all of what ``list_files`` lists."""
    one = Profile.of("get_files", "Get the details of a file.\n\nExample cURL request: ...")
    assert one.cardinality == "one"
    assert similarity(one, Profile.of("list_files", "Get a paginated list of all files"),
                      0.0) is None
    assert Profile.of("get_files", "Get all files of the user.").cardinality == "all"


def test_a_bare_execute_runs_what_its_first_sentence_names() -> None:
    """``execute`` with no object in its name runs the statement its description names, as
    ``execute_sql`` does; a bare run of something else stays without an object."""
    bare = Profile.of("execute", "Execute a SQL query against the database")
    assert bare.objects == frozenset({"query"}) and bare.head == "query"
    sim = similarity(bare, Profile.of("execute_sql", "Executes raw SQL in Postgres."), 0.4)
    assert sim is not None and sim.basis == "name"
    assert Profile.of("execute", "Execute the workflow now").objects == frozenset()
    assert Profile.of("execute", "Execute shell commands safely").objects == \
        frozenset({"command"})


def test_tools_that_split_statements_by_kind_are_told_apart() -> None:
    """"Execute a SELECT query" and "Execute an INSERT, UPDATE, or DELETE query" split the
    statements a request can hold; a raw SQL runner takes both kinds."""
    select = Profile.of("query", "Execute a SELECT query")
    write = Profile.of("execute", "Execute an INSERT, UPDATE, or DELETE query")
    assert select.kinds == frozenset({"statement read"})
    assert write.kinds == frozenset({"statement write"})
    assert similarity(select, write, 0.0) is None
    raw = Profile.of("execute_sql", "Executes raw SQL in the Postgres database.")
    assert not raw.kinds
    assert similarity(select, raw, 0.4) is not None
    assert similarity(write, raw, 0.4) is not None
    # English verbs in lower case name no statement kind
    assert not Profile.of("run_query", "Run a query to select or update rows").kinds


def test_a_verb_that_names_the_whole_job_meets_its_namesakes_in_any_server() -> None:
    """``translate`` and ``translate-text`` (text is a variant word) do one job whatever
    server they are in; ``search`` and ``search`` do not say what they search, so two
    servers whose subject areas are unknown are not taken to search the same thing (``find``
    is a search too)."""
    catalogs = [
        parse_catalog({"tools": [
            {"name": "translate-text", "description": "Translate text into a target language "
             "using DeepL", "inputSchema": {"type": "object"}},
            {"name": "search", "description": "Search the archive of the service",
             "inputSchema": {"type": "object"}}]}, "one"),
        parse_catalog({"tools": [
            {"name": "translate", "description": "Translates between languages with Lara",
             "inputSchema": {"type": "object"}},
            {"name": "find", "description": "Look things up in the ledger by keyword",
             "inputSchema": {"type": "object"}}]}, "two"),
    ]
    found = {frozenset(t.name for t in f.tools) for f in scan_catalogs(catalogs).findings
             if f.rule == "TC003"}
    assert frozenset({"translate-text", "translate"}) in found
    assert frozenset({"search", "find"}) not in found
    # each name says whose login it is: the server's own name on both sides, two of them
    p = profiles_of([("message_api", "message_login", "Log in to the messaging service."),
                     ("ticket_api", "ticket_login", "Log in to the ticket system."),
                     ("other", "login", "Log in with a user name and password.")])
    assert p[0].domain == frozenset({"message"}) and not p[0].objects
    assert similarity(p[0], p[1], 0.4) is None
    assert similarity(p[1], p[2], 0.4) is not None  # one name says nothing of whose


def test_the_trash_is_not_gone_for_good() -> None:
    """``trash_thread`` moves to the trash (reversible), ``delete_thread`` deletes for good:
    a request "delete this thread" reaches both with different consequences (HS201, as
    archive vs delete); ``untrash_thread`` takes it back out and is neither."""
    delete = Profile.of("delete_thread", "Delete a thread")
    trash = Profile.of("trash_thread", "Move a thread to the trash")
    sim = similarity(delete, trash, 0.4)
    assert sim is not None and sim.contrasting
    untrash = Profile.of("untrash_thread", "Remove a thread from the trash")
    assert untrash.action == "untrash"
    assert similarity(delete, untrash, 0.0) is None
