"""Shared measuring for the benchmarks: fair by construction.

Every :class:`Case` pairs histor-sign with the baseline it is judged against (the engine or
tool it builds on or competes with). :func:`measure` runs the two sides *interleaved* in one
run — ours, baseline, baseline, ours, ... (the order alternates so neither side always runs
second on a warm cache) — and reports min / median / p99 of each side and the ratio
**histor-sign / baseline** (below 1 means histor-sign is faster). End-to-end cases run
commands with :func:`run_command`, which also samples the resident memory summed over the
command's whole process tree (a stdio MCP server started by the client counts).
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Sample:
    """One timed run of a command: wall seconds and the peak of the RSS summed over its
    process tree (bytes, sampled every few milliseconds; 0 when not measured)."""

    seconds: float
    rss: int = 0


Side = Callable[[], object]
"""One run of one side: returns its own :class:`Sample` (a command), or anything else to be
timed by the harness."""


@dataclass
class Case:
    """One comparison. ``ours`` and ``base`` run alternately ``runs`` times after
    ``warmup`` untimed runs of each. ``level`` is ``cli`` (the command a user runs) or
    ``lib`` (the library call beside it). ``target`` is the ratio the issue asks for."""

    name: str
    level: str
    ours: Side
    base: Side
    baseline: str
    runs: int
    warmup: int = 1
    unit: str = "ms"
    target: float | None = None
    setup: Callable[[], None] | None = None
    teardown: Callable[[], None] | None = None


@dataclass
class Stats:
    min: float
    median: float
    p99: float
    rss: int = 0  # peak summed RSS (max over runs), bytes

    @classmethod
    def of(cls, seconds: Sequence[float], rss: Sequence[int]) -> Stats:
        return cls(min(seconds), quantile(seconds, 0.5), quantile(seconds, 0.99),
                   max(rss, default=0))


@dataclass
class Result:
    name: str
    level: str
    baseline: str
    runs: int
    unit: str
    ours: Stats
    base: Stats
    target: float | None = None
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """histor-sign / baseline on the median (always this way round)."""
        return self.ours.median / self.base.median

    def to_json(self) -> dict[str, object]:
        scale = _SCALE[self.unit]
        def side(s: Stats) -> dict[str, object]:
            out: dict[str, object] = {f"min_{self.unit}": s.min * scale,
                                      f"median_{self.unit}": s.median * scale,
                                      f"p99_{self.unit}": s.p99 * scale}
            if s.rss:
                out["peak_rss_mib"] = round(s.rss / 2**20, 1)
            return out
        return {"name": self.name, "level": self.level, "baseline": self.baseline,
                "runs": self.runs, "ours": side(self.ours), "base": side(self.base),
                "ratio_median": round(self.ratio, 3),
                "ratio_min": round(self.ours.min / self.base.min, 3),
                "target": self.target, **self.extra}


_SCALE = {"s": 1.0, "ms": 1e3, "us": 1e6}


def quantile(values: Iterable[float], q: float) -> float:
    """Nearest-rank quantile of ``values`` in any order: the smallest value with a share of
    at least ``q`` at or below it (the median of 20 runs is the 10th; p99 of fewer than 100
    runs is the maximum). The one rule every benchmark reads its medians and tails by."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def latency_row(label: str, values: Sequence[float]) -> str:
    """One line of a latency table, in milliseconds: min, p50, p99."""
    return (f"  {label:8} min {min(values) * 1e3:8.3f}  p50 {quantile(values, 0.5) * 1e3:8.3f}"
            f"  p99 {quantile(values, 0.99) * 1e3:8.3f}")


def _once(side: Side) -> Sample:
    start = time.perf_counter()
    got = side()
    elapsed = time.perf_counter() - start
    return got if isinstance(got, Sample) else Sample(elapsed)


def measure(case: Case) -> Result:
    """Run both sides of ``case`` interleaved and summarise them."""
    if case.setup is not None:
        case.setup()
    try:
        for _ in range(case.warmup):
            _once(case.ours)
            _once(case.base)
        ours: list[Sample] = []
        base: list[Sample] = []
        gc.collect()
        gc_was = gc.isenabled()
        gc.disable()  # a collection lands on whichever side happens to allocate last
        try:
            for i in range(case.runs):
                if i % 2:
                    base.append(_once(case.base))
                    ours.append(_once(case.ours))
                else:
                    ours.append(_once(case.ours))
                    base.append(_once(case.base))
                if i % 4096 == 4095:
                    gc.collect()
        finally:
            if gc_was:
                gc.enable()
    finally:
        if case.teardown is not None:
            case.teardown()
    return Result(case.name, case.level, case.baseline, case.runs, case.unit,
                  Stats.of([s.seconds for s in ours], [s.rss for s in ours]),
                  Stats.of([s.seconds for s in base], [s.rss for s in base]), case.target)


