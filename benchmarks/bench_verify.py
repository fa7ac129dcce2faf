"""Benchmark: end-to-end ``histor-sign verify --offline`` against ``sigstore verify identity
--offline`` on the same bundle, measured in the same run; and ``histor-sign --help``.

Run: python benchmarks/bench_verify.py [--runs N]
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
sys.path.insert(0, str(REPO))

from histor_sign._sigstore_trust import Trust  # noqa: E402
from histor_sign.canonical import read_json_file  # noqa: E402
from histor_sign.revision import build_statement  # noqa: E402
from histor_sign.signing import sign_statement  # noqa: E402
from histor_sign.sigstore_dev import LocalSigstore  # noqa: E402

WF = "https://github.com/octo-org/docs/.github/workflows/sign.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    e["NO_PROXY"] = "127.0.0.1,localhost"
    return e


def wall(cmd: list[str], runs: int, expect: int = 0) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env(), cwd=REPO)
        times.append(time.perf_counter() - start)
        if proc.returncode != expect:
            raise SystemExit(f"{cmd[:4]}... exited {proc.returncode}: {proc.stderr.decode()}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    tools = read_json_file(str(REPO / "examples" / "docs-tools.json"))["tools"]
    stmt = build_statement(tools=tools, server="io.github.octo-org/docs", identity=WF,
                           server_version="1.0.0")
    with LocalSigstore(directory=work) as inst:
        signed = sign_statement(stmt, trust=Trust.from_trust_config(inst.trust_config_path),
                                identity_token=inst.mint_token(WF))
        signed.write(work / "release.envelope.json")
        config = inst.trust_config_path
    # the instance is stopped: everything below is offline verification

    ours = wall([sys.executable, "-m", "histor_sign", "verify", str(work / "release.envelope.json"),
                 "--cert-identity", WF, "--trust-config", str(config), "--offline"], runs)
    upstream = wall([sys.executable, "-m", "sigstore", "--trust-config", str(config), "verify",
                     "identity", "--offline", "--bundle", str(work / "release.sigstore.json"),
                     "--cert-identity", WF, "--cert-oidc-issuer", ISSUER,
                     str(work / "release.statement.json")], runs)
    help_time = wall([sys.executable, "-m", "histor_sign", "--help"], runs)
    python_start = wall([sys.executable, "-c", "pass"], runs)

    print(f"runs per measurement: {runs} (median wall time)")
    print(f"histor-sign verify --offline (6 axes)   {ours * 1000:8.1f} ms")
    print(f"sigstore verify identity --offline      {upstream * 1000:8.1f} ms")
    print(f"  ratio histor-sign / sigstore          {ours / upstream:8.2f}x")
    print(f"histor-sign --help                      {help_time * 1000:8.1f} ms "
          f"(goal < 200 ms: {'met' if help_time < 0.2 else 'NOT met'})")
    print(f"python -c pass (baseline)               {python_start * 1000:8.1f} ms")
    print(f"  --help minus interpreter start-up     {(help_time - python_start) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
