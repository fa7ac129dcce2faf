"""Pause Python's cyclic garbage collector around bulk, acyclic allocation.

A registry-scale scan allocates millions of small, long-lived, acyclic objects (profiles,
candidate pairs, decisions, findings). CPython's generational collector re-traverses every
tracked object at each full collection, which on a 100,000-tool scan cost about a third of
the wall time and kept touching copy-on-write pages in forked workers. Reference counting
still frees everything as usual while the collector is paused; only reference *cycles*
created inside the block wait until it ends, when the collector's previous state is restored
(collection is never forced, so the caller does not pay for it either).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block with the cyclic collector off; restore its state afterwards, also on
    errors. Nested uses are fine: only the outermost re-enables it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
