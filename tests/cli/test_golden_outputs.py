"""Golden outputs: every CLI command, byte for byte as the code printed it when the goldens
were made (tests/data/golden/cases/, one file per case of ``golden_cases.py``).

A safety net for restructuring the package: moving or renaming modules must not change one
byte of what any command prints, exits with or writes. Each case runs ``python -m histor_sign``
in a subprocess, in its own fresh copy of the inputs (``golden_cases.build_inputs``) as the
working directory, with a fixed environment (``golden_cases.case_environment``: nothing of
the caller's but PATH; HOME and the XDG directories inside the working directory, COLUMNS=80,
LC_ALL=C.UTF-8, TZ=UTC, no PYTHONHASHSEED), two cases at a time. The test fails if any byte
differs, showing a unified diff of the first differing case and the ids of all of them.

Regenerate (only after a deliberate change of output; review the diff):
``python tests/cli/test_golden_outputs.py --regenerate [CASE ...]``. Check that every case is
deterministic (runs all of them N more times, under different hash seeds, and compares):
``python tests/cli/test_golden_outputs.py --repeat N``.

A golden file holds, per step: the command line (``$ histor-sign ...``), ``stdin: N bytes``
when the step reads standard input, ``exit: CODE``, then ``stdout: N bytes`` and
``stderr: N bytes`` each followed by exactly those bytes; then, per file the case names,
``file PATH: N bytes`` (or ``file PATH: absent``) and its bytes. A block that does not end in a
newline is followed by ``\\ no newline at end``. The byte counts make the format unambiguous.
A case marked ``large`` keeps its stdout as ``stdout: N bytes, sha256 HEX (not kept)``: still
byte-exact, without a readable diff (run its command line to see the output).

Normalizations — the only ones, each applied to stdout, stderr and captured files:

1. the case's working directory (a fresh temporary directory; also its resolved path)
   becomes ``<WORK>``: commands that print an absolute path (the default pin file under
   ``$XDG_CONFIG_HOME``, which points into it) print it under this directory;
2. the repository's absolute path (also resolved) becomes ``<REPO>``;
3. in cases marked ``fetched`` only (``fetch`` of the example server, whose snapshot records
   when it was taken): the value of ``"fetchedAt": "YYYY-MM-DDTHH:MM:SSZ"`` becomes
   ``<FETCHED-AT>``.

Nothing else is rewritten: a difference anywhere else fails the test.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from golden_cases import CASES, GOLDEN, REPO, Case, build_inputs, case_environment

CASES_DIR = GOLDEN / "cases"
SUFFIX = ".golden"
WORKERS = max(1, min(2, os.cpu_count() or 1))
STEP_TIMEOUT = 120.0
FETCHED_AT = re.compile(rb'"fetchedAt": "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"')


def _paths(path: Path) -> list[bytes]:
    """A path as it may be printed: as given and resolved (longest first)."""
    forms = {os.fsencode(path), os.fsencode(path.resolve())}
    return sorted(forms, key=len, reverse=True)


def normalize(data: bytes, work: Path, case: Case) -> bytes:
    for form in _paths(work):
        data = data.replace(form, b"<WORK>")
    for form in _paths(REPO):
        data = data.replace(form, b"<REPO>")
    if case.fetched:
        data = FETCHED_AT.sub(b'"fetchedAt": "<FETCHED-AT>"', data)
    return data


def _block(label: str, data: bytes) -> bytes:
    out = f"{label}: {len(data)} bytes\n".encode() + data
    if data and not data.endswith(b"\n"):
        out += b"\n\\ no newline at end\n"
    return out


def fresh_copy(inputs: Path, work: Path) -> None:
    """``work``: a copy of ``inputs`` in which files are hard links (cheap: a copy for each
    of 120 cases costs seconds), except under ``inputs/``, the only place a case rewrites an
    existing file (a pin file). Every other file a case writes is a new one."""
    def link_or_copy(src: str, dst: str) -> None:
        if Path(src).relative_to(inputs).parts[0] != "inputs":
            try:
                os.link(src, dst)
                return
            except OSError:
                pass
        shutil.copy2(src, dst)

    shutil.copytree(inputs, work, symlinks=True, copy_function=link_or_copy)


def run_case(case: Case, inputs: Path, root: Path, extra_env: dict[str, str] | None = None,
             ) -> bytes:
    """Run every step of ``case`` in a fresh copy of ``inputs``; its golden bytes."""
    work = root / case.id
    fresh_copy(inputs, work)
    env = case_environment(work)
    out = [f"# golden output of histor-sign, case {case.id} (tests/cli/golden_cases.py)\n"
           .encode()]
    for step in case.steps:
        proc = subprocess.run(
            [sys.executable, "-m", "histor_sign", *step.argv],
            input=step.stdin if step.stdin is not None else b"",
            capture_output=True, cwd=work, env={**env, **dict(step.env), **(extra_env or {})},
            timeout=STEP_TIMEOUT, check=False,
        )
        out.append(f"\n$ {step.shown()}\n".encode())
        if step.stdin is not None:
            out.append(f"stdin: {len(step.stdin)} bytes\n".encode())
        out.append(f"exit: {proc.returncode}\n".encode())
        stdout = normalize(proc.stdout, work, case)
        if case.large:
            digest = hashlib.sha256(stdout).hexdigest()
            out.append(f"stdout: {len(stdout)} bytes, sha256 {digest} (not kept)\n".encode())
        else:
            out.append(_block("stdout", stdout))
        out.append(_block("stderr", normalize(proc.stderr, work, case)))
    for name in case.files:
        path = work / name
        out.append(b"\n")
        if path.is_file():
            out.append(_block(f"file {name}", normalize(path.read_bytes(), work, case)))
        else:
            out.append(f"file {name}: absent\n".encode())
    shutil.rmtree(work, ignore_errors=True)
    return b"".join(out)


def run_all(cases: Iterable[Case], root: Path, extra_env: dict[str, str] | None = None,
            ) -> dict[str, bytes]:
    """Every case's golden bytes, ``WORKERS`` cases at a time."""
    inputs = build_inputs(root / "inputs")
    before = _contents(inputs)
    cases = list(cases)
    with ThreadPoolExecutor(WORKERS) as pool:
        results = pool.map(lambda c: run_case(c, inputs, root, extra_env), cases)
        outputs = {c.id: r for c, r in zip(cases, results, strict=True)}
    changed = sorted(set(before.items()) ^ set(_contents(inputs).items()))
    assert not changed, f"a case wrote through a hard link into the shared inputs: {changed}"
    return outputs


