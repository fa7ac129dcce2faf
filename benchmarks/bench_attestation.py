"""Benchmark: what the in-toto attestation adds.

* ``histor-sign verify ENVELOPE`` against ``verify ENVELOPE --attestation A`` (same run, CLI,
  offline) — the added cost of checking the attestation on every axis;
* ``verify --attestation`` against ``sigstore verify identity --offline`` of the companion
  bundle (an upstream baseline measured in the same run);
* building + reading back the statement(s) of a 2,000-tool server (in-process), against
  computing its HISTOR digests.

Run: python benchmarks/bench_attestation.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench_verify import ISSUER, WF, wall  # noqa: E402

from histor_sign._sigstore_trust import Trust  # noqa: E402
from histor_sign.canonical import read_json_file  # noqa: E402
from histor_sign.revision import build_statement, digests  # noqa: E402
from histor_sign.signing import sign_statement  # noqa: E402
from histor_sign.sigstore_dev import LocalSigstore  # noqa: E402


def in_process(fn, runs: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    import base64

    from histor_sign.attestation import INTOTO_PAYLOAD_TYPE, build_attestation, parse_attestation

    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    work = Path(tempfile.mkdtemp(prefix="bench-attestation-"))
    tools = read_json_file(str(REPO / "examples" / "docs-tools.json"))["tools"]
    stmt = build_statement(tools=tools, server="io.github.octo-org/docs", identity=WF,
                           server_version="1.0.0")
    with LocalSigstore(directory=work) as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)
        start = time.perf_counter()
        sign_statement(stmt, trust=trust, identity_token=inst.mint_token(WF)).write(
            work / "release.envelope.json")
        sign_time = time.perf_counter() - start
        config = inst.trust_config_path
    envelope = str(work / "release.envelope.json")
    attestation = str(work / "release.intoto.sigstore.json")
    base = [sys.executable, "-m", "histor_sign", "verify", "--cert-identity", WF,
            "--trust-config", str(config), "--offline"]
    envelope_only = wall([*base, envelope], runs)
    both = wall([*base, envelope, "--attestation", attestation], runs)
    attestation_only = wall([*base, "--attestation", attestation], runs)
    upstream = wall([sys.executable, "-m", "sigstore", "--trust-config", str(config), "verify",
                     "identity", "--offline", "--bundle", str(work / "release.sigstore.json"),
                     "--cert-identity", WF, "--cert-oidc-issuer", ISSUER,
                     str(work / "release.statement.json")], runs)

    many = [{"name": f"tool_{i:05d}", "description": f"Tool number {i}.",
             "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}
            for i in range(2000)]
    big = build_statement(tools=many, server="io.github.octo-org/docs", identity=WF,
                          server_version="1.0.0")

    def round_trip() -> None:
        parts = build_attestation(big, issuer=ISSUER, identity=WF)
        parse_attestation([{"dsseEnvelope": {"payloadType": INTOTO_PAYLOAD_TYPE,
                                             "payload": base64.b64encode(p).decode()}}
                           for p in parts], "bench")

    attest_time = in_process(round_trip, runs)
    digest_time = in_process(lambda: digests(many), runs)

    print(f"runs per measurement: {runs} (median wall time)")
    print(f"sign (hashedrekord + attestation, local instance) {sign_time * 1000:8.1f} ms (1 run)")
    print(f"verify ENVELOPE                                   {envelope_only * 1000:8.1f} ms")
    print(f"verify ENVELOPE --attestation A                   {both * 1000:8.1f} ms")
    print(f"  ratio (both / envelope only)                    {both / envelope_only:8.2f}x")
    print(f"verify --attestation A                            {attestation_only * 1000:8.1f} ms")
    print(f"sigstore verify identity --offline (baseline)     {upstream * 1000:8.1f} ms")
    print(f"  ratio (attestation / sigstore)                  {attestation_only / upstream:8.2f}x")
    print(f"2,000 tools: build + read back 2 statements       {attest_time * 1000:8.1f} ms")
    print(f"2,000 tools: HISTOR digests (baseline)            {digest_time * 1000:8.1f} ms")
    print(f"  ratio                                           {attest_time / digest_time:8.2f}x")


if __name__ == "__main__":
    main()
