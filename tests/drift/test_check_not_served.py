"""``check`` names a list the server advertises but does not serve (issue 27), and a later
revision that does serve it is a change — even when it serves it empty — never a silent
match. The servers are raw stdio servers (tests/mcp/raw_stdio_server.py): ``not-served``
answers ``prompts/list`` and ``resources/templates/list`` with ``-32601`` after a banner
(``banner-not-served``), ``served-empty`` serves both lists empty; the tools are the same."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from cli_harness import REPO, run_cli

from histor_sign.drift import LIST_PART, ChangeKind, Risk, SurfaceChange, surface_changes
from histor_sign.models import Snapshot, SurfaceDigests
from histor_sign.revision import build_statement

pytestmark = pytest.mark.slow
RAW = REPO / "tests" / "mcp" / "raw_stdio_server.py"
SERVER = "io.github.example/raw"
IDENTITY = "https://github.com/example/raw/.github/workflows/release.yml@refs/tags/v1"


def _command(tmp: Path, scenario: str) -> str:
    return shlex.join([sys.executable, str(RAW), scenario, str(tmp / f"{scenario}.pids")])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A not-served and a served-empty snapshot of the same tools, and the statement of each
    (the tools are the same, so either statement fits either snapshot)."""
    tmp = tmp_path_factory.mktemp("not-served")
    out: dict[str, Path] = {"dir": tmp}
    for scenario in ("banner-not-served", "served-empty"):
        path = tmp / f"{scenario}.snapshot.json"
        run = run_cli("fetch", "--stdio", _command(tmp, scenario), "-o", str(path))
        assert run.code == 0, run.stderr
        out[scenario] = path
    snap = Snapshot.from_json(json.loads(out["banner-not-served"].read_text()))
    statement = build_statement(tools=snap, server=SERVER, server_version="1.0.0",
                                identity=IDENTITY)
    out["statement"] = tmp / "statement.json"
    out["statement"].write_text(json.dumps(statement.to_json()))
    return out


def _check(world: dict[str, Path], signed: str, *served: str, fmt: str = "json") -> Any:
    return run_cli("check", "--envelope", str(world["statement"]),
                   "--signed-tools", str(world[signed]), *served, "-f", fmt)


def test_the_gap_is_named_when_both_sides_have_it(world: dict[str, Path]) -> None:
    live = ["--stdio", _command(world["dir"], "banner-not-served")]
    run = _check(world, "banner-not-served", *live)
    # The surface equals the (unsigned) snapshot's: unverified, never a match.
    assert run.code == 1, run.stderr
    doc = json.loads(run.stdout)
    assert (doc["status"], doc["surfaceStatus"], doc["surface"]) == ("unverified", "match", [])
    assert doc["surfaceNotServed"] == {"prompts": {"code": -32601},
                                       "resourceTemplates": {"code": -32601}}
    text = _check(world, "banner-not-served", *live, fmt="human")
    assert ("surface  not served now: prompts/list (error -32601), resources/templates/list "
            "(error -32601)") in text.stdout
    # The live fetch's warnings reach stderr; the report stays on stdout.
    assert "skipped 4 non-JSON lines" in text.stderr and "notServed" in text.stderr


def test_serving_a_list_later_is_a_change_even_when_empty(world: dict[str, Path]) -> None:
    run = _check(world, "banner-not-served", "--stdio", _command(world["dir"], "served-empty"))
    assert run.code == 1, run.stderr
    doc = json.loads(run.stdout)
    assert doc["status"] == "different" and doc["surfaceStatus"] == "different"
    assert doc["tools"] == [] and doc["risk"] == "high" and doc["surfaceNotServed"] == {}
    assert [(c["part"], c["name"], c["change"], c["signedNotServed"], c["currentNotServed"],
             c["risk"]) for c in doc["surface"]] == [
        ("list", "prompts/list", "added", {"code": -32601}, None, "high"),
        ("list", "resources/templates/list", "added", {"code": -32601}, None, "high"),
    ]
    text = _check(world, "banner-not-served", str(world["served-empty"]), fmt="human")
    assert text.code == 1
    assert ("surface  added    prompts/list (not served: error -32601 → served)  "
            "[risk: high]") in text.stdout


def test_a_list_no_longer_served_is_a_low_risk_change(world: dict[str, Path]) -> None:
    run = _check(world, "served-empty", str(world["banner-not-served"]))
    assert run.code == 1, run.stderr
    doc = json.loads(run.stdout)
    assert [(c["name"], c["change"], c["risk"]) for c in doc["surface"]] == [
        ("prompts/list", "removed", "low"), ("resources/templates/list", "removed", "low")]
    gated = _check(world, "served-empty", str(world["banner-not-served"]), "--fail-on", "medium")
    assert gated.code == 0, gated.stderr


def test_another_error_code_is_a_low_risk_change() -> None:
    def digests(code: int) -> SurfaceDigests:
        return SurfaceDigests(None, {}, {}, MappingProxyType({"prompts": code}))

    (change,) = surface_changes(digests(-32601), digests(-32603))
    assert change == SurfaceChange(LIST_PART, "prompts/list", ChangeKind.CHANGED, None, None,
                                   signed_code=-32601, current_code=-32603)
    assert change.risk is Risk.LOW
    assert surface_changes(digests(-32601), digests(-32601)) == ()
