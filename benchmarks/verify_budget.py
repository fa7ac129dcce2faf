"""Where ``verify --offline`` spends its CPU time, beside the sigstore CLI it is judged against.

Fresh processes, all interleaved in one run (round-robin, the order reversed every other
round), each measured by the CPU time (user + system) the kernel charges it — steadier
than wall time on a busy machine. Rows: a bare interpreter; importing sigstore's
verification modules alone (``sigstore.models``, ``sigstore.verify``) as is, with the cyclic
collector paused, and also without the interpreter's teardown at exit; the upstream
``sigstore verify identity --offline``; ``histor-sign verify --offline``, and with
``--before DIR`` the same command from another checkout (e.g. main), on the same bundle.

    python benchmarks/verify_budget.py [--runs 15] [--before /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _harness import bench_env  # noqa: E402
from bench_verify import _signed_release, verify_commands  # noqa: E402

GRAPH = "import sigstore.models, sigstore.verify"


def cpu_seconds(argv: list[str], env: dict[str, str]) -> float:
    """Run ``argv`` to completion (it must exit 0); the CPU seconds it was charged. It runs
    outside any checkout, so ``python -m`` finds histor-sign through ``PYTHONPATH``."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=tempfile.gettempdir())
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv[:6])}... failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another checkout of histor-sign")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="verify-budget-"))
    config = _signed_release(work)
    py = sys.executable
    ours, upstream = verify_commands(work, config)
    env = bench_env()
    rows: dict[str, tuple[list[str], dict[str, str]]] = {
        "bare interpreter (python -c pass)": ([py, "-c", "pass"], env),
        "sigstore verification modules": ([py, "-c", GRAPH], env),
        "  ... collector paused": ([py, "-c", f"import gc; gc.disable(); {GRAPH}"], env),
        "  ... and no teardown (os._exit)":
            ([py, "-c", f"import gc, os; gc.disable(); {GRAPH}; os._exit(0)"], env),
        "sigstore verify identity --offline": (upstream, env),
        "histor-sign verify --offline": (ours, env),
    }
    if args.before is not None:
        before = dict(env, PYTHONPATH=f"{args.before}{os.pathsep}{env.get('PYTHONPATH', '')}")
        rows["histor-sign verify --offline (--before)"] = (ours, before)
    names = list(rows)
    for name in names:  # warm-up, also writes the bytecode caches
        cpu_seconds(*rows[name])
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(args.runs):
        for name in names if i % 2 == 0 else names[::-1]:
            times[name].append(cpu_seconds(*rows[name]))
    upstream_median = statistics.median(times["sigstore verify identity --offline"])
    print(f"CPU ms (user+sys), {args.runs} runs each, interleaved; load avg "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'':44} {'min':>7} {'median':>7} {'max':>7}  / sigstore CLI")
    for name in names:
        s = sorted(times[name])
        med = statistics.median(s)
        print(f"{name:44} {s[0] * 1e3:7.1f} {med * 1e3:7.1f} {s[-1] * 1e3:7.1f}  "
              f"{med / upstream_median:5.2f}")


if __name__ == "__main__":
    main()
