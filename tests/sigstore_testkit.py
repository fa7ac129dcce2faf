"""Shared helpers for signing/verification tests: signed envelopes made once per session
against a real LocalSigstore, which is stopped before any test verifies them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cli_harness import Run, assert_clean_error, cli_env, run_cli  # noqa: F401  (re-exported)

from histor_sign._sigstore_trust import Trust
from histor_sign.models import Statement
from histor_sign.revision import build_statement
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "sigstore"


GH_ISSUER = "https://token.actions.githubusercontent.com"
WF_ALICE = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/heads/main"
WF_ALICE_OTHER = "https://github.com/alice/other/.github/workflows/sign.yml@refs/heads/main"
ALICE_OWNER_ID = "1001"
ALICE_REPO_ID = "2001"

TOOLS_V1 = [
    {
        "name": "search",
        "description": "Search the docs.",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    }
]
TOOLS_V2 = [
    {**TOOLS_V1[0], "description": "Search the private docs."},
    {"name": "fetch", "description": "Fetch a page.", "inputSchema": {"type": "object"}},
]


@dataclass
class SignedSet:
    directory: Path
    trust_config: Path
    trusted_root: Path
    rev1: Path  # io.github.alice/docs revision 1 (TOOLS_V1)
    rev2: Path  # revision 2, chained to rev1 (TOOLS_V2)
    squat: Path  # io.github.mallory/docs signed by alice's workflow
    other_rev1: Path  # io.github.alice/other revision 1 (TOOLS_V2)
    outside: Path  # com.example/docs (no GitHub namespace)
    tools_v1: Path
    tools_v2: Path


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value, indent=2))
    return path


def statement(server: str, identity: str, tools: list[dict[str, Any]], previous: Any = None,
              version: str = "1.0.0") -> Statement:
    return build_statement(
        tools=tools, server=server, identity=identity, server_version=version, previous=previous
    )


def write_statement(path: Path, stmt: Statement) -> Path:
    path.write_bytes(stmt.to_bytes())
    return path


def make_signed_set(directory: Path) -> SignedSet:
    """Sign five envelopes against a fresh LocalSigstore, then stop it."""
    directory.mkdir(parents=True, exist_ok=True)
    with LocalSigstore(directory=directory) as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)

        def sign(name: str, stmt: Statement, identity: str, **claims: Any) -> Path:
            token = inst.mint_token(
                identity, owner_id=ALICE_OWNER_ID, repository_id=ALICE_REPO_ID, **claims
            )
            out = directory / f"{name}.envelope.json"
            sign_statement(stmt, trust=trust, identity_token=token,
                           require_owned_namespace=False).write(out)
            return out

        s1 = statement("io.github.alice/docs", WF_ALICE, TOOLS_V1)
        rev1 = sign("rev1", s1, WF_ALICE)
        s2 = statement("io.github.alice/docs", WF_ALICE, TOOLS_V2, previous=s1, version="1.1.0")
        rev2 = sign("rev2", s2, WF_ALICE)
        squat = sign("squat", statement("io.github.mallory/docs", WF_ALICE, TOOLS_V1), WF_ALICE)
        other = sign(
            "other", statement("io.github.alice/other", WF_ALICE_OTHER, TOOLS_V2), WF_ALICE_OTHER
        )
        outside = sign("outside", statement("com.example/docs", WF_ALICE, TOOLS_V1), WF_ALICE)
        trust_config, trusted_root = inst.trust_config_path, inst.trusted_root_path
    return SignedSet(
        directory=directory,
        trust_config=trust_config,
        trusted_root=trusted_root,
        rev1=rev1,
        rev2=rev2,
        squat=squat,
        other_rev1=other,
        outside=outside,
        tools_v1=write_json(directory / "tools-v1.json", {"tools": TOOLS_V1}),
        tools_v2=write_json(directory / "tools-v2.json", {"tools": TOOLS_V2}),
    )


def run_main(*args: str) -> Any:
    """Run the real CLI entry point in-process (no interpreter start-up per call)."""
    import contextlib
    import io

    from histor_sign.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Run(code, out.getvalue(), err.getvalue())


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("histor-sign: error: ")]


def assert_failed_check(run: Any, axis: str) -> None:
    """Exit 1, no traceback, and the one error line names the failed axis."""
    assert run.code == 1, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    errors = error_lines(run.stderr)
    assert len(errors) == 1, run.stderr
    assert f": {axis}: " in errors[0], errors[0]


def assert_bad_input(run: Any, *needles: str) -> None:
    """Exit 2, one error line (a trust warning may precede it), no traceback, no stdout."""
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    errors = error_lines(run.stderr)
    assert len(errors) == 1, run.stderr
    others = [
        line for line in run.stderr.splitlines()
        if line.strip() and not line.startswith(("histor-sign: error: ", "histor-sign: warning: "))
    ]
    assert not others, run.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]
