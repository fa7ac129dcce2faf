"""Lexical candidates: actions and objects as a model reads them, and the grouping plus prefix
filter finds exactly the pairs the pairwise rule accepts."""

from __future__ import annotations

import itertools
import random

from histor_sign.collisions._lexical import (
    Profile,
    candidate_pairs,
    jaccard,
    normalized_name,
    profiles_of,
    similar_pairs,
    similarity,
    source_context,
    split_identifier,
)


def test_identifiers_split_on_snake_camel_kebab_and_digits() -> None:
    assert split_identifier("getUserHTTPStatus_v2") == ["get", "User", "HTTP", "Status", "v", "2"]
    assert split_identifier("read-file.v1") == ["read", "file", "v", "1"]
    assert normalized_name("Read-File") == normalized_name("read_file") == "readfile"


def test_action_synonyms_plurals_and_variant_words() -> None:
    a, b = Profile.of("fetch_user_profiles", ""), Profile.of("getUserProfile", "")
    assert (a.action, a.objects) == (b.action, b.objects) == ("get", frozenset({"user", "profile"}))
    assert Profile.of("erase_records", "").action == Profile.of("delete-record", "").action
    assert Profile.of("read_file", "").action != Profile.of("write_file", "").action
    # count/format words and by/with/from qualifiers are variants of the same object
    for name in ("read_text_file", "read_multiple_files", "read_file_by_path"):
        assert Profile.of(name, "").objects == frozenset({"file"}), name
    assert Profile.of("list_directory_with_sizes", "").objects == frozenset({"directory"})
    # a qualifier word that names a different object is kept
    assert Profile.of("list_allowed_directories", "").objects == {"allowed", "directory"}


def test_action_from_the_description_when_the_name_has_none() -> None:
    p = Profile.of("git_status", "Shows the working tree status", frozenset({"git"}))
    assert (p.action, p.action_word, p.inferred_action) == ("get", "Shows", True)
    assert p.objects == {"status"} and p.effect == "read-only"
    # no known verb anywhere: the name's first word is the action, with no effect implied
    q = Profile.of("playwright_click", "Click an element", frozenset({"playwright"}))
    assert (q.action, q.objects, q.effect) == ("click", frozenset(), None)


def test_namespace_and_boilerplate_come_from_the_source() -> None:
    names = ["git_status", "git_add", "git_log", "git_create_branch", "git_branch"]
    descs = ["This tool belongs to Git. It lets users run Git. Tool description: " + d
             for d in ("Shows status", "Adds files", "Shows log", "Creates a branch", "List")]
    namespace, (prefix, _) = source_context(names, descs)
    assert namespace == {"git"}
    assert " ".join(prefix).startswith("This tool belongs to Git.")
    profiles = profiles_of([("git", n, d) for n, d in zip(names, descs, strict=True)])
    assert all("belong" not in p.description for p in profiles)
    # git_add vs git_create_branch share only the namespace: not confusable
    assert similarity(profiles[1], profiles[3], 0.25) is None
    # git_branch ("List Git branches") vs git_create_branch: read vs create
    assert similarity(profiles[4], profiles[3], 0.25) is None
    # a source of two tools has no namespace (too little evidence)
    assert source_context(["git_a", "git_b"], ["", ""]) == (frozenset(), ((), ()))


def test_rules_and_messages_say_which_words_matched() -> None:
    read = Profile.of("read_file", "Read a file as text")
    text = Profile.of("read_text_file", "Read a text file")
    sim = similarity(read, text, 0.25)
    assert sim is not None and sim.basis == "name"
    assert sim.why() == "same action 'read' on the same object 'file', differing only in 'text'"
    # file vs file info: one object extends the other, so the descriptions decide
    contents = Profile.of("read_file", "Read the complete contents of a file as text.")
    info = Profile.of("get_file_info", "Retrieve detailed metadata about a file or directory. "
                      "Returns size, creation time, last modified time, permissions and type.")
    assert similarity(contents, info, 0.25) is None
    html = Profile.of("fetch_html", "Fetch a website and return the content as HTML")
    md = Profile.of("fetch_markdown", "Fetch a website and return the content as Markdown")
    sim2 = similarity(html, md, 0.25)
    assert sim2 is not None and "'html', 'markdown'" in sim2.why()
    fetch, load = Profile.of("download_paper", ""), Profile.of("read_paper", "")
    assert similarity(fetch, load, 0.25) is None  # download vs read: different action classes


def test_prefix_filter_finds_exactly_the_brute_force_pairs() -> None:
    rng = random.Random(7)
    for threshold in (0.3, 0.62, 0.9, 1.0):
        sets = [frozenset(str(t) for t in rng.sample(range(25), rng.randint(0, 6)))
                for _ in range(250)]
        fast = similar_pairs(sets, threshold)
        brute = {(i, j) for i, j in itertools.combinations(range(len(sets)), 2)
                 if jaccard(sets[i], sets[j]) >= threshold - 1e-12}
        assert set(fast) == brute


