"""``yank --revisions`` that cannot be looked up is one error line naming it (exit 2, before
any signing), never an internal error."""

from __future__ import annotations

from pathlib import Path

from cli_harness import assert_clean_error, run_cli


def test_an_over_long_revisions_path_is_one_error_line(tmp_path: Path) -> None:
    run = run_cli("yank", "--server", "io.github.alice/docs", "--revision", "1", "--reason",
                  "withdrawn", "--revisions", str(tmp_path / ("x" * 300)))
    assert_clean_error(run)
    assert "File name too long" in run.stderr and "internal error" not in run.stderr
