"""What a tool's description is about: a small lexicon of subject areas (issue 24).

A model tells two same-named tools apart by what their descriptions are about: calendar
events are not Kubernetes events, a biomedical search is not a Hacker News search, a table in
a slide is not a table in a spreadsheet. But two *services* of one area are interchangeable to
a request that names neither (a Jira issue and a Linear issue; two web search engines). This
lexicon maps words that name one area without doubt to that area; a word that names several
(``github``: code and issue tracking) maps to all of them, and a word that is common in many
areas (``event``, ``log``, ``table``, ``message``, ``ticket``) is not in it at all — it says
nothing about the area.

Written for this project (no outside source; same licence as the project). It lists subject
areas of tools in general — it is not tuned to any labeled pair. :data:`OBJECT_ALIASES` is
the same kind of list for the objects a name names: abbreviations and the words two platforms
use for one thing (a GitHub pull request is a GitLab merge request).
"""

from __future__ import annotations

from collections.abc import Callable

AREAS: dict[str, tuple[str, ...]] = {
    "code": ("git", "github", "gitlab", "bitbucket", "repository", "repo", "commit", "branch",
             "pull", "merge", "diff", "codebase", "refactor", "compiler", "lint", "npm",
             "pypi", "package"),
    "tracker": ("jira", "linear", "asana", "todoist", "trello", "clickup", "sprint", "backlog",
                "epic", "assignee", "milestone", "kanban", "todo", "github", "gitlab",
                "pagerduty", "sentry", "incident", "confluence", "planner", "issue", "task"),
    "devops": ("kubernetes", "k8s", "pod", "cluster", "container", "docker", "deployment",
               "helm", "kubectl", "eks", "aws", "ec2", "terraform", "circleci", "datadog",
               "monitor", "metric", "grafana", "prometheus", "sentry", "pagerduty",
               "incident", "uptime"),
    "calendar": ("calendar", "meeting", "attendee", "appointment", "agenda", "rsvp"),
    "mail": ("email", "mail", "inbox", "gmail", "outlook", "smtp", "imap", "recipient",
             "mailbox"),
    "chat": ("slack", "discord", "telegram", "whatsapp", "chat"),
    "files": ("filesystem", "directory", "folder", "disk", "symlink", "chmod", "drive",
              "gdrive", "onedrive", "dropbox", "sharepoint"),
    "database": ("sql", "database", "postgres", "postgresql", "mysql", "sqlite", "mongodb",
                 "mongo", "duckdb", "motherduck", "clickhouse", "redis", "elasticsearch",
                 "airtable", "row", "column", "chroma", "vector", "embedding"),
    "web": ("web", "internet", "browser", "webpage", "website", "html", "css", "dom",
            "selector", "playwright",
            "puppeteer", "chrome", "devtools", "tab", "iframe", "click", "scroll", "brave",
            "bing", "searxng", "exa", "tavily", "duckduckgo", "serp", "crawl", "firecrawl",
            "scrape"),
    "maps": ("map", "geocode", "coordinate", "latitude", "longitude", "direction", "amap",
             "mapbox", "elevation", "route", "poi"),
    "finance": ("stock", "ticker", "market", "dividend", "earning", "crypto", "bitcoin",
                "trading", "portfolio", "finance", "yahoo", "forex", "equity", "sec"),
    "science": ("pubmed", "gene", "protein", "clinical", "arxiv", "citation", "biomedical",
                "disease", "drug", "genomic", "mutation", "biorxiv", "scholar"),
    "news": ("hacker", "headline", "hn"),
    "docs": ("docx", "word", "paragraph", "heading", "footnote", "notion",
             "onenote", "wiki"),
    "sheets": ("spreadsheet", "excel", "sheet", "cell", "workbook", "formula", "xlsx", "row",
               "column"),
    "slides": ("slide", "presentation", "powerpoint", "ppt", "pptx", "deck"),
    "design": ("figma", "canvas", "svg", "icon", "sketch", "layer", "frame"),
    "travel": ("flight", "hotel", "airbnb", "listing", "booking", "train", "airport",
               "railway", "12306"),
    "weather": ("weather", "forecast", "temperature", "precipitation"),
    "media": ("video", "youtube", "music", "audio", "song", "playlist", "spotify", "podcast"),
    "social": ("twitter", "tweet", "reddit", "subreddit", "follower", "retweet"),
    "memory": ("memory", "knowledge", "observation"),
    "time": ("timezone", "clock", "utc"),
}



