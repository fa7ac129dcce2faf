"""Start-up and the release command, against baselines measured in the same run.

``histor-sign --help`` against ``python -c 'import typer'`` (the CLI framework we cannot
avoid), and which heavy modules ``--help`` imported anyway; ``histor-sign release`` of a
catalog file (scan gate, build, sign, verify, write) on a local Sigstore instance against
``sigstore sign`` of the statement (the signing step alone) on the same instance; and the
modules a release imports that it never uses. Ratio = histor-sign / baseline.
Run: ``python benchmarks/bench_startup.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _harness import Case, Sample, bench_env, run_cases, run_command  # noqa: E402

HEAVY = ("sigstore", "jsonschema", "jsonschema_rs", "httpx", "asyncio", "cryptography", "rich")
#: Never used by a release of a catalog file (signing itself needs sigstore, its ``oidc``
#: module for the identity token, and ``requests``): none of these may be imported.
UNUSED_BY_RELEASE = ("jsonschema", "jsonschema_rs", "mcp", "httpx", "asyncio", "anyio", "rich")
IDENTITY = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"


def heavy_imports() -> list[str]:
    code = (
        "import sys; sys.argv=['histor-sign','--help']\n"
        "from histor_sign.cli import main\n"
        "try: main()\nexcept SystemExit: pass\n"
        f"print('HEAVY:' + ','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=bench_env(), check=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("HEAVY:"))
    return [m for m in line.removeprefix("HEAVY:").split(",") if m]


def release_imports(argv: list[str]) -> list[str]:
    """Which of :data:`UNUSED_BY_RELEASE` a real release run imported."""
    code = (
        "import sys, runpy\n"
        f"sys.argv = {['histor-sign', *argv]!r}\n"
        "try:\n    runpy.run_module('histor_sign', run_name='__main__')\n"
        "except SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('MODS:' + ','.join(m for m in {UNUSED_BY_RELEASE!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=bench_env(), cwd=REPO)
    if out.returncode:
        raise SystemExit(out.stderr[-2000:])
    line = next(x for x in out.stdout.splitlines() if x.startswith("MODS:"))
    return [m for m in line.removeprefix("MODS:").split(",") if m]


def unused_by_release() -> list[str]:
    from histor_sign.sigstore_dev import LocalSigstore

    work = Path(tempfile.mkdtemp(prefix="bench-release-imports-"))
    tools = work / "tools.json"
    tools.write_bytes((REPO / "examples" / "docs-tools.json").read_bytes())
    with LocalSigstore(directory=work / "sigstore") as inst:
        return release_imports([
            "release", "--server", "io.github.example/notes-server", "--server-version",
            "1.0.0", "--out-dir", str(work / "out"), "--trust-config",
            str(inst.trust_config_path), "--tools", str(tools),
            "--identity-token", inst.mint_token(IDENTITY)])


def cases(quick: bool = False) -> list[Case]:
    from histor_sign.canonical import read_json_file
    from histor_sign.revision import build_statement
    from histor_sign.sigstore_dev import LocalSigstore

    py = sys.executable
    runs = 5 if quick else 11
    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    tools = work / "tools.json"
    tools.write_bytes((REPO / "examples" / "docs-tools.json").read_bytes())
    stmt = build_statement(tools=read_json_file(str(tools))["tools"],
                           server="io.github.example/notes-server", identity=IDENTITY,
                           server_version="1.0.0")
    (work / "statement.json").write_text(json.dumps(stmt.to_json()))
    state: dict[str, object] = {"n": 0}

    def start() -> None:
        inst = LocalSigstore(directory=work / "sigstore")
        inst.__enter__()
        state["inst"] = inst

    def end() -> None:
        inst = state.pop("inst")
        inst.__exit__(None, None, None)  # type: ignore[attr-defined]

    def release_argv() -> list[str]:
        inst = state["inst"]
        state["n"] = int(str(state["n"])) + 1
        return ["release", "--server", "io.github.example/notes-server", "--server-version",
                "1.0.0", "--out-dir", str(work / f"out{state['n']}"), "--trust-config",
                str(inst.trust_config_path), "--tools", str(tools),  # type: ignore[attr-defined]
                "--identity-token", inst.mint_token(IDENTITY)]  # type: ignore[attr-defined]

    def ours_release() -> Sample:
        return run_command([py, "-m", "histor_sign", *release_argv()])

    def sigstore_sign() -> Sample:
        inst = state["inst"]
        state["n"] = int(str(state["n"])) + 1
        bundle = work / f"stmt{state['n']}.sigstore.json"
        return run_command([py, "-m", "sigstore", "--trust-config",
                            str(inst.trust_config_path), "sign",  # type: ignore[attr-defined]
                            "--identity-token", inst.mint_token(IDENTITY),  # type: ignore[attr-defined]
                            "--bundle", str(bundle), str(work / "statement.json")])

    return [
        Case("histor-sign --help", "cli",
             lambda: run_command([py, "-m", "histor_sign", "--help"]),
             lambda: run_command([py, "-c", "import typer"]), "python -c 'import typer'",
             runs),
        Case("histor-sign --version", "cli",
             lambda: run_command([py, "-m", "histor_sign", "--version"]),
             lambda: run_command([py, "-c", "import typer"]), "python -c 'import typer'",
             runs),
        Case("histor-sign digest (one command module)", "cli",
             lambda: run_command([py, "-m", "histor_sign", "digest", "--format", "json",
                                  str(REPO / "examples" / "docs-tools.json")]),
             lambda: run_command([py, "-c", "import typer"]), "python -c 'import typer'",
             runs),
        Case("release of a catalog file (command)", "cli", ours_release, sigstore_sign,
             "sigstore sign (the signing step alone)", runs, setup=start, teardown=end),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    run_cases(cases(args.quick), args.json)
    print(f"heavy modules imported by --help: {heavy_imports() or 'none'}")
    print(f"modules a release of a catalog file imports but never uses: "
          f"{unused_by_release() or 'none'}")


if __name__ == "__main__":
    main()