# --- commands -------------------------------------------------------------------------

def bench_env() -> dict[str, str]:
    """The environment commands run in: this checkout importable, bytecode caches on
    (as users run it), no proxy for loopback."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def _tree_rss(root: int) -> int:
    """Resident bytes summed over ``root`` and its descendants (Linux /proc)."""
    total, todo, page = 0, [root], os.sysconf("SC_PAGE_SIZE")
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as fh:
                total += int(fh.read().split()[1]) * page
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as fh:
                    todo.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


def run_command(argv: Sequence[str], *, expect: int = 0, cwd: Path | None = None,
                memory: bool = True) -> Sample:
    """Run a command to completion; its wall time and peak summed RSS. Raises SystemExit
    if it exits with anything but ``expect`` (a benchmark of a failing command is void)."""
    env = bench_env()
    peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=cwd or REPO)
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            done.wait(0.005)

    sampler = threading.Thread(target=sample, daemon=True) if memory else None
    if sampler is not None:
        sampler.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    if sampler is not None:
        sampler.join()
    if proc.returncode != expect:
        raise SystemExit(f"{' '.join(argv[:5])}... exited {proc.returncode} "
                         f"(expected {expect}): {err.decode(errors='replace')[-2000:]}")
    return Sample(elapsed, peak)


# --- output ---------------------------------------------------------------------------

def machine() -> dict[str, object]:
    """What the numbers were measured on, and how busy it was."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}",
            "loadavg_1m_start": round(os.getloadavg()[0], 2),
            "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}


def _fmt(seconds: float, unit: str) -> str:
    value = seconds * _SCALE[unit]
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def table(results: Sequence[Result], info: dict[str, object]) -> str:
    """The results as a plain-text table (the docs quote this)."""
    lines = [f"machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
             f"{info['system']}; load avg {info['loadavg_1m_start']} (1 min, at start)"
             + (f" → {info['loadavg_1m_end']}" if "loadavg_1m_end" in info else "")
             + f"; {info['date_utc']} UTC",
             "ratio = histor-sign / baseline, on the medians (< 1: histor-sign is faster)",
             ""]
    head = (f"{'benchmark':<46} {'lvl':<3} {'n':>5} {'histor-sign min/med/p99':>26} "
            f"{'baseline min/med/p99':>26} {'ratio':>6} {'target':>6}  baseline")
    lines += [head, "-" * len(head)]
    def trio(s: Stats, unit: str) -> str:
        return "/".join(_fmt(v, unit) for v in (s.min, s.median, s.p99)) + f" {unit}"

    for r in results:
        target = f"≤{r.target:g}" if r.target is not None else ""
        lines.append(f"{r.name:<46} {r.level:<3} {r.runs:>5} {trio(r.ours, r.unit):>26} "
                     f"{trio(r.base, r.unit):>26} {r.ratio:>6.2f} {target:>6}  {r.baseline}")
    mem = [r for r in results if r.ours.rss and r.base.rss]
    if mem:
        lines += ["", "peak resident memory, summed over every process of the command:"]
        for r in mem:
            lines.append(f"  {r.name:<46} {r.ours.rss / 2**20:7.1f} MiB vs "
                         f"{r.base.rss / 2**20:7.1f} MiB  ({r.ours.rss / r.base.rss:.2f}x)"
                         f"  {r.baseline}")
    return "\n".join(lines)


def report(results: Sequence[Result], as_json: bool,
           info: dict[str, object] | None = None, save: Path | None = None) -> None:
    """Print the table (or the JSON document); ``save`` also writes the JSON there and the
    table beside it (``.txt``)."""
    info = dict(info or machine())
    info["loadavg_1m_end"] = round(os.getloadavg()[0], 2)
    doc = json.dumps({"version": 1, "machine": info,
                      "results": [r.to_json() for r in results]}, indent=2)
    text = table(results, info)
    print(doc if as_json else text)
    if save is not None:
        save.write_text(doc + "\n")
        save.with_suffix(".txt").write_text(text + "\n")


def run_cases(cases: Sequence[Case], as_json: bool = False,
              progress: Callable[[str], None] | None = None,
              save: Path | None = None) -> list[Result]:
    info = machine()
    results = []
    for case in cases:
        if progress is not None:
            progress(f"{case.name} ({case.level}, {case.runs} runs)")
        results.append(measure(case))
    report(results, as_json, info, save)
    return results
