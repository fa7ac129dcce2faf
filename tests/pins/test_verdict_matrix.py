"""One verdict on every path: each case of the matrix — may this pinned server's tools be
used, and which revision's? — run through every path that answers it, which must agree:
``check --server``, ``guard --server``, ``trust update``, ``proxy`` under the official SDK
host, the entry ``wrap`` writes started as a desktop host starts it, and ``check --all
--host-config`` judging that entry. Each path gets its own copy of the pin file (and of its verified-revision cache),
made by ``trust add`` under the local Sigstore root and used WITHOUT any trust flag, as a
wrapped host entry runs it.

A verdict is ``use N`` (the revision whose tools are used) or ``refuse``. A new path that
answers the question joins :data:`PATHS`.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_harness import bytecode_env, cli_env, run_cli
from verdict_world import MALLORY, SERVER, World, make_world, server_command

from histor_sign._chain_store import ReleaseLocation
from histor_sign._verified_cache import VerifiedCache, cache_path_for
from histor_sign.catalog import snapshot_or_catalog
from histor_sign.models import Snapshot, load_envelope
from histor_sign.pins import PinStore

pytestmark = pytest.mark.slow

Verdict = tuple[str, ...]
REFUSE: Verdict = ("refuse",)


def use(n: int) -> Verdict:
    return ("use", str(n))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("verdict-world"))


# ---------------------------------------------------------------------- the paths
def _from_json(run: object, member: str = "verified") -> Verdict:
    stdout = getattr(run, "stdout", "")
    if not stdout.strip():
        return REFUSE
    document = json.loads(stdout)
    return use(document[member]["revision"])


def check_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    run = run_cli("check", "--server", SERVER, "--pins", str(pins), "--stdio",
                  shlex.join(server_command()), "--server-is-trusted-code", "--format", "json",
                  *flags)
    assert run.code in (0, 1, 2), run.stderr
    return _from_json(run)


def guard_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    call = base / "call.json"
    call.write_text(json.dumps({"name": "list_notebooks", "arguments": {}}))
    run = run_cli("guard", str(call), "--server", SERVER, "--pins", str(pins),
                  "--format", "json", *flags)
    assert run.code in (0, 1, 2), run.stderr
    return _from_json(run)


def update_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    run = run_cli("trust", "update", SERVER, "--pins", str(pins), "--format", "json", *flags)
    assert run.code in (0, 1, 2), run.stderr
    return _from_json(run)


def _served(command: list[str], env: dict[str, str], stderr: Path) -> bool:
    """The official SDK ClientSession starts ``command`` as a host would: True when it is
    served tools, False when its initialize is refused."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> bool:
        params = StdioServerParameters(command=command[0], args=command[1:], env=env)
        with stderr.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as client:
                    try:
                        await client.initialize()
                    except Exception:
                        return False
                    assert (await client.list_tools()).tools
                    return True

    return asyncio.run(asyncio.wait_for(session(), 60))


def proxy_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    """The official SDK ClientSession starts the proxy as a host would."""
    audit = base / "audit.jsonl"
    argv = [sys.executable, "-m", "histor_sign", "proxy", "--server", SERVER, "--pins",
            str(pins), "--audit", str(audit), *flags, "--", *server_command()]
    if not _served(argv, cli_env(), base / "proxy.stderr"):
        return REFUSE
    [start] = [json.loads(line) for line in audit.read_text().splitlines()
               if json.loads(line)["event"] == "session-start"]
    return use(start["revision"])


def _wrapped(pins: Path, flags: list[str], base: Path) -> dict[str, Any]:
    """The example server's host-config entry, wrapped by ``wrap`` under ``pins``; a
    weakening ``flags`` is then written into it by hand. Returns the entry."""
    config = base / "claude_desktop_config.json"
    command = server_command()
    config.write_text(json.dumps({"mcpServers": {"notes": {
        "command": command[0], "args": command[1:]}}}))
    wrapped = run_cli("wrap", str(config), "--server-name", f"notes={SERVER}", "--pins",
                      str(pins))
    assert wrapped.code == 0, wrapped.stderr
    document = json.loads(config.read_text())
    entry: dict[str, Any] = document["mcpServers"]["notes"]
    entry["args"][1:1] = flags
    config.write_text(json.dumps(document))
    return entry


def check_all_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    """``check --all --host-config``: judges the wrapped entry by what it will run."""
    _wrapped(pins, flags, base)
    run = run_cli("check", "--all", "--host-config", str(base / "claude_desktop_config.json"),
                  "--pins", str(pins), "--server-is-trusted-code", "--format", "json")
    assert run.code in (0, 1), run.stderr
    [line] = json.loads(run.stdout)["servers"]
    return use(line["verified"]["revision"]) if "verified" in line else REFUSE


