"""Draw the labeled collision pairs of issue 24 from real catalogs, without the scanner.

The catalogs are ``benchmarks/data/real-servers/<slug>.json`` (written by
``python benchmarks/compat_servers.py catalog``). This script never imports the scanner: the
pairs are drawn by a fixed procedure, so that the labels made on them (by reading the tools,
rubric in docs/scan-rubric.md) measure the scan instead of echoing it.

1. **Split the servers once** (seed ``SEED``): the planned servers (``DOMAINS``: every
   server of benchmarks/compat_servers.py but the excluded release, with a domain assigned by
   hand from what it is for) are grouped by domain; within each domain, in a seeded shuffle,
   they are dealt alternately to ``tuning`` and ``heldout`` (the half that gets the first one
   alternates from domain to domain so the halves stay near equal). The split is made on the
   plan, not on what installed, so a server whose install fails or comes late moves no other
   server. Every pair of a half is drawn from that half's catalogued servers only: no server
   appears in both halves, within- or cross-server. The servers a half was first drawn from
   are recorded in its pair file and reused by any later run, so a server catalogued after
   its half was drawn stays out of it (its catalog is kept).
2. **Draw pairs in each half**, in this order of strata, a pair drawn twice kept in the first
   stratum that drew it (counts per half in ``QUOTA``):

   - ``random-within``: a server uniformly (of those with two tools or more), two of its
     tools uniformly;
   - ``random-cross``: two servers uniformly, a tool of each uniformly;
   - ``token-within`` / ``token-cross``: a server uniformly, a tool of it uniformly, then
     uniformly one of the tools (same server / another server of the half) whose name shares
     a token with it (names split at ``_ - . space`` and camelCase, lower-cased; no stop
     list: ``get`` counts);
   - ``nn-within`` / ``nn-cross``: a server uniformly, a tool of it uniformly, then uniformly
     one of its ``NEIGHBOURS`` nearest tools (same server / another server) by cosine
     similarity of TF-IDF vectors of its name tokens plus description words (written below,
     smoothed idf over the half's tools, l2-normalised; ties broken by id).

   - ``nn-cross-domain``: as ``nn-cross``, among the tools of the other servers *of the same
     domain* (added, with the next one, after the first six strata were labeled: they gave
     few positives; drawn last, so the earlier pairs are unchanged);
   - ``nn-effect``: as the ``nn`` strata, on any server of the half, among the nearest tools
     whose effect class differs: "reads" when ``readOnlyHint`` is true, or, without that
     annotation, when the name's first token is in ``READ_VERBS``; "acts" otherwise.

   - ``same-object`` (added after both halves were labeled, because contradicting pairs were
     rare; drawn last): as the ``token`` strata, on any server of the half, among the tools
     whose name names the same object with another verb: the name's tokens after the verb
     (its first token, once a prefix that most of the server's tool names share is dropped)
     are the same and non-empty, the verbs differ.

   Picking the server first keeps the 100-tool servers from crowding out the small ones.
3. Write ``benchmarks/data/pairs-<half>.json`` skeletons (no labels) to ``--out``; labels
   are added by ``benchmarks/label_pairs.py`` from the labeler's sheets.

    python benchmarks/sample_pairs.py [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
CATALOGS = DATA / "real-servers"
SEED = 24
NEIGHBOURS = 3
#: Pairs drawn per half, by stratum, in drawing order.
QUOTA: dict[str, int] = {
    "random-within": 50, "random-cross": 65,
    "token-within": 50, "token-cross": 85,
    "nn-within": 105, "nn-cross": 155,
    # Added after the first six were drawn and the tuning half labeled (drawn last, so the
    # first 510 pairs of each half are unchanged): the first six gave few positives.
    "nn-cross-domain": 60, "nn-effect": 40,
    # Added after both halves were labeled (drawn last, earlier pairs unchanged): pairs whose
    # effects contradict were rare (7 and 2), too few to measure a contradiction rule on.
    "same-object": 60,
}
#: Name verbs read as "only reads" for the ``nn-effect`` stratum (a sampling aid, not a
#: label: the labeler reads every pair).
READ_VERBS = frozenset("""get list read search fetch show describe find view retrieve query
export count check analyze inspect lookup browse""".split())
#: An older release of a server that is also in the catalogs: its tools are the newer
#: release's, so pairs with it would be copies, not collisions a model faces.
EXCLUDED = {"mcp-server-time-old"}

#: What each server is for (assigned by hand, from its package and tools).
DOMAINS: dict[str, str] = {
    # databases and data stores
    "server-postgres": "database", "executeautomation-database": "database",
    "mcp-server-sqlite": "database", "motherduck": "database", "mongodb": "database",
    "clickhouse": "database", "duckdb": "database",
    "airtable": "database", "elasticsearch": "database", "chroma-mcp": "database",
    # git hosts and version control
    "server-github": "git", "server-gitlab": "git", "zereight-gitlab": "git",
    "mcp-server-git": "git", "cyanheads-git": "git",
    # issue trackers, tasks, incidents
    "tacticlaunch-mcp-linear": "tracker", "mcp-atlassian": "tracker", "asana": "tracker",
    "todoist": "tracker", "pagerduty": "tracker", "sentry": "tracker",
    # cloud, k8s, CI, monitoring
    "mcp-server-kubernetes": "cloud", "aws-eks": "cloud", "circleci": "cloud",
    "datadog": "cloud",
    # browsers and automation
    "playwright": "browser", "ea-playwright": "browser", "chrome-devtools": "browser",
    "desktop-commander": "files",
    # web search and fetch
    "server-brave-search": "search", "brave-search-v2": "search", "tavily": "search",
    "exa": "search", "firecrawl": "search", "duckduckgo": "search", "searxng": "search",
    "kazuph-mcp-fetch": "search", "mcp-server-fetch": "search", "reddit": "search",
    "hackernews": "search",
    # docs, notes, knowledge, research
    "notion": "notes", "context7": "notes", "wikipedia": "notes", "arxiv": "notes",
    "obsidian": "notes", "zotero": "notes", "server-memory": "notes",
    # files and documents
    "server-filesystem": "files", "pdf-reader": "files", "markitdown": "files",
    # office, charts, design
    "excel": "office", "word": "office", "ppt": "office", "antv-chart": "office",
    "figma": "office", "ms-365": "office",
    # finance
    "yfmcp": "finance", "yahoo-finance": "finance",
    # maps and travel
    "server-google-maps": "maps", "mapbox": "maps", "amap": "maps",
    "google-map-cablate": "maps", "airbnb": "maps",
    # chat
    "server-slack": "chat", "line-bot": "chat",
    # utilities and reference servers
    "server-everything": "utility", "server-sequential-thinking": "utility",
    "mcp-server-time": "utility", "mcp-server-calculator": "utility",
}

_STOP = frozenset("""a an the of to in on for and or is are be by with from as at this that it
its if into can will not no your you use used using when which""".split())


def name_tokens(name: str) -> list[str]:
    """``get_pullRequest-files`` -> ``["get", "pull", "request", "files"]``."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[\s_\-./:]+", spaced.lower()) if t]


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in _STOP]