def test_candidates_equal_the_pairwise_rule_on_random_catalogs() -> None:
    rng = random.Random(16)
    verbs = ["get", "fetch", "list", "create", "add", "delete", "remove", "search", "show", ""]
    nouns = ["user", "users", "file", "order", "item", "text", "all", "by", "city", "git"]
    words = ["read", "the", "file", "user", "order", "list", "of", "items", "city", "weather"]
    for threshold in (0.25, 0.5, 0.8):
        tools = []
        for i in range(300):
            name = "_".join(x for x in [rng.choice(verbs), *rng.sample(nouns, rng.randint(0, 3))]
                            if x) or f"t{i}"
            desc = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
            tools.append((f"s{rng.randint(0, 3)}", name, desc))
        profiles = profiles_of(tools)
        fast = candidate_pairs(profiles, threshold)
        brute = {(i, j) for i, j in itertools.combinations(range(len(profiles)), 2)
                 if similarity(profiles[i], profiles[j], threshold) is not None}
        assert set(fast) == brute
        assert brute  # the generator makes confusable pairs


# --- issue 24: the failure classes on unseen real servers, as classes ---------------------


def test_two_namespaces_in_one_server_are_each_stripped() -> None:
    names = [f"jira_{v}_{o}" for v in ("get", "create", "update", "delete") for o in
             ("issue", "project", "board")] + \
        [f"confluence_{v}_{o}" for v in ("get", "create", "search") for o in ("page", "space")]
    namespace, _ = source_context(names, [""] * len(names))
    assert namespace == {"jira", "confluence"}
    # object-first names are not namespaces: "pods" is what pods_list lists
    pods = ["pods_list", "pods_get", "pods_delete", "pods_exec", "events_list", "events_get",
            "events_watch"]
    assert source_context(pods, [""] * len(pods))[0] == frozenset()
    profiles = profiles_of([("atlassian", n, "") for n in names] + [("gh", "get_issue", "")])
    jira_get_issue = profiles[0]
    assert (jira_get_issue.action, jira_get_issue.objects) == ("get", {"issue"})
    assert jira_get_issue.domain == {"jira"}


def test_a_description_word_that_repeats_a_name_noun_is_not_the_action() -> None:
    p = Profile.of("monitor_checks", "Checks of a monitor, with their latest results")
    assert p.action != "check" and not p.inferred_action
    q = Profile.of("git_status", "Shows the working tree status", frozenset({"git"}))
    assert q.action == "get" and q.inferred_action


def test_a_sub_object_is_not_a_variant_of_its_parent() -> None:
    project = Profile.of("create_project", "Create a new project in the workspace")
    update = Profile.of("create_project_update", "Create a new project update in the workspace")
    assert update.head == "update" and project.head == "project"
    assert similarity(project, update, 0.25) is None
    # a narrower object with the same head noun is a variant, even with few shared words
    tickets = Profile.of("get-tickets", "Query remaining train tickets")
    interline = Profile.of("get-interline-tickets", "Query tickets with a transfer")
    assert similarity(tickets, interline, 0.4) is not None
    # a participle or an "of" phrase does not change the head noun
    assert Profile.of("git_diff_staged", "Shows staged changes", frozenset({"git"})).head == "diff"
    assert Profile.of("get_station_code_of_cities", "").head == "code"


def test_argument_kinds_named_in_the_names_tell_tools_apart() -> None:
    from_file = Profile.of("extract_image_from_file", "Extract an image")
    from_url = Profile.of("extract_image_from_url", "Extract an image")
    assert from_file.kinds == {"path"} and from_url.kinds == {"url"}
    assert similarity(from_file, from_url, 0.25) is None
    by_path = Profile.of("extract_image_from_path", "Extract an image")
    assert similarity(from_file, by_path, 0.25) is not None  # file and path: one kind


def test_the_same_noun_in_different_domains_is_told_apart() -> None:
    calendar = [("cal", "list_events", "List events in a Google Calendar"),
                ("cal", "create_calendar", "Create a Google Calendar"),
                ("cal", "get_event", "Get one event of a Google Calendar")]
    k8s = [("k8s", "events_list", "List the events of the Kubernetes cluster namespace"),
           ("k8s", "pods_list", "List the pods of the Kubernetes cluster namespace"),
           ("k8s", "namespaces_list", "List the namespaces of the Kubernetes cluster")]
    fork = [("cal2", "list_events", "List events in a Google Calendar")]
    profiles = profiles_of(calendar + k8s + fork)
    assert profiles[0].objects == profiles[3].objects == {"event"}
    assert similarity(profiles[0], profiles[3], 0.4) is None
    assert similarity(profiles[0], profiles[6], 0.4) is not None  # a fork: same domain
    # a description that names no domain word cannot be told apart
    bare = profiles_of([*calendar, ("x", "list_events", "")])
    assert similarity(bare[0], bare[3], 0.4) is not None


