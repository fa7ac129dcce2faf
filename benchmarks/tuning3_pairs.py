"""A third tuning set of collision pairs (issue 24), from new real servers installed from npm.

The first two sets gave few *certain* positives of the rubric's typical kinds: the same action
on the same object kind on two interchangeable backends (two web search engines, two SQL
databases, two git hosts or trackers, two browser drivers, two chat tools, two vector stores,
two drives, two geocoders) and contradictions. This set is drawn from servers of exactly
those domains, several per domain, none of them a server of ``real-servers/`` or
``livemcpbench-servers/`` (by slug, package or product). It never imports the scanner.

1. The servers are pinned in ``benchmarks/compat_servers.py`` (``TUNING3``), installed with
   dummy credentials and catalogued with histor-sign's fetch::

       python benchmarks/compat_servers.py install --only SLUG ...
       python benchmarks/compat_servers.py catalog --only SLUG ... --out benchmarks/data/tuning3-servers

2. ``index``: writes ``benchmarks/data/tuning3-servers/index.json`` (per catalogued server its
   domain, package, version, source, licence, tool count; per planned server that has no
   catalog, why).
3. ``draw``: the strata of ``sample_pairs.draw`` (same order, server picked first) on these
   catalogs with seed ``SEED``, the domains of ``DOMAINS`` and the quotas of ``QUOTA``
   (weighted toward the strata where positives are). Writes
   ``benchmarks/data/unlabeled/pairs-tuning3.json``.

    python benchmarks/tuning3_pairs.py index
    python benchmarks/tuning3_pairs.py draw
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compat_servers  # benchmarks/ is not a package: imported by path
import sample_pairs

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
CATALOGS = DATA / "tuning3-servers"
HALF = "tuning3"
SEED = 2403

#: Pairs drawn, by stratum in drawing order (about 500): the random and token strata kept
#: small, the strata that found positives in the first sets (nearest neighbours across
#: servers and within a domain, across effect classes, same object) weighted up.
QUOTA: dict[str, int] = {
    "random-within": 25, "random-cross": 30,
    "token-within": 25, "token-cross": 40,
    "nn-within": 55, "nn-cross": 110,
    "nn-cross-domain": 100, "nn-effect": 55,
    "same-object": 60,
}

#: What each planned server is for (assigned by hand, from its package and tools).
DOMAINS: dict[str, str] = {
    "perplexity": "search", "jina": "search", "serper": "search",
    "google-search-adenot": "search",
    "mysql-benborla": "database", "dbhub": "database", "supabase": "database",
    "neon": "database", "mysql-f4ww4z": "database", "postgres-server": "database",
    "mssql": "database", "postgrest": "database",
    "bitbucket": "git", "azure-devops": "git", "shortcut": "tracker", "plane": "tracker",
    "browserbase": "browser", "agent-infra-browser": "browser", "selenium": "browser",
    "hyperbrowser": "browser",
    "discord": "chat", "teams": "chat",
    "pinecone": "vector", "upstash": "vector", "mem0": "vector",
    "google-drive-piotr": "drive", "gdrive-isaacphi": "drive",
    "baidu-map": "maps",
}

#: Planned servers with no catalog, and why (filled from what happened when they were
#: installed and fetched here; a server that does not list its tools within about a
#: minute is skipped).
SKIPPED: dict[str, str] = {
    "neon": "install failed: npm reported a network error after 152 s (not looked into)",
    "upstash": "exits before answering initialize: it calls api.upstash.com at start "
               "(ENOTFOUND here)",
    "mysql-benborla": "connects to MySQL at start and exits within about 3 s when it cannot "
                      "(it lists its one tool, mysql_query, only if asked sooner)",
    "dbhub": "its SQLite driver is node:sqlite (Node 22.5 or later; Node 20 here); every "
             "other DSN connects at start",
    "mssql": "install failed: npm 404 on a dependency",
}


#: Servers installed and catalogued here, then left out of the set (catalog removed): the
#: same product as a held-out server of ``real-servers/index.json``, so its words would be
#: the held-out half's (the rule of the second tuning set).
EXCLUDED: dict[str, str] = {
    "mcp-sqlite": "mcp-sqlite 1.0.9 (npm): a SQLite server, the same product as the held-out "
                  "server mcp-server-sqlite (the package differs); left out to keep the "
                  "held-out half's words unseen",
}


def planned() -> dict[str, compat_servers.Server]:
    return {s.slug: s for s in compat_servers.TUNING3}


def write_index(out: Path = CATALOGS) -> dict[str, dict[str, Any]]:
    """Write ``index.json`` for the catalogs in ``out``; return ``{slug: catalog}``."""
    catalogs = sample_pairs.load_catalogs(out)
    rows: list[dict[str, Any]] = []
    for slug, server in sorted(planned().items()):
        row: dict[str, Any] = {"server": slug, "domain": DOMAINS[slug],
                               "registry": server.registry, "package": server.package,
                               "version": server.version}
        if slug in catalogs:
            c = catalogs[slug]
            row.update(source=c["source"], licence=c.get("licence"), tools=len(c["tools"]))
        else:
            row["skipped"] = SKIPPED.get(slug, "no catalog")
        rows.append(row)
    note = ("Tool metadata (names, descriptions, input schemas, annotations) as each server "
            "lists it over MCP, fetched with histor-sign from packages installed from npm "
            "with dummy credentials: the third tuning set's servers (issue 24).")
    (out / "index.json").write_text(json.dumps({"note": note, "servers": rows}, indent=1,
                                               ensure_ascii=False) + "\n", encoding="utf-8")
    return catalogs


def draw_pairs(catalogs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    servers = sorted(catalogs)
    pairs = sample_pairs.draw(catalogs, servers, SEED, QUOTA, domains=DOMAINS)
    return {"half": HALF, "seed": SEED, "catalogs": "benchmarks/data/tuning3-servers",
            "servers": servers, "plannedNotDrawnFrom": sorted(set(DOMAINS) - set(servers)),
            "pairs": pairs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("step", choices=["index", "draw"])
    ap.add_argument("--out", type=Path, default=DATA / "unlabeled")
    args = ap.parse_args(argv)
    if args.step == "index":
        catalogs = write_index()
        print(f"{len(catalogs)} catalogs, {sum(len(c['tools']) for c in catalogs.values())} "
              f"tools, {len(planned()) - len(catalogs)} planned servers without one")
        return 0
    doc = draw_pairs(sample_pairs.load_catalogs(CATALOGS))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"pairs-{HALF}.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{HALF}: {len(doc['servers'])} servers, {len(doc['pairs'])} pairs "
          f"{dict(Counter(p['stratum'] for p in doc['pairs']))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
