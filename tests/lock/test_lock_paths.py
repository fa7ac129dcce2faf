"""A lock file path that cannot be looked up (a name too long, a symlink loop) is one error
line naming it, never an internal error."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli
from test_lock_file import _snapshot


@pytest.mark.parametrize("case", ["too-long", "loop"])
def test_an_unusable_lock_output_path_is_one_error_line(tmp_path: Path, case: str) -> None:
    served = tmp_path / "served.json"
    served.write_bytes(_snapshot().to_bytes())
    if case == "too-long":
        output = tmp_path / ("x" * 300) / "mcp.lock"
    else:
        output = tmp_path / "loop.lock"
        output.symlink_to(output)
    run = run_cli("lock", str(served), "-o", str(output))
    assert_clean_error(run)
    assert ("File name too long" if case == "too-long" else "symbolic links") in run.stderr
    assert "internal error" not in run.stderr
