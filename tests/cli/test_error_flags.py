"""Library errors name parameters and carry fields; only the CLI spells them as flags."""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from typer.main import get_command

from histor_sign.cli.app import FLAGS, app, cli_message, load_commands
from histor_sign.errors import (
    CheckFailed,
    GateFailed,
    HistorError,
    LimitExceeded,
    UsageError,
)
from histor_sign.mcp import FetchOptions, Target, fetch
from histor_sign.mcp._target import parse_header

PACKAGE = Path(__file__).resolve().parents[2] / "histor_sign"
EXAMPLE_SERVER = [sys.executable, "-m", "histor_sign.demo.example_server"]
FLAG = re.compile(r"(?<![\w-])--[a-z]")

#: Programs with their own argument parser: their flags are theirs to name; and the host
#: config writer, whose job is to write ``histor-sign proxy --server …`` command lines.
OWN_CLI = {"demo/example_server.py", "hostconfig.py"}
#: Another program's flags a module reads in a command line it is given (npx's ``--yes``).
FOREIGN_FLAGS = {"artifacts.py": {"--yes"}}


# --- the CLI's mapping ---------------------------------------------------------------------


def test_mention_becomes_the_flag() -> None:
    exc = LimitExceeded("tools/list has more than `max_pages` 5 pages", limit="max_pages", value=5)
    assert cli_message(exc) == "tools/list has more than --max-pages 5 pages"


def test_unmentioned_parameter_becomes_a_prefix() -> None:
    assert cli_message(UsageError("the command is empty", param="command")) == (
        "--stdio: the command is empty"
    )


def test_alternatives_are_spelled_too_but_never_prefixed() -> None:
    exc = UsageError("give it once: `bearer_token` or `headers`", param="bearer_token",
                     alternatives=("headers", "url"))
    assert cli_message(exc) == "give it once: --bearer-token-env or --header"


def test_unknown_or_missing_parameter_leaves_the_message() -> None:
    assert cli_message(UsageError("`nope` is wrong", param="nope")) == "`nope` is wrong"
    assert cli_message(HistorError("`max_bytes` untouched")) == "`max_bytes` untouched"


def test_every_fetch_parameter_maps_to_a_flag_the_fetch_command_has() -> None:
    load_commands(["fetch"])
    command = get_command(app).commands["fetch"]  # type: ignore[attr-defined]
    declared = {opt for param in command.params for opt in param.opts}
    names = {f.name for f in fields(FetchOptions)} - {"progress", "shutdown_grace"}
    names |= {"command", "url", "headers", "bearer_token"}
    for name in names:
        assert FLAGS[name] in declared, name


# --- the library's errors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "param"),
    [
        (lambda: FetchOptions(max_pages=0), "max_pages"),
        (lambda: FetchOptions(max_bytes=-1), "max_bytes"),
        (lambda: FetchOptions(timeout=float("inf")), "timeout"),
        (lambda: FetchOptions(total_timeout=0), "total_timeout"),
        (lambda: Target.stdio("'open"), "command"),
        (lambda: Target.stdio([]), "command"),
        (lambda: Target.http("ftp://host/mcp"), "url"),
        (lambda: Target.http("https://u:p@host/mcp"), "url"),
        (lambda: parse_header("novalue"), "headers"),
        (lambda: Target.http("https://host/mcp", headers=[("Mcp-Method", "x")]), "headers"),
    ],
)
def test_usage_errors_name_the_parameter_not_a_flag(build: object, param: str) -> None:
    with pytest.raises(UsageError) as caught:
        build()  # type: ignore[operator]
    assert caught.value.param == param
    assert not FLAG.search(caught.value.message)


@pytest.mark.parametrize(
    ("options", "limit", "value"),
    [(FetchOptions(max_tools=2), "max_tools", 2), (FetchOptions(max_pages=1), "max_pages", 1),
     (FetchOptions(max_bytes=300), "max_bytes", 300)],
)
def test_limits_carry_the_bound(options: FetchOptions, limit: str, value: int) -> None:
    with pytest.raises(LimitExceeded) as caught:
        fetch(Target.stdio(EXAMPLE_SERVER), options)
    exc = caught.value
    assert (exc.limit, exc.param, exc.value) == (limit, limit, value)
    assert f"`{limit}` {value}" in exc.message and not FLAG.search(exc.message)


def test_gate_failure_carries_its_outcome() -> None:
    outcome = object()
    exc = GateFailed("findings reached `fail_on` error", outcome=outcome, param="fail_on")
    assert isinstance(exc, CheckFailed) and exc.exit_code == 1
    assert exc.outcome is outcome and exc.detail is outcome
    assert cli_message(exc) == "findings reached --fail-on error"


def test_identity_errors_name_their_parameter() -> None:
    from histor_sign.pipeline import IdentityNotSigner
    from histor_sign.signing import NoIdentityToken
    from histor_sign.verification import IdentityPinRequired

    claimed = IdentityNotSigner("a", "b")
    assert (claimed.param, claimed.claimed, claimed.signer) == ("identity", "a", "b")
    assert cli_message(claimed) == (
        "--identity 'a' is not the identity in the OIDC token ('b'); a revision can only "
        "claim the workflow that signs it (omit --identity to use it)"
    )
    assert cli_message(NoIdentityToken()) == (
        "no identity token: pass --identity-token, or run in GitHub Actions with "
        "'permissions: id-token: write'"
    )
    pin = IdentityPinRequired("example.com/x")
    assert pin.param == "cert_identity" and not FLAG.search(pin.message)
    assert cli_message(pin) == (
        "server 'example.com/x' is outside io.github.*, so there is no namespace to tie the "
        "certificate to: pass --cert-identity (as cosign's keyless verify requires), "
        "--cert-identity-regexp, or --workflow with --repository"
    )


def test_catalog_limits_carry_the_bound() -> None:
    from histor_sign.models import parse_catalog

    with pytest.raises(LimitExceeded) as caught:
        parse_catalog({"tools": [{"name": "a"}, {"name": "b"}]}, "c.json", max_tools=1)
    assert (caught.value.limit, caught.value.value) == ("max_tools", 1)
    assert cli_message(caught.value) == "c.json: 2 tools is more than --max-tools 1"


def _string_literals(tree: ast.AST) -> list[ast.Constant]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_library_string_names_a_cli_flag() -> None:
    offenders: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("cli/") or rel in OWN_CLI:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hits = [n.value for n in _string_literals(tree) if FLAG.search(n.value)
                and n.value not in FOREIGN_FLAGS.get(rel, set())]
        if hits:
            offenders[rel] = hits
    assert not offenders, offenders
