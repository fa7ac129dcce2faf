"""``histor-sign monitor`` against a running LocalSigstore (Rekor v1 and the v2 tiled log):
a clean chain, extra signatures by the publisher's workflow from another ref and by another
workflow of the repository, a log that shrinks or forks, resumption after a bounded or an
interrupted run, and identity policies that could never match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_harness import REPO, run_cli
from sigstore_testkit import ALICE_OWNER_ID, ALICE_REPO_ID, error_lines, statement

from histor_sign._chain_store import publish
from histor_sign._sigstore_trust import Trust
from histor_sign.layout import chain_dir
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

SERVER = "io.github.alice/docs"
WORKFLOW = ".github/workflows/release.yml"
WF = f"https://github.com/alice/docs/{WORKFLOW}@refs/heads/main"
WF_BRANCH = f"https://github.com/alice/docs/{WORKFLOW}@refs/heads/evil"
WF_DEPLOY = "https://github.com/alice/docs/.github/workflows/deploy.yml@refs/heads/main"
WF_OTHER_REPO = "https://github.com/bob/tools/.github/workflows/release.yml@refs/heads/main"


def tools(n: int) -> list[dict[str, Any]]:
    return [{"name": "search", "description": f"Search the docs (v{n}).",
             "inputSchema": {"type": "object"}}]


@dataclass
class World:
    inst: LocalSigstore
    trust: Trust
    root: Path
    state: Path
    released: int = 0

    def sign(self, identity: str, n: int = 1, **claims: Any) -> Any:
        """Sign revision ``n`` as ``identity`` (logged, not published)."""
        claims.setdefault("owner_id", ALICE_OWNER_ID)
        claims.setdefault("repository_id", ALICE_REPO_ID)
        previous = None
        if n > 1:
            previous = json.loads((chain_dir(self.root, SERVER)
                                   / f"{n - 1}.envelope.json").read_text())
        stmt = statement(SERVER, identity, tools(n), previous=previous)
        return sign_statement(stmt, trust=self.trust, identity_token=self.inst.mint_token(
            identity, **claims), require_owned_namespace=False)

    def release(self) -> None:
        """Sign and publish the next revision with its attestation (what release does)."""
        self.released += 1
        signed = self.sign(WF, self.released)
        publish(self.root, SERVER, self.released, signed.envelope.to_bytes(),
                json.dumps({"tools": tools(self.released)}).encode(), signed.attestation_json)

    def size(self) -> int:
        return len(self.inst.log.tree)

    def monitor(self, *extra: str) -> Any:
        return run_cli("monitor", "--server", SERVER, "--repository", "alice/docs",
                       "--workflow", WORKFLOW, "--revisions", str(self.root), "--since",
                       str(self.state), "--trust-config", str(self.inst.trust_config_path),
                       *extra)

    def report(self, *extra: str) -> tuple[int, dict[str, Any]]:
        run = self.monitor(*extra, "--format", "json")
        assert "Traceback" not in run.stderr, run.stderr
        return run.code, json.loads(run.stdout)


def make_world(tmp_path: Path, **options: Any) -> Iterator[World]:
    with LocalSigstore(directory=tmp_path / "sigstore", **options) as inst:
        world = World(inst, Trust.from_trust_config(inst.trust_config_path),
                      tmp_path / "revisions", tmp_path / "monitor-state.json")
        world.release()
        world.release()
        yield world


@pytest.fixture(params=[1, 2], ids=["rekor-v1", "rekor-v2-tiles"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    # v2 starts past one full tile of placeholders, so tiles of two levels are read.
    options = {"rekor_version": 2, "first_index": 300} if request.param == 2 else {}
    yield from make_world(tmp_path, **options)


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path)


def alarms(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in report["events"] if e["level"] == "alarm"]


def logged(signed: Any) -> list[int]:
    """The log indexes of a signed revision: its envelope and its attestation part(s)."""
    parts = [json.loads(p)["verificationMaterial"]["tlogEntries"][0]["logIndex"]
             for p in signed.attestation_json]
    return sorted([signed.envelope.transparency_log.log_index, *map(int, parts)])


def indexes(events: list[dict[str, Any]]) -> list[int]:
    return sorted(e["logIndex"] for e in events)


def stored_log(world: World) -> dict[str, Any]:
    """The state file's record of the (one) log of the world's trusted root."""
    (log,) = json.loads(world.state.read_text())["logs"]
    return dict(log)


def tree_size(note: str) -> int:
    return int(note.split("\n")[1])


def test_a_clean_chain_raises_no_alarm_and_stores_the_checkpoint(world: World) -> None:
    code, report = world.report()
    assert code == 0, report
    assert report["alarm"] is False and report["events"] == []
    assert report["publisherEntries"] == 4  # two envelopes, two attestations
    assert report["checkpointStored"] and report["complete"]
    assert [n for n in report["notices"] if "not authenticated" in n]  # no state key here
    state = stored_log(world)
    assert tree_size(state["checkpoint"]) == state["nextIndex"] == world.size()
    # the next revision and its attestation are found in the chain too
    world.release()
    code, report = world.report()
    assert code == 0 and report["publisherEntries"] == 2
    assert report["logs"][0]["previousTreeSize"] == state["nextIndex"]
    text = world.monitor()
    assert text.code == 0 and text.stdout.startswith(f"ok: {SERVER}: 1 transparency log ")
    # a yank (its envelope and its in-toto form) is the publisher's too
    yank = run_cli("yank", "--server", SERVER, "--revision", "3", "--reason", "bad",
                   "--revisions", str(world.root), "--trust-config",
                   str(world.inst.trust_config_path), "--identity-token",
                   world.inst.mint_token(WF, owner_id=ALICE_OWNER_ID,
                                         repository_id=ALICE_REPO_ID))
    assert yank.code == 0, yank.stderr
    code, report = world.report()
    assert code == 0 and report["publisherEntries"] == 2 and report["events"] == [], report


def test_a_signature_from_another_ref_of_the_workflow_is_an_alarm(world: World) -> None:
    assert world.report()[0] == 0
    stored = world.state.read_bytes()
    rogue = logged(world.sign(WF_BRANCH, 3, ref="refs/heads/evil"))
    world.release()  # a genuine release after it changes nothing
    code, report = world.report()
    assert code == 1 and report["alarm"] and not report["checkpointStored"]
    assert indexes(alarms(report)) == rogue == indexes(report["events"])
    assert {(e["rule"], e["identity"]) for e in report["events"]} == {("HM001", WF_BRANCH)}
    assert world.state.read_bytes() == stored  # nothing stored: the next run alarms again
    text = world.monitor()
    assert text.code == 1 and text.stdout.startswith("ALARM:")
    assert (f"alarm    HM001 entry {rogue[0]} in {world.inst.url}: signed by {WF_BRANCH}"
            in text.stdout)
    # Clients pinned to refs/heads/main refuse that signature: then it is only a warning.
    code, report = world.report("--ref-pattern", "refs/heads/main")
    assert code == 0 and report["checkpointStored"]
    assert {(e["level"], e["rule"]) for e in report["events"]} == {("warning", "HM002")}
    assert indexes(report["events"]) == rogue


def test_another_workflow_of_the_repository_is_a_warning(world: World) -> None:
    deploy = logged(world.sign(WF_DEPLOY))
    world.sign(WF_OTHER_REPO, owner_id="42", repository_id="43")  # another repository
    code, report = world.report()
    assert code == 0 and report["checkpointStored"]
    assert indexes(report["events"]) == deploy
    assert {(e["level"], e["rule"], e["identity"]) for e in report["events"]} == {
        ("warning", "HM002", WF_DEPLOY)}


def test_an_unpublished_signature_by_the_pinned_workflow_is_an_alarm(v1: World) -> None:
    rogue = logged(v1.sign(WF, 3))
    code, report = v1.report()
    assert code == 1 and indexes(alarms(report)) == rogue
    assert not v1.state.exists()


@pytest.mark.parametrize("grow", [False, True], ids=["shrink", "fork"])
def test_a_log_that_does_not_extend_the_stored_checkpoint_is_an_alarm(
    world: World, grow: bool
) -> None:
    assert world.report()[0] == 0
    stored = world.state.read_bytes()
    size = world.size()
    world.inst.log.rewrite(size - 3)
    if grow:  # another history under the same key, as long or longer
        for _ in range(2):
            world.sign(WF_DEPLOY)
        assert world.size() >= size
    code, report = world.report()
    assert code == 1 and not report["checkpointStored"]
    (event,) = alarms(report)
    assert event["rule"] == "HM003"
    assert ("shrank" if not grow else "fork") in event["message"]
    assert world.state.read_bytes() == stored


def test_bounded_runs_resume_where_they_stopped(world: World) -> None:
    rogue = logged(world.sign(WF_BRANCH, 3, ref="refs/heads/evil"))
    world.release()
    start = world.report("--max-entries", "1")[1]
    read = start["logs"][0]["entriesRead"]
    assert read["to"] - read["from"] == 1
    assert start["checkpointStored"] and not start["complete"]
    seen: list[int] = []
    for _ in range(20):
        code, report = world.report("--max-entries", "2")
        seen.append(code)
        if code == 1:
            assert indexes(alarms(report))[0] == rogue[0]
            break
        assert report["checkpointStored"]
    assert seen[-1] == 1  # the rogue entry was reached, not skipped
    # the alarm repeats until it is dealt with: the cursor does not move past it
    assert world.report("--max-entries", "2")[0] == 1


def test_an_interrupted_run_leaves_the_state_and_the_next_run_reads_everything(
    v1: World,
) -> None:
    assert v1.report()[0] == 0
    stored = v1.state.read_bytes()
    rogue = logged(v1.sign(WF, 3))
    for _ in range(3):
        v1.sign(WF_DEPLOY)
    v1.inst.log_reads_left = 3  # log info, the consistency proof, one entry, then 503
    run = v1.monitor()
    assert run.code == 2 and "HTTP 503" in run.stderr and run.stdout == ""
    assert len(error_lines(run.stderr)) == 1 and "Traceback" not in run.stderr
    assert v1.state.read_bytes() == stored
    v1.inst.log_reads_left = None
    code, report = v1.report()
    assert code == 1 and indexes(alarms(report)) == rogue


@pytest.mark.parametrize(("flags", "needle"), [
    (("--repository", "bob/docs"), "can never sign"),
    (("--repository", "alice/other"), "does not match the publisher's own latest revision"),
    (("--workflow", ".github/workflows/nope.yml"), "would never match"),
    (("--ref-pattern", "refs/tags/v*"), "would never match"),
    (("--ref-pattern", "main"), "--ref-pattern"),
    (("--workflow", "release.yml"), "--workflow"),
])
def test_an_identity_policy_that_could_never_match_is_an_error_at_start(
    v1: World, flags: tuple[str, str], needle: str
) -> None:
    run = v1.monitor(*flags)
    assert run.code == 2, (run.stdout, run.stderr)
    errors = error_lines(run.stderr)
    assert len(errors) == 1 and needle in errors[0], run.stderr
    assert not v1.state.exists() and run.stdout == ""


def test_sarif_report_validates(v1: World) -> None:
    import jsonschema

    v1.sign(WF, 3)
    v1.sign(WF_DEPLOY)
    run = v1.monitor("--format", "sarif")
    assert run.code == 1, run.stderr
    sarif = json.loads(run.stdout)
    schema = json.loads((REPO / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema)
    results = sarif["runs"][0]["results"]
    assert {r["ruleId"]: r["level"] for r in results} == {"HM001": "error", "HM002": "warning"}
    assert len(results) == 4  # an envelope and an attestation each
    assert len({r["partialFingerprints"]["historSignFinding/v1"] for r in results}) == 4


def test_a_state_file_of_another_log_or_malformed_is_bad_input(v1: World) -> None:
    assert v1.report()[0] == 0
    state = json.loads(v1.state.read_text())
    v1.state.write_text(json.dumps({**state, "logs": [{**state["logs"][0],
                                                       "logId": "00" * 32}]}))
    run = v1.monitor()
    assert run.code == 2 and "is for log 0000" in run.stderr
    v1.state.write_text("{}")
    run = v1.monitor()
    assert run.code == 2 and "not a histor-sign monitor state" in run.stderr


ACK_REASON = "our own run from a test branch; its token is revoked"


def test_an_investigated_alarm_is_acknowledged_explicitly_and_reported_so(v1: World) -> None:
    """An unpublished signature alarms on every run until the publisher acknowledges each of
    its entries with a reason; the acknowledgement is bound to the entry's body, recorded
    in the state, and reported on every later run, never silently."""
    assert v1.report()[0] == 0
    stored = v1.state.read_bytes()
    rogue = logged(v1.sign(WF, 3))  # the envelope and its attestation: two entries
    assert len(rogue) == 2
    for _ in range(2):  # it alarms again and again
        assert v1.report()[0] == 1
    assert v1.state.read_bytes() == stored

    # Not in advance, and not an entry that raised no alarm: bad input, nothing stored.
    for index in (rogue[-1] + 5, 0):
        run = v1.monitor("--acknowledge", str(index), "--reason", ACK_REASON)
        assert run.code == 2 and run.stdout == "", run.stdout
        (line,) = error_lines(run.stderr)
        assert f"cannot acknowledge entry {index}: no unpublished-signature alarm" in line
    for flags in (("--acknowledge", str(rogue[0])), ("--reason", ACK_REASON),
                  ("--acknowledge", str(rogue[0]), "--reason", "two\nlines")):
        run = v1.monitor(*flags)
        assert run.code == 2 and len(error_lines(run.stderr)) == 1, run.stderr
    assert v1.state.read_bytes() == stored

    # One of two: the other still alarms, so nothing is recorded, and the report says so.
    code, report = v1.report("--acknowledge", str(rogue[0]), "--reason", ACK_REASON)
    assert code == 1 and not report["checkpointStored"] and report["acknowledged"] == []
    assert indexes(alarms(report)) == rogue
    assert "NOT recorded" in next(e for e in report["events"]
                                  if e["logIndex"] == rogue[0])["message"]
    assert v1.state.read_bytes() == stored

    # Both: recorded with the entry's digest, the signer, the reason and the time.
    code, report = v1.report("--acknowledge", str(rogue[0]), "--acknowledge", str(rogue[1]),
                             "--reason", ACK_REASON)
    assert code == 0 and report["checkpointStored"] and alarms(report) == []
    assert {(e["level"], e["rule"], e["logIndex"]) for e in report["events"]} == {
        ("acknowledged", "HM001", i) for i in rogue}
    state = json.loads(v1.state.read_text())
    assert state["logs"][0]["nextIndex"] == v1.size()
    acks = state["acknowledged"]
    assert [a["logIndex"] for a in acks] == rogue and report["acknowledged"] == acks
    assert all(a["reason"] == ACK_REASON and a["identity"] == WF
               and len(a["entrySha256"]) == 64 and a["at"].endswith("Z") for a in acks)

    # Every later run lists them.
    text = v1.monitor()
    assert text.code == 0 and "2 acknowledged entries in the state:" in text.stdout
    assert f"    entry {rogue[0]} ({WF}), " in text.stdout and ACK_REASON in text.stdout

    # Read again (the cursor set back): reported as acknowledged, not an alarm ...
    state["logs"][0]["nextIndex"] = rogue[0]
    v1.state.write_text(json.dumps(state))
    code, report = v1.report()
    assert code == 0 and {e["level"] for e in report["events"]} == {"acknowledged"}
    assert all("acknowledged 20" in e["message"] for e in report["events"])
    # ... but an acknowledgement covers that very entry only: another body alarms.
    state["logs"][0]["nextIndex"] = rogue[0]
    state["acknowledged"][0]["entrySha256"] = "0" * 64
    v1.state.write_text(json.dumps(state))
    code, report = v1.report()
    assert code == 1 and indexes(alarms(report)) == [rogue[0]]
    assert "NOT the one acknowledged" in alarms(report)[0]["message"]


def test_a_log_inconsistency_cannot_be_acknowledged(v1: World) -> None:
    assert v1.report()[0] == 0
    stored = v1.state.read_bytes()
    v1.inst.log.rewrite(v1.size() - 3)
    run = v1.monitor("--acknowledge", "0", "--reason", ACK_REASON, "--format", "json")
    assert run.code == 1
    report = json.loads(run.stdout)
    assert [e["rule"] for e in alarms(report)] == ["HM003"] and report["acknowledged"] == []
    assert v1.state.read_bytes() == stored


def test_sarif_reports_an_acknowledged_entry_as_a_note(v1: World) -> None:
    rogue = logged(v1.sign(WF, 3))
    flags = [f for i in rogue for f in ("--acknowledge", str(i))]
    run = v1.monitor(*flags, "--reason", ACK_REASON, "--format", "sarif")
    assert run.code == 0, run.stderr
    results = json.loads(run.stdout)["runs"][0]["results"]
    assert {(r["ruleId"], r["level"]) for r in results} == {("HM001", "note")}
    assert len(results) == len(rogue)
