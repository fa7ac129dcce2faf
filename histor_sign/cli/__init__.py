"""Command-line interface: thin typer commands that parse flags and call the library.

Every command module registers itself on :data:`app` when imported; :func:`main` imports
only the module of the command it runs (``app.COMMANDS``) and turns any
:class:`~histor_sign.errors.HistorError` or usage error into one stderr line and the
documented exit code, never a traceback.

The CLI modules deliberately do not use ``from __future__ import annotations``: typer reads
every parameter annotation at start-up, and string annotations cost an ``eval`` each —
about half of the time ``histor-sign --help`` spent building its commands.
"""


from histor_sign.cli.app import app, entry_point, main

__all__ = ["app", "entry_point", "main"]
