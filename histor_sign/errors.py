"""One error hierarchy for the whole toolkit.

The library raises these and never prints or exits; the CLI turns each into one
``histor-sign: error: ...`` line on stderr and an exit code: **1** when a check ran and said
no (verification failed, drift found, a release gate tripped), **2** for everything else
(a usage error, bad input, or an operational failure such as a network or signing error).

Messages name library parameters in their Python spelling, backquoted (`max_bytes`), never
a CLI flag. An error about one parameter says which in :attr:`HistorError.param` (and any
parameter it suggests instead in :attr:`HistorError.alternatives`), so a front end can
spell those names its own way: the CLI writes ``--max-bytes`` where the library wrote
`max_bytes`, and puts the flag in front of a message that does not mention its parameter.
"""

from __future__ import annotations


class HistorError(Exception):
    """Base class of every error the library raises on purpose.

    ``message`` is one human line, safe to print (untrusted text in it is already escaped).
    ``param`` names the library parameter the error is about, if one is; ``alternatives``
    names parameters the message suggests instead. ``detail`` carries a structured result
    for callers that want more than the line (a gate's outcome, for instance).
    ``exit_code`` is the CLI's exit status for this error.
    """

    exit_code: int = 2

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        alternatives: tuple[str, ...] = (),
        detail: object | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.alternatives = alternatives
        self.detail = detail

    def __str__(self) -> str:
        return self.message


class UsageError(HistorError):
    """Arguments that cannot work: out of range, missing, or given together when exclusive.

    Nothing was read or contacted yet. The CLI exits 2.
    """


class InputError(HistorError):
    """A file, a value or a server's answer is malformed: not strict JSON, wrong shape,
    duplicate names, and so on. The CLI exits 2."""


class LimitExceeded(InputError):
    """Input went past a configured bound (size, pages, tools, time).

    ``limit`` is the parameter that set the bound and ``value`` the bound itself, so a
    caller can raise it and retry. ``param`` is ``limit`` unless the input that went past
    the bound is the better thing to name (a URL whose bound the caller cannot change).
    The CLI exits 2.
    """

    def __init__(
        self,
        message: str,
        *,
        limit: str | None = None,
        value: float | None = None,
        detail: object | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message, param=param or limit, detail=detail)
        self.limit = limit
        self.value = value


class OperationalError(HistorError):
    """Something outside the toolkit failed: the network, a subprocess, a signing service.

    Retrying later may help; the input was not judged. The CLI exits 2.
    """


class FetchError(OperationalError):
    """Fetching tools/list from an MCP server failed (the server misbehaved or was
    unreachable). The CLI exits 2."""


class SigningError(OperationalError):
    """Obtaining a certificate, logging the entry, or writing the envelope failed.
    The CLI exits 2."""


class CheckFailed(HistorError):
    """A check ran to the end and said no. The CLI exits 1.

    Distinct from the other errors: the input was read and judged, so a pipeline can tell
    "rejected" (1) from "could not decide" (2).
    """

    exit_code = 1


class VerificationFailed(CheckFailed):
    """Signature, identity, transparency log, revision chain or digest verification failed.
    The CLI exits 1."""


class GateFailed(CheckFailed):
    """A release gate tripped: collision findings reached the failure threshold, so nothing
    was signed.

    ``outcome`` (also ``detail``) is the release's result — the findings and the reports
    already written — so a caller can show them. The CLI exits 1.
    """

    def __init__(
        self, message: str, *, outcome: object | None = None, param: str | None = None
    ) -> None:
        super().__init__(message, param=param, detail=outcome)

    @property
    def outcome(self) -> object | None:
        return self.detail
