"""``scan``: analyse several tool catalogs as one set and report TC001–TC005, TC010 and TC011."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from histor_sign._limits import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_SCAN_TOOLS,
    DEFAULT_MAX_WITNESS_BYTES,
    DEFAULT_SCAN_BUDGET_SECONDS,
    DEFAULT_SCAN_THRESHOLD,
)
from histor_sign._schema.algebra import Bounds
from histor_sign._schema.witness import Decision
from histor_sign.catalog import ToolsLike, as_tools, find_duplicates, load_catalogs
from histor_sign.collisions import _rules as rules
from histor_sign.collisions._gc import collector_paused
from histor_sign.collisions._lexical import (
    MAX_PARTNERS_PER_TOOL,
    Candidates,
    Profile,
    Similarity,
    bounded_candidate_pairs,
    normalized_name,
    profiles_of,
)
from histor_sign.collisions._neighbours import STATISTICAL_BASES, statistical_pairs
from histor_sign.collisions._parallel import decide_pairs
from histor_sign.collisions._partition import (
    Mapper,
    partitioned_candidates,
    partitioned_profiles,
)
from histor_sign.collisions._shadowing import deprecated_aliases, shadowing_findings
from histor_sign.collisions._structure import template_siblings
from histor_sign.models import Catalog, Finding, Tool
from histor_sign.report._findings import sorted_findings

DEFAULT_THRESHOLD = DEFAULT_SCAN_THRESHOLD


@dataclass
class ScanOptions:
    """Knobs of a scan (CLI flags map 1:1)."""

    threshold: float = DEFAULT_THRESHOLD
    max_tools: int = DEFAULT_MAX_SCAN_TOOLS
    max_bytes: int = DEFAULT_MAX_FILE_BYTES  # per catalog file read by :func:`scan_paths`
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    bounds: Bounds = field(default_factory=Bounds)
    max_witness_bytes: int = DEFAULT_MAX_WITNESS_BYTES
    workers: int = 0  # processes deciding pairs: 0 = every available core, 1 = in-process
    #: candidate partners per tool in a large same-name group (None: every pair, quadratic)
    max_partners: int | None = MAX_PARTNERS_PER_TOOL
    #: wall-clock seconds for the whole scan (None: unbounded); candidate pairs left when it
    #: runs out are reported as not analysed (TC005, outcome ``unknown``), never waited for
    budget_seconds: float | None = DEFAULT_SCAN_BUDGET_SECONDS
    #: decide each distinct pair of input schemas once (forks repeat them); False decides
    #: every tool pair on its own — the same report, the reference the cache is tested on
    schema_pair_cache: bool = True


@dataclass
class ScanResult:
    """Findings (sorted, deterministic) plus counts for the summary."""

    findings: list[Finding]
    stats: dict[str, Any]


def scan(tool_lists: Iterable[ToolsLike], options: ScanOptions | None = None) -> ScanResult:
    """Scan several tool lists (catalogs, snapshots or tool lists, any provider) as one set
    for name collisions, confusable tools with overlapping argument schemas (rules TC001–TC005)
    and description shadowing (TC010)."""
    return scan_tools([t for tools in tool_lists for t in as_tools(tools)], options)


def scan_tools(tools: Sequence[Tool], options: ScanOptions | None = None, *,
               mapper: Mapper | None = None) -> ScanResult:
    """Scan an already imported list of tools (in catalog order) as one set.

    ``mapper`` runs the scan's partitions (profiles by source, candidates by action block,
    decisions by schema-pair digest; :mod:`histor_sign.collisions._partition`) — e.g.
    ``dask_mapper(client)`` on a Dask cluster; the report is the same byte for byte as
    without one. The scan budget is then measured on the wall clock the machines share.

    The cyclic garbage collector is paused for the scan (its objects are acyclic; see
    :mod:`histor_sign.collisions._gc`) and restored afterwards.
    """
    with collector_paused():
        return _scan(tools, options or ScanOptions(), mapper)


_Pairs = dict[tuple[int, int], tuple[str, Similarity | None]]
_Ordered = list[tuple[tuple[int, int], tuple[str, Similarity | None]]]


def _scan(tools: Sequence[Tool], opts: ScanOptions, mapper: Mapper | None = None) -> ScanResult:
    """The scan in steps: name collisions, the candidate selection, the ordered pairs,
    their decisions and findings, then shadowing."""
    started = time.monotonic()
    findings: list[Finding] = []
    pairs = _name_collisions(tools, findings)
    profiles, selected = _selection(tools, opts, mapper)
    for i, (count, partner) in selected.cut.items():
        findings.append(rules.partners_not_analysed(tools[i], tools[partner], count,
                                                    opts.max_partners or 0))
    ordered = _ordered_pairs(tools, pairs, selected.pairs, profiles)
    # ``ordered`` holds every pair now: the selection's dicts (a hundred MB at registry
    # scale) are released before the decisions and the findings, which reuse their memory
    cut = (len(selected.cut), sum(count for count, _ in selected.cut.values()),
           selected.probes_cut)
    del pairs, selected
    left = (None if opts.budget_seconds is None
            else max(0.0, opts.budget_seconds - (time.monotonic() - started)))
    decided = decide_pairs(tools, [pair for pair, _ in ordered[:opts.max_candidates]],
                           opts.bounds, max_witness_bytes=opts.max_witness_bytes,
                           workers=opts.workers, budget_seconds=left,
                           dedupe=opts.schema_pair_cache, mapper=mapper)
    counts = _pair_findings(tools, ordered, decided.decisions, profiles, opts, findings)
    total = len(tools)
    stats = {
        "tools": total,
        "allPairs": total * (total - 1) // 2,
        "candidatePairs": len(ordered),
        "analysedPairs": min(len(ordered), opts.max_candidates),
        "schemaPairsDecided": decided.schema_pairs,
        "overlap": counts["overlap"],
        "disjoint": counts["disjoint"],
        "unknown": counts["unknown"],
        "shadowing": 0,
        "partnerBoundTools": cut[0],
        "partnersNotAnalysed": cut[1],
        "descriptionProbesCut": cut[2],
    }
    # The findings hold what they report; the profiles and the ordered pairs are released
    # before shadowing and the sort, where the scan peaks.
    del profiles, ordered, decided

    shadowing = shadowing_findings(tools)
    findings.extend(shadowing)
    stats["shadowing"] = len(shadowing)
    return ScanResult(findings=sorted_findings(findings), stats=stats)


def scan_catalogs(catalogs: Sequence[Catalog], options: ScanOptions | None = None) -> ScanResult:
    """Scan several catalogs (any providers) as one set — the library entry point."""
    tools = [t for c in catalogs for t in c.tools]
    return scan_tools(tools, options)


def scan_paths(paths: Sequence[str | Path], options: ScanOptions | None = None) -> ScanResult:
    """Load catalog files (``-`` = stdin once) and scan them as one set."""
    opts = options or ScanOptions()
    return scan_catalogs(load_catalogs(paths, max_tools=opts.max_tools,
                                       max_bytes=opts.max_bytes), opts)


def _name_collisions(tools: Sequence[Tool], findings: list[Finding]) -> _Pairs:
    """Step 1 of :func:`_scan`: duplicate names (TC001) and names equal once normalized
    (TC002), as findings and as pairs."""
    pairs: _Pairs = {}
    position = {id(t): i for i, t in enumerate(tools)}
    for first, other in find_duplicates(tools):
        findings.append(rules.duplicate_name(first, other))
        pairs[(position[id(first)], position[id(other)])] = ("duplicate name", None)
    groups: dict[str, list[int]] = {}
    for i, tool in enumerate(tools):
        groups.setdefault(normalized_name(tool.name), []).append(i)
    for norm, members in groups.items():
        head = tools[members[0]]
        seen = {head.name}
        for i in members[1:]:
            if tools[i].name in seen:
                continue
            seen.add(tools[i].name)
            findings.append(rules.normalized_collision(head, tools[i], norm))
            pairs.setdefault((members[0], i), ("normalized name", None))
    return pairs


def _selection(tools: Sequence[Tool], opts: ScanOptions,
               mapper: Mapper | None) -> tuple[list[Profile], Candidates]:
    """Step 2 of :func:`_scan`: every tool's profile and the confusable candidate pairs (in
    partitions when a mapper spreads the work)."""
    triples = [(t.source, t.name, t.description) for t in tools]
    if mapper is None:
        profiles = profiles_of(triples)
        return profiles, bounded_candidate_pairs(profiles, opts.threshold, opts.max_partners)
    profiles = partitioned_profiles(triples, mapper)
    return profiles, partitioned_candidates(profiles, opts.threshold, opts.max_partners,
                                            mapper)


def _pair_priority(item: tuple[tuple[int, int], tuple[str, Similarity | None]]
                   ) -> tuple[Any, ...]:
    """Name collisions and structural pairs first, then the most similar, then the pairs
    only the catalogs' statistics name (the weakest evidence)."""
    (i, j), (basis, sim) = item
    rank = 2 if basis.startswith(STATISTICAL_BASES) else int(basis == "lexical")
    return (rank, -(sim.score if sim else 1.0), i, j)


