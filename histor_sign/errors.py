"""One error hierarchy for the whole toolkit.

The library raises these; only the CLI turns them into a single stderr line and an exit
code. Exit codes follow SPEC §4: 1 = a check failed (verification, drift, gate), 2 = usage
error, bad input, or operational failure.
"""

from __future__ import annotations


class HistorError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code: int = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(HistorError):
    """Flags or arguments that cannot work together."""


class InputError(HistorError):
    """A file or value is malformed: not strict JSON, wrong shape, duplicate names, ..."""


class LimitExceeded(InputError):
    """Input exceeded a configured bound (size, depth, pages, tools, time)."""


class OperationalError(HistorError):
    """Something outside our control failed: network, subprocess, signing service."""


class FetchError(OperationalError):
    """Fetching tools/list from an MCP server failed."""


class SigningError(OperationalError):
    """Obtaining a certificate, logging the entry, or writing the envelope failed."""


class CheckFailed(HistorError):
    """A check ran and said no: verification failed, drift found, gate tripped."""

    exit_code = 1


class VerificationFailed(CheckFailed):
    """Signature, identity, log, chain or digest verification failed."""


class GateFailed(CheckFailed):
    """Findings reached the release gate's threshold; ``outcome`` is what the release did
    (the findings and the report files it wrote), when a release raised it."""

    def __init__(self, message: str, outcome: object | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome
