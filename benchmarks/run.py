"""Run every benchmark against its fair baseline and print one table (or ``--json``).

Each row runs histor-sign and its baseline interleaved in the same run and gives
min / median / p99 of both and the ratio histor-sign / baseline on the medians (below 1:
histor-sign is faster). ``cli`` rows run the command a user runs (peak memory summed over
every process it starts); ``lib`` rows the library call beside it. The docs quote what this
prints, with the machine and load it names.

    python benchmarks/run.py [--quick] [--json] [--only guard,digest,fetch,verify,startup]

Baselines: guard — ``jsonschema_rs`` (the engine it is built on) on the same schema;
digest — a one-pass ``rfc8785`` loop and ``json.loads``; fetch — the official ``mcp`` SDK
client; verify — the ``sigstore verify identity --offline`` CLI and sigstore's
``Verifier``; start-up — ``import typer`` and the sigstore modules signing needs.
``bench_scan.py`` and ``bench_proxy.py`` are run on their own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _harness import Case, run_cases  # noqa: E402


def _guard(quick: bool) -> list[Case]:
    import bench_guard

    return bench_guard.cases(quick)


def _digest(quick: bool) -> list[Case]:
    import bench_digest

    return bench_digest.cases(quick)


def _fetch(quick: bool) -> list[Case]:
    import bench_fetch

    return bench_fetch.cases(quick)


def _verify(quick: bool) -> list[Case]:
    import bench_verify

    return bench_verify.cases(quick)


def _startup(quick: bool) -> list[Case]:
    import bench_startup

    return bench_startup.cases(quick)


GROUPS: dict[str, Callable[[bool], list[Case]]] = {
    "guard": _guard,
    "digest": _digest,
    "fetch": _fetch,
    "verify": _verify,
    "startup": _startup,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small catalogs, few runs")
    parser.add_argument("--json", action="store_true", help="print JSON (version 1)")
    parser.add_argument("--save", type=Path, metavar="FILE.json",
                        help="also write the JSON here and the table beside it (.txt)")
    parser.add_argument("--only", default=",".join(GROUPS),
                        help="comma-separated groups (default: all)")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in GROUPS]
    if unknown:
        parser.error(f"unknown group {unknown[0]!r} (known: {', '.join(GROUPS)})")
    cases: list[Case] = []
    for name in names:
        print(f"setting up {name}...", file=sys.stderr)
        cases += GROUPS[name](args.quick)
    run_cases(cases, args.json, progress=lambda m: print(f"  {m}", file=sys.stderr),
              save=args.save)


if __name__ == "__main__":
    main()
