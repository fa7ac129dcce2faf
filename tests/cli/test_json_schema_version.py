"""Every JSON document the CLI prints carries ``schemaVersion`` (docs/api.md says what
stays stable under one version)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import REPO, run_cli

from histor_sign._version import JSON_SCHEMA_VERSION

EXAMPLES = REPO / "examples"
CATALOG = str(REPO / "tests" / "data" / "reference-servers" / "filesystem.json")


def _version(text: str) -> object:
    doc = json.loads(text)
    assert isinstance(doc, dict)
    return doc.get("schemaVersion")


def test_reports_and_results_carry_the_schema_version(tmp_path: Path) -> None:
    stmt = tmp_path / "stmt.json"
    assert run_cli("build", CATALOG, "--server", "io.github.acme/fs", "--server-version", "1",
                   "--identity", "https://github.com/acme/fs/.github/workflows/sign.yml@"
                   "refs/heads/main", "-o", str(stmt)).code == 0
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "read_file", "arguments": {"path": "a"}}))
    runs = {
        "scan": run_cli("scan", CATALOG, "-f", "json", "--fail-on", "never"),
        "replay": run_cli("replay", "--catalog", CATALOG, str(call), "-f", "json",
                          "--fail-on", "never"),
        "digest": run_cli("digest", CATALOG, "-f", "json"),
        "check": run_cli("check", CATALOG, "--envelope", str(stmt), "-f", "json"),
        "guard": run_cli("guard", str(call), "--catalog", CATALOG, "-f", "json"),
        "trust list": run_cli("trust", "list", "--pins", str(tmp_path / "pins.json"), "-f",
                              "json"),
    }
    for command, run in runs.items():
        assert run.code in (0, 1), (command, run.stderr)
        assert _version(run.stdout) == JSON_SCHEMA_VERSION, command