#: Names of services, vendors and engines: in a tool's name one says where the action happens,
#: not what it acts on (``google_search``, ``search_with_bing``), so it is a domain word of
#: the tool, as a namespace is — never its object. Two services of one area stay confusable to
#: a request that names neither (docs/scan-rubric.md, "Backends and platforms").
SERVICES = frozenset("""
    google bing yahoo baidu yandex duckduckgo brave kagi perplexity tavily exa serper serpapi
    jina firecrawl searxng microsoft azure aws amazon apple github gitlab bitbucket slack
    discord telegram whatsapp teams jira confluence atlassian linear asana trello clickup
    todoist notion dropbox onedrive sharepoint gdrive outlook gmail openai anthropic claude
    gemini browserbase hyperbrowser selenium playwright puppeteer stagehand supabase
    """.split())

#: Name words (lower case, singular) and word pairs that name one object kind → its one
#: spelling: abbreviations (``mr``, ``repo``, ``db``), the words two platforms use for one
#: thing (pull request / merge request), and plain synonyms (folder / directory).
OBJECT_ALIASES: dict[tuple[str, ...], str] = {
    ("pull", "request"): "pr", ("merge", "request"): "pr", ("mr",): "pr",
    ("repo",): "repository", ("dir",): "directory", ("folder",): "directory",
    ("doc",): "document", ("msg",): "message", ("db",): "database", ("img",): "image",
    ("config",): "configuration", ("cfg",): "configuration", ("env",): "environment",
    ("org",): "organization", ("organisation",): "organization",
    # general abbreviations and plain synonyms of API object names (not from any catalog)
    ("mail",): "email", ("proj",): "project", ("pkg",): "package", ("ns",): "namespace",
    ("k8s",): "kubernetes", ("attr",): "attribute", ("param",): "parameter",
    ("perm",): "permission", ("func",): "function", ("fn",): "function",
    ("photo",): "image", ("picture",): "image", ("pic",): "image",
    ("src",): "source", ("dest",): "destination", ("dst",): "destination",
    # a statement a tool runs, however it is named (``execute_sql``, ``run_query``;
    # not ``execute_ddl``: a kind of statement): one object kind
    ("sql",): "query", ("statement",): "query",
    ("sql", "query"): "query", ("sql", "statement"): "query",
}


def canonical_words(words: list[str]) -> list[str]:
    """Name words with each alias of :data:`OBJECT_ALIASES` replaced by its one spelling
    (``get_merge_request_notes`` and ``mr_notes`` name one object); other words unchanged."""
    out: list[str] = []
    k = 0
    while k < len(words):
        pair = tuple(w.lower() for w in words[k:k + 2])
        if len(pair) == 2 and pair in OBJECT_ALIASES:
            out.append(OBJECT_ALIASES[pair])
            k += 2
            continue
        low = words[k].lower()
        one = OBJECT_ALIASES.get((low,)) or OBJECT_ALIASES.get((low[:-1],)) \
            if low.endswith("s") else OBJECT_ALIASES.get((low,))
        out.append(one or words[k])
        k += 1
    return out


def word_areas(normalize: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """Word → the areas it names, each word in the form ``normalize`` gives description
    tokens (singular, lower case)."""
    out: dict[str, frozenset[str]] = {}
    for area, words in AREAS.items():
        for word in words:
            key = normalize(word)
            out[key] = out.get(key, frozenset()) | {area}
    return out
