"""``histor-sign init``: the workflow for the maintainer's case, and one line for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_harness import run_cli


def test_two_job_form_isolates_the_server_from_the_signing_job(tmp_path: Path) -> None:
    out = tmp_path / "sign.yml"
    result = run_cli("init", "--server", "io.github.o/n", "--stdio", "node dist/index.js",
                     "--build", "npm ci", "-o", str(out))
    assert result.code == 0, result.stderr
    assert f"git add {out}" in result.stdout
    jobs = yaml.safe_load(out.read_text())["jobs"]
    snapshot, sign = jobs["snapshot"], jobs["sign"]
    assert snapshot["permissions"] == {"contents": "read"}
    assert sign["needs"] == "snapshot"
    assert sign["permissions"] == {"id-token": "write", "contents": "write"}
    assert any(s.get("run") == "npm ci" for s in snapshot["steps"])
    assert not any("run" in s and "npm" in s["run"] for s in sign["steps"])
    release = next(s for s in sign["steps"] if s.get("id") == "release")
    assert release["with"]["tools"] == "histor-snapshot/tools.snapshot.json"
    assert release["with"]["previous"] == "auto"
    assert "stdio" not in release["with"] and "url" not in release["with"]


def test_single_job_form_runs_the_server_where_it_signs(tmp_path: Path) -> None:
    out = tmp_path / "sign.yml"
    result = run_cli("init", "--server", "io.github.o/n", "--url", "https://h/mcp",
                     "--single-job", "-o", str(out))
    assert result.code == 0, result.stderr
    jobs = yaml.safe_load(out.read_text())["jobs"]
    assert list(jobs) == ["sign"]
    release = next(s for s in jobs["sign"]["steps"] if s.get("id") == "release")
    assert release["with"]["url"] == "https://h/mcp"


@pytest.mark.parametrize(("args", "message"), [
    (["--server", "io.github.o/n"], "exactly one of --stdio"),
    (["--server", "io.github.o/n", "--stdio", "x", "--url", "https://h"], "exactly one of"),
    (["--server", "../evil", "--stdio", "x"], "--server"),
    (["--server", "io.github.o/n", "--stdio", "x", "--action", "owner/repo"], "--action"),
])
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "sign.yml"
    result = run_cli("init", *args, "-o", str(out))
    assert result.code == 2
    assert result.stderr.count("\n") == 1 and message in result.stderr
    assert not out.exists()


def test_an_existing_workflow_is_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "sign.yml"
    out.write_text("mine\n")
    args = ["init", "--server", "io.github.o/n", "--stdio", "x", "-o", str(out)]
    refused = run_cli(*args)
    assert refused.code == 2 and "--force" in refused.stderr
    assert out.read_text() == "mine\n"
    assert run_cli(*args, "--force").code == 0


def test_release_previous_auto_needs_a_revisions_directory(tmp_path: Path) -> None:
    result = run_cli("release", "--server", "io.github.o/n", "--server-version", "1",
                     "--tools", str(tmp_path / "t.json"), "--previous", "auto")
    assert result.code == 2 and "--previous auto needs --revisions" in result.stderr


def test_check_envelope_url_must_be_https(tmp_path: Path) -> None:
    tools = tmp_path / "t.json"
    tools.write_text('{"tools": []}')
    result = run_cli("check", str(tools), "--envelope", "http://example.invalid/e.json")
    assert result.code == 2
    assert result.stderr.startswith("histor-sign: error: --envelope must be a file path, "
                                    "an https:// URL, or an http:// URL on a loopback host")
    assert result.stderr.count("\n") == 1


def test_release_refuses_a_revision_already_published_before_signing(tmp_path: Path) -> None:
    chain = tmp_path / "revisions" / "io.github.o" / "n"
    chain.mkdir(parents=True)
    (chain / "1.envelope.json").write_text("{}")
    tools = tmp_path / "t.json"
    tools.write_text('{"tools": []}')
    # No previous given: this would be revision 1 again, and no token is needed to refuse.
    result = run_cli("release", "--server", "io.github.o/n", "--server-version", "1",
                     "--tools", str(tools), "--revisions", str(tmp_path / "revisions"),
                     "--out-dir", str(tmp_path / "out"))
    assert result.code == 2, result.stderr
    assert "already published" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize("single_job", [False, True])
def test_a_pinned_action_sha_is_used_everywhere_and_not_nagged(
    tmp_path: Path, single_job: bool
) -> None:
    out = tmp_path / "sign.yml"
    extra = ["--single-job"] if single_job else []
    result = run_cli("init", "--server", "io.github.o/n", "--stdio", "x", "-o", str(out),
                     "--action", f"acme/histor-sign@{SHA}", *extra)
    assert result.code == 0, result.stderr
    uses = [s["uses"] for job in yaml.safe_load(out.read_text())["jobs"].values()
            for s in job["steps"] if "uses" in s and "histor-sign" in s["uses"]]
    expected = [f"acme/histor-sign@{SHA}"] if single_job else [
        f"acme/histor-sign/snapshot@{SHA}", f"acme/histor-sign@{SHA}"]
    assert uses == expected
    assert "pin the histor-sign action" not in result.stdout


@pytest.mark.parametrize("ref", ["v1", "main", SHA[:12], SHA.upper()])
def test_a_movable_or_short_ref_is_written_but_flagged(tmp_path: Path, ref: str) -> None:
    out = tmp_path / "sign.yml"
    result = run_cli("init", "--server", "io.github.o/n", "--stdio", "x", "-o", str(out),
                     "--action", f"acme/histor-sign@{ref}")
    assert result.code == 0, result.stderr
    assert f"pin the histor-sign action to a full commit SHA (now acme/histor-sign@{ref}" \
        in result.stdout


def test_the_default_tag_is_explained_in_help_and_flagged(tmp_path: Path) -> None:
    help_text = "".join(run_cli("init", "--help").stdout.split())
    assert "PinafullcommitSHA" in help_text and "Thedefaultisthisversion'sreleasetag" \
        in help_text
    result = run_cli("init", "--server", "io.github.o/n", "--stdio", "x",
                     "-o", str(tmp_path / "sign.yml"))
    assert result.code == 0 and "pin the histor-sign action to a full commit SHA" \
        in result.stdout


def test_monitor_workflow_reads_only_and_stores_the_checkpoint_apart(tmp_path: Path) -> None:
    out = tmp_path / "histor-monitor.yml"
    result = run_cli("init", "--server", "io.github.o/n", "--monitor", "-o", str(out),
                     "--ref-pattern", "refs/tags/v*", "--action", f"acme/histor-sign@{SHA}")
    assert result.code == 0, result.stderr
    assert f"wrote {out} (hourly transparency-log monitor)" in result.stdout
    doc = yaml.safe_load(out.read_text())
    assert doc["permissions"] == {} and "schedule" in doc[True]  # YAML reads `on` as True
    monitor, store = doc["jobs"]["monitor"], doc["jobs"]["store"]
    assert monitor["permissions"] == {"contents": "read"}
    assert store["permissions"] == {"contents": "write"} and store["needs"] == "monitor"
    assert store["concurrency"]["group"] == "histor-sign-chain"
    step = next(s for s in monitor["steps"] if "monitor@" in s.get("uses", ""))
    assert step["uses"] == f"acme/histor-sign/monitor@{SHA}"
    assert step["with"]["checkpoint"] == \
        "histor-revisions/revisions/io.github.o/n/monitor.checkpoint.json"
    assert step["with"]["ref-pattern"] == "refs/tags/v*"
    assert step["with"]["workflow"] == ".github/workflows/sign.yml"
    checkout = monitor["steps"][0]
    assert checkout["with"] == {"ref": "histor-revisions", "path": "histor-revisions",
                                "persist-credentials": False}
    assert not any("histor-sign" in s.get("uses", "") for s in store["steps"])


def test_monitor_default_path_and_bad_input(tmp_path: Path) -> None:
    result = run_cli("init", "--server", "io.github.o/n", "--monitor", cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert (tmp_path / ".github" / "workflows" / "histor-monitor.yml").is_file()
    assert not (tmp_path / ".github" / "workflows" / "sign.yml").exists()
    for args, message in ((["--stdio", "x"], "--monitor runs no server"),
                          (["--workflow", "sign.yml"], "--workflow"),
                          (["--ref-pattern", "main"], "--ref-pattern")):
        bad = run_cli("init", "--server", "io.github.o/n", "--monitor", *args,
                      "-o", str(tmp_path / "m.yml"))
        assert bad.code == 2 and message in bad.stderr and bad.stderr.count("\n") == 1
        assert not (tmp_path / "m.yml").exists()
