"""Real-server compatibility: histor-sign fetches what the official MCP Python SDK lists.

Installs pinned real MCP servers from npm and PyPI, with dummy credentials, into its own
cache directory (``.cache/compat/`` in the repository, ignored by git; ``HISTOR_COMPAT_DIR``
moves it), then fetches each over stdio twice — with ``histor_sign.mcp.fetch`` and with the
official ``mcp`` SDK client (``mcp.Client``, the test extra's version) — and requires the same
tool list: the same names in the same order and, per tool, the same canonical definition
(RFC 8785 bytes of the seven signed fields; the SDK's models are dumped with only the fields
the server set).

    python benchmarks/compat_servers.py install [--only SLUG …] [--budget SECONDS]
    python benchmarks/compat_servers.py run [--only SLUG …] [--json FILE] [--markdown]
    python benchmarks/compat_servers.py catalog [--only SLUG …] [--out DIR]

``catalog`` (issue 24) writes each installed server's tools list, as histor-sign fetched it,
to ``benchmarks/data/real-servers/<slug>.json`` with the package, version and licence (read
from the installed package, not asked of a registry): the real catalogs the labeled collision
pairs of ``benchmarks/data/`` are drawn from.

``install`` is the only step that downloads (npm and PyPI, nothing else); each install is
bounded in time, and one that fails is recorded (with why) and skipped. Python servers get a
venv each, so one that needs an older SDK gets it pinned there. ``run`` never downloads.
``tests/compat/test_compat_servers.py`` runs the same comparison as a slow test that skips
servers that are not installed. The last full result is in docs/mcp.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

#: Credentials no real service accepts: enough for a server to start and list its tools.
DUMMY = "histor-compat-dummy-0000000000"
#: Seconds one install may take, and one fetch (either client).
INSTALL_TIMEOUT = float(os.environ.get("HISTOR_COMPAT_INSTALL_TIMEOUT") or 420.0)
FETCH_TIMEOUT = 120.0


@dataclass(frozen=True)
class Server:
    """One pinned real server and how to start it.

    ``bin`` is the executable the package installs (npm: ``node_modules/.bin``; PyPI: the
    venv's ``bin``); ``args`` may use ``{work}``, a scratch directory made for each run.
    ``pins`` are extra requirements for its venv (an older ``mcp`` SDK it needs to start).
    ``expect`` names what histor-sign must report besides the tools: ``not-served:prompts``,
    ``not-served:resourceTemplates``, ``banner``; and where the SDK client's models are
    lossy, ``sdk-drops-annotation:KEY`` (a non-standard annotation key histor-sign keeps,
    as served, and the SDK's model drops: compared without it, and required in ours).
    ``sdk_rejects`` says why the official SDK client cannot list this server at all (then
    histor-sign must list it, and the SDK client must still fail).
    """

    slug: str
    registry: str  # "npm" | "pypi"
    package: str
    version: str
    bin: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    python: str = "3.11"
    pins: tuple[str, ...] = ()
    expect: tuple[str, ...] = ()
    #: It crashes on the server/discover probe (early Python SDK): histor-sign must start it
    #: again with the handshake (and the SDK client needs ``mode="legacy"``).
    expect_probe_restart: bool = False
    note: str = ""
    sdk_rejects: str = ""
    #: Environment for the install step only (e.g. skip a browser download, which fails here).
    install_env: dict[str, str] = field(default_factory=dict)
    #: Files written into the scratch directory before each start (``{work}/NAME``): dummy
    #: credential files a server reads before it answers ``initialize``.
    files: dict[str, str] = field(default_factory=dict)


#: Install-time environment for packages whose install step downloads a browser build (that
#: download is not from a package registry, so it fails here; listing tools needs no browser).
_NO_BROWSER_DOWNLOAD = {"PUPPETEER_SKIP_DOWNLOAD": "1", "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}

SERVERS: tuple[Server, ...] = (
    # --- npm (TypeScript SDK) ---------------------------------------------------------------
    Server("server-everything", "npm", "@modelcontextprotocol/server-everything", "2026.8.31",
           "mcp-server-everything", ("stdio",), note="reference server"),
    Server("server-filesystem", "npm", "@modelcontextprotocol/server-filesystem", "2026.8.31",
           "mcp-server-filesystem", ("{work}",)),
    Server("server-memory", "npm", "@modelcontextprotocol/server-memory", "2026.8.31",
           "mcp-server-memory", env={"MEMORY_FILE_PATH": "{work}/memory.json"}),
    Server("server-sequential-thinking", "npm",
           "@modelcontextprotocol/server-sequential-thinking", "2026.8.31",
           "mcp-server-sequential-thinking"),
    Server("server-github", "npm", "@modelcontextprotocol/server-github", "2025.4.8",
           "mcp-server-github", env={"GITHUB_PERSONAL_ACCESS_TOKEN": DUMMY},
           note="archived; old TS SDK"),
    Server("server-brave-search", "npm", "@modelcontextprotocol/server-brave-search", "0.6.2",
           "mcp-server-brave-search", env={"BRAVE_API_KEY": DUMMY},
           note="old TS SDK (2024-11-05)"),
    Server("server-slack", "npm", "@modelcontextprotocol/server-slack", "2025.4.25",
           "mcp-server-slack", env={"SLACK_BOT_TOKEN": "xoxb-" + DUMMY, "SLACK_TEAM_ID": "T000"}),
    Server("server-google-maps", "npm", "@modelcontextprotocol/server-google-maps", "0.6.2",
           "mcp-server-google-maps", env={"GOOGLE_MAPS_API_KEY": DUMMY}),
    Server("server-postgres", "npm", "@modelcontextprotocol/server-postgres", "0.6.2",
           "mcp-server-postgres", ("postgresql://compat:compat@127.0.0.1:1/none",),
           expect=("not-served:resourceTemplates",), note="connects lazily"),
    Server("executeautomation-database", "npm", "@executeautomation/database-server", "1.1.0",
           "ea-database-server", ("{work}/compat.db",),
           expect=("not-served:resourceTemplates",), note="issue 27; builds better-sqlite3"),
    Server("kazuph-mcp-fetch", "npm", "@kazuph/mcp-fetch", "1.6.3", "mcp-fetch",
           expect=("not-served:resourceTemplates",), note="issue 27"),
    Server("tacticlaunch-mcp-linear", "npm", "@tacticlaunch/mcp-linear", "1.4.3", "mcp-linear",
           env={"LINEAR_API_TOKEN": "lin_api_" + DUMMY},
           expect=("not-served:resourceTemplates",), note="issue 27"),
    Server("mcp-server-kubernetes", "npm", "mcp-server-kubernetes", "4.1.7",
           "mcp-server-kubernetes", env={"KUBECONFIG": "{work}/kubeconfig"},
           expect=("not-served:resourceTemplates",), note="issue 27"),
    Server("notion", "npm", "@notionhq/notion-mcp-server", "2.5.2", "notion-mcp-server",
           env={"NOTION_TOKEN": "ntn_" + DUMMY}),
    Server("tavily", "npm", "tavily-mcp", "0.2.22", "tavily-mcp",
           env={"TAVILY_API_KEY": "tvly-" + DUMMY}),
    Server("firecrawl", "npm", "firecrawl-mcp", "3.26.0", "firecrawl-mcp",
           env={"FIRECRAWL_API_KEY": "fc-" + DUMMY}),
    Server("context7", "npm", "@upstash/context7-mcp", "4.1.1", "context7-mcp"),
    Server("exa", "npm", "exa-mcp-server", "3.4.1", "exa-mcp-server",
           env={"EXA_API_KEY": DUMMY}),
    Server("playwright", "npm", "@playwright/mcp", "0.0.83", "playwright-mcp",
           ("--headless", "--isolated"), note="no browser needed to list"),
    Server("antv-chart", "npm", "@antv/mcp-server-chart", "0.9.10", "mcp-server-chart"),
    Server("airtable", "npm", "airtable-mcp-server", "1.14.0", "airtable-mcp-server",
           env={"AIRTABLE_API_KEY": "pat" + DUMMY}),
    Server("brave-search-v2", "npm", "@brave/brave-search-mcp-server", "2.1.4",
           "brave-search-mcp-server", ("--transport", "stdio"),
           env={"BRAVE_API_KEY": DUMMY}),
    Server("figma", "npm", "figma-developer-mcp", "0.13.2", "figma-developer-mcp",
           ("--stdio",), env={"FIGMA_API_KEY": DUMMY}),
    # --- PyPI (Python SDK) --------------------------------------------------------------
    Server("mcp-server-sqlite", "pypi", "mcp-server-sqlite", "2025.4.25", "mcp-server-sqlite",
           ("--db-path", "{work}/compat.db"), pins=("mcp==1.9.4", "pydantic==2.11.7"),
           expect=("not-served:resourceTemplates",),
           note="issue 27; needs mcp 1.x"),
    Server("chroma-mcp", "pypi", "chroma-mcp", "0.2.6", "chroma-mcp",
           ("--client-type", "ephemeral"), env={"ANONYMIZED_TELEMETRY": "False"},
           expect_probe_restart=True,
           pins=("pydantic==2.11.7",),
           expect=("banner",), note="issue 27: banner on stdout; its mcp 1.x needs an older "
           "pydantic"),
    Server("mcp-server-time", "pypi", "mcp-server-time", "2026.10.19", "mcp-server-time",
           ("--local-timezone", "UTC")),
    Server("mcp-server-time-old", "pypi", "mcp-server-time", "0.6.2", "mcp-server-time",
           ("--local-timezone", "UTC"), pins=("mcp==1.0.0",), expect_probe_restart=True,
           note="an old release, on the first SDK"),
    Server("mcp-server-git", "pypi", "mcp-server-git", "2026.10.19", "mcp-server-git",
           ("--repository", "{work}/repo")),
    Server("mcp-server-fetch", "pypi", "mcp-server-fetch", "2026.10.24", "mcp-server-fetch"),
    Server("mcp-server-calculator", "pypi", "mcp-server-calculator", "0.2.1",
           "mcp-server-calculator"),
    Server("duckduckgo", "pypi", "duckduckgo-mcp-server", "0.7.0", "duckduckgo-mcp-server"),
    Server("arxiv", "pypi", "arxiv-mcp-server", "0.8.2", "arxiv-mcp-server",
           ("--storage-path", "{work}/papers")),
    Server("wikipedia", "pypi", "wikipedia-mcp", "2.0.1", "wikipedia-mcp"),
    Server("excel", "pypi", "excel-mcp-server", "2.2.2", "excel-mcp-server", ("stdio",),
           env={"EXCEL_FILES_PATH": "{work}"}),
    Server("motherduck", "pypi", "mcp-server-motherduck", "1.1.0", "mcp-server-motherduck",
           ("--db-path", ":memory:", "--read-write")),
    Server("mcp-atlassian", "pypi", "mcp-atlassian", "0.23.1", "mcp-atlassian",
           env={"JIRA_URL": "https://compat.atlassian.net", "JIRA_USERNAME": "compat@example.com",
                "JIRA_API_TOKEN": DUMMY,
                # issue 24: Confluence too, so its tools carry both name prefixes
                "CONFLUENCE_URL": "https://compat.atlassian.net/wiki",
                "CONFLUENCE_USERNAME": "compat@example.com", "CONFLUENCE_API_TOKEN": DUMMY}),
    # --- issue 24: more domains for the labeled collision catalogs (benchmarks/data/) -------
    Server("zereight-gitlab", "npm", "@zereight/mcp-gitlab", "2.1.64", "mcp-gitlab",
           env={"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-" + DUMMY,
                "GITLAB_API_URL": "https://gitlab.compat.invalid/api/v4"}),
    Server("server-gitlab", "npm", "@modelcontextprotocol/server-gitlab", "2025.4.25",
           "mcp-server-gitlab",
           env={"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-" + DUMMY,
                "GITLAB_API_URL": "https://gitlab.compat.invalid/api/v4"}, note="archived",
           sdk_rejects="its inputSchemas have no \"type\": \"object\"; the SDK's "
           "ListToolsResult refuses the whole list"),
    Server("mongodb", "npm", "mongodb-mcp-server", "3.0.4", "mongodb-mcp-server",
           env={"MDB_MCP_TELEMETRY": "disabled"}),
    Server("chrome-devtools", "npm", "chrome-devtools-mcp", "1.11.0", "chrome-devtools-mcp",
           ("--headless", "--isolated"), env={"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"},
           expect=("sdk-drops-annotation:category", "sdk-drops-annotation:conditions"),
           note="non-standard annotations (category, conditions), which the SDK's model drops"),
    Server("desktop-commander", "npm", "@wonderwhy-er/desktop-commander", "0.2.52",
           "desktop-commander", install_env=_NO_BROWSER_DOWNLOAD),
    Server("datadog", "npm", "@winor30/mcp-server-datadog", "1.8.0", "mcp-server-datadog",
           env={"DATADOG_API_KEY": DUMMY, "DATADOG_APP_KEY": DUMMY}),
    Server("mapbox", "npm", "@mapbox/mcp-server", "0.14.0", "mcp-server",
           env={"MAPBOX_ACCESS_TOKEN": "pk." + DUMMY}),
    Server("amap", "npm", "@amap/amap-maps-mcp-server", "0.0.8", "mcp-amap",
           env={"AMAP_MAPS_API_KEY": DUMMY}),
    Server("airbnb", "npm", "@openbnb/mcp-server-airbnb", "0.3.0", "mcp-server-airbnb"),
    Server("circleci", "npm", "@circleci/mcp-server-circleci", "0.20.0", "mcp-server-circleci",
           env={"CIRCLECI_TOKEN": DUMMY}),
    Server("sentry", "npm", "@sentry/mcp-server", "0.39.0", "sentry-mcp",
           env={"SENTRY_ACCESS_TOKEN": DUMMY}),
    Server("asana", "npm", "@roychri/mcp-server-asana", "1.8.0", "mcp-server-asana",
           env={"ASANA_ACCESS_TOKEN": DUMMY}),
    Server("ea-playwright", "npm", "@executeautomation/playwright-mcp-server", "1.0.12",
           "playwright-mcp-server", install_env=_NO_BROWSER_DOWNLOAD,
           expect=("not-served:resourceTemplates",)),
    Server("line-bot", "npm", "@line/line-bot-mcp-server", "0.5.0", "line-bot-mcp-server",
           env={"CHANNEL_ACCESS_TOKEN": DUMMY, "DESTINATION_USER_ID": "U0000"},
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("cyanheads-git", "npm", "@cyanheads/git-mcp-server", "2.15.3", "git-mcp-server",
           env={"MCP_TRANSPORT_TYPE": "stdio", "GIT_BASE_DIR": "{work}"}),
    Server("todoist", "npm", "todoist-mcp", "1.3.4", "todoist-mcp",
           env={"API_KEY": DUMMY, "TODOIST_API_TOKEN": DUMMY}),
    Server("elasticsearch", "npm", "@elastic/mcp-server-elasticsearch", "0.3.1",
           "mcp-server-elasticsearch",
           env={"ES_URL": "http://127.0.0.1:1", "ES_API_KEY": DUMMY},
           note="its OpenTelemetry preamble is a JSON line on stdout with no JSON-RPC "
           "member: skipped like a banner"),
    Server("ms-365", "npm", "@softeria/ms-365-mcp-server", "0.155.0", "ms-365-mcp-server"),
    Server("reddit", "npm", "reddit-mcp-buddy", "1.1.14", "reddit-mcp-buddy"),
    Server("google-map-cablate", "npm", "@cablate/mcp-google-map", "0.0.63", "mcp-google-map",
           ("--stdio",), env={"GOOGLE_MAPS_API_KEY": DUMMY}),
    Server("pdf-reader", "npm", "@sylphx/pdf-reader-mcp", "2.4.0", "pdf-reader-mcp"),
    Server("searxng", "npm", "mcp-searxng", "2.4.0", "mcp-searxng",
           env={"SEARXNG_URL": "http://127.0.0.1:1"}),
    Server("yfmcp", "pypi", "yfmcp", "0.14.0", "yfmcp", python="3.12"),
    Server("yahoo-finance", "pypi", "mcp-yahoo-finance", "0.2.0", "mcp-yahoo-finance"),
    Server("word", "pypi", "office-word-mcp-server", "1.1.11", "word_mcp_server",
           expect=("banner",), note="startup lines on stdout"),
    Server("ppt", "pypi", "office-powerpoint-mcp-server", "2.0.7", "ppt_mcp_server",
           pins=("mcp==1.9.4", "pydantic==2.11.7"), note="needs mcp 1.x"),
    Server("clickhouse", "pypi", "mcp-clickhouse", "0.7.0", "mcp-clickhouse",
           env={"CLICKHOUSE_HOST": "127.0.0.1", "CLICKHOUSE_PORT": "1",
                "CLICKHOUSE_USER": "compat", "CLICKHOUSE_PASSWORD": DUMMY}),
    Server("pagerduty", "pypi", "pagerduty-mcp", "1.1.0", "pagerduty-mcp",
           ("--enable-write-tools",), python="3.12", env={"PAGERDUTY_USER_API_KEY": DUMMY}),
    Server("aws-eks", "pypi", "awslabs-eks-mcp-server", "0.2.1", "awslabs.eks-mcp-server",
           ("--allow-write",), python="3.12", env={"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "AKIA0000",
                                    "AWS_SECRET_ACCESS_KEY": DUMMY}),
    Server("duckdb", "pypi", "mcp-server-duckdb", "1.1.0", "mcp-server-duckdb",
           ("--db-path", "{work}/compat.duckdb"), pins=("mcp==1.9.4", "pydantic==2.11.7"),
           expect=("not-served:resourceTemplates",), note="needs mcp 1.x"),
    Server("markitdown", "pypi", "markitdown-mcp", "0.0.1a8", "markitdown-mcp",
           python="3.12"),
    Server("obsidian", "pypi", "mcp-obsidian", "0.2.3", "mcp-obsidian",
           env={"OBSIDIAN_API_KEY": DUMMY}),
    Server("zotero", "pypi", "zotero-mcp", "0.3.1", "zotero-mcp", env={"ZOTERO_LOCAL": "true"}),
    Server("hackernews", "pypi", "mcp-hn", "0.1.0", "mcp-hn", python="3.12",
           pins=("mcp==1.9.4", "pydantic==2.11.7"), note="needs mcp 1.x"),
)


#: The third tuning set of issue 24 (benchmarks/tuning3_pairs.py): servers of domains with
#: interchangeable backends (web search, SQL, git hosts and trackers, browsers, chat, vector
#: stores, drives, maps), none of them a server above. Kept out of ``SERVERS`` so the
#: compatibility run and its test are unchanged; ``--only`` reaches them.
TUNING3: tuple[Server, ...] = (
    Server("perplexity", "npm", "@perplexity-ai/mcp-server", "1.2.1", "perplexity-mcp",
           env={"PERPLEXITY_API_KEY": "pplx-" + DUMMY}),
    Server("jina", "npm", "jina-mcp-tools", "1.2.3", "jina-mcp-tools",
           env={"JINA_API_KEY": "jina_" + DUMMY}),
    Server("serper", "npm", "serper-search-scrape-mcp-server", "0.1.2", "serper-mcp",
           env={"SERPER_API_KEY": DUMMY}),
    Server("google-search-adenot", "npm", "@adenot/mcp-google-search", "0.3.1",
           "mcp-google-search",
           env={"GOOGLE_API_KEY": DUMMY, "GOOGLE_SEARCH_ENGINE_ID": "compat0000"}),
    Server("mysql-benborla", "npm", "@benborla29/mcp-server-mysql", "2.0.9", "mcp-server-mysql",
           env={"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "1", "MYSQL_USER": "compat",
                "MYSQL_PASS": DUMMY, "MYSQL_DB": "compat", "ALLOW_INSERT_OPERATION": "true",
                "ALLOW_UPDATE_OPERATION": "true", "ALLOW_DELETE_OPERATION": "true"}),
    Server("dbhub", "npm", "@bytebase/dbhub", "1.4.0", "dbhub",
           ("--transport", "stdio", "--dsn", "sqlite:///{work}/compat.db")),
    Server("supabase", "npm", "@supabase/mcp-server-supabase", "0.13.0", "mcp-server-supabase",
           ("--access-token", "sbp_" + DUMMY, "--features",
            "account,database,debugging,development,functions,branching,storage"),
           env={"SUPABASE_ACCESS_TOKEN": "sbp_" + DUMMY},
           note="every feature group but docs, whose tools/list fetches a schema online"),
    Server("mysql-f4ww4z", "npm", "@f4ww4z/mcp-mysql-server", "0.1.0", "mcp-mysql",
           env={"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "1", "MYSQL_USER": "compat",
                "MYSQL_PASSWORD": DUMMY, "MYSQL_DATABASE": "compat"}),
    Server("postgres-server", "npm", "mcp-postgres-server", "0.3.1", "mcp-postgres",
           env={"PG_HOST": "127.0.0.1", "PG_PORT": "1", "PG_USER": "compat",
                "PG_PASSWORD": DUMMY, "PG_DATABASE": "compat"}),
    Server("mssql", "npm", "@connorbritain/mssql-mcp-server", "0.7.0", "mssql-mcp-server",
           env={"SERVER_NAME": "127.0.0.1", "DATABASE_NAME": "compat", "SQL_USERNAME": "compat",
                "SQL_PASSWORD": DUMMY}),
    Server("postgrest", "npm", "@supabase/mcp-server-postgrest", "0.2.0",
           "mcp-server-postgrest", ("--apiUrl", "http://127.0.0.1:1", "--schema", "public")),
    Server("neon", "npm", "@neondatabase/mcp-server-neon", "0.6.5", "mcp-server-neon",
           ("start", "napi_" + DUMMY)),
    Server("bitbucket", "npm", "@aashari/mcp-server-atlassian-bitbucket", "3.1.0",
           "mcp-atlassian-bitbucket",
           env={"ATLASSIAN_BITBUCKET_USERNAME": "compat", "ATLASSIAN_BITBUCKET_APP_PASSWORD": DUMMY}),
    Server("azure-devops", "npm", "@azure-devops/mcp", "2.10.0", "mcp-server-azuredevops",
           ("compat-org",), env={"AZURE_DEVOPS_EXT_PAT": DUMMY},
           note="its keytar dependency builds against libsecret (Debian libsecret-1-dev)"),
    Server("shortcut", "npm", "@shortcut/mcp", "0.25.0", "mcp-server-shortcut",
           env={"SHORTCUT_API_TOKEN": DUMMY}),
    Server("plane", "npm", "@makeplane/plane-mcp-server", "0.1.5", "plane-mcp-server",
           env={"PLANE_API_KEY": DUMMY, "PLANE_WORKSPACE_SLUG": "compat",
                "PLANE_API_HOST_URL": "https://plane.compat.invalid/"}),
    Server("browserbase", "npm", "@browserbasehq/mcp-server-browserbase", "2.4.3",
           "mcp-server-browserbase", install_env=_NO_BROWSER_DOWNLOAD,
           env={"BROWSERBASE_API_KEY": "bb_" + DUMMY, "BROWSERBASE_PROJECT_ID": "compat",
                "GEMINI_API_KEY": DUMMY}),
    Server("agent-infra-browser", "npm", "@agent-infra/mcp-server-browser", "1.2.29",
           "mcp-server-browser", ("--headless",), install_env=_NO_BROWSER_DOWNLOAD),
    Server("selenium", "npm", "@angiejones/mcp-selenium", "0.2.3", "mcp-selenium"),
    Server("hyperbrowser", "npm", "hyperbrowser-mcp", "1.0.25", "hyperbrowser-mcp",
           env={"HYPERBROWSER_API_KEY": "hb_" + DUMMY}, install_env=_NO_BROWSER_DOWNLOAD),
    Server("discord", "npm", "mcp-discord", "1.3.4", "mcp-discord",
           env={"DISCORD_TOKEN": DUMMY}),
    Server("teams", "npm", "@floriscornel/teams-mcp", "0.3.2", "teams-mcp"),
    Server("pinecone", "npm", "@pinecone-database/mcp", "0.3.0", "pinecone-mcp",
           env={"PINECONE_API_KEY": "pcsk_" + DUMMY}),
    Server("upstash", "npm", "@upstash/mcp-server", "0.3.0", "mcp-server",
           ("run", "compat@example.com", DUMMY)),
    Server("mem0", "npm", "@mem0/mcp-server", "0.0.1", "mem0-mcp",
           env={"MEM0_API_KEY": "m0-" + DUMMY}),
    Server("google-drive-piotr", "npm", "@piotr-agier/google-drive-mcp", "2.10.0",
           "google-drive-mcp",
           env={"GOOGLE_DRIVE_OAUTH_CREDENTIALS": "{work}/gcp-oauth.keys.json"}),
    Server("gdrive-isaacphi", "npm", "@isaacphi/mcp-gdrive", "0.2.0", "mcp-gdrive",
           env={"CLIENT_ID": "compat.apps.googleusercontent.com", "CLIENT_SECRET": DUMMY,
                "GDRIVE_CREDS_DIR": "{work}/gdrive"}),
    Server("baidu-map", "npm", "@baidumap/mcp-server-baidu-map", "1.0.5",
           "mcp-server-baidu-map", env={"BAIDU_MAP_API_KEY": DUMMY}),
)


#: The fourth set of issue 24 (benchmarks/tuning3_pairs.py, set "tuning4"): a validation set
#: from servers of domains with interchangeable backends that the third set did not cover
#: (email, calendar, key-value and document stores, payments, monitoring, image generation,
#: translation, weather) plus a few of its domains (SQL, browser, web research), none of them a
#: server above. Kept out of ``SERVERS`` like ``TUNING3``; ``--only`` reaches them.
#: A Google OAuth client file no Google service accepts (servers that read one at start).
_GOOGLE_OAUTH_KEYS = json.dumps({"installed": {
    "client_id": "compat.apps.googleusercontent.com", "client_secret": DUMMY,
    "redirect_uris": ["http://localhost"], "auth_uri": "https://accounts.google.com/o/oauth2/auth",
    "token_uri": "https://oauth2.googleapis.com/token"}})
#: A Google service-account file with no usable key (servers that read one at start).
_SERVICE_ACCOUNT = json.dumps({
    "type": "service_account", "project_id": "compat", "private_key_id": "0000",
    "private_key": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n",
    "client_email": "compat@compat.iam.gserviceaccount.com", "client_id": "0",
    "token_uri": "https://oauth2.googleapis.com/token"})

TUNING4: tuple[Server, ...] = (
    Server("gmail-gongrzhe", "npm", "@gongrzhe/server-gmail-autoauth-mcp", "1.1.11", "gmail-mcp",
           env={"GMAIL_OAUTH_PATH": "{work}/gcp-oauth.keys.json",
                "GMAIL_CREDENTIALS_PATH": "{work}/credentials.json"},
           files={"gcp-oauth.keys.json": _GOOGLE_OAUTH_KEYS}),
    Server("email-codefuturist", "npm", "@codefuturist/email-mcp", "0.2.0", "email-mcp",
           env={"MCP_EMAIL_ADDRESS": "compat@example.com", "MCP_EMAIL_PASSWORD": DUMMY,
                "MCP_EMAIL_IMAP_HOST": "127.0.0.1", "MCP_EMAIL_SMTP_HOST": "127.0.0.1",
                "EMAIL_ADDRESS": "compat@example.com", "EMAIL_PASSWORD": DUMMY,
                "IMAP_HOST": "127.0.0.1", "SMTP_HOST": "127.0.0.1"}),
    Server("mail-server", "npm", "mcp-mail-server", "1.2.1", "mcp-mail-server",
           env={"IMAP_HOST": "127.0.0.1", "IMAP_PORT": "1", "SMTP_HOST": "127.0.0.1",
                "SMTP_PORT": "1", "EMAIL_USER": "compat@example.com", "EMAIL_PASS": DUMMY,
                "IMAP_SECURE": "false", "SMTP_SECURE": "false"}),
    Server("resend", "npm", "resend-mcp", "2.22.0", "resend-mcp",
           env={"RESEND_API_KEY": "re_" + DUMMY, "SENDER_EMAIL_ADDRESS": "compat@example.com"}),
    Server("google-calendar-cocal", "npm", "@cocal/google-calendar-mcp", "2.6.3",
           "google-calendar-mcp",
           env={"GOOGLE_OAUTH_CREDENTIALS": "{work}/gcp-oauth.keys.json"},
           files={"gcp-oauth.keys.json": _GOOGLE_OAUTH_KEYS}),
    Server("caldav", "npm", "caldav-mcp", "0.10.0", "caldav-mcp",
           env={"CALDAV_BASE_URL": "http://127.0.0.1:1/dav", "CALDAV_USERNAME": "compat",
                "CALDAV_PASSWORD": DUMMY}),
    Server("redis-server", "npm", "@modelcontextprotocol/server-redis", "2025.4.25",
           "mcp-server-redis", ("redis://127.0.0.1:16379",),
           note="archived; connects at start: catalogued with a local Redis on port 16379 "
           "(Debian redis-server, started by hand)"),
    Server("redis-gongrzhe", "npm", "@gongrzhe/server-redis-mcp", "1.0.0", "redis",
           ("redis://127.0.0.1:16379",),
           note="connects at start: catalogued with a local Redis on port 16379 (Debian "
           "redis-server, started by hand)"),
    Server("firebase", "npm", "@gannonh/firebase-mcp", "1.4.9", "firebase-mcp",
           env={"SERVICE_ACCOUNT_KEY_PATH": "{work}/service-account.json",
                "FIREBASE_STORAGE_BUCKET": "compat.appspot.com"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("firestoredb", "npm", "mcpfirestoredb", "1.1.2", "mcp-firestoredb",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "FIREBASE_PROJECT_ID": "compat", "FIRESTORE_PROJECT_ID": "compat"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("stripe", "npm", "@stripe/mcp", "0.3.3", "mcp",
           ("--tools=all", "--api-key=sk_test_" + DUMMY)),
    Server("paddle", "npm", "@paddle/paddle-mcp", "0.1.6", "paddle",
           ("--api-key=pdl_sdbx_apikey_" + DUMMY, "--environment=sandbox"),
           env={"PADDLE_API_KEY": "pdl_sdbx_apikey_" + DUMMY, "PADDLE_ENVIRONMENT": "sandbox"}),
    Server("prometheus", "npm", "prometheus-mcp", "1.1.3", "prometheus-mcp", ("stdio",),
           env={"PROMETHEUS_URL": "http://127.0.0.1:1"}),
    Server("signoz", "npm", "signoz-mcp-server", "1.2.2", "signoz-mcp-server",
           env={"SIGNOZ_URL": "http://127.0.0.1:1", "SIGNOZ_API_KEY": DUMMY}),
    Server("grafana-leval", "npm", "@leval/mcp-grafana", "1.1.7", "mcp-grafana",
           env={"GRAFANA_URL": "http://127.0.0.1:1", "GRAFANA_API_KEY": DUMMY,
                "GRAFANA_TOKEN": DUMMY}),
    Server("replicate", "npm", "replicate-mcp", "0.9.0", "mcp-server",
           env={"REPLICATE_API_TOKEN": "r8_" + DUMMY}),
    Server("mcp-image", "npm", "mcp-image", "0.14.0", "mcp-image",
           env={"GEMINI_API_KEY": DUMMY, "IMAGE_OUTPUT_DIR": "{work}/images"}),
    Server("nano-banana", "npm", "nano-banana-mcp", "1.0.3", "nano-banana-mcp",
           env={"GEMINI_API_KEY": DUMMY}),
    Server("everart", "npm", "@modelcontextprotocol/server-everart", "0.6.2",
           "mcp-server-everart", env={"EVERART_API_KEY": DUMMY}, note="archived"),
    Server("deepl", "npm", "deepl-mcp-server", "0.1.3-beta.0", "deepl-mcp-server",
           env={"DEEPL_API_KEY": DUMMY + ":fx"}),
    Server("lara", "npm", "@translated/lara-mcp", "1.0.6", "lara-mcp",
           env={"LARA_ACCESS_KEY_ID": DUMMY, "LARA_ACCESS_KEY_SECRET": DUMMY}),
    Server("weather-dangahagan", "npm", "@dangahagan/weather-mcp", "1.23.0", "weather-mcp"),
    Server("open-meteo", "npm", "open-meteo-mcp-server", "2.1.0", "open-meteo-mcp-server"),
    Server("weather-h1deya", "npm", "@h1deya/mcp-server-weather", "0.1.3", "mcp-server-weather"),
    Server("browsermcp", "npm", "@browsermcp/mcp", "0.1.3", "mcp-server-browsermcp"),
    Server("puppeteer-merajmehrabi", "npm", "puppeteer-mcp-server", "0.7.2",
           "mcp-server-puppeteer", install_env=_NO_BROWSER_DOWNLOAD),
    Server("webresearch", "npm", "@mzxrai/mcp-webresearch", "0.1.7", "mcp-webresearch",
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("postgres-henkey", "npm", "@henkey/postgres-mcp-server", "1.0.7", "postgres-mcp",
           ("--connection-string", "postgresql://compat:compat@127.0.0.1:1/compat")),
    Server("mysql-berthojoris", "npm", "@berthojoris/mcp-mysql-server", "1.43.2", "mcp-mysql",
           ("mysql://compat:compat@127.0.0.1:1/compat", "list,read,create,update,delete,execute,ddl")),
)


#: The fifth set of issue 24 (benchmarks/tuning3_pairs.py, set "tuning5"): a validation set
#: from servers of domains with interchangeable backends that the third and fourth sets did not
#: cover (video transcripts, containers, crypto prices, e-commerce, CRM, spreadsheets, PDF,
#: code search, kanban boards) plus a few of their domains (SQL, web search, git hosts) with
#: other servers, none of them a server above. Kept out of ``SERVERS`` like ``TUNING3``;
#: ``--only`` reaches them.
TUNING5: tuple[Server, ...] = (
    Server("youtube-data", "npm", "youtube-data-mcp-server", "1.0.16", "youtube-data-mcp-server",
           env={"YOUTUBE_API_KEY": DUMMY}),
    Server("youtube-transcript-fabriqa", "npm", "@fabriqa.ai/youtube-transcript-mcp", "1.0.3",
           "youtube-transcript-mcp"),
    Server("youtube-summarizer", "npm", "youtube-video-summarizer-mcp", "1.8.9",
           "youtube-video-summarizer"),
    Server("mcp-server-docker", "npm", "mcp-server-docker", "1.0.0", "mcp-server-docker"),
    Server("docker-0xshariq", "npm", "@0xshariq/docker-mcp-server", "2.0.4", "docker-mcp-server"),
    Server("podman", "npm", "podman-mcp-server", "0.0.15", "podman-mcp-server",
           note="exits at start unless a podman or docker command-line tool is on PATH: "
           "catalogued with Debian's podman (installed with apt-get; no container service)"),
    Server("coingecko", "npm", "@coingecko/coingecko-mcp", "8.2.0", "mcp-server",
           env={"COINGECKO_DEMO_API_KEY": DUMMY, "COINGECKO_PRO_API_KEY": DUMMY,
                "COINGECKO_ENVIRONMENT": "demo"}),
    Server("ccxt", "npm", "@mcpfun/mcp-server-ccxt", "1.2.1", "mcp-server-ccxt"),
    Server("aicoin", "npm", "@aicoin/opendata-mcp", "2.1.0", "aicoin-opendata-mcp",
           env={"AICOIN_ACCESS_KEY_ID": DUMMY, "AICOIN_ACCESS_SECRET": DUMMY}),
    Server("shopify-mcp", "npm", "shopify-mcp", "1.0.8", "shopify-mcp",
           ("--accessToken", "shpat_" + DUMMY, "--domain", "compat.myshopify.com"),
           env={"SHOPIFY_ACCESS_TOKEN": "shpat_" + DUMMY, "MYSHOPIFY_DOMAIN": "compat.myshopify.com"}),
    Server("shopify-junis", "npm", "@junis/shopify-mcp", "1.4.4", "shopify-mcp",
           env={"SHOPIFY_ACCESS_TOKEN": "shpat_" + DUMMY, "SHOPIFY_DOMAIN": "compat.myshopify.com"}),
    Server("woocommerce", "npm", "@lockon0927/woocommerce-mcp", "1.0.6", "woocommerce-mcp",
           env={"WORDPRESS_SITE_URL": "https://shop.compat.invalid",
                "WOOCOMMERCE_CONSUMER_KEY": "ck_" + DUMMY,
                "WOOCOMMERCE_CONSUMER_SECRET": "cs_" + DUMMY}),
    Server("attio", "npm", "attio-mcp", "1.6.1", "attio-mcp", env={"ATTIO_API_KEY": DUMMY}),
    Server("attio-server", "npm", "attio-mcp-server", "0.0.2", "attio-mcp-server",
           env={"ATTIO_API_KEY": DUMMY}),
    Server("gsheets", "npm", "mcp-gsheets", "1.10.3", "mcp-gsheets",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "GOOGLE_PROJECT_ID": "compat"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("google-sheets", "npm", "mcp-google-sheets", "2.0.1", "mcp-google-sheets",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "GOOGLE_PROJECT_ID": "compat", "SERVICE_ACCOUNT_PATH": "{work}/service-account.json"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("google-docs-abonus", "npm", "@a-bonus/google-docs-mcp", "1.11.3", "google-docs-mcp",
           env={"GOOGLE_CLIENT_ID": "compat.apps.googleusercontent.com", "GOOGLE_CLIENT_SECRET": DUMMY},
           files={"credentials.json": _GOOGLE_OAUTH_KEYS}),
    Server("server-pdf", "npm", "@modelcontextprotocol/server-pdf", "2.0.4", "mcp-pdf-server",
           ("--stdio",)),
    Server("grep-app", "npm", "grep-mcp", "1.1.0", "grep-mcp"),
    Server("greptile", "npm", "greptile-mcp-server", "3.0.4", "greptile-mcp-server",
           env={"GREPTILE_API_KEY": DUMMY, "GITHUB_TOKEN": "ghp_" + DUMMY}),
    Server("monday", "npm", "@mondaydotcomorg/monday-api-mcp", "3.3.0", "mcp-server-monday-api",
           ("-t", DUMMY), env={"MONDAY_TOKEN": DUMMY}),
    Server("trello", "npm", "@delorenj/mcp-server-trello", "1.8.1", "mcp-server-trello",
           env={"TRELLO_API_KEY": DUMMY, "TRELLO_TOKEN": DUMMY, "TRELLO_BOARD_ID": "compat0000"}),
    Server("mysql-client", "npm", "mysql-mcp", "1.1.1", "mysql-client",
           env={"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "1", "MYSQL_USER": "compat",
                "MYSQL_PASSWORD": DUMMY, "MYSQL_DATABASE": "compat"}),
    Server("mysql-readonly", "npm", "mysql-mcp-server", "0.1.4", "mysql-mcp-server",
           env={"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "1", "MYSQL_USER": "compat",
                "MYSQL_PASSWORD": DUMMY, "MYSQL_DATABASE": "compat"}),
    Server("sqlserver-bilims", "npm", "@bilims/mcp-sqlserver", "2.0.3", "mcp-sqlserver",
           env={"SQLSERVER_HOST": "127.0.0.1", "SQLSERVER_PORT": "1", "SQLSERVER_USER": "compat",
                "SQLSERVER_PASSWORD": DUMMY, "SQLSERVER_DATABASE": "compat"}),
    Server("postgres-full-access", "npm", "mcp-postgres-full-access", "0.3.0",
           "mcp-postgres-full-access", ("postgresql://compat:compat@127.0.0.1:15432/compat",),
           note="connects at start: catalogued with a local PostgreSQL on port 15432 (Debian "
           "postgresql, an empty database, started by hand)"),
    Server("perplexity-mcp", "npm", "perplexity-mcp", "0.2.3", "perplexity-mcp",
           env={"PERPLEXITY_API_KEY": "pplx-" + DUMMY}),
    Server("duckduckgo-ericthered", "npm", "@ericthered926/duckduckgo-mcp-server", "0.6.0",
           "duckduckgo-mcp-server"),
    Server("fetch-server", "npm", "mcp-fetch-server", "1.1.2", "mcp-fetch-server"),
    Server("bitbucket-mcp", "npm", "bitbucket-mcp", "5.0.6", "bitbucket-mcp",
           env={"BITBUCKET_URL": "https://api.bitbucket.org/2.0", "BITBUCKET_USERNAME": "compat",
                "BITBUCKET_PASSWORD": DUMMY, "BITBUCKET_TOKEN": DUMMY, "BITBUCKET_WORKSPACE": "compat"}),
)


#: The sixth set of issue 24 (benchmarks/tuning3_pairs.py, set "tuning6"): a validation set
#: from servers of domains with interchangeable backends that the third to fifth sets did
#: not cover (project management, shell, HTTP clients, BI dashboards, notes and documents,
#: cloud storage, social media, time) plus a few of the earlier domains (web search, SQL,
#: email, chat, calendar, drives) with other servers, none of them a server above. Kept out
#: of ``SERVERS`` like ``TUNING3``; ``--only`` reaches them.
TUNING6: tuple[Server, ...] = (
    Server("linear-jerhadf", "npm", "mcp-server-linear", "1.6.0", "mcp-server-linear",
           env={"LINEAR_API_KEY": "lin_api_" + DUMMY, "LINEAR_ACCESS_TOKEN": "lin_api_" + DUMMY}),
    Server("motion", "npm", "motionmcp", "2.9.0", "motionmcp",
           env={"MOTION_API_KEY": DUMMY}),
    Server("shrimp-tasks", "npm", "mcp-shrimp-task-manager", "1.0.21", "mcp-shrimp-task-manager",
           env={"DATA_DIR": "{work}/shrimp", "TEMPLATES_USE": "en"}),
    Server("shell-mako10k", "npm", "@mako10k/mcp-shell-server", "2.7.1", "mcp-shell-server"),
    Server("bash-command", "npm", "bash-command-mcp", "0.1.5", "bash-command-mcp"),
    Server("curl-server", "npm", "@mcp-get-community/server-curl", "0.1.0", "server-curl"),
    Server("mcp-fetch-http", "npm", "mcp-fetch", "0.1.6", "mcp-fetch",
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("metabase-easecloud", "npm", "@easecloudio/mcp-metabase-server", "1.3.0",
           "mcp-metabase-server",
           env={"METABASE_URL": "https://metabase.compat.invalid", "METABASE_API_KEY": DUMMY,
                "METABASE_USERNAME": "compat", "METABASE_PASSWORD": DUMMY}),
    Server("metabase-ai", "npm", "metabase-ai-assistant", "4.2.0", "metabase-ai-mcp",
           env={"METABASE_URL": "https://metabase.compat.invalid", "METABASE_API_KEY": DUMMY,
                "METABASE_USERNAME": "compat", "METABASE_PASSWORD": DUMMY}),
    Server("obsidian-cyanheads", "npm", "obsidian-mcp-server", "3.2.12", "obsidian-mcp-server",
           env={"OBSIDIAN_API_KEY": DUMMY, "OBSIDIAN_BASE_URL": "http://127.0.0.1:1",
                "OBSIDIAN_VERIFY_SSL": "false"}),
    Server("local-rag", "npm", "mcp-local-rag", "0.19.1", "mcp-local-rag",
           env={"BASE_DIR": "{work}", "DB_PATH": "{work}/rag-db", "CACHE_DIR": "{work}/rag-cache"}),
    Server("paperless", "npm", "@baruchiro/paperless-mcp", "2.2.1", "paperless-mcp",
           ("http://127.0.0.1:1", DUMMY),
           env={"PAPERLESS_URL": "http://127.0.0.1:1", "PAPERLESS_API_KEY": DUMMY}),
    Server("gcs-storage", "npm", "@google-cloud/storage-mcp", "0.6.0", "storage-mcp",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "GOOGLE_CLOUD_PROJECT": "compat"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("google-drive-full", "npm", "mcp-google-drive", "1.6.2", "mcp-google-drive",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "GOOGLE_CLIENT_ID": "compat.apps.googleusercontent.com",
                "GOOGLE_CLIENT_SECRET": DUMMY, "GOOGLE_REFRESH_TOKEN": DUMMY},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("google-drive-botrun", "npm", "@botrun/mcp-google-drive", "0.1.1", "mcp-google-drive",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json",
                "GOOGLE_CLIENT_ID": "compat.apps.googleusercontent.com",
                "GOOGLE_CLIENT_SECRET": DUMMY, "GOOGLE_REFRESH_TOKEN": DUMMY},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("time-yokingma", "npm", "time-mcp", "1.0.6", "time-mcp"),
    Server("moltbook", "npm", "moltbook-http-mcp", "1.1.1", "moltbook-mcp",
           env={"MOLTBOOK_API_KEY": DUMMY}),
    Server("o3-search", "npm", "o3-search-mcp", "0.0.3", "o3-search-mcp",
           env={"OPENAI_API_KEY": "sk-" + DUMMY}),
    Server("mssql-server", "npm", "mssql-mcp-server", "1.3.0", "mssql-mcp-server",
           env={"MSSQL_SERVER": "127.0.0.1", "MSSQL_PORT": "1", "MSSQL_USER": "compat",
                "MSSQL_PASSWORD": DUMMY, "MSSQL_DATABASE": "compat",
                "DB_SERVER": "127.0.0.1", "DB_USER": "compat", "DB_PASSWORD": DUMMY,
                "DB_DATABASE": "compat"}),
    Server("mssql-reader", "npm", "@connorbritain/mssql-mcp-reader", "0.6.1", "mssql-mcp-reader",
           env={"SERVER_NAME": "127.0.0.1", "DATABASE_NAME": "compat", "SQL_USERNAME": "compat",
                "SQL_PASSWORD": DUMMY, "DB_SERVER": "127.0.0.1", "DB_USER": "compat",
                "DB_PASSWORD": DUMMY, "DB_DATABASE": "compat"}),
    Server("mysql-liangshanli", "npm", "@liangshanli/mcp-server-mysql", "3.1.0", "mcp-server-mysql",
           env={"MYSQL_HOST": "127.0.0.1", "MYSQL_PORT": "1", "MYSQL_USER": "compat",
                "MYSQL_PASSWORD": DUMMY, "MYSQL_DATABASE": "compat"}),
    Server("gmail-shinzo", "npm", "@shinzolabs/gmail-mcp", "1.7.4", "gmail-mcp",
           env={"CLIENT_ID": "compat.apps.googleusercontent.com", "CLIENT_SECRET": DUMMY,
                "REFRESH_TOKEN": DUMMY, "MCP_CONFIG_DIR": "{work}/gmail"}),
    Server("icloud-mail", "npm", "icloud-mcp", "2.5.1", "icloud-mcp",
           env={"IMAP_USER": "compat@icloud.com", "IMAP_PASSWORD": DUMMY,
                "ICLOUD_EMAIL": "compat@icloud.com", "ICLOUD_APP_PASSWORD": DUMMY}),
    Server("slack-zencoder", "npm", "@zencoderai/slack-mcp-server", "0.0.1", "slack-mcp",
           env={"SLACK_BOT_TOKEN": "xoxb-" + DUMMY, "SLACK_TEAM_ID": "T000"}),
    Server("chatwork", "npm", "@chatwork/mcp-server", "0.0.4", "mcp-server",
           env={"CHATWORK_API_TOKEN": DUMMY}),
    Server("google-calendar-simple", "npm", "mcp-google-calendar", "0.0.5", "mcp-google-calendar",
           env={"CREDENTIALS_PATH": "{work}/credentials.json"},
           files={"credentials.json": _GOOGLE_OAUTH_KEYS,
                  "mcp-google-calendar-token.json": json.dumps({"access_token": DUMMY,
                                                                "refresh_token": DUMMY,
                                                                "token_type": "Bearer"})},
           note="authorizes at start: started with a dummy OAuth client and saved token"),
)


#: The seventh set of issue 38 (benchmarks/tuning3_pairs.py, set "tuning7"): a blind set
#: from servers of domains no earlier set covers (content management, flight data, game
#: engines, SEO and web analytics, diagrams, local LLM runtimes, workflow automation, job
#: queues), none of them a server above. Kept out of ``SERVERS`` like ``TUNING3``;
#: ``--only`` reaches them.
TUNING7: tuple[Server, ...] = (
    Server("wordpress-mcp", "npm", "mcp-wordpress", "3.3.35", "mcp-wordpress",
           env={"WORDPRESS_SITE_URL": "https://wp.compat.invalid", "WORDPRESS_USERNAME": "compat",
                "WORDPRESS_APP_PASSWORD": DUMMY, "WORDPRESS_AUTH_METHOD": "app-password"}),
    Server("contentful-mgmt", "npm", "@ivotoby/contentful-management-mcp-server", "1.21.0",
           "contentful-mcp",
           env={"CONTENTFUL_MANAGEMENT_ACCESS_TOKEN": "CFPAT-" + DUMMY, "SPACE_ID": "compat",
                "ENVIRONMENT_ID": "master"}),
    Server("umbraco-dev", "npm", "@umbraco-cms/mcp-dev", "18.1.7", "umbraco",
           env={"UMBRACO_CLIENT_ID": "compat", "UMBRACO_CLIENT_SECRET": DUMMY,
                "UMBRACO_BASE_URL": "https://umbraco.compat.invalid"},
           note="requests an OAuth token at start and exits without an Umbraco instance"),
    Server("flightradar-aviationstack", "npm", "flightradar-mcp-server", "0.1.2",
           "flightradar-mcp-server", env={"AVIATIONSTACK_API_KEY": DUMMY}),
    Server("fr24api", "npm", "@flightradar24/fr24api-mcp", "1.0.2", "mcp-fr24api-mcp",
           env={"FR24_API_KEY": DUMMY}),
    Server("variflight", "npm", "@variflight-ai/variflight-mcp", "1.0.3", "variflight-mcp",
           env={"VARIFLIGHT_API_KEY": DUMMY}),
    Server("godot-server", "npm", "godot-mcp-server", "0.6.0", "godot-mcp-server",
           env={"GODOT_PATH": "/nonexistent/godot"}),
    Server("godot-coding-solo", "npm", "@coding-solo/godot-mcp", "0.1.1", "godot-mcp",
           env={"GODOT_PATH": "/nonexistent/godot"}),
    Server("roblox-studio", "npm", "robloxstudio-mcp", "2.6.0", "robloxstudio-mcp"),
    Server("google-analytics", "npm", "mcp-server-google-analytics", "1.1.0",
           "mcp-server-google-analytics",
           env={"GOOGLE_CLIENT_EMAIL": "compat@compat.iam.gserviceaccount.com",
                "GOOGLE_PRIVATE_KEY": DUMMY, "GA_PROPERTY_ID": "123456789",
                "GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("search-console", "npm", "search-console-mcp", "2.1.3", "search-console-mcp",
           env={"GOOGLE_APPLICATION_CREDENTIALS": "{work}/service-account.json"},
           files={"service-account.json": _SERVICE_ACCOUNT}),
    Server("serpstat", "npm", "@serpstat/serpstat-mcp-server", "1.1.5", "serpstat-mcp-server",
           env={"SERPSTAT_API_TOKEN": DUMMY}),
    Server("drawio-official", "npm", "@drawio/mcp", "1.6.1", "drawio-mcp",
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("drawio-server", "npm", "drawio-mcp-server", "2.3.0", "drawio-mcp-server"),
    Server("excalidraw", "npm", "mcp-excalidraw-server", "2.0.0", "mcp-excalidraw-server",
           install_env=_NO_BROWSER_DOWNLOAD,
           env={"EXPRESS_SERVER_URL": "http://127.0.0.1:1", "ENABLE_CANVAS_SYNC": "false"}),
    Server("ollama", "npm", "ollama-mcp", "2.1.0", "ollama-mcp",
           env={"OLLAMA_HOST": "http://127.0.0.1:1"}),
    Server("houtini-lm", "npm", "@houtini/lm", "3.2.4", "houtini-lm",
           env={"LM_STUDIO_URL": "http://127.0.0.1:1"}),
    Server("n8n-illuminare", "npm", "@illuminaresolutions/n8n-mcp-server", "1.0.1",
           "n8n-mcp-server",
           env={"N8N_HOST": "http://127.0.0.1:1", "N8N_API_KEY": DUMMY},
           note="its executable has no #! line, so it cannot be started (exit 127)"),
    Server("n8n-leonardsellem", "npm", "@leonardsellem/n8n-mcp-server", "0.1.8", "n8n-mcp-server",
           env={"N8N_API_URL": "http://127.0.0.1:1/api/v1", "N8N_API_KEY": DUMMY},
           note="checks the n8n API at start and exits without an n8n instance"),
    Server("bullmq", "npm", "@adamhancock/bullmq-mcp", "1.0.7", "bullmq-mcp",
           env={"REDIS_URL": "redis://127.0.0.1:1"}),
)


#: The eighth set of issue 38 (benchmarks/tuning3_pairs.py, set "tuning8"): a blind set
#: from servers of domains no earlier set covers (secrets managers, app hosting platforms,
#: mobile device automation, voice agents and telephony, debuggers, fitness trackers,
#: books), none of them a server above. Kept out of ``SERVERS`` like ``TUNING3``;
#: ``--only`` reaches them.
TUNING8: tuple[Server, ...] = (
    Server("bitwarden", "npm", "@bitwarden/mcp-server", "2026.7.0", "mcp-server-bitwarden",
           env={"BW_SESSION": DUMMY, "BW_CLIENT_ID": "user.compat", "BW_CLIENT_SECRET": DUMMY}),
    Server("onepassword", "npm", "@takescake/1password-mcp", "4.0.2", "1password-mcp",
           env={"OP_SERVICE_ACCOUNT_TOKEN": "ops_" + DUMMY}),
    Server("infisical", "npm", "@infisical/mcp", "0.0.24", "mcp",
           env={"INFISICAL_UNIVERSAL_AUTH_CLIENT_ID": "compat",
                "INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET": DUMMY,
                "INFISICAL_HOST_URL": "http://127.0.0.1:1"}),
    Server("doppler", "npm", "@dopplerhq/mcp-server", "1.0.5", "doppler-mcp",
           env={"DOPPLER_TOKEN": "dp.st." + DUMMY},
           note="tests its token against the Doppler API at start and exits"),
    Server("railway", "npm", "@jasontanswe/railway-mcp", "1.3.0", "railway-mcp",
           env={"RAILWAY_API_TOKEN": DUMMY}),
    Server("coolify", "npm", "@masonator/coolify-mcp", "3.5.0", "coolify-mcp",
           env={"COOLIFY_ACCESS_TOKEN": DUMMY, "COOLIFY_BASE_URL": "http://127.0.0.1:1"}),
    Server("vercel-robinson", "npm", "@robinson_ai_systems/vercel-mcp", "1.0.1", "vercel-mcp",
           env={"VERCEL_TOKEN": DUMMY, "VERCEL_API_TOKEN": DUMMY}),
    Server("heroku", "npm", "@heroku/mcp-server", "1.2.8", "heroku-mcp-server",
           env={"HEROKU_API_KEY": DUMMY},
           note="exits at start: it imports an SDK module path that does not resolve"),
    Server("mobile-mcp", "npm", "@mobilenext/mobile-mcp", "1.0.4", "mcp-server-mobile"),
    Server("ios-simulator", "npm", "ios-simulator-mcp", "2.1.0", "ios-simulator-mcp"),
    Server("vapi", "npm", "@vapi-ai/mcp-server", "0.0.11", "mcp-server",
           env={"VAPI_TOKEN": DUMMY}),
    Server("retellai", "npm", "@abhaybabbar/retellai-mcp-server", "1.0.2",
           "retellai-mcp-server", env={"RETELL_API_KEY": DUMMY}),
    Server("twilio-sms", "npm", "twilio-mcp", "1.0.0", "twilio-mcp",
           env={"TWILIO_ACCOUNT_SID": "AC" + "0" * 32, "TWILIO_AUTH_TOKEN": DUMMY + "00",
                "TWILIO_PHONE_NUMBER": "+15005550006", "WEBHOOK_PORT": "1",
                "WEBHOOK_BASE_URL": "http://127.0.0.1:1", "DATABASE_PATH": "{work}/twilio.db"}),
    Server("mcp-debugger", "npm", "@debugmcp/mcp-debugger", "0.24.2", "mcp-debugger",
           ("stdio",)),
    Server("nodejs-debugger", "npm", "@hyperdrive-eng/mcp-nodejs-debugger", "0.2.2",
           "mcp-nodejs-debugger"),
    Server("appstore-connect", "npm", "appstore-connect-mcp-server", "1.1.3",
           "appstore-connect-mcp",
           env={"APP_STORE_CONNECT_KEY_ID": "COMPAT0000", "APP_STORE_CONNECT_ISSUER_ID":
                "00000000-0000-0000-0000-000000000000",
                "APP_STORE_CONNECT_P8_PATH": "{work}/AuthKey.p8"},
           files={"AuthKey.p8": "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"}),
    Server("pabal-store", "npm", "pabal-store-api-mcp", "1.3.19", "pabal-store-api-mcp"),
    Server("hevy", "npm", "hevy-mcp", "6.1.13", "hevy-mcp", env={"HEVY_API_KEY": DUMMY}),
    Server("strava", "npm", "@r-huijts/strava-mcp-server", "1.2.1", "strava-mcp-server",
           env={"STRAVA_CLIENT_ID": "0", "STRAVA_CLIENT_SECRET": DUMMY,
                "STRAVA_ACCESS_TOKEN": DUMMY, "STRAVA_REFRESH_TOKEN": DUMMY}),
    Server("calibre", "npm", "access-calibre", "1.3.3", "access-calibre",
           env={"CALIBRE_URL": "http://127.0.0.1:1"},
           note="install fails: a dependency's install step downloads a Chromium build"),
    Server("open-library", "npm", "@geobio/mcp-open-library", "0.1.6", "mcp-open-library"),
    Server("hardcover", "pypi", "hardcover-mcp", "0.9.0", "hardcover-mcp", python="3.14",
           env={"HARDCOVER_API_TOKEN": DUMMY, "HARDCOVER_TOKEN": DUMMY}),
    Server("goodreads", "pypi", "goodreads-mcp-ai", "2026.10.0", "goodreads-mcp-ai",
           python="3.12"),
)


#: The ninth set of issue 38 (benchmarks/tuning3_pairs.py, set "tuning9"): a blind set from
#: servers of domains no earlier set covers (API development platforms, infrastructure-as-code
#: registries, code quality, test management, web performance and accessibility audits,
#: identity and access management, ML experiment tracking, 3D modelling and CAD), none of them
#: a server above. Kept out of ``SERVERS`` like ``TUNING3``; ``--only`` reaches them.
TUNING9: tuple[Server, ...] = (
    Server("postman", "npm", "@postman/postman-mcp-server", "2.13.0", "postman-mcp-server",
           # its preinstall step runs `npx only-allow pnpm`, which fails under npm
           install_env={"npm_config_ignore_scripts": "true"},
           env={"POSTMAN_API_KEY": "PMAK-" + DUMMY}),
    Server("apidog", "npm", "apidog-mcp-server", "0.0.17", "apidog-mcp-server",
           ("--project-id=1",), env={"APIDOG_ACCESS_TOKEN": DUMMY}),
    Server("apifox", "npm", "apifox-mcp-server", "0.0.17", "apifox-mcp-server",
           ("--project-id=1",), env={"APIFOX_ACCESS_TOKEN": DUMMY}),
    Server("terraform-registry", "npm", "terraform-mcp-server", "0.13.0",
           "terraform-mcp-server",
           note="its resources/templates/list answer has no resourceTemplates array"),
    Server("opentofu-registry", "npm", "@opentofu/opentofu-mcp-server", "0.1.5",
           "opentofu-mcp-server"),
    Server("ansible-know", "pypi", "ansible-know-mcp", "0.10.0", "ansible-know-mcp",
           python="3.12"),
    Server("sonarqube", "npm", "sonarqube-mcp-server", "1.10.21", "sonarqube-mcp-server",
           env={"SONARQUBE_TOKEN": DUMMY, "SONARQUBE_URL": "http://127.0.0.1:1"}),
    Server("codacy", "npm", "@codacy/codacy-mcp", "0.5.9", "codacy-mcp-server",
           env={"CODACY_ACCOUNT_TOKEN": DUMMY}),
    Server("coderabbit", "npm", "coderabbitai-mcp", "1.1.1", "coderabbitai-mcp",
           env={"GITHUB_PAT": "ghp_" + DUMMY}),
    Server("qase", "npm", "@qase/mcp-server", "2.7.0", "qase-mcp-server",
           env={"QASE_API_TOKEN": DUMMY}),
    Server("currents", "npm", "@currents/mcp", "2.1.1", "mcp",
           env={"CURRENTS_API_KEY": DUMMY}),
    Server("browserstack", "npm", "@browserstack/mcp-server", "1.4.2", "browserstack-mcp-server",
           install_env=_NO_BROWSER_DOWNLOAD,
           env={"BROWSERSTACK_USERNAME": "compat", "BROWSERSTACK_ACCESS_KEY": DUMMY}),
    # its tools are those of the products whose credentials are set: here its test
    # management products (Zephyr, QMetry) and its test automation (Reflect)
    Server("smartbear-tests", "npm", "@smartbear/mcp", "0.41.0", "mcp",
           env={"ZEPHYR_API_TOKEN": DUMMY, "QMETRY_API_KEY": DUMMY,
                "REFLECT_API_TOKEN": DUMMY},
           note="exits at start: it imports node:module's enableCompileCache (Node 22.1+)"),
    Server("lighthouse-priyank", "npm", "lighthouse-mcp", "0.1.17", "lighthouse-mcp",
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("lighthouse-danielsogl", "npm", "@danielsogl/lighthouse-mcp", "2.0.1",
           "lighthouse-mcp-server", install_env=_NO_BROWSER_DOWNLOAD),
    Server("accesslint", "npm", "@accesslint/mcp", "0.11.1", "accesslint-mcp",
           install_env=_NO_BROWSER_DOWNLOAD),
    Server("accessflow", "npm", "accessflow-mcp-server", "1.0.15", "flow-mcp",
           env={"API_KEY": DUMMY, "DOMAIN": "compat.example.invalid"},
           note="answers its first request twice (the same id): a protocol error"),
    Server("auth0", "npm", "@auth0/auth0-mcp-server", "0.1.0-beta.19", "auth0-mcp", ("run",),
           env={"AUTH0_DOMAIN": "compat.example.invalid", "AUTH0_TOKEN": DUMMY},
           note="exits at start: its keychain module's native addon was not built here"),
    Server("lokka", "npm", "@merill/lokka", "0.3.0", "lokka",
           # client-token mode: with a client secret it asks Entra ID for a token at start
           env={"USE_CLIENT_TOKEN": "true"}),
    Server("keycloak", "pypi", "keycloak-mcp", "1.5.1", "keycloak-mcp", python="3.12",
           env={"KEYCLOAK_URL": "http://127.0.0.1:1", "KEYCLOAK_REALM": "compat",
                "KEYCLOAK_CLIENT_ID": "compat", "KEYCLOAK_CLIENT_SECRET": DUMMY}),
    # --expanded: every tool registered on its own (its default is one gateway tool)
    Server("keycloak-bibliocommons", "pypi", "bibliocommons-mcp-keycloak", "1.3.6",
           "bibliocommons-mcp-keycloak", ("--expanded",), python="3.12",
           env={"KEYCLOAK_URL": "http://127.0.0.1:1", "KEYCLOAK_REALM": "compat"},
           note="exits at start: it downloads Keycloak's OpenAPI document (not shipped)"),
    Server("okta", "pypi", "okta-mcp-server", "1.1.7", "okta-mcp-server", python="3.13",
           env={"OKTA_ORG_URL": "http://127.0.0.1:1", "OKTA_CLIENT_ID": "compat",
                "OKTA_SCOPES": "okta.users.read"},
           note="starts a device authorization with its Okta org at start and exits"),
    Server("mlflow-kkruglik", "pypi", "mlflow-mcp", "0.4.1", "mlflow-mcp", python="3.12",
           env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:1"}),
    Server("mlflow-server", "pypi", "mlflow-mcp-server", "0.1.1", "mlflow_mcp_server",
           python="3.12", pins=("mcp<2",), env={"MLFLOW_TRACKING_URI": "http://127.0.0.1:1"}),
    Server("opik", "pypi", "opik-mcp", "3.0.7", "opik-mcp", python="3.13",
           env={"OPIK_API_KEY": DUMMY, "OPIK_URL_OVERRIDE": "http://127.0.0.1:1/api",
                "OPIK_WORKSPACE": "compat"}),
    Server("blender", "pypi", "blender-mcp", "2.0.0", "blender-mcp", python="3.12",
           env={"BLENDER_HOST": "127.0.0.1", "BLENDER_PORT": "1"}),
    Server("freecad", "pypi", "freecad-mcp", "0.1.28", "freecad-mcp", python="3.12"),
)


#: The tenth set of issue 38 (benchmarks/tuning3_pairs.py, set "tuning10"): a blind set from
#: servers of domains no earlier set covers (customer-support helpdesks, learning management
#: systems, hypervisors, network firewalls and routers, ad platforms, data catalogs, threat
#: intelligence, sports data), none of them a server above. Kept out of ``SERVERS`` like
#: ``TUNING3``; ``--only`` reaches them. ``pins=("mcp<2",)``: the server imports
#: ``mcp.server.fastmcp`` (or the 1.x low-level API), which the 2.x SDK its requirement
#: allows no longer has.
TUNING10: tuple[Server, ...] = (
    Server("zendesk", "pypi", "zendesk-mcp", "0.1.6", "zendesk-mcp", python="3.12",
           env={"ZENDESK_SUBDOMAIN": "compat", "ZENDESK_CLIENT_ID": "compat",
                "ZENDESK_CLIENT_SECRET": DUMMY}),
    Server("freshdesk", "pypi", "freshdesk-mcp", "1.2.0", "freshdesk-mcp", python="3.12",
           pins=("mcp<2",),
           env={"FRESHDESK_API_KEY": DUMMY, "FRESHDESK_DOMAIN": "compat.example.invalid"}),
    Server("zammad", "pypi", "zammad-mcp-server", "0.1.1", "zammad-mcp-server", python="3.12",
           env={"ZAMMAD_URL": "http://127.0.0.1:1", "ZAMMAD_HTTP_TOKEN": DUMMY}),
    Server("canvas", "pypi", "canvas-mcp", "1.16.0", "canvas-mcp-server", python="3.12",
           env={"CANVAS_API_TOKEN": DUMMY, "CANVAS_API_URL": "https://127.0.0.1:1/api/v1"}),
    Server("moodle-bridge", "pypi", "moodle-mcp-bridge", "1.7.0", "moodle-mcp-bridge",
           python="3.12", pins=("mcp<2",),
           env={"MOODLE_URL": "http://127.0.0.1:1", "MOODLE_TOKEN": DUMMY}),
    Server("moodle", "pypi", "mcp-moodle", "0.1.2", "mcp-moodle", python="3.12",
           pins=("mcp<2",),
           env={"MOODLE_URL": "http://127.0.0.1:1", "MOODLE_TOKEN": DUMMY}),
    Server("proxmox", "pypi", "mcp-proxmox", "1.2.3", "mcp-proxmox", python="3.12",
           env={"PROXMOX_HOST": "127.0.0.1", "PROXMOX_PORT": "1",
                "PROXMOX_TOKEN_ID": "root@pam!compat", "PROXMOX_TOKEN_SECRET": DUMMY}),
    Server("proxmox-cursor", "pypi", "cursor-proxmox-mcp", "1.9.0", "cursor-proxmox-mcp",
           python="3.12", pins=("mcp<2",), env={"PROXMOX_MCP_CONFIG": "{work}/proxmox.json"},
           files={"proxmox.json": '{"proxmox": {"host": "127.0.0.1", "port": 1, '
                                  '"verify_ssl": false}, "auth": {"user": "root@pam", '
                                  '"token_name": "compat", "token_value": "' + DUMMY + '"}, '
                                  '"logging": {}}'},
           note="connects to its Proxmox host at start (GET /api2/json/version) and exits"),
    # its pinned mcp 1.19 imports a pydantic internal that pydantic 2.12 removed
    Server("vmware-esxi", "pypi", "mcp-vmware-esxi", "0.1.0", "mcp-vmware-esxi",
           python="3.12", pins=("pydantic<2.12",),
           env={"VCENTER_HOST": "127.0.0.1", "VCENTER_USER": "compat",
                "VCENTER_PASSWORD": DUMMY, "VCENTER_INSECURE": "true"}),
    # it imports httpx, which it does not declare
    Server("opnsense", "pypi", "opnsense-mcp-server", "0.4.1", "opnsense-mcp", python="3.12",
           pins=("httpx",),
           env={"OPNSENSE_URL": "https://127.0.0.1:1", "OPNSENSE_API_KEY": "compat",
                "OPNSENSE_API_SECRET": DUMMY}),
    Server("pfsense", "pypi", "mcp-pfsense", "0.3.0", "mcp-pfsense", python="3.12",
           env={"PFSENSE_HOST": "127.0.0.1", "PFSENSE_PORT": "1",
                "PFSENSE_PASSWORD": DUMMY}),
    Server("meta-ads", "pypi", "meta-ads-mcp", "1.0.128", "meta-ads-mcp", python="3.12",
           env={"META_ACCESS_TOKEN": DUMMY, "META_ADS_DISABLE_CALLBACK_SERVER": "1",
                "META_ADS_DISABLE_LOGIN_LINK": "1"}),
    Server("google-ads", "pypi", "google-ads-mcp", "0.0.5", "google-ads-mcp", python="3.12",
           env={"GOOGLE_ADS_DEVELOPER_TOKEN": DUMMY,
                "GOOGLE_ADS_LOGIN_CUSTOMER_ID": "1234567890"}),
    Server("google-ads-trueclicks", "npm", "@trueclicks/google-ads-mcp-js", "0.3.7",
           "google-ads-mcp-js", ("--token=" + DUMMY,)),
    Server("datahub", "pypi", "mcp-server-datahub", "0.8.0", "mcp-server-datahub",
           python="3.12",
           env={"DATAHUB_GMS_URL": "http://127.0.0.1:1", "DATAHUB_GMS_TOKEN": DUMMY}),
    Server("atlan", "pypi", "atlan-mcp-server", "0.3.3", "atlan-mcp-server", python="3.12",
           env={"ATLAN_BASE_URL": "http://127.0.0.1:1", "ATLAN_API_KEY": DUMMY}),
    Server("openmetadata", "pypi", "mcp-server-openmetadata", "0.2.4",
           "mcp-server-openmetadata", python="3.12", pins=("mcp<2",),
           env={"OPENMETADATA_HOST": "http://127.0.0.1:1", "OPENMETADATA_JWT_TOKEN": DUMMY}),
    Server("shodan", "pypi", "mcp-shodan", "0.1.0", "mcp-shodan", python="3.12",
           env={"SHODAN_API_KEY": DUMMY}),
    Server("abuseipdb", "pypi", "mcp-abuseipdb", "1.3.0", "mcp-abuseipdb", python="3.12",
           env={"ABUSEIPDB_API_KEY": DUMMY}),
    Server("otx", "pypi", "otx-mcp", "1.2.0", "otx-mcp", python="3.12",
           env={"OTX_API_KEY": DUMMY}),
    Server("opencti", "pypi", "opencti-mcp", "0.1.1", "opencti-mcp", python="3.12",
           env={"OPENCTI_URL": "http://127.0.0.1:1", "OPENCTI_TOKEN": DUMMY}),
    # it registers its handlers with the 1.x low-level Server's decorators (gone in mcp 2.x)
    Server("f1-server", "pypi", "f1-mcp-server", "0.1.0", "f1-mcp-server", python="3.12",
           pins=("mcp<2",)),
    Server("fastf1", "pypi", "fastf1-mcp", "0.2.0", "fastf1-mcp", python="3.12",
           pins=("mcp<2",)),
    Server("espn", "pypi", "mcp-server-espn", "2.1.1", "mcp-server-espn", python="3.12"),
)


# ----------------------------------------------------------------------------- places
def cache_dir() -> Path:
    return Path(os.environ.get("HISTOR_COMPAT_DIR") or REPO / ".cache" / "compat")


def install_dir(server: Server) -> Path:
    return cache_dir() / server.registry / server.slug


def installed_file() -> Path:
    return cache_dir() / "installed.json"


def load_installed() -> dict[str, Any]:
    try:
        data = json.loads(installed_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def executable(server: Server) -> Path:
    where = install_dir(server)
    return (where / "node_modules" / ".bin" / server.bin if server.registry == "npm"
            else where / "bin" / server.bin)


def is_installed(server: Server) -> bool:
    record = load_installed().get(server.slug)
    return (isinstance(record, dict) and record.get("ok") is True
            and record.get("version") == server.version
            and record.get("pins", []) == list(server.pins) and executable(server).exists())


# ----------------------------------------------------------------------------- install
def _run(argv: list[str], timeout: float, **kw: Any) -> tuple[bool, str]:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:g} s"
    except OSError as exc:
        return False, str(exc)
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return proc.returncode == 0, " | ".join(tail)


def _python(version: str) -> str | None:
    """An interpreter of that version: a pyenv install directly (its shim runs only the
    versions made global), else the one on PATH."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    for candidate in sorted(root.glob(f"{version}.*/bin/python{version}"), reverse=True):
        return str(candidate)
    return shutil.which(f"python{version}")


def sdk_version(server: Server) -> str | None:
    """The MCP SDK version the installed server runs on."""
    where = install_dir(server)
    if server.registry == "npm":
        versions = set()
        for pkg in where.glob("node_modules/**/@modelcontextprotocol/sdk/package.json"):
            with contextlib.suppress(OSError, ValueError):
                versions.add(json.loads(pkg.read_text())["version"])
        return ", ".join(sorted(versions)) or None
    for meta in where.glob("lib/python*/site-packages/mcp-*.dist-info/METADATA"):
        match = re.search(r"^Version: (\S+)", meta.read_text(errors="replace"), re.M)
        if match:
            return match.group(1)
    return None


def install(server: Server) -> dict[str, Any]:
    where = install_dir(server)
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    start = time.monotonic()
    if server.registry == "npm":
        ok, why = _run(["npm", "install", "--prefix", str(where), "--no-audit", "--no-fund",
                        "--loglevel=error", f"{server.package}@{server.version}"],
                       INSTALL_TIMEOUT, env={**os.environ, **server.install_env})
    else:
        python = _python(server.python)
        if python is None:
            return {"ok": False, "version": server.version,
                    "error": f"no python{server.python} on this machine"}
        ok, why = _run([python, "-m", "venv", str(where)], 120)
        if ok:
            ok, why = _run([str(where / "bin" / "pip"), "install", "-q",
                            "--disable-pip-version-check", f"{server.package}=={server.version}",
                            *server.pins], INSTALL_TIMEOUT)
    seconds = round(time.monotonic() - start, 1)
    if ok and not executable(server).exists():
        ok, why = False, f"installed, but it has no {server.bin} executable"
    record: dict[str, Any] = {"ok": ok, "version": server.version, "pins": list(server.pins),
                              "seconds": seconds}
    if ok:
        record["sdk"] = sdk_version(server)
    else:
        record["error"] = why[-400:]
    return record


def _record(slug: str, record: dict[str, Any]) -> None:
    """Merge one install record into installed.json (two installs may run at once)."""
    import fcntl

    installed_file().parent.mkdir(parents=True, exist_ok=True)
    with (cache_dir() / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = load_installed()
        records[slug] = record
        tmp = installed_file().with_suffix(".tmp")
        tmp.write_text(json.dumps(records, indent=2, sort_keys=True) + "\n")
        tmp.replace(installed_file())


def install_all(servers: list[Server], budget: float) -> None:
    deadline = time.monotonic() + budget
    for server in servers:
        if time.monotonic() > deadline:
            print(f"{server.slug}: skipped (install budget spent)")
            continue
        if is_installed(server):
            print(f"{server.slug}: already installed")
            continue
        record = install(server)
        _record(server.slug, record)
        state = "ok" if record["ok"] else f"FAILED: {record['error']}"
        print(f"{server.slug}: {state} ({record.get('seconds', 0)} s)", flush=True)


# ----------------------------------------------------------------------------- fetching
@dataclass
class Side:
    """What one client listed: tool names in order, projected definitions, the era."""

    names: list[str] = field(default_factory=list)
    definitions: dict[str, bytes] = field(default_factory=dict)
    protocol: str = ""
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)


@contextlib.contextmanager
def scratch(server: Server) -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """(argv, environment, cwd) for one start of ``server``: a fresh scratch directory, the
    same environment for both clients (ours minus credentials, the dummies on top)."""
    from histor_sign.mcp._target import child_environment

    work = cache_dir() / "work" / server.slug
    if work.exists():
        shutil.rmtree(work)
    (work / "home").mkdir(parents=True)
    if server.slug == "mcp-server-git":
        subprocess.run(["git", "init", "-q", str(work / "repo")], check=True)
    if "KUBECONFIG" in server.env:
        (work / "kubeconfig").write_text(_KUBECONFIG)
    for name, text in server.files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)

    def fill(text: str) -> str:
        return text.replace("{work}", str(work))

    # PYTHONHASHSEED: mcp-atlassian builds a default from a set, so its tools differ from
    # one start to the next; the clients are compared on the same definitions.
    extra = {"HOME": str(work / "home"), "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1",
             "PYTHONHASHSEED": "0",
             **{k: fill(v) for k, v in server.env.items()}}
    env = child_environment(os.environ, extra=extra)
    argv = [str(executable(server)), *(fill(a) for a in server.args)]
    yield argv, env, work


_KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: compat, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: compat, user: {token: histor-compat-dummy}}]
contexts: [{name: compat, context: {cluster: compat, user: compat}}]
current-context: compat
"""


def _project(tool: dict[str, Any]) -> bytes:
    from histor_sign.canonical import canonical_bytes
    from histor_sign.models import PROJECTED_FIELDS

    return canonical_bytes({k: tool[k] for k in PROJECTED_FIELDS if k in tool})


def _without_annotations(definition: bytes, keys: list[str]) -> bytes:
    """A projected definition with the given annotation keys removed (re-canonicalised)."""
    if not keys:
        return definition
    from histor_sign.canonical import canonical_bytes

    tool = json.loads(definition)
    annotations = tool.get("annotations")
    if isinstance(annotations, dict) and any(k in annotations for k in keys):
        tool["annotations"] = {k: v for k, v in annotations.items() if k not in keys}
        return canonical_bytes(tool)
    return definition


def fetch_ours(server: Server) -> tuple[Side, Any]:
    from histor_sign.errors import HistorError
    from histor_sign.mcp import FetchOptions, Target, fetch

    side, snapshot = Side(), None
    with scratch(server) as (argv, env, work):
        target = Target.stdio(argv, cwd=str(work), env=env)
        start = time.monotonic()
        try:
            snapshot = fetch(target, FetchOptions(total_timeout=FETCH_TIMEOUT))
        except HistorError as exc:
            side.error = exc.message
        side.seconds = round(time.monotonic() - start, 2)
    if snapshot is not None:
        side.names = [t["name"] for t in snapshot.tools]
        side.definitions = {t["name"]: _project(t) for t in snapshot.tools}
        side.protocol = f"{snapshot.capture['protocolVersion']} ({snapshot.capture['era']})"
        side.notes = list(snapshot.warnings)
    return side, snapshot


def fetch_sdk(server: Server) -> Side:
    """The official SDK client's own cursor loop (``Client.list_tools``), in its default
    ``auto`` mode and, if that fails, in ``legacy`` mode (the handshake without the probe)."""
    side = Side()
    errors: list[str] = []
    for mode in ("auto", "legacy"):
        with scratch(server) as (argv, env, work):
            start = time.monotonic()
            try:
                tools, protocol = asyncio.run(asyncio.wait_for(
                    _sdk_list(argv, env, work, mode), FETCH_TIMEOUT))
            except Exception as exc:  # the SDK's errors, timeouts, a server that died
                errors.append(f"mode={mode}: {_first_line(exc)}")
                side.seconds += round(time.monotonic() - start, 2)
                continue
            side.seconds += round(time.monotonic() - start, 2)
        side.names = [t["name"] for t in tools]
        side.definitions = {t["name"]: _project(t) for t in tools}
        side.protocol = protocol + (" [mode=legacy]" if mode == "legacy" else "")
        side.notes = errors
        return side
    side.error = "; ".join(errors)
    return side


def _first_line(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


def _capable_host() -> dict[str, Any]:
    """Callbacks that make the SDK client declare what ``fetch`` declares (roots, sampling,
    elicitation: a fully capable host), so both are offered the same list; each refuses."""
    import mcp.types as types

    async def refuse(*_args: Any) -> Any:
        return types.ErrorData(code=-1, message="the compat run declines")

    async def no_roots(*_args: Any) -> Any:
        return types.ListRootsResult(roots=[])

    return {"sampling_callback": refuse, "elicitation_callback": refuse,
            "list_roots_callback": no_roots}


async def _sdk_list(argv: list[str], env: dict[str, str], work: Path, mode: str
                    ) -> tuple[list[dict[str, Any]], str]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(work))
    tools: list[dict[str, Any]] = []
    with (work / "sdk-stderr.log").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), cache=None, mode=mode,
                          **_capable_host()) as client:
            cursor: str | None = None
            for _ in range(1000):
                page = await client.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_unset=True)
                          for t in page.tools]
                cursor = page.next_cursor
                if cursor is None:
                    break
            era = "modern" if client.protocol_version >= "2026" else "legacy"
            return tools, f"{client.protocol_version} ({era})"


@dataclass
class Result:
    server: Server
    ours: Side
    sdk: Side
    problems: list[str]

    @property
    def passed(self) -> bool:
        return not self.problems


def compare(server: Server) -> Result:
    """Fetch ``server`` with both clients and list every difference (none = pass)."""
    ours, snapshot = fetch_ours(server)
    sdk = fetch_sdk(server)
    problems: list[str] = []
    if ours.error:
        problems.append(f"histor-sign failed: {ours.error}")
    if server.sdk_rejects:
        if not sdk.error:
            problems.append(f"the SDK client listed it, though expected to reject it "
                            f"({server.sdk_rejects})")
        if not ours.error and not ours.names:
            problems.append("no tools listed")
    elif sdk.error:
        problems.append(f"SDK client failed: {sdk.error}")
    if not problems and not server.sdk_rejects:
        dropped = [w.split(":", 1)[1] for w in server.expect
                   if w.startswith("sdk-drops-annotation:")]
        mine = {name: _without_annotations(d, dropped) for name, d in ours.definitions.items()}
        if dropped and mine == ours.definitions:
            problems.append(f"expected annotation keys {dropped} in histor-sign's definitions")
        if ours.names != sdk.names:
            problems.append(f"tool names differ: histor-sign {ours.names} vs SDK {sdk.names}")
        problems += [f"definition of {name!r} differs"
                     for name in ours.names
                     if name in sdk.definitions and mine[name] != sdk.definitions[name]]
        if not ours.names:
            problems.append("no tools listed")
    if snapshot is not None:
        for want in server.expect:
            if want.startswith("not-served:"):
                member = want.split(":", 1)[1]
                if member not in snapshot.not_served:
                    problems.append(f"expected {member} recorded as not served")
            elif want == "banner" and not any("non-JSON" in n for n in ours.notes):
                problems.append("expected a skipped banner warning")
        restarted = any("started again" in n for n in ours.notes)
        if restarted != server.expect_probe_restart:
            problems.append("expected a restart after the probe" if server.expect_probe_restart
                            else "restarted after the probe unexpectedly")
    return Result(server, ours, sdk, problems)


# ----------------------------------------------------------------------------- report
def result_json(result: Result) -> dict[str, Any]:
    record = load_installed().get(result.server.slug, {})
    return {
        "server": result.server.slug, "registry": result.server.registry,
        "package": result.server.package, "version": result.server.version,
        "sdk": record.get("sdk"), "passed": result.passed, "problems": result.problems,
        "tools": len(result.ours.names),
        "protocol": {"histor-sign": result.ours.protocol, "sdk": result.sdk.protocol},
        "seconds": {"histor-sign": result.ours.seconds, "sdk": result.sdk.seconds},
        "warnings": result.ours.notes,
        "sdkNotes": result.sdk.notes,
    }


def markdown(rows: list[dict[str, Any]], not_installed: dict[str, str]) -> str:
    lines = ["| server | registry | version | SDK | tools | histor-sign era | SDK client era "
             "| result | time (ours / SDK) |", "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        result = "pass" if row["passed"] else "FAIL: " + "; ".join(row["problems"])[:160]
        extra = []
        if any("notServed" in w for w in row["warnings"]):
            extra.append("not served recorded")
        if any("non-JSON" in w for w in row["warnings"]):
            extra.append("banner skipped")
        if any("started again" in w for w in row["warnings"]):
            extra.append("restarted after the probe")
        if extra and row["passed"]:
            result += f" ({', '.join(extra)})"
        sdk = row["sdk"] or "bundled"
        lines.append(
            f"| {row['package']} | {row['registry']} | {row['version']} | {sdk} | "
            f"{row['tools']} | {row['protocol']['histor-sign']} | {row['protocol']['sdk']} | "
            f"{result} | {row['seconds']['histor-sign']} / {row['seconds']['sdk']} s |")
    for slug, why in not_installed.items():
        lines.append(f"| {slug} | | | | | | | not installed: {why} | |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- catalogs
#: The members of a tool a model choosing a tool reads (and the scan compares).
CATALOG_FIELDS = ("name", "title", "description", "inputSchema", "annotations")


def licence(server: Server) -> str | None:
    """The licence the installed package declares (package.json ``license``; a wheel's
    ``License-Expression``, ``License`` or licence classifier)."""
    where = install_dir(server)
    if server.registry == "npm":
        value: Any = None
        with contextlib.suppress(OSError, ValueError):
            meta = json.loads((where / "node_modules" / server.package / "package.json")
                              .read_text(encoding="utf-8"))
            value = meta.get("license") or meta.get("licenses")
            if isinstance(value, dict):
                value = value.get("type")
            if isinstance(value, list) and value:
                value = value[0].get("type") if isinstance(value[0], dict) else value[0]
            if value and not str(value).upper().startswith("SEE LICENSE"):
                return str(value)
        return (_licence_file(where / "node_modules" / server.package)
                or (f"declared: {value}" if value else None))
    name = re.sub(r"[-_.]+", "_", server.package).lower()
    for info in where.glob("lib/python*/site-packages/*.dist-info"):
        if re.sub(r"[-_.]+", "_", info.name.split("-", 1)[0]).lower() != name:
            continue
        text = (info / "METADATA").read_text(errors="replace")
        for pattern in (r"^License-Expression: (.+)$", r"^License: (\S.{0,60})$",
                        r"^Classifier: License :: (?:OSI Approved :: )?(.+)$"):
            match = re.search(pattern, text, re.M)
            if match and match.group(1).strip().upper() not in ("UNKNOWN", ""):
                return match.group(1).strip()
        return _licence_file(info)
    return None


def _licence_file(where: Path) -> str | None:
    """A package that declares no licence (or "SEE LICENSE IN …"): the first line of its
    licence file, marked as such."""
    for path in sorted(where.glob("LICEN[CS]E*")) + sorted(where.glob("licenses/*")):
        with contextlib.suppress(OSError):
            lines = [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
            first = next((ln for ln in lines if ln), "")
            if first:
                return f"licence file: {first[:60]}"
    return None


def catalog(server: Server) -> dict[str, Any]:
    """One server's tools list as ``histor_sign.mcp.fetch`` (the function behind
    ``histor-sign fetch --stdio``) got it, with where it came from."""
    import histor_sign

    side, snapshot = fetch_ours(server)
    if snapshot is None:
        raise RuntimeError(side.error or "no snapshot")
    record = load_installed().get(server.slug, {})
    source = (f"https://www.npmjs.com/package/{server.package}/v/{server.version}"
              if server.registry == "npm"
              else f"https://pypi.org/project/{server.package}/{server.version}/")
    return {
        "server": server.slug, "registry": server.registry, "package": server.package,
        "version": server.version, "source": source, "licence": licence(server),
        "sdk": record.get("sdk"),
        "fetchedWith": f"histor-sign {histor_sign.__version__} (stdio)",
        "protocol": side.protocol,
        "tools": [{k: tool[k] for k in CATALOG_FIELDS if k in tool} for tool in snapshot.tools],
    }


def write_catalogs(servers: list[Server], out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for server in servers:
        if not is_installed(server):
            print(f"{server.slug}: not installed", file=sys.stderr)
            continue
        try:
            data = catalog(server)
        except Exception as exc:  # a server that will not start: recorded, skipped
            failed += 1
            print(f"{server.slug}: FAILED {_first_line(exc)}", file=sys.stderr, flush=True)
            continue
        (out / f"{server.slug}.json").write_text(
            json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
            encoding="utf-8")
        print(f"{server.slug}: {len(data['tools'])} tools ({data['licence']})",
              file=sys.stderr, flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("step", choices=["install", "run", "list", "catalog"])
    ap.add_argument("--only", nargs="*", default=None, help="server slugs")
    ap.add_argument("--budget", type=float, default=3600.0, help="install: seconds in all")
    ap.add_argument("--json", type=Path, default=None, help="run: write the results here")
    ap.add_argument("--markdown", action="store_true", help="run: print a Markdown table")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "data" / "real-servers",
                    help="catalog: write <slug>.json here")
    args = ap.parse_args(argv)
    # Without --only: the compatibility servers, as before; --only may name any pinned one.
    servers = ([s for s in (*SERVERS, *TUNING3, *TUNING4, *TUNING5, *TUNING6,
                                    *TUNING7, *TUNING8, *TUNING9, *TUNING10)
                if s.slug in args.only]
               if args.only is not None else list(SERVERS))
    if args.step == "list":
        for s in servers:
            print(f"{s.slug:<30} {s.registry:<5} {s.package}@{s.version}"
                  f"{'  installed' if is_installed(s) else ''}")
        return 0
    if args.step == "install":
        install_all(servers, args.budget)
        return 0
    if args.step == "catalog":
        return write_catalogs(servers, args.out)
    records = load_installed()
    rows, missing = [], {}
    start = time.monotonic()
    for server in servers:
        if not is_installed(server):
            record = records.get(server.slug) or {}
            missing[f"{server.package}@{server.version}"] = str(
                record.get("error") or "not installed (run the install step)")
            continue
        row = result_json(compare(server))
        rows.append(row)
        print(f"{server.slug}: {'pass' if row['passed'] else 'FAIL'} {row['tools']} tools "
              f"{row['problems'] or ''}", file=sys.stderr, flush=True)
    summary = {"seconds": round(time.monotonic() - start, 1), "results": rows,
               "notInstalled": missing}
    if args.json is not None:
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    if args.markdown:
        print(markdown(rows, missing))
    passed = sum(r["passed"] for r in rows)
    print(f"{passed} passed, {len(rows) - passed} failed, {len(missing)} not installed "
          f"({summary['seconds']} s)", file=sys.stderr)
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
