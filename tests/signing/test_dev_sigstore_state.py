"""``dev-sigstore --state DIR`` keeps keys and log across restarts, and mints tokens for
several ``--token-for`` identities: a tag-to-tag chain rehearsed on one trust root."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sigstore_testkit import (
    REPO,
    TOOLS_V1,
    TOOLS_V2,
    WF_ALICE,
    assert_bad_input,
    cli_env,
    run_main,
    statement,
    write_statement,
)

pytestmark = pytest.mark.slow

WF_TAG1 = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/v1.0.0"
WF_TAG2 = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/v2.0.0"


class DevSigstore:
    """``histor-sign dev-sigstore`` in the foreground, as a user runs it."""

    def __init__(self, tmp: Path, *args: str) -> None:
        self.trust = tmp / "trust.json"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "histor_sign", "dev-sigstore", "--trust-config-out",
             str(self.trust), *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=cli_env(), cwd=REPO,
            text=True,
        )
        assert self.proc.stderr is not None
        self.banner = ""
        for line in self.proc.stderr:  # the event: the instance says it listens
            if "listening on" in line:
                self.banner = line
                break
        assert self.banner, self.proc.wait(timeout=30)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.communicate(timeout=30)
        assert self.proc.returncode == 0


def sign(tmp: Path, name: str, stmt_doc: object, token: Path, trust: Path) -> Path:
    stmt = write_statement(tmp / f"{name}.json", stmt_doc)  # type: ignore[arg-type]
    out = tmp / f"{name}.envelope.json"
    run = run_main("sign", str(stmt), "-o", str(out), "--identity-token",
                   token.read_text(), "--trust-config", str(trust))
    assert run.code == 0, run.stderr
    return out


def test_state_keeps_keys_and_log_across_a_restart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    tokens = [tmp_path / "t-main", tmp_path / "t-tag1"]
    first = DevSigstore(tmp_path, "--state", str(state), "--token-for", WF_ALICE,
                        "--token-out", str(tokens[0]), "--token-for", WF_TAG1,
                        "--token-out", str(tokens[1]))
    try:
        assert f"state in {state} (new, 1 log entries)" in first.banner
        s1 = statement("io.github.alice/docs", WF_TAG1, TOOLS_V1)
        rev1 = sign(tmp_path, "rev1", s1, tokens[1], first.trust)
        # the other identity's token works too
        sign(tmp_path, "main", statement("io.github.alice/docs", WF_ALICE, TOOLS_V1),
             tokens[0], first.trust)
    finally:
        first.stop()
    assert stat.S_IMODE(os.stat(state / "dev-sigstore.state.json").st_mode) == 0o600
    root_before = [ca["certChain"] for ca in
                   json.loads(first.trust.read_text())["trustedRoot"]["certificateAuthorities"]]

    token2 = tmp_path / "t-tag2"
    second = DevSigstore(tmp_path, "--state", str(state), "--token-for", WF_TAG2,
                         "--token-out", str(token2))
    try:
        assert f"state in {state} (restored, 5 log entries)" in second.banner
        rev2 = sign(tmp_path, "rev2", statement("io.github.alice/docs", WF_TAG2, TOOLS_V2,
                                                previous=s1, version="2.0.0"),
                    token2, second.trust)
    finally:
        second.stop()
    trust_after = json.loads(second.trust.read_text())["trustedRoot"]
    # the same CA (only the URL, with its port, is new)
    assert [ca["certChain"] for ca in trust_after["certificateAuthorities"]] == root_before
    verified = run_main("verify", str(rev2), "--previous", str(rev1), "--repository",
                        "alice/docs", "--workflow", ".github/workflows/sign.yml",
                        "--ref-pattern", "refs/tags/v*", "--trust-config", str(second.trust),
                        "--format", "json")
    assert verified.code == 0, verified.stderr
    assert json.loads(verified.stdout)["verified"] is True


@pytest.mark.parametrize("args", [
    ["--token-for", WF_ALICE, "--token-for", WF_TAG1, "--token-out", "one"],
    ["--token-for", WF_ALICE, "--token-for", WF_TAG1, "--github-env-out", "env"],
], ids=["outs-fewer-than-identities", "env-out-with-two-identities"])
def test_token_flag_pairing_errors(tmp_path: Path, args: list[str]) -> None:
    run = run_main("dev-sigstore", "--trust-config-out", str(tmp_path / "t.json"), *args)
    assert_bad_input(run)
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("state", [
    "[]", '{"type": "histor.dev-sigstore-state/v1"}', "\u202e not json", "\xff",
    '{"type": "histor.dev-sigstore-state/v1", "log": {"version": 1}, "tsa": null, '
    '"notBefore": "x"}', "<fifo>", "<directory>",
], ids=["list", "no-parts", "bidi-text", "not-utf8", "bad-date", "fifo", "directory"])
def test_a_hostile_state_file_is_one_error_line(tmp_path: Path, state: str) -> None:
    kept = tmp_path / "state"
    kept.mkdir()
    path = kept / "dev-sigstore.state.json"
    if state == "<fifo>":
        os.mkfifo(path)  # never read: it would wait for a writer forever
    elif state == "<directory>":
        path.mkdir()
    else:
        path.write_bytes(state.encode("utf-8", "surrogateescape") if state != "\xff"
                         else b"\xff")
    run = run_main("dev-sigstore", "--trust-config-out", str(tmp_path / "t.json"),
                   "--state", str(kept))
    assert_bad_input(run)
    assert "not a usable dev-sigstore state file" in run.stderr, run.stderr
    assert "\u202e" not in run.stderr and not (tmp_path / "t.json").exists()