def _contents(tree: Path) -> dict[str, str]:
    return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(tree.rglob("*")) if p.is_file()}


def golden_path(case_id: str) -> Path:
    return CASES_DIR / f"{case_id}{SUFFIX}"


def unified_diff(expected: bytes, actual: bytes, name: str, limit: int = 200) -> str:
    lines = list(difflib.unified_diff(
        expected.decode("utf-8", "backslashreplace").splitlines(keepends=True),
        actual.decode("utf-8", "backslashreplace").splitlines(keepends=True),
        f"golden/{name}", f"actual/{name}", n=3,
    ))
    if not lines:  # the same text, other bytes (cannot happen with valid UTF-8)
        return f"{name}: same text, different bytes\n"
    shown = [line if line.endswith("\n") else line + "\n\\ no newline at end of file\n"
             for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"... ({len(lines) - limit} more diff lines)\n")
    return "".join(shown)


def test_every_case_has_its_golden_file_and_no_other() -> None:
    expected = {golden_path(c.id).name for c in CASES}
    present = {p.name for p in CASES_DIR.iterdir()} if CASES_DIR.is_dir() else set()
    assert sorted(expected - present) == [], "cases without a golden file: regenerate"
    assert sorted(present - expected) == [], "golden files of no case: remove them"


@pytest.mark.slow  # ~130 CLI processes: about 40 s on two idle cores
def test_cli_output_is_byte_identical_to_the_goldens(tmp_path: Path) -> None:
    actual = run_all(CASES, tmp_path)
    differing = []
    for case in CASES:
        path = golden_path(case.id)
        expected = path.read_bytes() if path.is_file() else b""
        if actual[case.id] != expected:
            differing.append((case.id, expected))
    if differing:
        first, expected = differing[0]
        pytest.fail(
            f"{len(differing)} of {len(CASES)} golden CLI outputs differ: "
            f"{', '.join(i for i, _ in differing)}\n\nfirst differing case, {first}:\n"
            + unified_diff(expected, actual[first], golden_path(first).name)
            + "\n(if the change is deliberate: python tests/cli/test_golden_outputs.py "
            "--regenerate, and review the diff)",
            pytrace=False,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--regenerate", action="store_true",
                        help="write the golden files (all, or the CASE ids given)")
    parser.add_argument("--repeat", type=int, metavar="N", default=0,
                        help="run every case N more times, with PYTHONHASHSEED 1..N, "
                        "and report the cases whose output differs between runs")
    parser.add_argument("cases", nargs="*", metavar="CASE")
    args = parser.parse_args(argv)
    known = {c.id: c for c in CASES}
    unknown = [i for i in args.cases if i not in known]
    if unknown:
        parser.error(f"unknown case ids: {', '.join(unknown)}")
    selected = [known[i] for i in args.cases] if args.cases else CASES
    if not args.regenerate and not args.repeat:
        parser.error("give --regenerate and/or --repeat N (the check itself runs under pytest)")
    with tempfile.TemporaryDirectory(prefix="histor-golden-") as tmp:
        started = time.monotonic()
        first = run_all(selected, Path(tmp) / "run-0")
        print(f"ran {len(selected)} cases in {time.monotonic() - started:.1f} s")
        unstable: set[str] = set()
        for n in range(1, args.repeat + 1):
            again = run_all(selected, Path(tmp) / f"run-{n}", {"PYTHONHASHSEED": str(n)})
            for case in selected:
                if again[case.id] != first[case.id]:
                    if case.id not in unstable:
                        print(unified_diff(first[case.id], again[case.id], case.id, 40))
                    unstable.add(case.id)
        if unstable:
            print(f"NOT deterministic: {', '.join(sorted(unstable))}")
        if args.regenerate:
            if unstable:
                print("nothing written: make these cases deterministic first")
                return 1
            CASES_DIR.mkdir(parents=True, exist_ok=True)
            if not args.cases:
                for stale in CASES_DIR.glob(f"*{SUFFIX}"):
                    if stale.stem not in known:
                        stale.unlink()
            for case in selected:
                golden_path(case.id).write_bytes(first[case.id])
            print(f"wrote {len(selected)} golden files to {CASES_DIR.relative_to(REPO)}")
    return 1 if unstable else 0


if __name__ == "__main__":
    raise SystemExit(main())
