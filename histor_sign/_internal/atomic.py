"""Atomic file output: a reader sees the old file or the complete new one, never half.

Several outputs that belong together (envelope, statement, bundle, ...) are staged as
temporary files and renamed only after all of them were written; a rename that fails
part-way rolls the group back, so a failure leaves none of the new files behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from histor_sign.errors import OperationalError


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory + rename."""
    write_all_atomic({Path(path): data})


def write_all_atomic(files: Mapping[Path, bytes]) -> None:
    """Write several files so that either all of them appear or none does.

    Every file is staged first; then each is renamed into place. Should a rename fail
    part-way, the files already renamed are rolled back (the old version restored, or the
    new file removed), so readers never see a mix of old and new outputs.
    """
    staged: list[tuple[str, Path]] = []
    backups: dict[Path, str | None] = {}
    done: list[Path] = []
    try:
        for path, data in files.items():
            staged.append((_stage(Path(path), data), Path(path)))
        for _tmp, path in staged:
            backups[path] = _backup(path)
        for tmp, path in staged:
            os.replace(tmp, path)
            done.append(path)
        staged.clear()
    except OSError as exc:
        for path in reversed(done):
            _restore(path, backups.get(path))
        raise OperationalError(f"cannot write {exc.filename or 'output'}: {exc.strerror}") from None
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        for backup in backups.values():  # restored ones were moved back already
            if backup is not None:
                with contextlib.suppress(OSError):
                    os.unlink(backup)


def _backup(path: Path) -> str | None:
    """A hard link to the current file (None when there is none), for rolling back."""
    if not path.is_file():
        return None
    fd, backup = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
    os.close(fd)
    os.unlink(backup)
    os.link(path, backup)
    return backup


def _restore(path: Path, backup: str | None) -> None:
    with contextlib.suppress(OSError):
        if backup is None:
            os.unlink(path)
        else:
            os.replace(backup, path)


def _stage(path: Path, data: bytes) -> str:
    directory = path.parent if str(path.parent) else Path(".")
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return tmp
