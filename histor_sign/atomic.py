"""Atomic file output: a reader sees the old file or the complete new one, never half.

Several outputs that belong together (envelope, statement, bundle, ...) are staged as
temporary files and renamed only after all of them were written, so a failure leaves none
of the new files behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from histor_sign.errors import OperationalError


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory + rename."""
    write_all_atomic({Path(path): data})


def write_all_atomic(files: Mapping[Path, bytes]) -> None:
    """Write several files so that either all of them appear or none does."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            staged.append((_stage(Path(path), data), Path(path)))
        for tmp, path in staged:
            os.replace(tmp, path)
        staged.clear()
    except OSError as exc:
        raise OperationalError(f"cannot write {exc.filename or 'output'}: {exc.strerror}") from None
    finally:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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


@contextlib.contextmanager
def no_partial_output(path: Path) -> Iterator[None]:
    """Remove ``path`` if the block fails after creating it (for streamed outputs)."""
    existed = path.exists()
    try:
        yield
    except BaseException:
        if not existed:
            with contextlib.suppress(OSError):
                path.unlink()
        raise
