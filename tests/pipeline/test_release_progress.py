"""``release --stdio`` says what it fetched (``--quiet`` leaves it out) and lists only the
findings at ``--min-severity`` or above, while scan.sarif keeps every finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import run_cli
from release_fixtures import IDENTITY, release_args, server_command

from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow


def test_release_stdio_summary_line_quiet_and_min_severity(
    local_sigstore: LocalSigstore, tmp_path: Path
) -> None:
    def release(out: Path, *extra: str) -> tuple[int, str, str]:
        run = run_cli(*release_args(out, local_sigstore.trust_config_path, "--stdio",
                                    server_command("--collision"), "--server-is-trusted-code",
                                    "--fail-on", "never", "--identity-token",
                                    local_sigstore.mint_token(IDENTITY), *extra))
        return run.code, run.stdout, run.stderr

    code, out, err = release(tmp_path / "a")
    assert code == 0, err
    assert "histor-sign: fetched 9 tools in 3 pages from example-notes (stdio)\n" in err
    listed = [line.split()[1] for line in out.splitlines() if line[:2] in ("TC", "HS")]
    assert "warning" in listed or "note" in listed
    code, out, err = release(tmp_path / "b", "--quiet", "--min-severity", "error")
    assert code == 0, err
    assert "fetched" not in err and "below --min-severity error not shown" in err
    assert [line for line in out.splitlines() if line[:2] in ("TC", "HS")
            and line.split()[1] != "error"] == []
    sarif = json.loads((tmp_path / "b" / "scan.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == len(listed)  # the report keeps them all
