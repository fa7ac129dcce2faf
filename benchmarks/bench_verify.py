"""Benchmark: ``histor-sign verify --offline`` against ``sigstore verify identity --offline``
on the same bundle, interleaved in one run, as commands and as library calls. Ratio = histor-sign / sigstore.

Run: ``python benchmarks/bench_verify.py [--quick] [--json]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _harness import Case, run_cases, run_command  # noqa: E402

from histor_sign._sigstore_trust import Trust  # noqa: E402
from histor_sign.canonical import read_json_file  # noqa: E402
from histor_sign.revision import build_statement  # noqa: E402
from histor_sign.signing import sign_statement  # noqa: E402
from histor_sign.sigstore_dev import LocalSigstore  # noqa: E402

WF = "https://github.com/octo-org/docs/.github/workflows/sign.yml@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"


def wall(cmd: list[str], runs: int, expect: int = 0) -> float:
    """Median wall seconds of ``runs`` runs of ``cmd`` (for the benchmarks not yet in the
    runner; they time one side at a time)."""
    times = sorted(run_command(cmd, expect=expect, memory=False).seconds for _ in range(runs))
    return times[len(times) // 2]


def verify_commands(work: Path, config: Path) -> tuple[list[str], list[str]]:
    """(histor-sign verify --offline, sigstore verify identity --offline) of the release
    signed into ``work``: the same bundle, identity and trust config on both sides."""
    py = sys.executable
    ours = [py, "-m", "histor_sign", "verify", str(work / "release.envelope.json"),
            "--cert-identity", WF, "--trust-config", str(config), "--offline"]
    upstream = [py, "-m", "sigstore", "--trust-config", str(config), "verify", "identity",
                "--offline", "--bundle", str(work / "release.sigstore.json"),
                "--cert-identity", WF, "--cert-oidc-issuer", ISSUER,
                str(work / "release.statement.json")]
    return ours, upstream


def _signed_release(work: Path) -> Path:
    """Sign the example catalog on a local Sigstore instance (stopped afterwards: all that
    follows is offline); the trust config path."""
    tools = read_json_file(str(REPO / "examples" / "docs-tools.json"))["tools"]
    stmt = build_statement(tools=tools, server="io.github.octo-org/docs", identity=WF,
                           server_version="1.0.0")
    with LocalSigstore(directory=work) as inst:
        signed = sign_statement(stmt, trust=Trust.from_trust_config(inst.trust_config_path),
                                identity_token=inst.mint_token(WF))
        signed.write(work / "release.envelope.json")
        config = work / "trust-config.json"
        config.write_bytes(Path(inst.trust_config_path).read_bytes())
    return config


def cases(quick: bool = False) -> list[Case]:
    """``histor-sign verify --offline`` (six axes) against ``sigstore verify identity
    --offline`` on the same bundle, as commands (memory summed) and as library calls
    (:func:`histor_sign.verification.verify` against sigstore's ``Verifier.verify_artifact``
    with an ``Identity`` policy, both with their trust already loaded)."""
    from sigstore.models import Bundle, ClientTrustConfig
    from sigstore.verify import Verifier
    from sigstore.verify.policy import Identity

    from histor_sign.verification import verify
    from histor_sign.verification.policy import Pins

    work = Path(tempfile.mkdtemp(prefix="bench-verify-"))
    config = _signed_release(work)
    ours_cli, upstream_cli = verify_commands(work, config)
    trust = Trust.from_trust_config(config)
    pins = Pins(cert_identity=WF)
    envelope = work / "release.envelope.json"
    assert verify(envelope, pins=pins, trust=trust, offline=True).ok
    trust_config = ClientTrustConfig.from_json(config.read_text())
    verifier = Verifier(trusted_root=trust_config.trusted_root)
    bundle_json = (work / "release.sigstore.json").read_text()
    statement = (work / "release.statement.json").read_bytes()
    policy = Identity(identity=WF, issuer=ISSUER)

    def upstream_lib() -> None:
        verifier.verify_artifact(statement, Bundle.from_json(bundle_json), policy)

    runs = 5 if quick else 11
    return [
        Case("verify --offline (command)", "cli", lambda: run_command(ours_cli),
             lambda: run_command(upstream_cli), "sigstore verify identity --offline", runs,
             target=0.8),
        Case("verify offline (library)", "lib",
             lambda: verify(envelope, pins=pins, trust=trust, offline=True),
             upstream_lib, "sigstore Verifier.verify_artifact", runs * 3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer runs")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    run_cases(cases(args.quick), args.json)


if __name__ == "__main__":
    main()