def _ordered_pairs(tools: Sequence[Tool], names: _Pairs,
                   lexical: dict[tuple[int, int], Similarity],
                   profiles: Sequence[Profile]) -> _Ordered:
    """Step 3 of :func:`_scan`: every pair to decide, in :func:`_pair_priority` order. A
    name collision is reported as TC001/TC002; its schemas are compared only when the two
    are also confusable as a model reads them."""
    pairs = {k: v for k, v in names.items() if k in lexical}
    for pair, similar in lexical.items():
        basis, _ = pairs.get(pair, ("lexical", None))
        pairs[pair] = (basis, similar)
    # a tool its own description retires in favour of a sibling is that sibling's alias
    for pair in deprecated_aliases(tools):
        pairs.setdefault(pair, ("deprecated alias", None))
    # one template written per backend: the catalog's structure, not its words, says so
    for i, j, basis in template_siblings(tools):
        pairs.setdefault((i, j), (basis, None))
    # the catalogs' own word statistics: the same operation in two servers that cover the
    # same ground, and near-duplicate siblings of one source
    for i, j, basis in statistical_pairs(tools, profiles):
        pairs.setdefault((i, j), (basis, None))
    return sorted(pairs.items(), key=_pair_priority)


def _pair_findings(tools: Sequence[Tool], ordered: _Ordered,
                   decisions: Sequence[Decision | None],
                   profiles: Sequence[Profile], opts: ScanOptions,
                   findings: list[Finding]) -> dict[str, int]:
    """Step 4 of :func:`_scan`: each ordered pair's findings (not analysed past the bound or
    the time budget), and the count of each outcome."""
    counts = {"overlap": 0, "disjoint": 0, "unknown": 0}
    for n, ((i, j), (basis, sim)) in enumerate(ordered):
        a, b = tools[i], tools[j]
        if n >= opts.max_candidates:
            findings.append(rules.not_analysed(a, b, sim, basis, opts.max_candidates))
            counts["unknown"] += 1
            continue
        decision = decisions[n]
        if decision is None:
            findings.append(rules.not_analysed(a, b, sim, basis, opts.max_candidates,
                                               budget=opts.budget_seconds))
            counts["unknown"] += 1
            continue
        counts[decision.outcome] += 1
        findings.extend(rules.pair_findings(a, b, decision, sim, basis,
                                            (profiles[i], profiles[j])))
    return counts
