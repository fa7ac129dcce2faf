"""A second tuning set of collision pairs (issue 24), from the LiveMCPBench servers.

The first two halves (``sample_pairs.py``) were drawn from 65 servers installed here. The
scan's rules were tuned on one half; this set, from *other* servers, lets a rule be measured
on servers it was never tuned on and accepted only if it helps on both tuning sets. It never
imports the scanner.

1. ``catalogs``: split ``tests/data/livemcpbench-tools.json`` (70 servers, tools nested
   inside) into ``benchmarks/data/livemcpbench-servers/<slug>.json``, one catalog per server
   in the shape of ``real-servers/<slug>.json`` (tools with name, description, inputSchema,
   annotations when set; the server's name, web page, category, package, provenance), plus
   an ``index.json``. Servers that are the same server (package, repository or product) as
   a **held-out** server of ``real-servers/index.json`` are left out (``EXCLUDED``, each
   with its reason): the held-out half must stay unseen.
2. ``draw``: the strata of ``sample_pairs.draw`` with its quotas scaled to this set
   (``QUOTA``), domains assigned by hand (``DOMAINS``), seed ``SEED``; pairs that appear in
   ``tests/data/confusable-pairs.json`` (only their names are read) are skipped, since the
   old rules were tuned on them. Writes ``benchmarks/data/unlabeled/pairs-tuning2.json``.

    python benchmarks/tuning2_pairs.py catalogs
    python benchmarks/tuning2_pairs.py draw
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sample_pairs  # benchmarks/ is not a package: imported by path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "data"
SOURCE = REPO / "tests" / "data" / "livemcpbench-tools.json"
CATALOGS = DATA / "livemcpbench-servers"
CONFUSABLE = REPO / "tests" / "data" / "confusable-pairs.json"
HALF = "tuning2"
SEED = 2402
PROVENANCE = ("LiveMCPBench tool list as committed in tests/data/livemcpbench-tools.json "
              "(tools/list of each server, collected by the LiveMCPBench authors); split per "
              "server by benchmarks/tuning2_pairs.py")

#: Pairs drawn, by stratum in drawing order: ``sample_pairs.QUOTA`` scaled by 0.9, rounded
#: down (this set has about 370 tools in 58 servers, against about 800 in 30 for the first
#: tuning half).
QUOTA: dict[str, int] = {k: int(v * 0.9) for k, v in sample_pairs.QUOTA.items()}

#: LiveMCPBench server key -> (slug, domain). Slugs follow the key except where it misleads
#: (``searxng`` is mcp-doc-forge, ``coin-flip`` is the LeetCode server) or would name another
#: server of ``real-servers`` (``excel`` there is a different package).
SERVERS: dict[str, tuple[str, str]] = {
    "bing-cn-mcp": ("bing-cn-mcp", "search"),
    "yahoo-finance": ("yahoo-finance", "finance"),
    "npm-sentinel-mcp": ("npm-sentinel-mcp", "code"),
    "hugeicons": ("hugeicons", "ui"),
    "opgg-mcp": ("opgg-mcp", "games"),
    "pdf-reader-mcp": ("pdf-reader-mcp", "files"),
    "howtocook-mcp": ("howtocook-mcp", "lifestyle"),
    "biomcp": ("biomcp", "reference"),
    "duckduckgo-search": ("duckduckgo-search", "search"),
    "ygocdb": ("ygocdb", "games"),
    "image-extractor": ("image-extractor", "media"),
    "trends-hub": ("trends-hub", "search"),
    "osm-mcp-server": ("osm-mcp-server", "maps"),
    "sequential-thinking": ("sequential-thinking", "utility"),
    "Bazi": ("bazi", "lifestyle"),
    "maven-deps-server": ("maven-deps-server", "code"),
    "met-museum": ("met-museum", "reference"),
    "mcp-github-trending": ("mcp-github-trending", "code"),
    "searxng": ("doc-forge", "files"),
    "mcp-server-chart": ("mcp-server-chart", "office"),
    "wuwa-mcp": ("wuwa-mcp", "games"),
    "okppt": ("okppt", "office"),
    "time": ("time", "utility"),
    "kospi-kosdaq": ("kospi-kosdaq", "finance"),
    "mermaid-validator": ("mermaid-validator", "code"),
    "investor": ("investor", "finance"),
    "coin-flip": ("leetcode", "code"),
    "youtube-transcript": ("youtube-transcript", "media"),
    "datagov": ("datagov", "reference"),
    "memory": ("memory", "notes"),
    "ppt": ("ppt", "office"),
    "Ant Design Components": ("antd-components", "ui"),
    "Context7": ("context7", "code"),
    "text-editor": ("text-editor", "files"),
    "mcp-crypto-price": ("mcp-crypto-price", "finance"),
    "weather": ("weather", "reference"),
    "taskmanager": ("taskmanager", "notes"),
    "sitemap": ("sitemap", "search"),
    "git": ("git", "code"),
    "painter": ("painter", "media"),
    "magicuidesign_mcp": ("magicuidesign-mcp", "ui"),
    "random-number": ("random-number", "utility"),
    "mindmap": ("mindmap", "office"),
    "web3-research-mcp": ("web3-research-mcp", "finance"),
    "basic-memory": ("basic-memory", "notes"),
    "docker-mcp": ("docker-mcp", "code"),
    "12306-mcp": ("12306-mcp", "maps"),
    "shadcn-ui-server": ("shadcn-ui-server", "ui"),
    "puppeteer": ("puppeteer", "browser"),
    "MetaTagGenie": ("metataggenie", "media"),
    "npx_fetch": ("npx-fetch", "search"),
    "exchange-rate-mcp": ("exchange-rate-mcp", "finance"),
    "chess": ("chess", "games"),
    "whois": ("whois", "reference"),
    "excel": ("negokaz-excel", "office"),
    "mcp-deepwiki": ("mcp-deepwiki", "code"),
    "music-analysis": ("music-analysis", "media"),
    "Asset_Price_MCP": ("asset-price-mcp", "finance"),
}

#: LiveMCPBench servers left out: the same server as a held-out server of real-servers
#: (key -> (held-out slug, reason)).
EXCLUDED: dict[str, tuple[str, str]] = {
    "airbnb": ("airbnb", "same package, @openbnb/mcp-server-airbnb"),
    "hackernews": ("hackernews", "same product (a Hacker News reader); the package differs "
                   "(@devabdultech/hn-mcp-server vs mcp-hn); left out to keep the held-out "
                   "half's words unseen"),
    "playwright": ("ea-playwright", "same package, @executeautomation/playwright-mcp-server"),
    "word-document-server": ("word", "same package, office-word-mcp-server"),
    "wikipedia": ("wikipedia", "same package, wikipedia-mcp (Rudra-ravi/wikipedia-mcp)"),
    "arxiv-mcp-server": ("arxiv", "same package, arxiv-mcp-server (blazickjp)"),
    "mcp-simple-arxiv": ("arxiv", "same product (arXiv search and papers); the package "
                         "differs (mcp-simple-arxiv); left out like the other arXiv server"),
    "fetch": ("mcp-server-fetch", "same package, mcp-server-fetch"),
    "calculator": ("mcp-server-calculator", "same package, mcp-server-calculator"),
    "filesystem": ("server-filesystem", "same package, @modelcontextprotocol/server-filesystem"),
    "desktop-commander": ("desktop-commander", "same package, @wonderwhy-er/desktop-commander"),
    "yfmcp": ("yfmcp", "same package, yfmcp"),
}


def package_of(entry: dict[str, Any]) -> tuple[str, str]:
    """``(registry, package)`` read from the server's launch command in LiveMCPBench's
    config (``npx PKG``, ``uvx PKG``, ``uvx --from PKG CMD``, ``uv run --with PKG CMD``)."""
    launch = next(iter(entry["config"]["mcpServers"].values()))
    command, args = launch.get("command", ""), [str(a) for a in launch.get("args", [])]
    registry = "npm" if command == "npx" else "pypi"
    if "--from" in args:
        package = args[args.index("--from") + 1]
    elif command == "uv" and "--with" in args:
        package = args[args.index("--with") + 1]
    else:
        rest, i = [], 0
        while i < len(args):
            if args[i] == "--with":
                i += 2
                continue
            if not args[i].startswith("-") and args[i] not in ("tool", "run"):
                rest.append(args[i])
            i += 1
        package = rest[0] if rest else ""
    if package.startswith(("github:", "git+")):
        return "git", package
    if package == "supergateway":  # a bridge to a hosted server: the URL is the server
        return "remote", args[-1]
    package = re.sub(r"==.*", "", package)
    if "@" in package[1:]:
        package = package[0] + package[1:].split("@", 1)[0]
    return registry, package


def write_catalogs(out: Path = CATALOGS) -> dict[str, dict[str, Any]]:
    """Write one catalog per kept server and ``index.json``; return ``{slug: catalog}``."""
    entries = json.loads(SOURCE.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for entry in entries:
        (key, inner), = entry["tools"].items()
        if key in EXCLUDED:
            heldout, reason = EXCLUDED[key]
            rows.append({"livemcpbenchKey": key, "name": entry["name"], "web": entry["web"],
                         "excluded": f"held-out server {heldout!r}: {reason}"})
            continue
        slug, domain = SERVERS[key]
        registry, package = package_of(entry)
        tools = []
        for t in inner["tools"]:
            tool = {"name": t["name"], "description": t.get("description") or "",
                    "inputSchema": t.get("inputSchema") or {"type": "object"}}
            if t.get("annotations"):
                tool["annotations"] = t["annotations"]
            tools.append(tool)
        catalog = {"server": slug, "name": entry["name"], "web": entry["web"],
                   "category": entry["category"], "domain": domain,
                   "registry": registry, "package": package,
                   "version": inner.get("version"), "livemcpbenchKey": key,
                   "provenance": PROVENANCE, "tools": tools}
        (out / f"{slug}.json").write_text(json.dumps(catalog, indent=1, ensure_ascii=False)
                                          + "\n", encoding="utf-8")
        written[slug] = catalog
        rows.append({"server": slug, "livemcpbenchKey": key, "name": entry["name"],
                     "web": entry["web"], "category": entry["category"], "domain": domain,
                     "registry": registry, "package": package, "tools": len(tools)})
    note = ("Per-server catalogs of the LiveMCPBench tool list (tests/data/livemcpbench-"
            "tools.json), the second tuning set's servers; servers that are held-out servers "
            "of real-servers/index.json are listed with the reason and have no catalog.")
    (out / "index.json").write_text(json.dumps({"note": note, "servers": rows}, indent=1,
                                               ensure_ascii=False) + "\n", encoding="utf-8")
    return written


#: The samples ``confusable-pairs.json`` held when this set was drawn: pairs added to it
#: later (``issue24-flagged-2``) do not change what was drawn.
SKIPPED_SAMPLES = frozenset({"ref-all", "corpus-old", "corpus-shared", "bfcl-old",
                             "bfcl-shared", "bfcl-picked", "new-flagged", "issue24-flagged"})


def confusable_names() -> frozenset[tuple[str, str]]:
    """The LiveMCPBench pairs of ``confusable-pairs.json`` (as it was when this set was
    drawn: :data:`SKIPPED_SAMPLES`) as ``(a, b)`` tool ids of this set (only the ``a``/``b``
    names are read, never the labels)."""
    slug = {key: s for key, (s, _) in SERVERS.items()}
    out = set()
    for pair in json.loads(CONFUSABLE.read_text(encoding="utf-8"))["pairs"]:
        if pair["sample"] not in SKIPPED_SAMPLES:
            continue
        ids = []
        for name in (pair["a"], pair["b"]):
            kind, rest = name.split(":", 1)
            server, _, tool = rest.partition("/")
            if kind == "corpus" and server in slug:
                ids.append(sample_pairs.tool_id(slug[server], tool))
        if len(ids) == 2:
            out.add((min(ids), max(ids)))
    return frozenset(out)


def draw_pairs(catalogs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    servers = sorted(catalogs)
    domains = {slug: c["domain"] for slug, c in catalogs.items()}
    pairs = sample_pairs.draw(catalogs, servers, SEED, QUOTA, domains=domains,
                              skip=confusable_names())
    return {"half": HALF, "seed": SEED, "catalogs": "benchmarks/data/livemcpbench-servers",
            "servers": servers, "plannedNotDrawnFrom": [], "pairs": pairs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("step", choices=["catalogs", "draw"])
    ap.add_argument("--out", type=Path, default=DATA / "unlabeled")
    args = ap.parse_args(argv)
    if args.step == "catalogs":
        written = write_catalogs()
        print(f"{len(written)} catalogs, {sum(len(c['tools']) for c in written.values())} "
              f"tools, {len(EXCLUDED)} servers excluded")
        return 0
    doc = draw_pairs(sample_pairs.load_catalogs(CATALOGS))
    print(sample_pairs.write_drawn(doc, args.out, HALF))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
