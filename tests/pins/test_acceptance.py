"""A risky change is accepted, not followed: a verified, chained revision whose triaged
changes are high risk is used by no path until the user accepts it — after its changes
were shown (``trust update``, then ``trust update --accept``), or through the host's
elicitation in the proxy. Meanwhile the accepted revision is used, and the proxy serves
its tools where the server still serves them exactly. Releases of the example server
signed by a real (stopped) LocalSigstore (verdict_world.py)."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_env, run_cli
from verdict_world import HIGH, SERVER, World, make_world, server_command

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("acceptance-world"))


def _held(world: World, base: Path) -> Path:
    """Pinned at revision 1; revision 2 (a high-risk change) published since."""
    where = world.location(base / "published", "r1")
    pins = world.pin(where, base / "pins.json")
    world.location(where, "r2high", "r1")
    return pins


def _pinned(pins: Path) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads(pins.read_text())["servers"][SERVER]
    return entry


def _check(pins: Path, *served: str) -> Any:
    return run_cli("check", "--server", SERVER, "--pins", str(pins), "--stdio",
                   shlex.join(server_command(*served)), "--server-is-trusted-code")


def test_not_served_then_accepted_after_the_changes_were_shown(world: World,
                                                               tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    new = ("--description", HIGH)
    held = _check(pins, *new)
    assert held.code == 1
    assert "revision 2 waits for acceptance: different — risk: high" in held.stdout
    assert "trust update" in held.stderr
    assert _pinned(pins)["revision"] == 1
    assert _pinned(pins)["pending"]["revision"] == 2
    # --accept accepts only the revision recorded as pending (shown above): here it is.
    shown = run_cli("trust", "update", SERVER, "--pins", str(pins))
    assert shown.code == 1
    assert shown.stdout.splitlines()[0].startswith(f"waiting for acceptance · {SERVER} "
                                                   "revision 1")
    assert "search_notes" in shown.stdout and "widens scope" in shown.stdout
    accepted = run_cli("trust", "update", SERVER, "--pins", str(pins), "--accept")
    assert accepted.code == 0, accepted.stderr
    assert _pinned(pins)["revision"] == 2 and "pending" not in _pinned(pins)
    assert _check(pins, *new).code == 0


def test_accept_before_any_changes_were_shown_shows_them_first(world: World,
                                                               tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    first = run_cli("trust", "update", SERVER, "--pins", str(pins), "--accept")
    assert first.code == 1 and "widens scope" in first.stdout
    assert _pinned(pins)["revision"] == 1
    again = run_cli("trust", "update", SERVER, "--pins", str(pins), "--accept")
    assert again.code == 0, again.stderr
    assert _pinned(pins)["revision"] == 2


def test_a_pin_that_follows_takes_the_change_silently(world: World, tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    run = run_cli("trust", "update", SERVER, "--pins", str(pins), "--acceptance", "follow")
    assert run.code == 0, run.stderr
    assert _pinned(pins)["acceptance"] == "follow" and _pinned(pins)["revision"] == 2
    bad = run_cli("trust", "update", SERVER, "--pins", str(pins), "--acceptance", "maybe")
    assert bad.code == 2 and bad.stderr.count("\n") == 1


def _proxy_session(pins: Path, base: Path, answer: str | None) -> tuple[list[str], str]:
    """An SDK host (with an elicitation callback answering ``answer``, or none) lists the
    tools through the proxy; after an acceptance it waits for list_changed and lists
    again. Returns (the last listing's search_notes description, stderr)."""
    from mcp import types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    argv = [sys.executable, "-m", "histor_sign", "proxy", "--server", SERVER, "--pins",
            str(pins), "--audit", str(base / "audit.jsonl"), "--",
            *server_command("--description", HIGH)]
    asked: list[str] = []
    changed = asyncio.Event()

    async def elicit(_ctx: Any, params: Any) -> Any:
        asked.append(params.message)
        if answer == "accept":
            return types.ElicitResult(action="accept", content={"accept": True})
        return types.ElicitResult(action="decline")

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def run() -> list[str]:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=cli_env())
        kwargs: dict[str, Any] = {"message_handler": on_message}
        if answer is not None:
            kwargs["elicitation_callback"] = elicit
        with (base / "stderr").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write, **kwargs) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    if answer == "accept":
                        await asyncio.wait_for(changed.wait(), 30)
                        listed = await session.list_tools()
                    elif answer is not None:
                        for _ in range(200):  # the decline is audited: wait for it
                            if "not-accepted" in (base / "audit.jsonl").read_text():
                                break
                            await asyncio.sleep(0.05)
                    return [t.description or "" for t in listed.tools
                            if t.name == "search_notes"] + asked

    shown = asyncio.run(asyncio.wait_for(run(), 90))
    return shown, (base / "stderr").read_text()


def _audit(base: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (base / "audit.jsonl").read_text().splitlines()]


def test_the_proxy_serves_the_accepted_revision_and_withholds_the_rest(
        world: World, tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    shown, stderr = _proxy_session(pins, tmp_path, None)
    assert shown == []  # search_notes changed: withheld; the other six are served
    assert "revision 2 waits for acceptance" in stderr
    assert _pinned(pins)["revision"] == 1


def test_accepted_through_elicitation_with_the_changes_shown(world: World,
                                                            tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    shown, _ = _proxy_session(pins, tmp_path, "accept")
    description, question = shown
    assert description == HIGH.partition("=")[2]
    assert "revision 2 waits for acceptance" in question and "widens scope" in question
    assert _pinned(pins)["revision"] == 2
    [record] = [r for r in _audit(tmp_path) if r["event"] == "revision-accepted"]
    assert record["revision"] == 2 and record["by"].startswith("the user, through ")


def test_declined_through_elicitation_keeps_the_accepted_revision(world: World,
                                                                 tmp_path: Path) -> None:
    pins = _held(world, tmp_path)
    shown, _ = _proxy_session(pins, tmp_path, "decline")
    assert len(shown) == 1  # only the question: search_notes stays withheld
    assert _pinned(pins)["revision"] == 1
    assert [r["event"] for r in _audit(tmp_path)].count("revision-not-accepted") == 1