def test_two_backends_of_one_area_stay_confusable_different_areas_do_not() -> None:
    jira = [("j", "jira_get_issue", "Get a Jira issue by key"),
            ("j", "jira_create_issue", "Create an issue in a Jira project"),
            ("j", "jira_search", "Search Jira with JQL")]
    gh = [("g", "github_get_issue", "Get an issue of a GitHub repository"),
          ("g", "github_create_issue", "Open a new GitHub issue"),
          ("g", "github_search_code", "Search code on GitHub")]
    pw = [("p", "playwright_click", "Click an element on the page"),
          ("p", "playwright_hover", "Hover over an element on the page"),
          ("p", "playwright_fill", "Fill out an input field")]
    pp = [("q", "puppeteer_click", "Click an element on the page"),
          ("q", "puppeteer_hover", "Hover an element on the page"),
          ("q", "puppeteer_fill", "Fill out an input field")]
    bio = [("biomcp", "search", "Search PubMed articles about a gene or a disease")]
    hn = [("hackernews", "search", "Search Hacker News stories")]
    profiles = profiles_of(jira + gh + pw + pp + bio + hn)
    # a Jira issue and a GitHub issue: two trackers, a request need not name either
    assert "tracker" in profiles[0].areas & profiles[3].areas
    assert similarity(profiles[0], profiles[3], 0.4) is not None
    # two browser drivers: different brands, the same domain
    assert similarity(profiles[6], profiles[9], 0.4) is not None
    # a biomedical search and a Hacker News search: different subject areas
    assert profiles[12].areas == {"science"} and profiles[13].areas == {"news"}
    assert similarity(profiles[12], profiles[13], 0.4) is None


def test_relation_actions_and_contrasting_actions_on_one_object() -> None:
    # "add X to Y" attaches, "remove X from Y" detaches: not "create X" / "delete X" ...
    attach = Profile.of("add_issue_to_project", "Add an issue to a project")
    detach = Profile.of("remove_tag_from_task", "Remove a tag from a task")
    assert (attach.action, attach.objects) == ("attach", {"issue", "project"})
    # what a tool detaches from is its container: an object word, not the head
    assert (detach.action, detach.objects, detach.head) == ("detach", {"tag", "task"}, "tag")
    other = Profile.of("remove_tag_from_project", "Remove a tag from a project")
    assert similarity(detach, other, 0.4) is None
    create = Profile.of("create_issue", "Create an issue")
    # "add an issue to the project": create one, or attach an existing one — contrasting
    sim = similarity(attach, create, 0.25)
    assert sim is not None and sim.contrasting and sim.action == "attach|create"
    # ... but "remove the tag" reaches both: contrasting actions on the same object
    delete = Profile.of("delete_tag", "Delete a tag from the workspace")
    sim = similarity(delete, detach, 0.4)
    assert sim is not None and sim.contrasting and sim.to_json()["contrastingActions"]
    end = Profile.of("end_codegen_session", "End the session and write the test file")
    clear = Profile.of("clear_codegen_session", "Clear the session without generating a test")
    sim = similarity(end, clear, 0.4)
    assert sim is not None and sim.contrasting
    assert sim.why().startswith("contrasting action 'end' ~ 'clear' (stop|delete) on the same")
    # different objects, or actions the wording separates, stay apart
    assert similarity(Profile.of("delete_label", ""), Profile.of("close_issue", ""), 0.4) is None
    assert similarity(Profile.of("create_file", ""), Profile.of("delete_file", ""), 0.4) is None


def test_every_item_vs_one_identified_item_and_now_vs_a_date() -> None:
    every = Profile.of("get_projects_list", "Get all projects from the tracker")
    one = Profile.of("get_projects", "Get projects. Either 'id' or the 'name' to identify "
                     "the target.")
    assert (every.cardinality, one.cardinality) == ("all", "")
    one = Profile.of("get_project", "Get a specific project by its id")
    assert one.cardinality == "one" and similarity(every, one, 0.25) is None
    now = Profile.of("get_current_stock_price", "Get the current stock price")
    dated = Profile.of("get_stock_price_by_date", "Get the stock price on a date")
    assert now.kinds == {"now"} and dated.kinds == {"time"}
    assert similarity(now, dated, 0.25) is None


def test_statements_run_and_their_verbs_state_the_effect() -> None:
    read = Profile.of("read_query", "Execute SELECT queries to read data")
    write = Profile.of("write_query", "Execute INSERT, UPDATE or DELETE queries")
    run = Profile.of("query", "Execute a query on the database")
    ro = Profile.of("query", "Run a read-only SQL query")
    assert (run.action, run.objects, run.effect) == ("run", {"query"}, "write")
    assert ro.effect == "read-only" and read.effect == "read-only"
    assert similarity(read, write, 0.4) is None  # the verbs split the requests
    sim = similarity(read, run, 0.4)  # "run this SQL" reaches both: their effects decide
    assert sim is not None and not sim.contrasting
    assert similarity(write, run, 0.4) is not None
