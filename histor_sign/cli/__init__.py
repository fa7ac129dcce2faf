"""Command-line interface: thin typer commands that parse flags and call the library.

Every command module registers itself on :data:`app`; :func:`main` turns any
:class:`~histor_sign.errors.HistorError` or usage error into one stderr line and the
documented exit code, never a traceback.

The CLI modules deliberately do not use ``from __future__ import annotations``: typer reads
every parameter annotation at start-up, and string annotations cost an ``eval`` each —
about half of the time ``histor-sign --help`` spent building its commands.
"""


from histor_sign.cli.app import app, main

# Importing a command module registers its commands on ``app``.
from histor_sign.cli import catalog_commands  # noqa: F401  isort: skip
from histor_sign.cli import trust_commands  # noqa: F401  isort: skip
from histor_sign.cli import guard_commands  # noqa: F401  isort: skip
from histor_sign.cli import check_commands  # noqa: F401  isort: skip
from histor_sign.cli import signing_commands  # noqa: F401  isort: skip
from histor_sign.cli import fetch_commands  # noqa: F401  isort: skip
from histor_sign.cli import release_commands  # noqa: F401  isort: skip
from histor_sign.cli import scan_commands  # noqa: F401  isort: skip
from histor_sign.cli import init_commands  # noqa: F401  isort: skip
from histor_sign.cli import proxy_commands  # noqa: F401  isort: skip
from histor_sign.cli import wrap_commands  # noqa: F401  isort: skip
from histor_sign.cli import lock_commands  # noqa: F401  isort: skip
from histor_sign.cli import yank_commands  # noqa: F401  isort: skip
from histor_sign.cli import monitor_commands  # noqa: F401  isort: skip

__all__ = ["app", "main"]
