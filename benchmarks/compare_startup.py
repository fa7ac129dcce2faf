"""Start-up time of ``histor-sign`` command lines against baselines measured in the same run.

Baselines: a bare interpreter (``python -c pass``) and ``import typer`` (the CLI framework
we cannot avoid). Measured: ``--help`` (every command module), ``--version``, a small
real command (``digest --format json`` of the example catalog: one command module, typer's
parameter coercion), ``verify --offline`` of a release signed on a local Sigstore instance
and ``guard`` of the example call. Each cell is the median wall time and, after the slash,
the median CPU time (user + system) the kernel charged the process — steadier on a busy
machine. Heavy modules (sigstore, jsonschema, httpx, asyncio, pydantic) must stay out of the
``--help``/``--version``/``digest`` paths; this prints which of them got imported anyway.

``--compare-with DIR`` (repeatable) also runs every command line with another checkout of
histor-sign (e.g. ``git worktree add /tmp/before main``), interleaved run by run with this
one, so machine load hits all alike; ``DIR?NAME=VALUE`` runs that checkout with one more
environment variable (a switch a patched copy reads).
Run: ``python benchmarks/compare_startup.py [--compare-with DIR]... [--runs N] [--only
verify,guard]`` (the runner's fixed table is ``benchmarks/bench_startup.py``; this one
compares checkouts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GUARD = REPO / "examples" / "guard"
HEAVY = ("sigstore", "jsonschema", "jsonschema_rs", "httpx", "asyncio", "cryptography", "rich",
         "pydantic")
LINES = {
    "--help": ["--help"],
    "--version": ["--version"],
    "digest": ["digest", "--format", "json", str(REPO / "examples" / "docs-tools.json")],
    "guard": ["guard", "--catalog", str(GUARD / "tools.json"), "--policy",
              str(GUARD / "guard.toml"), str(GUARD / "call-ok.json")],
}
#: Lines that are measured but not held to "no heavy module" (they need sigstore/jsonschema).
HEAVY_BY_DESIGN = ("verify", "guard")
#: The ``ONE_SHOT`` commands (``cli/app.py``): also measured through ``main()``, which runs
#: the same command without the entry point's collector switch.
ONE_SHOT_LINES = frozenset({"verify", "guard"})
_VIA_MAIN = ("import sys; sys.argv = ['histor-sign', *sys.argv[1:]]; "
             "from histor_sign.cli import main; main()")


def verify_line() -> list[str]:
    """``verify --offline`` of the example catalog signed on a local Sigstore instance."""
    sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]
    from bench_verify import WF, _signed_release

    work = Path(tempfile.mkdtemp(prefix="startup-verify-"))
    config = _signed_release(work)
    return ["verify", str(work / "release.envelope.json"), "--cert-identity", WF,
            "--trust-config", str(config), "--offline"]


def clean_env(repo: Path = REPO, extra: dict[str, str] | None = None) -> dict[str, str]:
    # Measure as users run it: with bytecode caches (some sandboxes disable them). Each
    # process runs in its checkout (``-m``/``-c`` put the working directory first on the
    # path).
    env = dict(os.environ, PYTHONPATH=str(repo), **(extra or {}))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds charged) of one run of ``argv``."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, cwd=env["PYTHONPATH"])
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def measure(variants: list[tuple[list[str], dict[str, str]]],
            runs: int) -> list[tuple[float, float]]:
    """The median (wall, CPU) seconds of each (argv, env), run interleaved (order
    alternating)."""
    for argv, env in variants:  # warm the bytecode caches
        _run(argv, env)
    times: list[list[tuple[float, float]]] = [[] for _ in variants]
    for i in range(runs):
        order = list(enumerate(variants))
        for k, (argv, env) in (order if i % 2 else order[::-1]):
            times[k].append(_run(argv, env))
    return [(statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
            for t in times]


def walls(variants: list[tuple[list[str], dict[str, str]]], runs: int) -> list[float]:
    """The median wall time of each (argv, env), run interleaved (order alternating)."""
    return [wall for wall, _ in measure(variants, runs)]


def checkout(spec: str) -> tuple[Path, dict[str, str]]:
    """``DIR`` or ``DIR?NAME=VALUE``: a checkout and the extra environment to run it with."""
    path, _, assignment = spec.partition("?")
    name, _, value = assignment.partition("=")
    return Path(path).resolve(), ({name: value} if name else {})


def heavy_imports(args: list[str], repo: Path = REPO,
                  extra: dict[str, str] | None = None) -> list[str]:
    code = (
        f"import sys; sys.argv=['histor-sign', *{args!r}]\n"
        "from histor_sign.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=clean_env(repo, extra), check=True, cwd=repo)
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare-with", action="append", default=[], metavar="DIR")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", help="comma-separated line names (default: all)")
    args = parser.parse_args()
    checkouts = [(REPO, {}), *(checkout(spec) for spec in args.compare_with)]
    lines = dict(LINES, verify=verify_line())
    if args.only:
        lines = {name: lines[name] for name in args.only.split(",")}
    (bare, bare_cpu), (typer, typer_cpu) = measure(
        [([sys.executable, "-c", "pass"], clean_env()),
         ([sys.executable, "-c", "import typer"], clean_env())], args.runs)
    print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs each, medians, "
          "wall / CPU ms")
    print(f"python -c pass            {bare * 1000:7.1f} / {bare_cpu * 1000:5.1f}")
    print(f"python -c 'import typer'  {typer * 1000:7.1f} / {typer_cpu * 1000:5.1f}")
    for name, line in lines.items():
        variants = [([sys.executable, "-m", "histor_sign", *line], clean_env(repo, extra))
                    for repo, extra in checkouts]
        if name in ONE_SHOT_LINES:  # the same command through main(): collector untouched
            variants.append(([sys.executable, "-c", _VIA_MAIN, *line], clean_env()))
        ms = measure(variants, args.runs)
        cells = "   ".join(f"{w * 1000:7.1f} / {c * 1000:5.1f}" for w, c in ms)
        print(f"histor-sign {name:13} {cells}")
    if ONE_SHOT_LINES & set(lines):
        print("(verify, guard: the last column is this checkout through main(), which leaves "
              "the collector on: what the entry point's gc.disable/gc.freeze saves)")
    for name, line in lines.items():
        if name in HEAVY_BY_DESIGN:
            continue
        heavy = ["; ".join(heavy_imports(line, repo, extra)) or "none"
                 for repo, extra in checkouts]
        print(f"heavy modules imported by {name}: {' | '.join(heavy)}")
    if len(checkouts) > 1:
        print("(columns: this checkout, then " +
              ", ".join(f"{repo}{' ' + str(extra) if extra else ''}"
                        for repo, extra in checkouts[1:]) + ")")


if __name__ == "__main__":
    main()
