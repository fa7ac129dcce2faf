"""Flag handling shared by every fetching command: one clear usage error per mistake."""

from __future__ import annotations

import sys

import pytest
from cli_harness import assert_clean_error, run_cli

from histor_sign.errors import UsageError
from histor_sign.mcp._target import Target, parse_header, safe_url

PY = sys.executable


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (("fetch",), None, "give the MCP server to fetch from: --stdio COMMAND or --url URL"),
        (("fetch", "--stdio", "x", "--url", "http://127.0.0.1:1/mcp"), None, "not both"),
        (("fetch", "--stdio", "x", "--header", "A:b"), None, "apply only to --url"),
        (("fetch", "--url", "http://127.0.0.1:1/mcp", "--bearer-token-env", "NOPE_XYZ"), None,
         "environment variable NOPE_XYZ is not set"),
        (("fetch", "--url", "http://127.0.0.1:1/mcp", "--header", "novalue"), None,
         "expected NAME:VALUE"),
        (("fetch", "--url", "http://127.0.0.1:1/mcp", "--header", "Mcp-Session-Id:x"), None,
         "set by histor-sign itself"),
        (("fetch", "--url", "ftp://host/mcp"), None, "expected an http:// or https:// URL"),
        (("fetch", "--url", "https://u:pw@host/mcp"), None, "credentials in the URL"),
        (("fetch", "--stdio", "x", "--timeout", "0"), None, "--timeout must be greater than 0"),
        (("fetch", "--stdio", "x", "--max-pages", "0"), None, "--max-pages must be at least 1"),
        (("fetch", "--stdio", "'unbalanced"), None, "cannot split the command"),
        (("digest", "x.json", "--stdio", "x"), None, "catalog file or --stdio/--url, not both"),
        (("digest",), None, "give a catalog file, or fetch live with --stdio or --url"),
        (("fetch", "--url", "http://127.0.0.1:1/mcp", "--bearer-token-env", "T",
          "--header", "Authorization: Basic zzz"), {"T": "t"}, "give the Authorization header"),
    ],
)
def test_usage_errors(args: tuple[str, ...], env: dict[str, str] | None, expected: str) -> None:
    run = run_cli(*args, env=env)
    assert_clean_error(run, 2)
    assert expected in run.stderr, run.stderr
    assert "zzz" not in run.stderr


def test_target_api() -> None:
    t = Target.stdio("python 'my server.py' --x")
    assert t.command == ("python", "my server.py", "--x")
    assert t.describe() == {"transport": "stdio", "command": ["python", "my server.py", "--x"]}
    h = Target.http("https://h/mcp", headers=[parse_header("X-K: v1")], bearer_token="tok")
    assert "v1" not in repr(h) and "tok" not in repr(h)
    assert h.secrets() == ["tok", "v1"]
    assert safe_url("https://h/mcp?a=1&b") == "https://h/mcp?a=***&b"
    with pytest.raises(UsageError):
        Target()
