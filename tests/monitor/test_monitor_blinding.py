"""``histor-sign monitor`` against an attacker who can sign as the publisher's workflow and
push the revisions branch (issue 40): a rogue revision logged in the other log of the
trusted root, rogue entries stashed in chain files no client reads, a state file moved
forward, a tiled log that forks while the cursor lags, and a log that answers two bytes a
second. Each of these kept the monitor quiet before."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from sigstore_testkit import ALICE_OWNER_ID, ALICE_REPO_ID, error_lines, statement
from test_monitor import (
    SERVER,
    WF,
    WF_DEPLOY,
    World,
    alarms,
    indexes,
    logged,
    make_world,
    tools,
)

from histor_sign._sigstore_trust import Trust
from histor_sign.layout import chain_dir
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

pytestmark = pytest.mark.slow

STATE_KEY = "HISTOR_MONITOR_STATE_KEY"


@pytest.fixture
def v1(tmp_path: Path) -> Iterator[World]:
    yield from make_world(tmp_path)


# ------------------------------------------------------------------ the other log
def combined_trust_config(a: LocalSigstore, b: LocalSigstore, path: Path) -> Path:
    """A's trust config whose trusted root also lists B's log, CA, CT log and TSA: a root
    with two active logs (as production lists Rekor v1 and v2), signing with A."""
    config = json.loads(a.trust_config_path.read_text())
    other = json.loads(b.trust_config_path.read_text())["trustedRoot"]
    root = config["trustedRoot"]
    for member in ("tlogs", "certificateAuthorities", "ctlogs", "timestampAuthorities"):
        root[member] = root.get(member, []) + other.get(member, [])
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def two_logs(tmp_path: Path) -> Iterator[tuple[World, LocalSigstore, Path]]:
    """The publisher releases through a Rekor v1 instance; the trusted root also lists a
    Rekor v2 log (another instance) in which nothing of the chain is logged."""
    with LocalSigstore(directory=tmp_path / "other", rekor_version=2) as other:
        for world in make_world(tmp_path):
            yield world, other, combined_trust_config(world.inst, other,
                                                      tmp_path / "both.trust.json")


def test_a_rogue_revision_in_the_other_log_of_the_trusted_root_is_an_alarm(
    two_logs: tuple[World, LocalSigstore, Path],
) -> None:
    world, other, both = two_logs
    # revision 3 under the publisher's own workflow identity, logged in the other log
    previous = json.loads((chain_dir(world.root, SERVER) / "2.envelope.json").read_text())
    rogue = sign_statement(statement(SERVER, WF, tools(3), previous=previous),
                           trust=Trust.from_trust_config(other.trust_config_path),
                           identity_token=other.mint_token(
                               WF, owner_id=ALICE_OWNER_ID, repository_id=ALICE_REPO_ID),
                           require_owned_namespace=False)
    in_other = logged(rogue)
    run = world.monitor("--trust-config", str(both), "--format", "json")
    assert run.code == 1, (run.stdout, run.stderr)
    report = json.loads(run.stdout)
    assert {log["log"] for log in report["logs"]} == {world.inst.url, other.url}
    assert not report["checkpointStored"]
    found = alarms(report)
    assert {e["log"] for e in found} == {other.url}
    assert {e["rule"] for e in found} == {"HM001"}
    # a first run catches up from the log's start: the rogue was logged before it ran
    assert sorted(e["logIndex"] for e in found) == in_other


def test_a_log_that_cannot_be_read_is_named(
    two_logs: tuple[World, LocalSigstore, Path],
) -> None:
    world, other, both = two_logs
    other.log_reads_left = 0  # the other log answers 503
    run = world.monitor("--trust-config", str(both))
    assert run.code == 2 and run.stdout == ""
    (line,) = error_lines(run.stderr)
    assert other.url in line and "503" in line
    assert not world.state.exists()
    # an alarm in the log that was read is still reported, beside the log that was not
    rogue = logged(world.sign(WF, 3))
    run = world.monitor("--trust-config", str(both))
    assert run.code == 1, run
    assert f"  log {other.url}: NOT READ: " in run.stdout
    assert all(f"alarm    HM001 entry {i} in {world.inst.url}: " in run.stdout for i in rogue)
    assert not world.state.exists()


# ------------------------------------------------------------------ stashed entries
def entry(bundle: dict[str, Any]) -> dict[str, Any]:
    return dict(bundle["verificationMaterial"]["tlogEntries"][0])


@pytest.mark.parametrize("how", ["stuffed-bundle", "rogue-files-at-yank-paths"])
def test_entries_stashed_in_chain_files_no_client_reads_still_alarm(v1: World,
                                                                    how: str) -> None:
    rogue = v1.sign(WF, 3)
    directory = chain_dir(v1.root, SERVER)
    envelope_bundle = rogue.envelope.to_json()["signer"]["signature"]
    attestation_bundle = json.loads(rogue.attestation_json[0])
    if how == "stuffed-bundle":
        # revision 1's own attestation, with the rogue entries added to its tlogEntries
        stuffed = json.loads((directory / "1.intoto.sigstore.json").read_text())
        stuffed["verificationMaterial"]["tlogEntries"] += [entry(envelope_bundle),
                                                           entry(attestation_bundle)]
        (directory / "1.yank.intoto.sigstore.json").write_text(json.dumps(stuffed))
    else:
        # the rogue documents themselves, where only yanks belong
        (directory / "1.yank.envelope.json").write_bytes(rogue.envelope.to_bytes())
        (directory / "1.yank.intoto.sigstore.json").write_text(json.dumps(attestation_bundle))
    code, report = v1.report()
    assert code == 1 and not report["checkpointStored"], report
    assert indexes(alarms(report)) == logged(rogue)
    refused = [e for e in report["events"] if e["rule"] == "HM004"]
    assert refused and all(e["level"] == "warning" for e in refused)
    assert any("1.yank.intoto.sigstore.json" in e["message"] for e in refused)


# ------------------------------------------------------------------ the moved state
def move_forward(world: World) -> None:
    """Write the log's current public checkpoint into the state file, cursor at its end
    (whatever the state's format)."""
    import httpx

    info = httpx.get(f"{world.inst.url}/api/v1/log").json()
    state = json.loads(world.state.read_text())
    target = state["logs"][0] if "logs" in state else state
    target["checkpoint"] = info["signedTreeHead"]
    target["nextIndex"] = info["treeSize"]
    if "treeSize" in target:
        target["treeSize"], target["rootHash"] = info["treeSize"], info["rootHash"]
    world.state.write_text(json.dumps(state))


def test_a_state_moved_forward_to_the_public_checkpoint_skips_nothing(
    v1: World, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STATE_KEY, "a secret of the monitoring job")
    code, report = v1.report()
    assert code == 0 and report["checkpointStored"]
    rogue = logged(v1.sign(WF, 3))
    move_forward(v1)
    code, report = v1.report()
    assert code == 1 and indexes(alarms(report)) == rogue, report
    assert any("starting over" in n for n in report["notices"])
    # the key's holder resumes as usual: acknowledged, stored, authenticated
    flags = [f for i in rogue for f in ("--acknowledge", str(i))]
    assert v1.report(*flags, "--reason", "investigated")[0] == 0
    assert json.loads(v1.state.read_text())["mac"].startswith("hmac-sha256:")
    code, report = v1.report()
    assert code == 0 and report["notices"] == [] and report["logs"][0]["entriesRead"] == {
        "from": v1.size(), "to": v1.size()}


def test_a_stored_checkpoint_the_log_did_not_sign_is_refused(v1: World) -> None:
    assert v1.report()[0] == 0
    state = json.loads(v1.state.read_text())
    target = state["logs"][0] if "logs" in state else state
    origin, size, _root, rest = target["checkpoint"].split("\n", 3)
    forged = base64.b64encode(bytes(32)).decode()
    target["checkpoint"] = "\n".join((origin, size, forged, rest))
    if "rootHash" in target:
        target["rootHash"] = "00" * 32
    v1.state.write_text(json.dumps(state))
    run = v1.monitor()
    assert run.code == 2 and run.stdout == ""
    (line,) = error_lines(run.stderr)
    assert "not signed by that log's key" in line


# ------------------------------------------------------------------ a tiled fork
def test_a_forged_tile_alarms_while_the_cursor_lags(tmp_path: Path) -> None:
    """Rekor v2: the stored tree ends inside a level-0 tile that is full in the forked
    tree; the cursor (a run bounded by --max-entries) is in an earlier tile. The log
    serves that tile forged so the stored root still computes; it must be an alarm."""
    for world in make_world(tmp_path, rekor_version=2, first_index=300):
        log = world.inst.log
        assert world.report("--max-entries", "1")[0] == 0  # cursor 301, tree 304
        log.pad(520 - world.size())
        code, report = world.report("--max-entries", "1")  # cursor 302, tree 520
        assert code == 0 and report["checkpointStored"]
        stored = world.state.read_bytes()
        old_tile = log.tile("0", 2, 8)  # leaves 512..519 as stored
        assert old_tile is not None
        log.rewrite(515)
        log.pad(815 - world.size(), tag="fork")
        genuine = log.tile("0", 2, 256)
        assert genuine is not None and genuine[:len(old_tile)] != old_tile
        world.inst.tile_overrides["tile/0/002"] = old_tile + genuine[len(old_tile):]
        code, report = world.report("--max-entries", "1")
        assert code == 1 and not report["checkpointStored"], report
        (event,) = alarms(report)
        assert event["rule"] == "HM003"
        assert world.state.read_bytes() == stored


# ------------------------------------------------------------------ a slow log
class Dripping:
    """A loopback HTTP server that answers every request with complete headers and then
    two bytes a second of a body it never finishes (until stopped)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            thread = threading.Thread(target=self._drip, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _drip(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 100000\r\n\r\n")
                while not self.stop.wait(0.5):
                    conn.sendall(b" ")
            except OSError:
                return

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def dripping() -> Iterator[Dripping]:
    server = Dripping()
    yield server
    server.close()


def test_a_log_answering_two_bytes_a_second_fails_within_the_timeout(
    v1: World, dripping: Dripping, tmp_path: Path,
) -> None:
    config = json.loads(v1.inst.trust_config_path.read_text())
    config["trustedRoot"]["tlogs"][0]["baseUrl"] = dripping.url
    slow = tmp_path / "slow-log.trust.json"
    slow.write_text(json.dumps(config))
    run = run_cli("monitor", "--server", SERVER, "--repository", "alice/docs",
                  "--revisions", str(v1.root), "--since", str(v1.state),
                  "--trust-config", str(slow), "--timeout", "2", timeout=30)
    assert run.code == 2 and run.stdout == "", run
    (line,) = error_lines(run.stderr)
    assert dripping.url in line and "within 2 s" in line


def test_a_chain_answering_two_bytes_a_second_fails_within_the_timeout(
    v1: World, dripping: Dripping,
) -> None:
    run = v1.monitor("--revisions", dripping.url + "/", "--timeout", "2")
    assert run.code == 2 and run.stdout == "", run
    (line,) = error_lines(run.stderr)
    assert dripping.url in line and "within 2 s" in line


# ------------------------------------------------------------------ Rekor v1 shards
def test_a_rekor_v1_log_is_read_across_a_shard_rotation(v1: World) -> None:
    """Production Rekor v1 numbers entries across shards; its checkpoint signs only the
    active tree. A stored checkpoint of the rotated-away tree is checked against that
    shard's final signed head (a consistency proof by tree id), and the entries of both
    trees are read: a rogue after the rotation alarms, nothing is a false HM003."""
    log = v1.inst.log
    assert v1.report()[0] == 0
    deploy = logged(v1.sign(WF_DEPLOY))  # in the first tree, after the stored checkpoint
    log.rotate("2")
    rogue = logged(v1.sign(WF, 3))
    assert min(rogue) >= log.offset > max(deploy)
    code, report = v1.report()
    assert code == 1, report
    assert indexes(alarms(report)) == rogue
    assert {e["rule"] for e in alarms(report)} == {"HM001"}
    assert indexes([e for e in report["events"] if e["rule"] == "HM002"]) == deploy


def test_a_first_run_catches_up_from_a_revision_in_an_inactive_shard(v1: World) -> None:
    log = v1.inst.log
    log.rotate("2")
    v1.release()  # revision 3, in the new tree; revisions 1 and 2 in the inactive shard
    code, report = v1.report()
    assert code == 0 and report["checkpointStored"], report
    assert report["publisherEntries"] == 6 and report["complete"]
    (read,) = report["logs"]
    assert read["entriesRead"] == {"from": 1, "to": log.offset + len(log.tree)}


def test_a_version_1_state_is_read_and_rewritten_as_version_2(v1: World) -> None:
    """A state file an earlier version stored (one log) keeps its cursor: nothing is read
    twice, nothing skipped, and it is stored again in the current format."""
    assert v1.report()[0] == 0
    state = json.loads(v1.state.read_text())
    (log,) = state["logs"]
    origin, size, root = log["checkpoint"].split("\n")[:3]
    v1.state.write_text(json.dumps({
        "version": 1, "logId": log["logId"], "origin": origin, "treeSize": int(size),
        "rootHash": base64.b64decode(root).hex(), "checkpoint": log["checkpoint"],
        "nextIndex": log["nextIndex"]}))
    rogue = logged(v1.sign(WF, 3))
    code, report = v1.report()
    assert code == 1 and indexes(alarms(report)) == rogue
    assert report["logs"][0]["entriesRead"]["from"] == log["nextIndex"]
    flags = [f for i in rogue for f in ("--acknowledge", str(i))]
    assert v1.report(*flags, "--reason", "investigated")[0] == 0
    assert json.loads(v1.state.read_text())["version"] == 2


def test_a_first_run_starts_at_a_given_index(v1: World) -> None:
    code, report = v1.report("--start-index", f"{v1.inst.url}=0")
    assert code == 0 and report["logs"][0]["entriesRead"] == {"from": 0, "to": v1.size()}
    v1.state.unlink()
    run = v1.monitor("--start-index", "https://rekor.example/=3")
    assert run.code == 2 and run.stdout == ""
    (line,) = error_lines(run.stderr)
    assert "--start-index" in line and "not a watched log" in line
