"""The proxy's audit log: JSON lines, appended, fsynced per record.

Each record is one line ``{"time": …, "event": …, …}``. What a record may hold is fixed
here: tool names, reason codes and the guard's value-free messages, JSON pointers into
the arguments, the SHA-256 of the canonical arguments — never an argument value.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from histor_sign.errors import UsageError


class AuditLog:
    """An append-only JSON-lines file (or nothing when ``path`` is None)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._fd: int | None = None
        if self.path is not None:
            try:
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            except OSError as exc:
                raise UsageError(f"cannot open the audit log {self.path}: "
                                 f"{exc.strerror or exc}", param="audit") from None

    def record(self, event: str, **fields: Any) -> None:
        """Append one record and fsync it before the decision it records takes effect."""
        if self._fd is None:
            return
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = json.dumps({"time": stamp, "event": event, **fields}, ensure_ascii=False,
                          separators=(",", ":"), sort_keys=False) + "\n"
        data = line.encode("utf-8")
        while data:
            written = os.write(self._fd, data)
            data = data[written:]
        os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