def load_catalogs(where: Path = CATALOGS) -> dict[str, dict[str, Any]]:
    """``{slug: catalog}`` of every catalog file, the excluded ones left out."""
    out = {}
    for path in sorted(where.glob("*.json")):
        if path.name == "index.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if data["server"] not in EXCLUDED and data["tools"]:
            out[data["server"]] = data
    return out


def split_servers(slugs: list[str], seed: int = SEED) -> dict[str, str]:
    """``{slug: "tuning" | "heldout"}``: dealt alternately within each domain."""
    rng = random.Random(seed)
    by_domain: dict[str, list[str]] = {}
    for slug in sorted(slugs):
        by_domain.setdefault(DOMAINS.get(slug, "other"), []).append(slug)
    half: dict[str, str] = {}
    first = rng.randrange(2)
    for domain in sorted(by_domain):
        members = by_domain[domain]
        rng.shuffle(members)
        for i, slug in enumerate(members):
            half[slug] = ("tuning", "heldout")[(i + first) % 2]
        first = (first + len(members)) % 2
    return half


class Tfidf:
    """TF-IDF vectors of name tokens plus description words, cosine by dot product."""

    def __init__(self, docs: dict[str, list[str]]) -> None:
        df: Counter[str] = Counter()
        for toks in docs.values():
            df.update(set(toks))
        n = len(docs)
        idf = {t: math.log((1 + n) / (1 + c)) + 1 for t, c in df.items()}
        self.vectors: dict[str, dict[str, float]] = {}
        for key, toks in docs.items():
            tf = Counter(toks)
            vec = {t: (1 + math.log(c)) * idf[t] for t, c in tf.items()}
            norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
            self.vectors[key] = {t: v / norm for t, v in vec.items()}

    def cosine(self, a: str, b: str) -> float:
        va, vb = self.vectors[a], self.vectors[b]
        if len(va) > len(vb):
            va, vb = vb, va
        return sum(v * vb.get(t, 0.0) for t, v in va.items())


def tool_id(slug: str, name: str) -> str:
    return f"{slug}:{name}"


