"""Benchmark ``scan``: the 527 real LiveMCPBench tools and a generated 10,000-tool catalog.

Prints wall time, candidate pairs vs all pairs, and decided (overlap + disjoint) vs unknown.
Baseline in the same run: the time to score *all* pairs of the real corpus lexically
(what a quadratic candidate generator would do), against our prefix-filtered selection.

    python benchmarks/bench_scan.py [--tools 10000]
    python benchmarks/bench_scan.py --child --tools 100000 [--baseline /path/to/previous/checkout]
    python benchmarks/bench_scan.py --long [--baseline /path/to/previous/checkout]
    python benchmarks/bench_scan.py --cli --tools 100000 [--baseline /path/to/previous/checkout]
    python benchmarks/bench_scan.py --realistic --tools 100000 [--baseline /path/to/checkout]

``--child``: only the generated scan, in a fresh interpreter, with its peak RSS (workers
included); with ``--baseline`` the same catalog scanned by the checkout given.

``--cli``: what a registry operator runs — ``histor-sign scan FILE --format F -o OUT`` over
the generated catalog written to a file, once per format, each in a fresh process: wall time,
peak RSS of the command or any of its workers, and the report's size.

``--realistic``: the same end to end over a registry mirror made by
``testkit/realistic_catalog.py`` from real catalogs (one file per server, most of them forks
and releases), JSON report; the baseline (if given) scans the same files.

``--long``: 2,000 generated tools with 4,000-word descriptions (about 54 MB), scanned in a
fresh interpreter for its peak RSS, then through the CLI as ``--cli`` does (JSON report); with
``--baseline`` the same catalog is scanned by the checkout given (e.g. a ``git worktree`` of
the previous release) in the same run, killed after ``--baseline-timeout`` seconds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histor_sign._limits import DEFAULT_SCAN_THRESHOLD
from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, scan_tools
from histor_sign.collisions._lexical import bounded_candidate_pairs, profiles_of, similarity

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "livemcpbench-tools.json"

VERBS = ["get", "list", "search", "create", "update", "delete", "send", "run", "read", "write",
         "fetch", "remove", "add", "set", "find", "query", "export", "import", "sync", "archive"]
NOUNS = ["user", "file", "issue", "invoice", "order", "customer", "ticket", "message", "page",
         "project", "repo", "branch", "commit", "event", "calendar", "contact", "document",
         "folder", "image", "report", "task", "note", "comment", "label", "team", "channel",
         "payment", "account", "record", "dataset", "model", "job", "pipeline", "alert", "metric",
         "log", "secret", "key", "domain", "server", "cluster", "node", "volume", "snapshot",
         "backup", "table", "query", "index", "schema", "column"]
QUALIFIERS = ["", "", "", "by_id", "by_name", "details", "history", "status", "batch", "v2",
              "summary", "all", "recent", "public", "private"]
SCOPES = [f"svc{i}" for i in range(60)]
PROP_TYPES: list[dict[str, Any]] = [
    {"type": "string"}, {"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0},
    {"type": "integer", "minimum": 1, "maximum": 100}, {"type": "boolean"},
    {"type": "string", "enum": ["asc", "desc"]}, {"type": "array", "items": {"type": "string"}},
    {"type": "number", "multipleOf": 0.5}, {"type": "string", "format": "date-time"},
    {"type": "string", "pattern": "^[a-z0-9-]+$"},
]
#: Property schemas with the keywords decided beyond ToolClash (not, if/then/else, contains,
#: uniqueItems, prefixItems, patternProperties, propertyNames, dependentRequired/Schemas).
BEYOND_PROP_TYPES: list[dict[str, Any]] = [
    {"type": "string", "not": {"enum": ["", "none"]}},
    {"type": "integer", "not": {"minimum": 100}},
    {"type": "array", "items": {"type": "integer"}, "contains": {"const": 1}},
    {"type": "array", "items": {"type": "string"}, "uniqueItems": True, "minItems": 2},
    {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "minItems": 2},
    {"type": "object", "patternProperties": {"^x-": {"type": "string"}},
     "additionalProperties": False},
    {"type": "object", "propertyNames": {"maxLength": 8}, "minProperties": 1},
]
BEYOND_OBJECT_KEYWORDS: list[dict[str, Any]] = [
    {"if": {"required": ["force"]}, "then": {"required": ["dry_run"]}},
    {"not": {"required": ["sort", "page"]}},
    {"dependentRequired": {"since": ["until"]}},
    {"dependentSchemas": {"owner": {"required": ["name"]}}},
]
PROP_NAMES = ["id", "name", "query", "limit", "page", "path", "owner", "title", "body", "tags",
              "status", "since", "until", "force", "dry_run", "format", "sort", "email", "url"]


def generated_catalog(n: int, seed: int = 1, beyond: bool = False) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    kinds = PROP_TYPES + BEYOND_PROP_TYPES if beyond else PROP_TYPES
    out = []
    for i in range(n):
        verb, noun, qual = rng.choice(VERBS), rng.choice(NOUNS), rng.choice(QUALIFIERS)
        scope = rng.choice(SCOPES)
        name = "_".join(p for p in (scope, verb, noun, qual) if p) + f"_{i}"
        props = {p: rng.choice(kinds) for p in rng.sample(PROP_NAMES, rng.randint(1, 5))}
        required = [p for p in props if rng.random() < 0.5]
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if beyond and rng.random() < 0.5:
            schema.update(rng.choice(BEYOND_OBJECT_KEYWORDS))
        if rng.random() < 0.5:
            schema["additionalProperties"] = False
        tool: dict[str, Any] = {
            "name": name,
            "description": f"{verb.capitalize()} a {noun} {qual.replace('_', ' ')} in {scope}.",
            "inputSchema": schema,
        }
        if rng.random() < 0.3:
            ro = rng.random() < 0.5
            tool["annotations"] = {"readOnlyHint": ro, **({} if ro else {
                "destructiveHint": rng.random() < 0.5})}
        out.append(tool)
    return out


def corpus_tools() -> list[dict[str, Any]]:
    data = json.loads(CORPUS.read_text())
    return [t for server in data for entry in server["tools"].values() for t in entry["tools"]]


def run(label: str, items: list[dict[str, Any]], options: ScanOptions) -> float:
    tools = tools_from_dicts(items, label)
    started = time.perf_counter()
    result = scan_tools(tools, options)
    elapsed = time.perf_counter() - started
    s = result.stats
    decided = s["overlap"] + s["disjoint"]
    print(f"{label}: {s['tools']} tools in {elapsed:.2f} s; candidate pairs "
          f"{s['candidatePairs']} of {s['allPairs']} "
          f"({s['candidatePairs'] / max(1, s['allPairs']):.4%});"
          f" analysed {s['analysedPairs']}; decided {decided} (overlap {s['overlap']}, disjoint "
          f"{s['disjoint']}) vs unknown {s['unknown']}; {len(result.findings)} findings")
    return elapsed


def long_catalog(n: int = 2_000, words: int = 4_000, seed: int = 3) -> list[dict[str, Any]]:
    """Generated tools whose descriptions are ``words`` Zipf-distributed pseudo-words."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zi", "pa", "do", "fe"]
    vocab = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
             for _ in range(30_000)]
    weights = [1 / (rank + 1) for rank in range(len(vocab))]
    items = generated_catalog(n)
    for item in items:
        item["description"] = " ".join(rng.choices(vocab, weights, k=words))
    return items


