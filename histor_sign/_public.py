"""Read the package's public names from the one place they are written.

``histor_sign/__init__.py`` lists its re-exports once, as ``from M import N as N`` lines under
``if TYPE_CHECKING:``; type checkers see real imports, and this reads the same lines from the
file's syntax tree so the package can load each name from ``M`` on first use. Ground floor:
imports nothing of ours.
"""

from __future__ import annotations

import ast
from pathlib import Path


def public_names(init_file: str) -> dict[str, str]:
    """``{name: defining module}`` for every ``from M import N as N`` under the module's
    top-level ``if TYPE_CHECKING:``; a line that does not re-export (no ``as N``, or another
    name) is a mistake, and raises so the package cannot import with a half-written face."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"), init_file)
    names: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
                and node.test.id == "TYPE_CHECKING"):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom) or stmt.module is None:
                raise ValueError(f"{init_file}:{stmt.lineno}: only re-exports belong here")
            for alias in stmt.names:
                if alias.asname != alias.name or alias.name in names:
                    raise ValueError(f"{init_file}:{stmt.lineno}: write `{alias.name} as "
                                     f"{alias.name}` once")
                names[alias.name] = stmt.module
    return names
