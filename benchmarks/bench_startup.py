"""Start-up time of ``histor-sign --help`` against baselines measured in the same run.

Baselines: a bare interpreter (``python -c pass``) and ``import typer`` (the CLI framework
we cannot avoid). Heavy modules (sigstore, jsonschema, httpx, asyncio) must stay out of the
``--help`` path; this prints the wall time and which of them got imported anyway.
Run: ``python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("sigstore", "jsonschema", "jsonschema_rs", "httpx", "asyncio", "cryptography", "rich")


def clean_env() -> dict[str, str]:
    # Measure as users run it: with bytecode caches (some sandboxes disable them).
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def median_wall(argv: list[str], runs: int = 15) -> float:
    env = clean_env()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def heavy_imports() -> list[str]:
    code = (
        "import sys; sys.argv=['histor-sign','--help']\n"
        "from histor_sign.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=clean_env(), check=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def main() -> None:
    bare = median_wall([sys.executable, "-c", "pass"])
    typer = median_wall([sys.executable, "-c", "import typer"])
    ours = median_wall([sys.executable, "-m", "histor_sign", "--help"])
    print(f"python -c pass          {bare * 1000:7.1f} ms")
    print(f"python -c 'import typer' {typer * 1000:6.1f} ms")
    print(f"histor-sign --help      {ours * 1000:7.1f} ms  ({ours / typer:.2f}x import typer;"
          f" goal < 200 ms)")
    print(f"heavy modules imported by --help: {heavy_imports() or 'none'}")


if __name__ == "__main__":
    main()