def draw(catalogs: dict[str, dict[str, Any]], servers: list[str], seed: int,
         quota: dict[str, int] = QUOTA, *, domains: dict[str, str] | None = None,
         skip: frozenset[tuple[str, str]] = frozenset()) -> list[dict[str, Any]]:
    """The pairs of one half, by the procedure in this module's docstring.

    ``domains`` maps the servers to their domains (default ``DOMAINS``); a pair in ``skip``
    (``(a, b)`` with ``a < b``) is passed over like a pair drawn twice, so another is drawn
    in its place. With the defaults the draw is the one the two halves were made with."""
    domain_of = DOMAINS if domains is None else domains
    rng = random.Random(seed)
    tools = {s: sorted({t["name"] for t in catalogs[s]["tools"]}) for s in servers}
    docs = {}
    for slug in sorted(servers):
        for t in catalogs[slug]["tools"]:
            docs[tool_id(slug, t["name"])] = (name_tokens(t["name"])
                                              + words(t.get("description") or ""))
    tfidf = Tfidf(docs)
    all_ids = [tool_id(s, n) for s in servers for n in tools[s]]
    server_of = {i: i.split(":", 1)[0] for i in all_ids}
    multi = [s for s in servers if len(tools[s]) >= 2]

    @functools.cache
    def neighbours(tid: str, cross: bool) -> list[str]:
        pool = [o for o in all_ids if o != tid and (server_of[o] != server_of[tid]) == cross]
        pool.sort(key=lambda o: (-tfidf.cosine(tid, o), o))
        return pool[:NEIGHBOURS]

    reads = {}
    for slug in servers:
        for t in catalogs[slug]["tools"]:
            hint = (t.get("annotations") or {}).get("readOnlyHint")
            first = (name_tokens(t["name"]) or [""])[0]
            reads[tool_id(slug, t["name"])] = (hint if isinstance(hint, bool)
                                               else first in READ_VERBS)

    verb_object: dict[str, tuple[str, tuple[str, ...]]] = {}
    for slug in servers:
        firsts = Counter((name_tokens(n) or [""])[0] for n in tools[slug])
        prefix = {t for t, c in firsts.items() if len(tools[slug]) >= 4 and c > len(tools[slug]) / 2}
        for n in tools[slug]:
            toks = name_tokens(n)
            if toks and toks[0] in prefix:
                toks = toks[1:]
            if len(toks) >= 2:
                verb_object[tool_id(slug, n)] = (toks[0], tuple(toks[1:]))

    @functools.cache
    def same_object(tid: str) -> list[str]:
        if tid not in verb_object:
            return []
        verb, obj = verb_object[tid]
        return [o for o in all_ids if o in verb_object and verb_object[o][1] == obj
                and verb_object[o][0] != verb]

    def nearest(tid: str, pool: list[str]) -> list[str]:
        pool.sort(key=lambda o: (-tfidf.cosine(tid, o), o))
        return pool[:NEIGHBOURS]

    @functools.cache
    def same_domain(tid: str) -> list[str]:
        mine = server_of[tid]
        return nearest(tid, [o for o in all_ids if server_of[o] != mine
                             and domain_of.get(server_of[o]) == domain_of.get(mine)])

    @functools.cache
    def other_effect(tid: str) -> list[str]:
        return nearest(tid, [o for o in all_ids if o != tid and reads[o] != reads[tid]])

    @functools.cache
    def sharing(tid: str, cross: bool) -> list[str]:
        mine = set(name_tokens(tid.split(":", 1)[1]))
        return [o for o in all_ids if o != tid and (server_of[o] != server_of[tid]) == cross
                and mine & set(name_tokens(o.split(":", 1)[1]))]

    seen: set[tuple[str, str]] = set()
    pairs: list[dict[str, Any]] = []
    for stratum, count in quota.items():
        got, tries = 0, 0
        while got < count and tries < count * 200:
            tries += 1
            if stratum == "random-within":
                slug = rng.choice(multi)
                a, b = (tool_id(slug, n) for n in rng.sample(tools[slug], 2))
            elif stratum == "random-cross":
                s1, s2 = rng.sample(servers, 2)
                a, b = tool_id(s1, rng.choice(tools[s1])), tool_id(s2, rng.choice(tools[s2]))
            else:
                slug = rng.choice(servers)
                a = tool_id(slug, rng.choice(tools[slug]))
                cross = stratum.endswith("cross")
                if stratum == "same-object":
                    pool = same_object(a)
                elif stratum == "nn-cross-domain":
                    pool = same_domain(a)
                elif stratum == "nn-effect":
                    pool = other_effect(a)
                elif stratum.startswith("token"):
                    pool = sharing(a, cross)
                else:
                    pool = neighbours(a, cross)
                if not pool:
                    continue
                b = rng.choice(pool)
            key = (min(a, b), max(a, b))
            if key in seen or key in skip:
                continue
            seen.add(key)
            got += 1
            pairs.append({"a": key[0], "b": key[1], "stratum": stratum,
                          "scope": "within" if server_of[a] == server_of[b] else "cross",
                          "cosine": round(tfidf.cosine(a, b), 4)})
    return pairs