def wrapped_path(pins: Path, flags: list[str], base: Path) -> Verdict:
    """``wrap`` writes the entry into a host config; the SDK ClientSession starts it exactly
    as a desktop host does: its command and args, a minimal PATH, no trust flag."""
    entry = _wrapped(pins, flags, base)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(base),
           "XDG_CONFIG_HOME": cli_env()["XDG_CONFIG_HOME"],
           "PYTHONPATH": cli_env().get("PYTHONPATH", ""), **bytecode_env()}
    if not _served([entry["command"], *entry["args"]], env, base / "wrapped.stderr"):
        return REFUSE
    served = re.search(rf"serving {re.escape(SERVER)} revision (\d+)",
                       (base / "wrapped.stderr").read_text())
    assert served is not None
    return use(int(served.group(1)))


def _folder(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name)


PATHS: dict[str, Callable[[Path, list[str], Path], Verdict]] = {
    "check --server": check_path,
    "guard --server": guard_path,
    "trust update": update_path,
    "proxy (SDK host)": proxy_path,
    "wrapped host entry (SDK host, minimal PATH)": wrapped_path,
    "check --all --host-config": check_all_path,
}


# ---------------------------------------------------------------------- the cases
def _plain(world: World, base: Path, latest: str, *others: str,
           attest: bool = True) -> Path:
    """Pinned at revision 1, then ``latest`` (and ``others``) published."""
    where = world.location(base / "published", "r1")
    pins = world.pin(where, base / "pins.json")
    world.location(where, latest, "r1", *others, attest=attest)
    return pins


def _forge_cache(world: World, pins: Path) -> None:
    """Lines a writer of the cache file computes with the package's own code for the
    other owner's revision 2 and the pin: every verification its use would make."""
    entry = PinStore.load(pins).get(SERVER)
    assert entry is not None
    location = ReleaseLocation.parse(entry.location)
    envelope = load_envelope(Path(entry.location) / "latest.envelope.json")
    document = snapshot_or_catalog(location.fetch_json(location.snapshot(2)), "snapshot")
    tools = document.to_catalog() if isinstance(document, Snapshot) else document
    cache = VerifiedCache(pins)
    trust = entry.trust_for_use()
    for signed in (tools, None):
        key = cache.key(envelope, pins=entry.pins(), trust=trust, previous=None,
                        tools=signed, pin=entry.to_json())
        assert key is not None
        cache.add(key)


def case_forged_attestation_line(world: World, base: Path) -> tuple[Path, list[str]]:
    """Revision 1's published attestation with part 1's certificate swapped for the other
    owner's, and the line a writer of the cache file computes for it: a proxy start that
    skips the attestation's cryptography still checks every part's signer."""
    pins = _plain(world, base, "r1")
    entry = PinStore.load(pins).get(SERVER)
    assert entry is not None
    location = ReleaseLocation.parse(entry.location)
    published = Path(location.attestation(1))
    bundle = json.loads(published.read_text())
    theirs = json.loads((world.releases["r2mallory"] / "envelope.json").read_text())
    bundle["verificationMaterial"]["certificate"] = (
        theirs["signer"]["signature"]["verificationMaterial"]["certificate"])
    published.write_text(json.dumps(bundle))
    cache = VerifiedCache(pins)
    key = cache.key(load_envelope(published.with_name("1.envelope.json")), pins=entry.pins(),
                    trust=entry.trust_for_use(), previous=None, tools=None,
                    pin=entry.to_json(), attestation=[bundle])
    assert key is not None
    cache.add(key)
    return pins, []


def case_current(world: World, base: Path) -> tuple[Path, list[str]]:
    return _plain(world, base, "r1"), []


def case_advanced(world: World, base: Path) -> tuple[Path, list[str]]:
    return _plain(world, base, "r2"), []


def case_no_attestation(world: World, base: Path) -> tuple[Path, list[str]]:
    # The pin remembers a verified attestation (revision 1's): revision 2 without one is
    # a broken chain.
    return _plain(world, base, "r2", attest=False), []


def case_yanked(world: World, base: Path) -> tuple[Path, list[str]]:
    assert world.yank_dir is not None
    where = world.location(base / "published", "r1")
    pins = world.pin(where, base / "pins.json")
    shutil.rmtree(where)
    shutil.copytree(world.yank_dir, where)
    return pins, []


def case_rollback(world: World, base: Path) -> tuple[Path, list[str]]:
    where = world.location(base / "published", "r2", "r1")
    pins = world.pin(where, base / "pins.json")  # pinned at revision 2
    shutil.copy(where / "1.envelope.json", where / "latest.envelope.json")
    return pins, []


def case_fork(world: World, base: Path) -> tuple[Path, list[str]]:
    where = world.location(base / "published", "r1")
    pins = world.pin(where, base / "pins.json")
    world.location(where, "fork1")
    return pins, []


def case_another_workflow(world: World, base: Path) -> tuple[Path, list[str]]:
    return _plain(world, base, "r2deploy"), []


