"""A bounded soak: 3,000 pipelined calls, a third of them invalid, with the server changing
its tools (and saying so) in the middle. Nothing is lost, duplicated or reordered; no
invalid call and no call to a withheld tool reaches the server; every call sent after the
host heard ``list_changed`` is decided against the new state."""

from __future__ import annotations

import json
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import RawHost, World, proxy_argv, received_calls, recorder

pytestmark = pytest.mark.slow

CALLS = 3000
HALF = CALLS // 2
CHANGE_AFTER = 600  # the server drifts get_note after its 600th call (inside the first half)
INVALID = {"wrong-type": ("search_notes", {"query": 7}),
           "unknown": ("list_notebooks", {"sneaky": True}),
           "missing": ("get_note", {}),
           "never-offered": ("drop_tables", {"all": True})}


def make_plan() -> list[tuple[str, dict[str, Any], bool]]:
    rng = random.Random(2222)
    plan: list[tuple[str, dict[str, Any], bool]] = []
    for i in range(CALLS):
        roll = rng.random()
        if roll < 1 / 3:
            name, args = INVALID[rng.choice(sorted(INVALID))]
            plan.append((name, dict(args), False))
        elif roll < 0.55:
            plan.append(("get_note", {"note_id": f"note-{i}"}, True))
        elif roll < 0.8:
            plan.append(("search_notes", {"query": f"q{i}", "limit": 1 + i % 5}, True))
        else:
            plan.append(("list_notebooks", {}, True))
    return plan


class Collector(threading.Thread):
    """Reads every line the proxy writes to the host, in order, as it comes; and drains
    its stderr (one line per denied call: a host that stopped reading it would stall the
    proxy, as any stdio child)."""

    def __init__(self, host: RawHost) -> None:
        super().__init__(daemon=True)
        self.host = host
        self.lines: list[dict[str, Any]] = []
        self.lock = threading.Condition()
        self.changed = threading.Event()
        self.stderr = bytearray()
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self) -> None:
        assert self.host.proc.stderr is not None
        while chunk := self.host.proc.stderr.read1(65536):
            self.stderr += chunk

    def run(self) -> None:
        while (message := self.host.receive()) is not None:
            with self.lock:
                self.lines.append(message)
                if message.get("method") == "notifications/tools/list_changed":
                    self.changed.set()
                self.lock.notify_all()
        with self.lock:
            self.lines.append({"eof": True})
            self.lock.notify_all()

    def wait_answers(self, count: int) -> None:
        """Until ``count`` answers (or EOF) arrived; bounded, as a failure guard only."""
        with self.lock:
            ok = self.lock.wait_for(lambda: sum("id" in m for m in self.lines) >= count
                                    or any("eof" in m for m in self.lines), timeout=300)
        assert ok, "the proxy stopped answering"


def test_soak_thousands_of_mixed_calls_with_a_change_in_the_middle(world: World,
                                                                    tmp_path: Path) -> None:
    log = tmp_path / "up.jsonl"
    plan = make_plan()
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(
        log, "--change-after", str(CHANGE_AFTER))))
    host.initialize()
    collector = Collector(host)
    collector.start()

    def send(start: int, stop: int) -> None:
        for i in range(start, stop):
            name, args, _ = plan[i]
            host.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                       "params": {"name": name, "arguments": args}})

    send(0, HALF)
    collector.wait_answers(HALF)
    assert collector.changed.wait(timeout=300), "the change was never announced"
    send(HALF, CALLS)  # every one of these was sent after the host heard list_changed
    collector.wait_answers(CALLS)
    assert host.proc.stdin is not None
    host.proc.stdin.close()
    code = host.proc.wait(timeout=60)
    collector.join(timeout=60)
    collector.drain.join(timeout=60)
    err = collector.stderr.decode()
    assert code == 0, err

    answers = [m for m in collector.lines if "id" in m]
    ids = [m["id"] for m in answers]
    assert sorted(ids) == list(range(CALLS))  # each call answered exactly once
    by_id = {m["id"]: m for m in answers}
    allowed: list[int] = []
    for i, (name, _, valid) in enumerate(plan):
        result = by_id[i]["result"]
        if not valid:
            assert result["isError"], (i, result)
        elif i >= HALF and name == "get_note":
            assert result["isError"] and "not-offered" in result["content"][0]["text"]
        elif i < HALF and name != "get_note":
            assert not result["isError"], (i, result)
        if not result["isError"]:
            allowed.append(i)
    assert all(plan[i][2] for i in allowed)
    # Before the change every valid call went through; after it, all but get_note did.
    first_half_get = [i for i in range(HALF) if plan[i][0] == "get_note"]
    assert any(i in allowed for i in first_half_get)
    assert len([i for i in allowed if i >= HALF]) == len(
        [i for i in range(HALF, CALLS) if plan[i][2] and plan[i][0] != "get_note"])
    # The server received exactly the allowed calls, in the order the host sent them, and
    # the answers to them came back in that order.
    calls = received_calls(log)
    assert [(c["params"]["name"], c["params"]["arguments"]) for c in calls] == [
        (plan[i][0], plan[i][1]) for i in allowed]
    assert [i for i in ids if i in set(allowed)] == allowed
    assert "Traceback" not in err
    assert json.dumps(answers[-1])
