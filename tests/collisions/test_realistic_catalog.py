"""The realistic registry catalog (testkit/realistic_catalog.py): many servers, most of
them forks and releases of real ones, real descriptions — and its 10,000-tool scan."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
import realistic_catalog
from cli_harness import run_cli

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.models import parse_catalog


def generator() -> ModuleType:
    return realistic_catalog  # testkit: the generator tests and benchmarks share


def test_the_generator_publishes_forks_and_releases_of_real_servers() -> None:
    gen = generator()
    real = {name: tools for name, tools in gen.real_servers()}
    servers = gen.realistic_catalog(3_000)
    assert sum(len(t) for _, t in servers) == 3_000
    assert servers == gen.realistic_catalog(3_000)  # deterministic
    kinds = Counter(name.rsplit("-", 1)[1].rstrip("0123456789") for name, _ in servers)
    assert kinds["fork"] > kinds["rel"] > 0 and kinds["orig"] >= len(real) // 2
    for name, tools in servers:
        origin = real[name.rsplit("-", 1)[0]]
        if "-fork" in name:  # a fork is its original, tool for tool
            assert tools == origin[:len(tools)]
    # real description lengths, not six-word sentences
    lengths = [len((t.get("description") or "").split()) for _, ts in servers for t in ts]
    assert max(lengths) > 100 and sorted(lengths)[len(lengths) // 2] >= 8


@pytest.mark.slow
def test_a_10k_realistic_catalog_scans_with_each_schema_pair_decided_once(
        tmp_path: Path) -> None:
    gen = generator()
    counts = gen.write(10_000, tmp_path / "mirror")
    assert counts["tools"] == 10_000 and counts["servers"] > 500  # the real servers (benchmarks/data) are larger
    files = sorted(str(p) for p in (tmp_path / "mirror").glob("*.json"))
    catalogs = [parse_catalog(json.loads(Path(f).read_text()), f) for f in files]
    result = scan_catalogs(catalogs, ScanOptions(budget_seconds=None, max_candidates=1_000_000))
    stats = result.stats
    assert stats["tools"] == 10_000
    assert stats["overlap"] > 1_000
    # forks repeat schemas: far fewer schema decisions than analysed pairs
    assert stats["schemaPairsDecided"] * 4 < stats["analysedPairs"]
    # the CLI takes the mirror as it is (one file per server), and a catalog file limit
    # the operator sets
    run = run_cli("scan", "--format", "json", "--fail-on", "never", "--max-bytes",
                  str(max(Path(f).stat().st_size for f in files)), *files[:200])
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["summary"]["tools"] == sum(
        len(c.tools) for c in catalogs[:200])