def case_branch_under_tag_pattern(world: World, base: Path) -> tuple[Path, list[str]]:
    return _plain(world, base, "r2branch"), []


def case_high_risk_change(world: World, base: Path) -> tuple[Path, list[str]]:
    return _plain(world, base, "r2high"), []


def case_another_root_named(world: World, base: Path) -> tuple[Path, list[str]]:
    # The same bytes at another path: another root than the one the pin recorded.
    pins = _plain(world, base, "r1")
    other = base / "other-trust.json"
    shutil.copy(world.trust_config, other)
    return pins, ["--trust-config", str(other)]


def case_forged_cache_line(world: World, base: Path) -> tuple[Path, list[str]]:
    pins = _plain(world, base, "r2mallory")
    _forge_cache(world, pins)
    return pins, []


def case_pin_file_edited(world: World, base: Path) -> tuple[Path, list[str]]:
    # Between two runs the pin file is edited to name the other owner's workflow (with the
    # cache a first run left beside it); the namespace io.github.example still binds.
    pins = _plain(world, base, "r2mallory")
    document = json.loads(pins.read_text())
    entry = document["servers"][SERVER]
    entry.update(repository="mallory/notes-server", ownerId="6666", repositoryId="7777",
                 workflow=".github/workflows/sign.yml", signer=MALLORY)
    pins.write_text(json.dumps(document))
    _forge_cache(world, pins)
    return pins, []


CASES: dict[str, tuple[Callable[[World, Path], tuple[Path, list[str]]], Verdict]] = {
    "current": (case_current, use(1)),
    "advanced": (case_advanced, use(2)),
    "revision without its attestation after an attested pin": (case_no_attestation, REFUSE),
    "yanked, nothing later": (case_yanked, REFUSE),
    "rollback": (case_rollback, REFUSE),
    "fork": (case_fork, REFUSE),
    "another workflow": (case_another_workflow, REFUSE),
    "a branch ref under a tag pattern": (case_branch_under_tag_pattern, REFUSE),
    "high-risk change not accepted": (case_high_risk_change, use(1)),
    "another root than the pinned one named": (case_another_root_named, REFUSE),
    "a forged cache line": (case_forged_cache_line, REFUSE),
    "a forged attestation cache line": (case_forged_attestation_line, REFUSE),
    "a pin file edited between two runs": (case_pin_file_edited, REFUSE),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_path_gives_the_same_verdict(world: World, tmp_path: Path, case: str) -> None:
    make, expected = CASES[case]
    pins, flags = make(world, tmp_path / "case")
    verdicts: dict[str, Verdict] = {}
    for name, path in PATHS.items():
        own = tmp_path / _folder(name)
        own.mkdir()
        shutil.copy(pins, own / "pins.json")
        if cache_path_for(pins).exists():
            shutil.copy(cache_path_for(pins), cache_path_for(own / "pins.json"))
        verdicts[name] = path(own / "pins.json", flags, own)
    assert verdicts == dict.fromkeys(PATHS, expected)


def test_a_yank_seen_is_remembered_by_every_path(world: World, tmp_path: Path) -> None:
    """Once a path saw the yank, the pin refuses the revision even after the location
    drops the yank file (trust update too)."""
    pins, _ = case_yanked(world, tmp_path / "case")
    where = Path(json.loads(pins.read_text())["servers"][SERVER]["envelope"])
    for name, path in PATHS.items():
        own = tmp_path / _folder(name)
        own.mkdir()
        shutil.copy(pins, own / "pins.json")
        assert path(own / "pins.json", [], own) == REFUSE, name
        assert json.loads((own / "pins.json").read_text())["servers"][SERVER]["yanked"] == {
            "2": "leaks notes"}, name
    for yank in where.glob("2.yank.*"):
        yank.unlink()
    for name, path in PATHS.items():
        own = tmp_path / _folder(name)
        assert path(own / "pins.json", [], own) == REFUSE, name


def test_the_proxy_verifies_an_attestation_once(world: World, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy's verified cache covers the attestation as it covers the envelope: the
    second start with the very same inputs runs no attestation cryptography (issue 37's
    start-up), and the surface it yields is the verified one."""
    import histor_sign.attestation as attestation
    from histor_sign._verified_cache import using
    from histor_sign.pins import latest_for_use

    pins = _plain(world, tmp_path, "r1")
    calls: list[str] = []
    real = attestation.verify_attestation

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(kwargs.get("source")))
        return real(*args, **kwargs)

    monkeypatch.setattr(attestation, "verify_attestation", counting)
    uses = []
    for _ in range(3):
        with using(VerifiedCache(pins)):
            uses.append(latest_for_use(SERVER, store=pins, signed_tools=True))
    assert len(calls) == 1, calls
    assert uses[0].surface is not None and uses[0].attestation is not None
    assert [(u.revision, u.surface, u.attestation) for u in uses] == [
        (1, uses[0].surface, uses[0].attestation)] * 3