_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_scan import generated_catalog, long_catalog
from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, scan_tools
n = int(sys.argv[3])
items = long_catalog() if sys.argv[2] == "long" else generated_catalog(n)
items = json.loads(json.dumps(items))  # distinct objects, as read from a file (no shared dicts)
tools = tools_from_dicts(items, sys.argv[2])
del items
started = time.perf_counter()
result = scan_tools(tools, ScanOptions(max_tools=max(n, 20_000), max_candidates=10_000_000))
peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
           resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(json.dumps({"seconds": time.perf_counter() - started, "stats": result.stats,
                  "rss_mb": peak / 1024}))
"""


def run_child(checkout: Path, kind: str, n: int, timeout: float) -> str:
    """Scan a generated catalog in a fresh interpreter of ``checkout``: wall time of the scan
    and the peak RSS of the process or any of its workers (catalog included)."""
    try:
        done = subprocess.run([sys.executable, "-c", _CHILD, str(checkout), kind, str(n)],
                              capture_output=True, text=True, timeout=timeout, check=True,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout)})
    except subprocess.TimeoutExpired:
        return f"not finished after {timeout:.0f} s (killed)"
    r = json.loads(done.stdout)
    st = r["stats"]
    return (f"{r['seconds']:.2f} s, peak RSS {r['rss_mb']:.0f} MB, candidate pairs "
            f"{st['candidatePairs']} (overlap {st['overlap']}, disjoint {st['disjoint']}, "
            f"unknown {st['unknown']}; tools at the partner bound "
            f"{st.get('partnerBoundTools', 'n/a')})")


_TIMED = """
import json, os, subprocess, sys, time
import psutil
started = time.perf_counter()
load = os.getloadavg()[0]
proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
root = psutil.Process(proc.pid)
peak_sum = peak_one = 0
while proc.poll() is None:
    try:
        rss = [p.memory_info().rss for p in (root, *root.children(recursive=True))]
        peak_sum, peak_one = max(peak_sum, sum(rss)), max(peak_one, max(rss))
    except psutil.Error:
        pass
    time.sleep(0.05)
