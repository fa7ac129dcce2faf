"""Scale bounds of a scan: the per-tool partner bound and the overall time budget.

Both leave pairs undecided, so both must say so (TC005, outcome ``unknown``) — never drop a
pair silently, never hang.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from cli_harness import assert_clean_error, run_cli

from histor_sign.catalog import tools_from_dicts
from histor_sign.collisions import ScanOptions, scan_tools
from histor_sign.collisions._lexical import bounded_candidate_pairs, candidate_pairs, profiles_of

CORPUS = Path(__file__).resolve().parent.parent / "data" / "livemcpbench-tools.json"
KINDS: list[dict[str, Any]] = [{"type": "string"}, {"type": "integer"}, {"type": "boolean"},
                               {"type": "string", "pattern": "^[a-z]+$"}]


def _group(n: int, seed: int = 5) -> list[dict[str, Any]]:
    """``n`` tools with one action and one object (``get_user``) in ``n // 10`` servers'
    worth of descriptions: one large same-name group."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        props = {p: rng.choice(KINDS) for p in rng.sample(["id", "q", "n", "path"], 2)}
        out.append({"name": f"get_user_{i}",
                    "description": f"Get a user record from region {i % 10} by its id.",
                    "inputSchema": {"type": "object", "properties": props,
                                    "required": [p for p in props if rng.random() < 0.5]}})
    return out


def _profiles(items: list[dict[str, Any]]) -> list[Any]:
    return profiles_of([("s", t["name"], t["description"]) for t in items])


@pytest.mark.parametrize(("size", "per_tool"), [(40, 4), (40, 8), (101, 8), (9, 8), (30, 1)])
def test_partner_bound_keeps_or_counts_every_pair_of_a_group(size: int, per_tool: int) -> None:
    profiles = _profiles(_group(size))
    exact = candidate_pairs(profiles, 0.4)
    assert len(exact) == size * (size - 1) // 2  # one group: every pair is confusable
    bounded = bounded_candidate_pairs(profiles, 0.4, per_tool)
    assert set(bounded.pairs) <= set(exact)
    partners = dict.fromkeys(range(size), 0)
    for i, j in bounded.pairs:
        partners[i] += 1
        partners[j] += 1
    for i, count in partners.items():
        assert count <= max(per_tool, 1) or size <= per_tool + 1
        cut, first = bounded.cut.get(i, (0, -1))
        assert count + cut == size - 1  # kept + reported = all partners of the tool
        if cut:
            assert first != i and (min(i, first), max(i, first)) not in bounded.pairs
    assert (not bounded.cut) == (size <= per_tool + 1)


def test_bounded_selection_equals_exact_on_the_real_corpus() -> None:
    data = json.loads(CORPUS.read_text())
    tools = [(server["name"] if "name" in server else str(n), t["name"],
              t.get("description") or "")
             for n, server in enumerate(data) for entry in server["tools"].values()
             for t in entry["tools"]]
    profiles = profiles_of(tools)
    bounded = bounded_candidate_pairs(profiles, 0.4)
    assert bounded.pairs == candidate_pairs(profiles, 0.4)
    assert not bounded.cut


def test_scan_reports_one_tc005_per_tool_beyond_the_partner_bound() -> None:
    tools = tools_from_dicts(_group(60))
    result = scan_tools(tools, ScanOptions(max_partners=6, workers=1))
    bound = [f for f in result.findings
             if f.properties.get("reason") == "per-tool partner bound (6) reached"]
    assert len(bound) == result.stats["partnerBoundTools"] == 60
    assert all(f.rule == "TC005" and f.outcome == "unknown" and f.incomplete for f in bound)
    assert sum(f.properties["partnersNotAnalysed"] for f in bound) \
        == result.stats["partnersNotAnalysed"]
    # kept pairs counted from both ends plus the reported remainder cover every partner
    assert 2 * result.stats["candidatePairs"] + result.stats["partnersNotAnalysed"] == 60 * 59
    unbounded = scan_tools(tools, ScanOptions(max_partners=None, workers=1))
    assert unbounded.stats["candidatePairs"] == 60 * 59 // 2
    assert unbounded.stats["partnerBoundTools"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_exhausted_budget_leaves_every_remaining_pair_unknown(workers: int) -> None:
    tools = tools_from_dicts(_group(80))
    options = ScanOptions(max_partners=None, max_candidates=10_000, workers=workers)
    full = scan_tools(tools, options)
    assert full.stats["unknown"] == 0
    options.budget_seconds = 1e-9
    cut = scan_tools(tools, options)
    assert cut.stats["candidatePairs"] == full.stats["candidatePairs"]
    assert cut.stats["unknown"] == cut.stats["candidatePairs"]
    assert cut.stats["overlap"] == cut.stats["disjoint"] == 0
    reasons = {f.properties.get("reason") for f in cut.findings if f.rule == "TC005"}
    assert reasons == {"scan budget (1e-09 s) ran out"}


def test_budget_flag_reports_unknowns_and_bad_values_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "group.json"
    path.write_text(json.dumps({"tools": _group(30)}))
    run = run_cli("scan", "--format", "json", "--budget-seconds", "0.000001",
                  "--max-partners", "100", str(path))
    assert run.code == 0  # unknown is a note: it reaches the default gate only with --strict
    doc = json.loads(run.stdout)
    assert doc["summary"]["unknown"] == doc["summary"]["candidatePairs"] == 30 * 29 // 2
    assert all("scan budget" in f["properties"]["reason"] for f in doc["findings"]
               if f["rule"] == "TC005")
    assert run_cli("scan", "--strict", "--budget-seconds", "0.000001", str(path)).code == 1
    for flag, value in [("--budget-seconds", "0"), ("--budget-seconds", "-1"),
                        ("--budget-seconds", "inf"), ("--budget-seconds", "nan"),
                        ("--budget-seconds", "soon"), ("--max-partners", "0")]:
        assert_clean_error(run_cli("scan", flag, value, str(path)))
