"""Issue 27 through ``release``: a stdio server that prints a banner, advertises prompts and
resources and answers their list methods with ``-32601`` (tests/mcp/raw_stdio_server.py
``banner-not-served``) is released against the local Sigstore instance (stopped before any
client acts). The release signs every tool, the snapshot and the attestation's surface name
the gap, and ``check --server`` against the attested baseline matches the same server and
reports one that now serves the lists (empty) as a change."""

from __future__ import annotations

import base64
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_harness import REPO, run_cli

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow
RAW = REPO / "tests" / "mcp" / "raw_stdio_server.py"
SERVER = "io.github.example/raw"
REPOSITORY = "example/raw"
IDENTITY = "https://github.com/example/raw/.github/workflows/release.yml@refs/tags/v1"
NOT_SERVED = {"prompts": {"code": -32601}, "resourceTemplates": {"code": -32601}}


def _command(tmp: Path, scenario: str) -> str:
    return shlex.join([sys.executable, str(RAW), scenario, str(tmp / f"{scenario}.pids")])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("release-not-served")
    revisions = tmp / "revisions"
    with LocalSigstore(directory=tmp / "sigstore") as inst:
        run = run_cli("release", "--server", SERVER, "--server-version", "1.0.0",
                      "--stdio", _command(tmp, "banner-not-served"),
                      "--server-is-trusted-code", "--out-dir", str(tmp / "out"),
                      "--revisions", str(revisions), "--identity-token",
                      inst.mint_token(IDENTITY), "--trust-config", str(inst.trust_config_path))
        trust = inst.trust_config_path
    assert run.code == 0, run.stdout + run.stderr
    return {"tmp": tmp, "run": run, "out": tmp / "out", "trust": trust,
            "chain": revisions / "io.github.example" / "raw"}


def test_release_signs_every_tool_and_records_the_gap(world: dict[str, Any]) -> None:
    run, out = world["run"], world["out"]
    warnings = [line for line in run.stderr.splitlines() if "warning: " in line]
    assert any("skipped 4 non-JSON lines" in w for w in warnings)
    assert any("recorded as not served (capture.notServed)" in w for w in warnings)
    assert "\x1b" not in run.stderr
    snapshot = json.loads((out / "tools.snapshot.json").read_text())
    assert [t["name"] for t in snapshot["tools"]] == ["search", "fetch", "write"]
    assert snapshot["capture"]["notServed"] == NOT_SERVED
    statement = json.loads((out / "statement.json").read_text())
    assert sorted(statement["toolDigests"]) == ["fetch", "search", "write"]
    bundle = json.loads((out / "intoto.sigstore.json").read_text())
    predicate = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))["predicate"]
    assert predicate["surface"] == {"instructions": None, "prompts": {},
                                    "resourceTemplates": {}, "notServed": NOT_SERVED}
    assert predicate["capture"]["notServed"] == NOT_SERVED


def test_verify_checks_the_attested_gap(world: dict[str, Any]) -> None:
    out = world["out"]
    run = run_cli("verify", "--attestation", str(out / "intoto.sigstore.json"),
                  "--tools", str(out / "tools.snapshot.json"), "--trust-config",
                  str(world["trust"]), "--repository", REPOSITORY, "--format", "json")
    assert run.code == 0, run.stdout + run.stderr
    surface = {c["axis"]: c for c in json.loads(run.stdout)["checks"]}["surface"]
    assert surface["status"] == "pass"
    assert "not served: prompts/list error -32601" in surface["detail"]
    # A snapshot in which prompts/list is served (empty) fails the surface axis, named.
    doc = json.loads((out / "tools.snapshot.json").read_text())
    del doc["capture"]["notServed"]["prompts"]
    doc["prompts"] = []
    served = world["tmp"] / "served.snapshot.json"
    served.write_text(json.dumps(doc))
    failed = run_cli("verify", "--attestation", str(out / "intoto.sigstore.json"),
                     "--tools", str(served), "--trust-config", str(world["trust"]),
                     "--repository", REPOSITORY, "--format", "json")
    assert failed.code == 1, failed.stderr
    axis = {c["axis"]: c for c in json.loads(failed.stdout)["checks"]}["surface"]
    assert axis["status"] == "fail"
    assert "prompts/list (not served: error -32601 → served)" in axis["detail"]


def _pinned(world: dict[str, Any]) -> list[str]:
    pins = world["tmp"] / "pins.json"
    common = ["--pins", str(pins), "--trust-config", str(world["trust"])]
    if not pins.exists():
        added = run_cli("trust", "add", SERVER, "--repository", REPOSITORY, "--envelope",
                        str(world["chain"]), *common)
        assert added.code == 0, added.stderr
    return ["check", "--server", SERVER, *common]


def test_check_against_the_attested_gap(world: dict[str, Any]) -> None:
    check = _pinned(world)
    same = run_cli(*check, "--stdio", _command(world["tmp"], "banner-not-served"), "-f", "json")
    assert same.code == 0, same.stderr
    doc = json.loads(same.stdout)
    assert (doc["status"], doc["surfaceStatus"], doc["surfaceBaseline"]) == (
        "match", "match", "attested")
    assert doc["surfaceNotServed"] == NOT_SERVED
    text = run_cli(*check, "--stdio", _command(world["tmp"], "not-served"))
    assert text.code == 0, text.stderr
    assert ("surface  not served now: prompts/list (error -32601), resources/templates/list "
            "(error -32601)") in text.stdout
    assert "surface baseline: attested" in text.stdout

    now_served = run_cli(*check, "--stdio", _command(world["tmp"], "served-empty"), "-f", "json")
    assert now_served.code == 1, now_served.stderr
    doc = json.loads(now_served.stdout)
    assert (doc["status"], doc["risk"], doc["surfaceBaseline"]) == ("different", "high",
                                                                    "attested")
    assert [(c["part"], c["name"], c["change"]) for c in doc["surface"]] == [
        ("list", "prompts/list", "added"), ("list", "resources/templates/list", "added")]
