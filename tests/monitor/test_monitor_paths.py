"""``monitor --since`` and ``--revisions`` paths that cannot be looked up are one error line
naming them (exit 2), never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli


@pytest.mark.parametrize("flag", ["--since", "--revisions"])
def test_an_over_long_path_is_one_error_line(tmp_path: Path, flag: str) -> None:
    paths = {"--since": str(tmp_path / "checkpoint.json"), "--revisions": str(tmp_path)}
    paths[flag] = str(tmp_path / ("x" * 300) / "checkpoint.json")
    run = run_cli("monitor", "--server", "io.github.alice/docs", "--repository", "alice/docs",
                  "--offline", "--since", paths["--since"], "--revisions", paths["--revisions"])
    assert_clean_error(run)
    assert "File name too long" in run.stderr and "internal error" not in run.stderr
