"""Modules a one-shot command's process imports but never uses: their code runs at first use.

sigstore's module graph imports, for its online paths (OIDC identity tokens, the TUF
cache directories, Rekor v2 entries), modules that an offline ``histor-sign verify`` never
touches. Where that import is a plain ``import X`` it only
binds the module object; :class:`importlib.util.LazyLoader` then runs the module's code at
its first attribute access instead of at import. A process that never reads from the
module never runs it (``tests/cli/test_entry_point.py`` checks that for ``verify``), and
one that does gets the very module a plain import gives, executed just before that first
use — nothing about what it does changes, only when its module body runs.

What is listed is only a speed choice, tied to what sigstore 4.5 and typer import: a module
listed here that something reads at import time simply runs then (no gain, no harm); a
module that is missing is imported (or not found) the usual way. Only modules whose import
has no effect outside themselves are listed (no codec, handler or hook registration).
Together they are about 2 % of a verification's CPU time. Only :func:`histor_sign.cli.app.
entry_point` installs this, for its one-shot commands, in a process that is theirs alone
(a single thread: Python 3.11's LazyLoader is not thread-safe).
"""

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

#: Plain-imported by sigstore (``jwt``, ``id``: OIDC tokens; ``platformdirs``: the TUF
#: cache; ``webbrowser``: the interactive OIDC flow; ``sigstore_models.rekor.v2``: Rekor v2
#: entries, built when a v2 bundle is read), by requests (``idna``) and by the standard
#: library (``csv``, ``mimetypes``, ``stringprep``).
DEFERRED = frozenset({
    "csv", "id", "idna", "jwt", "mimetypes", "platformdirs", "sigstore_models.rekor.v2",
    "stringprep", "webbrowser",
})


class DeferringFinder(importlib.abc.MetaPathFinder):
    """Finds the :data:`DEFERRED` modules on ``sys.path`` and hands them a lazy loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in DEFERRED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None  # found some other way, or not at all: the usual import
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def defer_unused_imports() -> None:
    """Install :class:`DeferringFinder` first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, DeferringFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeferringFinder())
