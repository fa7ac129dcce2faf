"""The scan against the blind labeled pairs of real servers (issue 24): a floor on the
**tuning** half only. The held-out half (benchmarks/data/pairs-heldout.json) is never read by
a test; its figures are reported once, by ``benchmarks/eval_scan.py``, in docs/scan.md."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cli_harness import REPO, load_benchmark

TUNING = REPO / "benchmarks" / "data" / "pairs-tuning.json"
CATALOGS = REPO / "benchmarks" / "data" / "real-servers"
#: the second tuning set (LiveMCPBench servers, none of them a held-out server)
TUNING2 = REPO / "benchmarks" / "data" / "pairs-tuning2.json"
CATALOGS2 = REPO / "benchmarks" / "data" / "livemcpbench-servers"
#: the third tuning set (23 servers installed for it: interchangeable backends)
TUNING3 = REPO / "benchmarks" / "data" / "pairs-tuning3.json"
CATALOGS3 = REPO / "benchmarks" / "data" / "tuning3-servers"
#: the fourth set (23 more servers), read fresh as validation, a tuning set since
TUNING4 = REPO / "benchmarks" / "data" / "pairs-tuning4.json"
CATALOGS4 = REPO / "benchmarks" / "data" / "tuning4-servers"
#: the fifth set (25 more servers), read fresh as validation, a tuning set since
TUNING5 = REPO / "benchmarks" / "data" / "pairs-tuning5.json"
CATALOGS5 = REPO / "benchmarks" / "data" / "tuning5-servers"
#: the sixth set (22 more servers), read fresh as validation, a tuning set since
TUNING6 = REPO / "benchmarks" / "data" / "pairs-tuning6.json"
CATALOGS6 = REPO / "benchmarks" / "data" / "tuning6-servers"
#: the seventh set (17 more servers, issue 38's smaller blind set), a tuning set since
TUNING7 = REPO / "benchmarks" / "data" / "pairs-tuning7.json"
CATALOGS7 = REPO / "benchmarks" / "data" / "tuning7-servers"
#: TC003|TC004|TC011: a confusable pair counts whatever its schemas (issue 38's figure)
WITH_DISJOINT = "TC003|TC004|TC011"


def eval_scan() -> ModuleType:
    return load_benchmark("eval_scan")


needs_tuning = pytest.mark.skipif(
    not TUNING.exists(), reason="the tuning half (benchmarks/data/pairs-tuning.json) lands "
    "with the labeled set of issue 24")


@needs_tuning
@pytest.mark.slow
def test_tuning_half_floor() -> None:
    doc = json.loads(TUNING.read_text())
    assert doc["half"] == "tuning" and doc["format"] == "histor.labeled-pairs/v1"
    figures = eval_scan().evaluate(TUNING, CATALOGS).figures
    print(json.dumps(figures, indent=1))
    # the floor under the figures measured after the generalizing rules of issue 24 (0.91 /
    # 0.53, within 0.89 / 0.44, across 0.92 / 0.58, TC004 (HS201 since issue 38) 4 of 7, no
    # false TC004 error;
    # 0.91 / 0.50 before them); the targets (0.85 at 0.75, TC004 0.6) are not
    # reached: 12 of the 58 positives have disjoint schemas (TC011), so TC003|TC004 recall
    # is at most 0.79 on this half
    both = figures["scores"]["all"]["TC003|TC004"]
    assert both["precision"] >= 0.88
    assert both["recall"] >= 0.52
    # with TC011, after the statistical candidates of issue 38 (0.84 / 0.71; 0.83 / 0.69
    # before them)
    disjoint = figures["scores"]["all"][WITH_DISJOINT]
    assert disjoint["precision"] >= 0.83 and disjoint["recall"] >= 0.70
    within = figures["scores"]["within"]["TC003|TC004"]
    cross = figures["scores"]["cross"]["TC003|TC004"]
    assert within["precision"] >= 0.85 and within["recall"] >= 0.42
    assert cross["precision"] >= 0.88 and cross["recall"] >= 0.55
    # TC004 is ToolClash's (explicit hints that contradict, issue 38); the rubric's
    # contradictions read from the words are HS201 now, so the floor is on either
    assert figures["effects"]["recall"] >= 0.55
    assert figures["gate"]["falseTc004Per100"] <= 1.0
    # 46 of the 58 positives admit one call both schemas accept (the TC003 ceiling, 0.79);
    # of the 25 of those labeled without doubt, the scan found 23
    reach = figures["reachable"]
    assert reach["reachable"] == 46 and reach["certain"] == 25
    assert reach["certainFound"] >= 22


def evaluate_made_set(tmp_path: Path, servers: dict[str, list[dict[str, Any]]],
                      pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The script's figures on catalogs and labels made here (a tuning-half file)."""
    cats = tmp_path / "cats"
    cats.mkdir()
    for slug, tools in servers.items():
        (cats / f"{slug}.json").write_text(json.dumps({"server": slug, "tools": tools}))
    labels = tmp_path / "pairs.json"
    labels.write_text(json.dumps({"format": "histor.labeled-pairs/v1", "half": "tuning",
                                  "servers": sorted(servers), "pairs": pairs}))
    figures: dict[str, Any] = eval_scan().evaluate(labels, cats).figures
    return figures


