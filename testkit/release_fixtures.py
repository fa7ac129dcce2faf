"""Two real releases of the bundled example server through a local Sigstore instance.

The instance is stopped before any test verifies or checks what was released, as a
maintainer or client would verify long after the signing job ended.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from cli_harness import run_cli

from histor_sign.sigstore_dev import LocalSigstore

SERVER = "io.github.example/notes-server"
IDENTITY = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"
DRIFT = "search_notes=Search every note, including private notebooks."


def server_command(*extra: str) -> str:
    return shlex.join([sys.executable, "-m", "histor_sign.demo.example_server", *extra])


@dataclass
class Released:
    trust_config: Path
    rev1: Path  # out dir of revision 1 (example server as shipped)
    rev2: Path  # out dir of revision 2 (one description drifted), chained to rev1
    github_output: Path
    step_summary: Path


def release_args(out_dir: Path, trust_config: Path, *extra: str, version: str = "1.0.0") -> list[str]:
    return [
        "release", "--server", SERVER, "--server-version", version,
        "--out-dir", str(out_dir), "--trust-config", str(trust_config), *extra,
    ]


def make_releases(base: Path) -> Released:
    github_output = base / "github_output"
    step_summary = base / "step_summary.md"
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        token = sigstore.mint_token(IDENTITY)
        first = run_cli(*release_args(
            base / "rev1", sigstore.trust_config_path,
            "--stdio", server_command(), "--server-is-trusted-code", "--identity-token", token,
        ))
        assert first.code == 0, first.stderr
        # Revision 2 takes its token the ambient GitHub Actions way.
        env = {
            **sigstore.github_env(IDENTITY),
            "GITHUB_OUTPUT": str(github_output),
            "GITHUB_STEP_SUMMARY": str(step_summary),
        }
        second = run_cli(
            *release_args(
                base / "rev2", sigstore.trust_config_path,
                "--stdio", server_command("--description", DRIFT), "--server-is-trusted-code",
                "--previous", str(base / "rev1" / "envelope.json"), version="1.1.0",
            ),
            env=env,
        )
        assert second.code == 0, second.stderr
        trust_config = sigstore.trust_config_path
    return Released(trust_config, base / "rev1", base / "rev2", github_output, step_summary)