#: Licences read from the project's repository where the package declares none.
LICENCE_NOTES: dict[str, str] = {
    "server-everything": "MIT (modelcontextprotocol/servers; package ships no licence file)",
    "server-filesystem": "MIT (modelcontextprotocol/servers; package ships no licence file)",
    "server-memory": "MIT (modelcontextprotocol/servers; package ships no licence file)",
    "server-sequential-thinking":
        "MIT (modelcontextprotocol/servers; package ships no licence file)",
    "mcp-server-sqlite": "MIT (modelcontextprotocol/servers-archived; wheel declares none)",
    "hackernews": "none declared in the package (mcp-hn 0.1.0); kept as descriptive metadata",
}


def write_index(catalogs: dict[str, dict[str, Any]], half: dict[str, str], drawn: Path) -> None:
    """``real-servers/index.json``: per server its package, version, source, licence,
    domain, tool count, half, and whether that half's pairs were drawn from it (a server
    catalogued after its half was drawn is kept as a catalog only)."""
    drawn_from: set[str] = set()
    for name in ("tuning", "heldout"):
        with contextlib.suppress(OSError, ValueError):
            drawn_from.update(json.loads((drawn / f"pairs-{name}.json").read_text())["servers"])
    rows = []
    for slug in sorted(catalogs):
        c = catalogs[slug]
        rows.append({"server": slug, "domain": DOMAINS.get(slug, "other"), "half": half[slug],
                     "drawnFrom": slug in drawn_from,
                     "registry": c["registry"], "package": c["package"],
                     "version": c["version"], "source": c["source"],
                     "licence": c.get("licence"), "licenceNote": LICENCE_NOTES.get(slug),
                     "tools": len(c["tools"])})
    for slug in sorted(EXCLUDED):
        if (CATALOGS / f"{slug}.json").exists():
            rows.append({"server": slug, "excluded": "an older release of a server in the "
                         "catalogs; kept as a catalog, not drawn from"})
    note = ("Tool metadata (names, descriptions, input schemas, annotations) as each server "
            "lists it over MCP, fetched with histor-sign, kept as descriptive metadata with "
            "its source and licence for reproducible evaluation of the collision scan.")
    (CATALOGS / "index.json").write_text(
        json.dumps({"note": note, "servers": rows}, indent=1) + "\n")


def write_drawn(doc: dict[str, Any], out: Path, name: str) -> str:
    """Write a set's drawn pairs to ``out/pairs-<name>.json``; the line the scripts print."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"pairs-{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    return (f"{name}: {len(doc['servers'])} servers, {len(doc['pairs'])} pairs "
            f"{dict(Counter(p['stratum'] for p in doc['pairs']))}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=DATA / "unlabeled")
    ap.add_argument("--half", choices=["tuning", "heldout"], nargs="*",
                    default=["tuning", "heldout"], help="draw only these halves")
    args = ap.parse_args(argv)
    catalogs = load_catalogs()
    half = split_servers(list(DOMAINS))
    unplanned = sorted(set(catalogs) - set(DOMAINS))
    if unplanned:
        raise SystemExit(f"catalogs of servers with no domain: {unplanned}")
    args.out.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(("tuning", "heldout")):
        if name not in args.half:
            continue
        servers = sorted(s for s in catalogs if half[s] == name)
        previous = args.out / f"pairs-{name}.json"
        if previous.exists():
            # A half once drawn keeps its servers: one catalogued later stays out of it.
            servers = json.loads(previous.read_text())["servers"]
        missing = sorted(s for s in DOMAINS if half[s] == name and s not in servers)
        pairs = draw(catalogs, servers, SEED * 10 + i)
        doc = {"half": name, "seed": SEED, "servers": servers,
               "plannedNotDrawnFrom": missing, "pairs": pairs}
        (args.out / f"pairs-{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{name}: {len(servers)} servers ({len(missing)} planned, not drawn from), "
              f"{len(pairs)} pairs "
              f"{dict(Counter(p['stratum'] for p in pairs))}")
    write_index(catalogs, half, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
