"""Cost of crash-safe release output against baselines measured in the same run.

Writes one release's worth of files (six files, sizes like a real release) 200 times:
- baseline ``plain``: ``open(..., "wb").write`` of each file (no fsync, not crash-safe);
- baseline ``fsync``: each file written and fsynced in place (durable, not atomic);
- ``group``: ``write_all_atomic`` (temporaries, commit record, renames);
- ``directory``: ``OutputDirectory.publish`` (lock, sibling directory, one exchange).
Prints the median per release and the ratio to ``fsync``.
Run: ``python benchmarks/bench_outputs.py``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from histor_sign._atomic import OutputDirectory, write_all_atomic

FILES = {"envelope.json": 12_000, "statement.json": 2_000, "sigstore.json": 9_000,
         "scan.sarif": 6_000, "summary.md": 1_500, "tools.snapshot.json": 40_000}
DATA = {name: os.urandom(size) for name, size in FILES.items()}


def plain(out: Path) -> None:
    out.mkdir(exist_ok=True)
    for name, data in DATA.items():
        with open(out / name, "wb") as fh:
            fh.write(data)


def fsynced(out: Path) -> None:
    out.mkdir(exist_ok=True)
    for name, data in DATA.items():
        with open(out / name, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())


def group(out: Path) -> None:
    write_all_atomic({out / name: data for name, data in DATA.items()})


def directory(out: Path) -> None:
    with OutputDirectory(out, FILES) as d:
        d.publish(DATA)


def median_ms(fn: Callable[[Path], None], base: Path, runs: int = 200) -> float:
    out = base / fn.__name__
    fn(out)  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn(out)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as tmp:
        results = {fn.__name__: median_ms(fn, Path(tmp)) for fn in (plain, fsynced, group,
                                                                    directory)}
    for name, ms in results.items():
        print(f"{name:<10} {ms:8.2f} ms per release   x{ms / results['fsynced']:.2f} of fsynced")


if __name__ == "__main__":
    main()
