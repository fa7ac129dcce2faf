"""A realistic registry catalog, generated from real MCP catalogs (issue 24).

The older generated catalog (``bench_scan.generated_catalog``) has one source, 20 verbs x 50
nouns and six-word descriptions: most of its pairs are cheap and disjoint. A registry looks
different: many servers, most of them **forks or releases** of a few originals (the same tools
with identical or near-identical schemas), and real description lengths. This generator
publishes servers until it has ``n`` tools, each server one of:

* **fork** (``FORK``): every tool of a real server as it is, under a new server name;
* **release** (``RELEASE``): a real server with a few tools changed the way releases change
  them — a sentence added to a description, an optional property added to a schema, a tool
  renamed with a prefix, a tool dropped;
* **original** (the rest): a real server as it is (the first time it is published).

The real catalogs are the repository's own: the LiveMCPBench corpus and the official
reference servers (``tests/data``), and the real servers of issue 24
(``benchmarks/data/real-servers``) when present. Deterministic for a seed.

    python testkit/realistic_catalog.py 100000 OUT_DIR [--seed 24]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = REPO / "tests" / "data"
REAL_SERVERS = REPO / "benchmarks" / "data" / "real-servers"

#: Shares of published servers (the rest are originals re-published as they are).
FORK = 0.55
RELEASE = 0.35
#: In a release, the share of tools changed.
CHANGED = 0.15
SENTENCES = ("Results are paginated.", "Requires an API key.", "Deprecated fields are ignored.",
             "Returns JSON.", "Use with care on large inputs.")


def real_servers() -> list[tuple[str, list[dict[str, Any]]]]:
    """(server name, tools) of every real catalog in the repository, in a fixed order."""
    out: list[tuple[str, list[dict[str, Any]]]] = []
    corpus = json.loads((TEST_DATA / "livemcpbench-tools.json").read_text(encoding="utf-8"))
    for server in corpus:
        for key, entry in sorted(server["tools"].items()):
            if entry["tools"]:
                out.append((f"lmb.{key}", entry["tools"]))
    for path in sorted((TEST_DATA / "reference-servers").glob("*.json")):
        out.append((f"ref.{path.stem}",
                    json.loads(path.read_text(encoding="utf-8"))["tools"]))
    for path in sorted(REAL_SERVERS.glob("*.json")) if REAL_SERVERS.is_dir() else []:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and doc.get("tools"):
            out.append((f"real.{doc.get('server') or path.stem}", doc["tools"]))
    return out


def _release(tools: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """A new release: most tools as they were, a few changed the way releases change them."""
    out = []
    for tool in tools:
        if rng.random() >= CHANGED:
            out.append(tool)
            continue
        change = rng.randrange(4)
        if change == 3:  # dropped
            continue
        new = copy.deepcopy(tool)
        if change == 0:
            new["description"] = f"{new.get('description') or ''} {rng.choice(SENTENCES)}".strip()
        elif change == 1 and isinstance(new.get("inputSchema"), dict):
            props = new["inputSchema"].setdefault("properties", {})
            if isinstance(props, dict):
                props[f"opt_{rng.randrange(100)}"] = {"type": rng.choice(["string", "integer",
                                                                          "boolean"])}
        else:
            new["name"] = f"v2_{new['name']}"
        out.append(new)
    return out


def realistic_catalog(n: int, seed: int = 24) -> list[tuple[str, list[dict[str, Any]]]]:
    """Published servers, (server name, tools), until there are ``n`` tools (the last server
    cut to fit). Forks share their originals' tool objects: the catalog is written to JSON."""
    rng = random.Random(seed)
    real = real_servers()
    published: list[tuple[str, list[dict[str, Any]]]] = []
    total, order = 0, 0
    while total < n:
        name, tools = real[order % len(real)] if order < len(real) else rng.choice(real)
        roll = rng.random()
        if order < len(real):
            kind, out = "orig", tools
        elif roll < FORK:
            kind, out = "fork", tools
        elif roll < FORK + RELEASE:
            kind, out = "rel", _release(tools, rng)
        else:
            kind, out = "orig", tools
        out = out[: n - total]
        published.append((f"{name}-{kind}{order}", out))
        total += len(out)
        order += 1
    return published


def write(n: int, directory: Path, seed: int = 24) -> dict[str, int]:
    """Write the catalog as one MCP ``tools/list`` file per published server (a registry
    mirror: ``histor-sign scan DIR/*.json`` scans them as one set, each its own source);
    the counts say what it holds."""
    directory.mkdir(parents=True, exist_ok=True)
    servers = realistic_catalog(n, seed)
    size = 0
    for server, tools in servers:
        path = directory / f"{server}.json"
        path.write_text(json.dumps({"tools": tools}), encoding="utf-8")
        size += path.stat().st_size
    return {"tools": sum(len(t) for _, t in servers), "servers": len(servers), "bytes": size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tools", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=24)
    args = parser.parse_args(argv)
    print(json.dumps(write(args.tools, args.out, args.seed)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
