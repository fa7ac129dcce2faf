"""``check --envelope`` without ``--verify`` compares digests nobody vouched for: its verdict
line says "(signature not verified)"; with ``--verify`` the envelope is verified first and
the verdict names who signed it instead."""

from __future__ import annotations

from cli_harness import run_cli
from sigstore_testkit import WF_ALICE, SignedSet

NOT_VERIFIED = "(signature not verified)"


def test_an_unverified_comparison_says_so_in_its_verdict_line(signed_set: SignedSet) -> None:
    for served, code in ((signed_set.tools_v1, 0), (signed_set.tools_v2, 1)):
        run = run_cli("check", str(served), "--envelope", str(signed_set.rev1))
        assert run.code == code, run.stderr
        verdict, *rest = run.stdout.splitlines()
        assert verdict.startswith(("match", "different")) and verdict.endswith(NOT_VERIFIED)
        assert NOT_VERIFIED not in "\n".join(rest)


def test_a_verified_comparison_does_not(signed_set: SignedSet) -> None:
    run = run_cli("check", str(signed_set.tools_v1), "--envelope", str(signed_set.rev1),
                  "--verify", "--trust-config", str(signed_set.trust_config),
                  "--cert-identity", WF_ALICE, "--offline")
    assert run.code == 0, run.stderr
    assert NOT_VERIFIED not in run.stdout
    assert WF_ALICE in run.stdout.splitlines()[0]
