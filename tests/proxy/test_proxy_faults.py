"""Faults: a crashing or garbling upstream, an oversized or malformed host message — one
stderr line, a clean end, nothing forwarded half-checked, no traceback; and a bounded soak."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import RawHost, World, proxy_argv, received_calls, recorder

pytestmark = pytest.mark.slow


def error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines()
            if "warning:" not in line and "serving io.github" not in line]


@pytest.mark.parametrize("fault", ["--crash-after", "--garbage-after"])
def test_upstream_that_crashes_or_garbles_ends_the_session(world: World, tmp_path: Path,
                                                           fault: str) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl",
                                                                 fault, "1")))
    host.initialize()
    host.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "list_notebooks", "arguments": {}}})
    # The call in flight is answered with a JSON-RPC error of the proxy's own words (never
    # a half answer, never silence), then the session ends: EOF.
    answer = host.receive()
    assert answer is not None and answer["id"] == 1 and "result" not in answer
    assert answer["error"]["code"] == -32000
    assert answer["error"]["message"].startswith("histor-sign proxy: the session ended "
                                                 "before this request was answered")
    assert host.receive() is None
    code, err = host.finish()
    assert code == 2
    [line] = error_lines(err)
    assert ("exited with code 3" in line) if fault == "--crash-after" else (
        "not strict JSON" in line and "duplicate" in line)
    assert "Traceback" not in err


def test_every_pending_request_is_answered_when_the_upstream_crashes(
        world: World, tmp_path: Path) -> None:
    """Requests pipelined behind the crashing call (forwarded, or waiting for their turn)
    each get their own error answer before the session ends."""
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl",
                                                                 "--crash-after", "2")))
    host.initialize()
    ids: list[int | str] = [1, "two", 3, 4]
    # In one write, so all of them were sent before the crash (written one by one, the
    # last could arrive after the session ended, which no proxy can answer).
    host.send(b"".join(json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
         "params": {"name": "list_notebooks", "arguments": {}}}).encode() + b"\n"
        for ident in ids) + b'{"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}\n')
    answers: dict[Any, dict[str, Any]] = {}
    while (message := host.receive()) is not None:
        assert message["id"] not in answers
        answers[message["id"]] = message
    assert set(answers) == {*ids, 5}
    assert "result" in answers[1]  # answered before the crash
    for ident in ["two", 3, 4, 5]:
        assert answers[ident]["error"]["code"] == -32000, answers[ident]
    code, err = host.finish()
    assert code == 2 and "exited with code 3" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", [b"{not json\n", b"[1, 2]\n"])
def test_malformed_host_message_ends_the_session(world: World, tmp_path: Path,
                                                 bad: bytes) -> None:
    log = tmp_path / "up.jsonl"
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(log)))
    host.initialize()
    try:
        host.send(bad)
    except BrokenPipeError:
        pass  # the proxy stopped reading mid-message: also a clean end
    assert host.receive() is None
    code, err = host.finish()
    assert code == 2
    [line] = error_lines(err)
    assert "the host" in line
    assert "Traceback" not in err
    assert received_calls(log) == []


def test_host_disconnect_ends_cleanly_and_stops_the_server(world: World,
                                                           tmp_path: Path) -> None:
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(tmp_path / "up.jsonl")))
    host.initialize()
    code, err = host.finish()
    assert code == 0 and "Traceback" not in err


def test_soak_mixed_calls_with_list_changed_loses_and_reorders_nothing(
        world: World, tmp_path: Path) -> None:
    """300 calls, a third invalid, pipelined; the server changes its list after call 100
    (get_note drifts); every answer arrives for its own call, and the server receives
    exactly the valid calls, in order."""
    log = tmp_path / "up.jsonl"
    rng = random.Random(22)
    plan: list[tuple[str, dict[str, Any], bool]] = []
    for i in range(300):
        kind = rng.random()
        if kind < 0.33:
            plan.append(("search_notes", {"query": i}, False))  # wrong type
        elif kind < 0.55:
            plan.append(("get_note", {"note_id": f"note-{i}"}, True))
        else:
            plan.append(("search_notes", {"query": f"q{i}"}, True))
    host = RawHost(proxy_argv(world, tmp_path, upstream=recorder(
        log, "--change-after", "100")))
    host.initialize()
    answers: dict[int, dict[str, Any]] = {}
    changed_at: int | None = None
    sent = 0
    forwarded: list[int] = []
    # First 100 valid calls one by one (the change comes after the 100th forwarded call),
    # then the rest pipelined in one burst.
    while len([1 for n in forwarded]) < 100:
        name, args, _ = plan[sent]
        host.send({"jsonrpc": "2.0", "id": sent, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
        while sent not in answers:
            message = host.receive()
            assert message is not None
            if message.get("method") == "notifications/tools/list_changed":
                changed_at = sent
            elif "id" in message:
                answers[message["id"]] = message
        if not answers[sent]["result"]["isError"]:
            forwarded.append(sent)
        sent += 1
    while changed_at is None:
        message = host.receive()
        assert message is not None
        if message.get("method") == "notifications/tools/list_changed":
            changed_at = sent
    for i in range(sent, len(plan)):
        name, args, _ = plan[i]
        host.send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                   "params": {"name": name, "arguments": args}})
    order: list[int] = []
    while len(answers) < len(plan):
        message = host.receive()
        assert message is not None
        if "id" in message:
            assert message["id"] not in answers
            answers[message["id"]] = message
            order.append(message["id"])
    code, err = host.finish()
    assert code == 0, err
    expected: list[int] = []
    for i, (name, _, valid) in enumerate(plan):
        error = answers[i]["result"]["isError"]
        now_withheld = i >= sent and name == "get_note"
        assert error == (not valid or now_withheld), (i, answers[i])
        if not error:
            expected.append(i)
            assert "canned data" in answers[i]["result"]["content"][0]["text"]
    calls = received_calls(log)
    assert [c["id"] for c in calls] and len(calls) == len(expected)
    assert [(c["params"]["name"], c["params"]["arguments"]) for c in calls] == [
        (plan[i][0], plan[i][1]) for i in expected]
    # Forwarded answers came back in the order the calls were forwarded.
    assert [i for i in order if i in set(expected)] == [i for i in expected if i >= sent]
    assert json.dumps(answers[expected[0]])  # well-formed