@pytest.mark.slow
def test_second_tuning_set_floor() -> None:
    """On the second tuning set (58 other servers, 22 positives, 18 of them uncertain) the
    scan flags no labeled distinct pair and fails no server's gate on a false TC004; its
    recall there was 0 when it was read fresh and is low now (0.14, docs/scan.md; the history in
    benchmarks/results/scan-history.md), so only precision and the gate have a floor."""
    doc = json.loads(TUNING2.read_text())
    assert doc["half"] == "tuning2"
    figures = eval_scan().evaluate(TUNING2, CATALOGS2).figures
    both = figures["scores"]["all"]["TC003|TC004"]
    assert both["flagged"] == both["truePositives"]
    assert figures["gate"]["falseTc004Errors"] == 0
    assert figures["tc004"]["falseOnLabeled"] == 0


def set_floor(labels: Path, catalogs: Path, half: str, precision: float,
              recall: float, with_disjoint: tuple[float, float] = (0.0, 0.0)
              ) -> dict[str, Any]:
    """A labeled set's figures, after the floor every set from the third on keeps: its half,
    TC003|TC004 precision and recall (and, given, TC003|TC004|TC011's), and no false TC004
    error in the gate."""
    assert json.loads(labels.read_text())["half"] == half
    figures: dict[str, Any] = eval_scan().evaluate(labels, catalogs).figures
    both = figures["scores"]["all"]["TC003|TC004"]
    assert both["precision"] >= precision and both["recall"] >= recall
    disjoint = figures["scores"]["all"][WITH_DISJOINT]
    assert disjoint["precision"] >= with_disjoint[0] and disjoint["recall"] >= with_disjoint[1]
    assert figures["gate"]["falseTc004Errors"] == 0
    return figures


@pytest.mark.slow
def test_third_tuning_set_floor() -> None:
    """The floor under the third set's figures after the interchangeable-backend rules (1.00 /
    0.53, 23 of its 25 certain reachable positives; read fresh before them: 0.78 / 0.16)."""
    figures = set_floor(TUNING3, CATALOGS3, "tuning3", 0.95, 0.5, (0.88, 0.715))
    assert figures["reachable"]["certainFound"] >= 22


@pytest.mark.slow
def test_fourth_set_floor() -> None:
    """The fourth set (read fresh: 0.85 / 0.24, no false TC004 error; 0.93 / 0.28 after the
    statement and narrower-get rules; with TC011 0.91 / 0.43, 0.92 / 0.50 with the
    statistical candidates): a floor on precision, recall and the gate."""
    set_floor(TUNING4, CATALOGS4, "tuning4", 0.85, 0.26, (0.9, 0.48))


@pytest.mark.slow
def test_fifth_set_floor() -> None:
    """The fifth set (read fresh: 0.73 / 0.26 — its three false flags are within-server
    pairs labeled uncertain; 0.75 / 0.29 with deprecated aliases): a floor on what holds,
    and the gate."""
    figures = set_floor(TUNING5, CATALOGS5, "tuning5", 0.7, 0.28, (0.72, 0.44))
    assert figures["scores"]["cross"]["TC003|TC004"]["precision"] >= 0.95


