"""Benchmark: what a pinned check costs. ``check --server`` (latest revision fetched from the
pinned location, verified under the pin, freshness judged, signed tools fetched) against the
baseline ``check --envelope E --verify --cert-identity …`` on the same files, measured in the
same run; and a check that must follow a chain across skipped revisions.

Run: python benchmarks/bench_pins.py [--runs N] [--skip K]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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

SERVER = "io.github.octo-org/docs"
WF = "https://github.com/octo-org/docs/.github/workflows/sign.yml@refs/heads/main"


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    e["NO_PROXY"] = "127.0.0.1,localhost"
    return e


def timed(cmd: list[str], runs: int, before: object = None) -> float:
    times = []
    for _ in range(runs):
        if callable(before):
            before()
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env(), cwd=REPO)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{cmd[:5]}... exited {proc.returncode}: {proc.stderr.decode()}")
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip", type=int, default=10, help="revisions to follow")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-pins-"))
    tools = read_json_file(str(REPO / "examples" / "docs-tools.json"))["tools"]
    pub = work / "published"
    pub.mkdir()
    previous = None
    with LocalSigstore(directory=work / "sigstore") as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)
        for n in range(1, args.skip + 2):
            stmt = build_statement(tools=tools, server=SERVER, identity=WF,
                                   server_version=f"1.{n}.0", previous=previous)
            signed = sign_statement(stmt, trust=trust, identity_token=inst.mint_token(WF))
            (pub / f"{n}.envelope.json").write_bytes(signed.envelope.to_bytes())
            (pub / f"{n}.tools.snapshot.json").write_text(json.dumps({"tools": tools}))
            previous = stmt
        config = inst.trust_config_path
    latest = args.skip + 1
    shutil.copy(pub / f"{latest}.envelope.json", pub / "latest.envelope.json")
    served = work / "served.json"
    served.write_text(json.dumps({"tools": tools}))
    cli = [sys.executable, "-m", "histor_sign"]
    trust_flags = ["--trust-config", str(config)]

    # Pin at the first revision, keep that pin file to restore before each skip-ahead run.
    shutil.copy(pub / "1.envelope.json", pub / "first.envelope.json")
    pins = work / "pins.json"
    subprocess.run([*cli, "trust", "add", SERVER, "--repository", "octo-org/docs",
                    "--envelope", str(pub / "first.envelope.json"), "--pins", str(pins),
                    *trust_flags], check=True, capture_output=True, env=env(), cwd=REPO)
    doc = json.loads(pins.read_text())
    doc["servers"][SERVER]["envelope"] = str(pub)
    pinned_at_1 = json.dumps(doc)

    def reset() -> None:
        pins.write_text(pinned_at_1)

    baseline = timed([*cli, "check", "--envelope", str(pub / "latest.envelope.json"), "--verify",
                      "--cert-identity", WF, *trust_flags, str(served)], args.runs)
    skip = timed([*cli, "check", "--server", SERVER, "--pins", str(pins), *trust_flags,
                  str(served)], args.runs, before=reset)
    current = timed([*cli, "check", "--server", SERVER, "--pins", str(pins), *trust_flags,
                     str(served)], args.runs)  # the pin now is the latest revision

    print(f"runs per measurement: {args.runs} (median wall time), {len(tools)} tools")
    print(f"check --envelope --verify --cert-identity (baseline) {baseline * 1000:8.1f} ms")
    print(f"check --server, pin current                          {current * 1000:8.1f} ms"
          f"  ({current / baseline:.2f}x)")
    print(f"check --server, following {args.skip:>3} revisions            {skip * 1000:8.1f} ms"
          f"  ({skip / baseline:.2f}x; {(skip - current) / args.skip * 1000:.1f} ms/revision)")


if __name__ == "__main__":
    main()