wall = time.perf_counter() - started
usage = os.times()
print(json.dumps({"code": proc.returncode, "wall": wall, "load": load,
                  "cpu": usage.children_user + usage.children_system,
                  "rss_sum_mb": peak_sum / 1e6, "rss_one_mb": peak_one / 1e6}))
"""


def run_cli(checkout: Path, catalog: Path | list[Path], n: int, fmt: str,
            timeout: float) -> str:
    """``histor-sign scan`` of ``checkout`` over ``catalog`` (a file, or a mirror's files) in
    a fresh process: wall time, CPU seconds of the command and its workers, and the peak of
    the resident size *summed over the command and every worker process* (psutil, sampled
    every 50 ms; the largest single process too), with the load average when it started."""
    files = catalog if isinstance(catalog, list) else [catalog]
    out = files[0].parent.with_name(f"report-{checkout.name}.{fmt}")
    command = [sys.executable, "-m", "histor_sign", "scan", *map(str, files), "--max-tools",
               str(n), "--max-candidates", "10000000", "--format", fmt, "-o", str(out),
               "--fail-on", "never"]
    try:
        done = subprocess.run([sys.executable, "-c", _TIMED, *command], capture_output=True,
                              text=True, timeout=timeout, check=True, cwd=checkout,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout)})
    except subprocess.TimeoutExpired:
        return f"not finished after {timeout:.0f} s (killed)"
    r = json.loads(done.stdout)
    size = out.stat().st_size / 1e6 if out.exists() else 0.0
    out.unlink(missing_ok=True)
    return (f"exit {r['code']}, {r['wall']:.1f} s wall, {r['cpu']:.1f} CPU-s, peak RSS "
            f"{r['rss_sum_mb']:.0f} MB summed over processes ({r['rss_one_mb']:.0f} MB the "
            f"largest), {size:.0f} MB report; load average {r['load']:.1f} at start")


def cli_bench(here: Path, n: int, baseline: Path | None, timeout: float) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.json"
        catalog.write_text(json.dumps({"tools": generated_catalog(n)}))
        print(f"histor-sign scan of {n} generated tools ({catalog.stat().st_size / 1e6:.0f} MB), "
              "goal < 60 s, < 2 GB:")
        for fmt in ("human", "json", "sarif"):
            print(f"  {fmt:<6} this checkout: {run_cli(here, catalog, n, fmt, 3600)}", flush=True)
            if baseline:
                print(f"  {fmt:<6} baseline:      {run_cli(baseline, catalog, n, fmt, timeout)}",
                      flush=True)


def realistic_bench(here: Path, n: int, baseline: Path | None, timeout: float) -> None:
    import tempfile

    sys.path.insert(0, str(here / "testkit"))  # the generator tests and benchmarks share
    from realistic_catalog import write

    with tempfile.TemporaryDirectory() as tmp:
        mirror = Path(tmp) / "mirror"
        counts = write(n, mirror)
        files = sorted(mirror.glob("*.json"))
        print(f"histor-sign scan of a realistic {n}-tool mirror ({counts['servers']} server "
              f"files, {counts['bytes'] / 1e6:.0f} MB), goal (100,000) < 60 s, < 2 GB:")
        print(f"  json   this checkout: {run_cli(here, files, n, 'json', 3600)}", flush=True)
        if baseline:
            print(f"  json   baseline:      {run_cli(baseline, files, n, 'json', timeout)}",
                  flush=True)


def long_bench(here: Path, baseline: Path | None, timeout: float) -> None:
    """The long-description catalog: ``scan_tools`` in a fresh interpreter (library), then
    ``histor-sign scan FILE --format json -o OUT`` end to end (file read, report write)."""
    import tempfile

    print(f"long descriptions (2,000 tools x 4,000 words), library: "
          f"{run_child(here, 'long', 2_000, 3600)}")
    if baseline:
        print(f"  baseline {baseline}: {run_child(baseline, 'long', 2_000, timeout)}")
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "long.json"
        catalog.write_text(json.dumps({"tools": long_catalog()}))
        print(f"histor-sign scan of it ({catalog.stat().st_size / 1e6:.0f} MB), goal < 5 s:")
        print(f"  json   this checkout: {run_cli(here, catalog, 2_000, 'json', 3600)}",
              flush=True)
        if baseline:
            print(f"  json   baseline:      {run_cli(baseline, catalog, 2_000, 'json', timeout)}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--cli", action="store_true",
                        help="histor-sign scan end to end over a catalog file, each format")
    parser.add_argument("--realistic", action="store_true",
                        help="histor-sign scan end to end over a realistic registry mirror")
    parser.add_argument("--baseline", type=Path)
    parser.add_argument("--baseline-timeout", type=float, default=120)
    parser.add_argument("--child", action="store_true",
                        help="only the generated scan, in a fresh process, with peak RSS")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    if args.cli:
        cli_bench(here, args.tools, args.baseline, args.baseline_timeout)
        return
    if args.realistic:
        realistic_bench(here, args.tools, args.baseline, args.baseline_timeout)
        return
    if args.long:
        long_bench(here, args.baseline, args.baseline_timeout)
        return
    if args.child:
        print(f"generated-{args.tools} in a fresh process: "
              f"{run_child(here, 'gen', args.tools, 3600)}; goal (100,000) < 60 s, < 2 GB")
        if args.baseline:
            print(f"baseline {args.baseline}: "
                  f"{run_child(args.baseline, 'gen', args.tools, args.baseline_timeout)}")
        return

    real = corpus_tools()
    profiles = profiles_of([("livemcpbench", t["name"], t.get("description") or "")
                            for t in real])
    started = time.perf_counter()
    for a, b in itertools.combinations(profiles, 2):
        similarity(a, b, DEFAULT_SCAN_THRESHOLD)
    quadratic = time.perf_counter() - started
    print(f"baseline: scoring all {len(real) * (len(real) - 1) // 2} pairs of the real corpus "
          f"lexically takes {quadratic:.2f} s")
    t_real = run("livemcpbench", real, ScanOptions())
    print(f"ratio: full real scan / all-pairs lexical baseline = {t_real / quadratic:.2f}")
    n = args.tools
    gen = generated_catalog(n)
    gen_profiles = profiles_of([("gen", t["name"], t["description"]) for t in gen])
    started = time.perf_counter()
    found = bounded_candidate_pairs(gen_profiles, DEFAULT_SCAN_THRESHOLD).pairs
    selection = time.perf_counter() - started
    print(f"candidate selection alone on {n} generated tools: {selection:.2f} s, "
          f"{len(found)} pairs")
    t_gen = run(f"generated-{n}", gen,
                ScanOptions(max_tools=max(n, 20_000), max_candidates=1_000_000))
    projected = quadratic * (n * (n - 1) / 2) / (len(real) * (len(real) - 1) / 2)
    print(f"ratio: generated scan / projected all-pairs lexical baseline ({projected:.0f} s) "
          f"= {t_gen / projected:.3f}; goal < 60 s: {'met' if t_gen < 60 else 'MISSED'}")
    run(f"generated-beyond-{n // 5}", generated_catalog(n // 5, seed=2, beyond=True),
        ScanOptions(max_tools=max(n, 20_000), max_candidates=1_000_000))


if __name__ == "__main__":
    main()
