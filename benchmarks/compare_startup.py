"""Start-up time of ``histor-sign`` command lines against baselines measured in the same run.

Baselines: a bare interpreter (``python -c pass``) and ``import typer`` (the CLI framework
we cannot avoid). Measured: ``--help`` (every command module), ``--version`` and a small
real command (``digest --format json`` of the example catalog: one command module, typer's
parameter coercion). Heavy modules (sigstore, jsonschema, httpx, asyncio, pydantic) must
stay out of these paths; this prints the wall times and which of them got imported anyway.

``--compare-with DIR`` also runs every command line with another checkout of histor-sign
(e.g. ``git worktree add /tmp/before main``), interleaved run by run with this one, so
machine load hits both alike.
Run: ``python benchmarks/compare_startup.py [--compare-with DIR] [--runs N]`` (the runner's
fixed table is ``benchmarks/bench_startup.py``; this one compares two checkouts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("sigstore", "jsonschema", "jsonschema_rs", "httpx", "asyncio", "cryptography", "rich",
         "pydantic")
LINES = {
    "--help": ["--help"],
    "--version": ["--version"],
    "digest": ["digest", "--format", "json", str(REPO / "examples" / "docs-tools.json")],
}


def clean_env(repo: Path = REPO) -> dict[str, str]:
    # Measure as users run it: with bytecode caches (some sandboxes disable them). Each
    # process runs in its checkout (``-m``/``-c`` put the working directory first on the
    # path).
    env = dict(os.environ, PYTHONPATH=str(repo))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def walls(variants: list[tuple[list[str], dict[str, str]]], runs: int) -> list[float]:
    """The median wall time of each (argv, env), run interleaved (order alternating)."""
    for argv, env in variants:  # warm the bytecode caches
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=env["PYTHONPATH"])
    times: list[list[float]] = [[] for _ in variants]
    for i in range(runs):
        order = list(enumerate(variants))
        for k, (argv, env) in (order if i % 2 else order[::-1]):
            start = time.perf_counter()
            subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, cwd=env["PYTHONPATH"])
            times[k].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def heavy_imports(args: list[str], repo: Path = REPO) -> list[str]:
    code = (
        f"import sys; sys.argv=['histor-sign', *{args!r}]\n"
        "from histor_sign.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=clean_env(repo), check=True, cwd=repo)
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare-with", type=Path, metavar="DIR")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    repos = [REPO, *([args.compare_with.resolve()] if args.compare_with else [])]
    bare, typer = walls([([sys.executable, "-c", "pass"], clean_env()),
                         ([sys.executable, "-c", "import typer"], clean_env())], args.runs)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs each, medians")
    print(f"python -c pass            {bare * 1000:7.1f} ms")
    print(f"python -c 'import typer'  {typer * 1000:7.1f} ms")
    for name, line in LINES.items():
        ms = walls([([sys.executable, "-m", "histor_sign", *line], clean_env(repo))
                    for repo in repos], args.runs)
        cells = "   ".join(f"{t * 1000:7.1f} ms ({t / typer:.2f}x typer)" for t in ms)
        print(f"histor-sign {name:13} {cells}")
    for name, line in LINES.items():
        heavy = ["; ".join(heavy_imports(line, repo)) or "none" for repo in repos]
        print(f"heavy modules imported by {name}: {' | '.join(heavy)}")
    if len(repos) > 1:
        print(f"(columns: this checkout, then {repos[1]})")


if __name__ == "__main__":
    main()