@pytest.mark.slow
def test_sixth_set_floor() -> None:
    """The sixth set (read fresh: 0.60 / 0.22, no false TC004 error; 0.70 / 0.26 with trash
    vs delete and plural statements): a floor, and the gate."""
    set_floor(TUNING6, CATALOGS6, "tuning6", 0.65, 0.25, (0.6, 0.29))


@pytest.mark.slow
def test_seventh_set_floor() -> None:
    """The seventh set (read fresh: 0.60 / 0.13 with or without TC011; 0.67 / 0.17 with the
    statistical candidates of issue 38): a floor, and the gate."""
    set_floor(TUNING7, CATALOGS7, "tuning7", 0.65, 0.17, (0.65, 0.17))


def test_scores_count_flags_only_on_labeled_pairs(tmp_path: Path) -> None:
    """The script's arithmetic on a two-server set made here: one overlap pair found, one
    contradict pair found as HS201 (delete vs detach, as the words say: no hints state a
    contradiction, so no TC004 and no gate failure), one distinct pair not flagged."""
    schema = {"type": "object", "properties": {"path": {"type": "string"}},
              "required": ["path"]}
    a = [{"name": "read_file", "description": "Read a file from disk", "inputSchema": schema},
         {"name": "delete_tag", "description": "Delete a tag", "inputSchema": schema},
         {"name": "remove_tag_from_file", "description": "Remove a tag from a file",
          "inputSchema": schema}]
    b = [{"name": "read_file", "description": "Read a file from disk", "inputSchema": schema},
         {"name": "get_weather", "description": "Weather for a city", "inputSchema": schema}]
    figures = evaluate_made_set(tmp_path, {"a": a, "b": b}, [
        {"a": "a:read_file", "b": "b:read_file", "label": "overlap", "scope": "cross"},
        {"a": "a:delete_tag", "b": "a:remove_tag_from_file", "label": "contradict",
         "scope": "within"},
        {"a": "a:read_file", "b": "b:get_weather", "label": "distinct", "scope": "cross"}])
    assert figures["scores"]["all"]["TC003|TC004"] == {
        "pairs": 3, "positives": 2, "flagged": 2, "truePositives": 2, "precision": 1.0,
        "recall": 1.0}
    assert figures["scores"]["cross"]["TC003|TC004"]["pairs"] == 2
    assert figures["tc004"] == {"contradict": 1, "found": 0, "recall": 0.0,
                                "falseOnLabeled": 0}
    assert figures["effects"] == {"contradict": 1, "found": 1, "recall": 1.0,
                                  "falseOnLabeled": 0}
    assert figures["gate"]["failed"] == 0 and figures["gate"]["falseTc004Errors"] == 0
    assert figures["reachable"] == {"positives": 2, "reachable": 2, "ceiling": 1.0, "found": 2,
                                    "recall": 1.0, "certain": 2, "certainFound": 2}
    assert figures["scores"]["certain"]["TC003|TC004"]["pairs"] == 3


def test_uncertain_pairs_and_disjoint_schemas_are_reported_apart(tmp_path: Path) -> None:
    """An uncertain positive leaves the "certain" figures; a positive whose schemas admit no
    common call lowers the ceiling (it can only ever be TC011)."""
    path = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
            "additionalProperties": False}
    url = {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"],
           "additionalProperties": False}
    a = [{"name": "read_file", "description": "Read a file", "inputSchema": path}]
    b = [{"name": "read_file", "description": "Read a file", "inputSchema": path},
         {"name": "fetch_page", "description": "Fetch a web page", "inputSchema": url}]
    figures = evaluate_made_set(tmp_path, {"a": a, "b": b}, [
        {"a": "a:read_file", "b": "b:read_file", "label": "overlap", "scope": "cross"},
        {"a": "a:read_file", "b": "b:fetch_page", "label": "overlap", "scope": "cross",
         "uncertain": True}])
    assert figures["reachable"] == {"positives": 2, "reachable": 1, "ceiling": 0.5, "found": 1,
                                    "recall": 1.0, "certain": 1, "certainFound": 1}
    certain = figures["scores"]["certain"]["TC003|TC004"]
    assert (certain["pairs"], certain["positives"], certain["recall"]) == (1, 1, 1.0)
    assert figures["scores"]["all"]["TC003|TC004"]["recall"] == 0.5

