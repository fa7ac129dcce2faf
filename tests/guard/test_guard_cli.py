"""``histor-sign guard`` as a user runs it: exit codes, human and JSON output, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_harness import assert_clean_error, run_cli
from guard_fixtures import SEED_POLICY_TOML, SEED_TOOLS

from histor_sign.revision import build_statement


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "tools.json").write_text(json.dumps({"tools": SEED_TOOLS}))
    (tmp_path / "guard.toml").write_text(SEED_POLICY_TOML)
    return tmp_path


def write(path: Path, value: object) -> str:
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def test_allow_and_deny(files: Path) -> None:
    good = write(files / "good.json", {"name": "update_user_email", "arguments": json.dumps(
        {"user_id": 42, "email": "ada@example.com", "dry_run": True})})
    run = run_cli("guard", "--catalog", str(files / "tools.json"),
                  "--policy", str(files / "guard.toml"), good)
    assert run.code == 0 and run.stdout.startswith("ALLOW update_user_email"), run
    bad = write(files / "bad.json", {"name": "update_user_email", "arguments": {
        "user_id": "42", "email": "ada@example.com", "dry_run": False, "admin": True}})
    run = run_cli("guard", "--catalog", str(files / "tools.json"), bad)
    assert run.code == 1 and run.stdout.startswith("DENY update_user_email")
    assert "/user_id  type-mismatch" in run.stdout and "/admin  unknown-argument" in run.stdout
    assert "/dry_run  dry-run-required" in run.stdout and run.stderr == ""


def test_json_output_and_budget(files: Path) -> None:
    call = write(files / "bulk.json", {"type": "function_call", "name": "bulk_update_emails",
                                       "arguments": json.dumps({"user_ids": [1, 2, 3, 4, 5, 6],
                                                                "new_email": "x@example.com",
                                                                "dry_run": True})})
    run = run_cli("guard", "--tools", str(files / "tools.json"),
                  "--policy", str(files / "guard.toml"), "--format", "json", call)
    assert run.code == 1
    doc = json.loads(run.stdout)
    assert doc["decision"] == "deny" and doc["tool"] == "bulk_update_emails"
    assert [r["code"] for r in doc["reasons"]] == ["effect-over-budget"]


def test_malformed_call_file_is_deny_not_crash(files: Path) -> None:
    call = write(files / "broken.json", '{"name": "update_user_email", "arguments": {')
    run = run_cli("guard", "--catalog", str(files / "tools.json"), call)
    assert run.code == 1 and "call-malformed" in run.stdout and "Traceback" not in run.stderr
    run = run_cli("guard", "--catalog", str(files / "tools.json"), "-",
                  stdin=b'{"name": "nope", "arguments": "{}"}')
    assert run.code == 1 and "unknown-tool" in run.stdout


def test_secret_not_echoed_by_cli(files: Path) -> None:
    call = write(files / "s.json", {"name": "search_users",
                                    "arguments": {"query": "a", "api_token": "hunter2-secret"}})
    for fmt in ("human", "json"):
        run = run_cli("guard", "--catalog", str(files / "tools.json"),
                      "--policy", str(files / "guard.toml"), "--format", fmt, call)
        assert run.code == 1 and "/api_token" in run.stdout
        assert "hunter2" not in run.stdout + run.stderr


def test_envelope_drift_denied(files: Path) -> None:
    statement = build_statement(
        tools=SEED_TOOLS, server="io.github.example/users", server_version="1",
        identity="https://github.com/example/users/.github/workflows/s.yml@refs/heads/main")
    envelope = write(files / "release.envelope.json", statement.to_json())
    served = [dict(SEED_TOOLS[0], description="Changed."), *SEED_TOOLS[1:]]
    tools = write(files / "served.json", {"tools": served})
    call = write(files / "c.json", {"name": "update_user_email", "arguments": {
        "user_id": 1, "email": "ada@example.com", "dry_run": True}})
    run = run_cli("guard", "--envelope", envelope, "--tools", tools, call)
    assert run.code == 1 and "not the signed definition" in run.stdout
    run = run_cli("guard", "--envelope", envelope, "--tools", str(files / "tools.json"), call)
    assert run.code == 0, run


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("[defaults]\nrequire_dry_run = true\n", "unknown key defaults.require_dry_run"),
        ("[tools.bulk_update_emails]\nmax_effect = -1\neffect_from = 'user_ids'\n",
         "tools.bulk_update_emails.max_effect must be a non-negative integer"),
        ("[defaults\n", "not valid TOML"),
        ("[tools.nope]\nsecret = ['x']\n", "policy names tool 'nope'"),
    ],
)
def test_malformed_policy_exit_2(files: Path, policy: str, expected: str) -> None:
    call = write(files / "c.json", {"name": "search_users", "arguments": {"query": "a"}})
    run = run_cli("guard", "--catalog", str(files / "tools.json"),
                  "--policy", write(files / "p.toml", policy), call)
    assert_clean_error(run, 2)
    assert "p.toml" in run.stderr and expected in run.stderr


def test_bad_input_exit_2(files: Path) -> None:
    call = write(files / "c.json", {"name": "search_users", "arguments": {"query": "a"}})
    assert_clean_error(run_cli("guard", call), 2)
    assert_clean_error(run_cli("guard", "--catalog", str(files / "missing.json"), call), 2)
    assert_clean_error(run_cli("guard", "--catalog", str(files / "tools.json"),
                               str(files / "missing-call.json")), 2)
    dup = write(files / "dup.json", {"tools": [SEED_TOOLS[0], SEED_TOOLS[0]]})
    assert_clean_error(run_cli("guard", "--catalog", dup, call), 2)


@pytest.mark.parametrize("slot", ["file", "stdin"])
def test_5000_digit_integers_are_deny_not_crash(files: Path, slot: str) -> None:
    digits = "9" * 5000
    shapes = [
        {"name": "update_user_email", "arguments": '{"user_id": ' + digits + "}"},  # OpenAI text
        '{"name": "update_user_email", "arguments": {"user_id": ' + digits + "}}",
    ]
    for shape in shapes:
        text = shape if isinstance(shape, str) else json.dumps(shape)
        if slot == "file":
            run = run_cli("guard", "--catalog", str(files / "tools.json"),
                          write(files / "huge.json", text))
        else:
            run = run_cli("guard", "--catalog", str(files / "tools.json"), "-",
                          stdin=text.encode())
        assert run.code == 1 and run.stdout.startswith("DENY"), run
        assert "malformed" in run.stdout and digits[:20] not in run.stdout + run.stderr
        assert "Traceback" not in run.stderr


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("deep.toml", "a = " + "[" * 5000 + "]" * 5000, "nested too deep"),
    ("inline.toml", "a = " + "{b = " * 3000 + "1" + "}" * 3000, "nested too deep"),
    ("int.toml", "[tools.x]\nmax_effect = " + "9" * 5000, "integer literal is too long"),
])
def test_hostile_toml_policy_is_one_error(files: Path, name: str, text: str,
                                          expected: str) -> None:
    call = write(files / "c.json", {"name": "update_user_email", "arguments": "{}"})
    run = run_cli("guard", "--catalog", str(files / "tools.json"),
                  "--policy", write(files / name, text), call)
    assert_clean_error(run, 2)
    assert expected in run.stderr
