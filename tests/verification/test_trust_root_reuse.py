"""A trusted root read from a file is loaded once per process while the file is unchanged,
and read again when it changes (a verifier never keeps a root its file no longer holds)."""

from __future__ import annotations

import os
from pathlib import Path

from histor_sign._sigstore_trust import Trust, vendored_root_path


def test_an_unchanged_root_file_is_loaded_once(tmp_path: Path) -> None:
    path = tmp_path / "root.json"
    path.write_bytes(vendored_root_path("production").read_bytes())
    first = Trust.from_trusted_root(path).trusted_root()
    assert Trust.from_trusted_root(path).trusted_root() is first


def test_a_changed_root_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "root.json"
    path.write_bytes(vendored_root_path("production").read_bytes())
    first = Trust.from_trusted_root(path).trusted_root()
    path.write_bytes(vendored_root_path("staging").read_bytes())
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    again = Trust.from_trusted_root(path).trusted_root()
    assert again is not first
