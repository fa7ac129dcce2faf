"""``trust add|list|remove``, ``check --server`` and ``guard --server`` through the real CLI
entry point, against a publisher history signed by a real (stopped) LocalSigstore."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pin_fixtures import SERVER, WF_ALICE_TAG, History, tools
from sigstore_testkit import (
    ALICE_OWNER_ID,
    WF_ALICE,
    assert_bad_input,
    error_lines,
    run_cli,
    run_main,
)

from histor_sign._version import JSON_SCHEMA_VERSION

pytestmark = pytest.mark.slow


class Client:
    """One client: a pin file and the trust config of the (stopped) local instance."""

    def __init__(self, history: History, base: Path) -> None:
        self.history, self.base = history, base
        self.pins = base / "project" / "pins.json"
        base.mkdir(parents=True, exist_ok=True)

    def run(self, *args: str, subprocess: bool = False) -> Any:
        full = [*args, "--pins", str(self.pins)]
        if list(args[:2]) not in (["trust", "remove"], ["trust", "list"]):
            full += ["--trust-config", str(self.history.trust_config)]
        return (run_cli if subprocess else run_main)(*full)

    def publish(self, name: str, latest: str, *others: str, snapshots: bool = True) -> Path:
        return self.history.publish(self.base / name, latest, *others, snapshots=snapshots)

    def add(self, location: Path, *extra: str, subprocess: bool = False) -> Any:
        return self.run("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                        str(location), *extra, subprocess=subprocess)

    def served(self, n: int, extra: str = "") -> str:
        path = self.base / f"served-{n}{extra.strip()}.json"
        path.write_text(json.dumps({"tools": tools(n, extra)}))
        return str(path)

    def pinned(self) -> dict[str, Any]:
        entry: dict[str, Any] = json.loads(self.pins.read_text())["servers"][SERVER]
        return entry


@pytest.fixture
def client(history: History, tmp_path: Path) -> Client:
    return Client(history, tmp_path)


def assert_refused(run: Any, *needles: str) -> None:
    """Exit 1, one error line naming why, nothing on stdout."""
    assert run.code == 1, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and run.stdout == ""
    errors = error_lines(run.stderr)
    assert len(errors) == 1, run.stderr
    for needle in needles:
        assert needle in errors[0], errors[0]


def test_first_use_flow_add_list_remove(client: Client) -> None:
    where = client.publish("pub", "rev1")
    run = client.add(where / "latest.envelope.json", "--workflow", ".github/workflows/sign.yml",
                     subprocess=True)
    assert run.code == 0, run.stderr
    assert f"pinning {SERVER} to repository alice/docs, workflow .github/workflows/sign.yml" \
        in run.stderr
    assert run.stdout.startswith(f"pinned {SERVER} in {client.pins}")
    assert f"owner id       {ALICE_OWNER_ID} (learned from the certificate)" in run.stdout
    assert f"signed by      {WF_ALICE}" in run.stdout
    entry = client.pinned()
    assert (entry["revision"], entry["ownerId"], entry["workflow"]) == (
        1, ALICE_OWNER_ID, ".github/workflows/sign.yml")
    listed = run_main("trust", "list", "--pins", str(client.pins))
    assert listed.code == 0 and SERVER in listed.stdout and "revision       1" in listed.stdout
    as_json = run_main("trust", "list", "--pins", str(client.pins), "--format", "json")
    assert json.loads(as_json.stdout)["servers"][SERVER] == entry
    again = client.add(where)
    assert_bad_input(again, "already pinned", "--replace")
    assert client.add(where, "--replace").code == 0
    removed = run_main("trust", "remove", SERVER, "--pins", str(client.pins))
    assert removed.code == 0 and json.loads(client.pins.read_text())["servers"] == {}
    assert_bad_input(run_main("trust", "remove", SERVER, "--pins", str(client.pins)),
                     "is not pinned")


def test_dry_run_writes_nothing(client: Client) -> None:
    run = client.add(client.publish("pub", "rev1"), "--dry-run")
    assert run.code == 0 and run.stdout.startswith("would pin")
    assert not client.pins.exists()


@pytest.mark.parametrize(
    ("latest", "extra", "needle"),
    [
        ("mallory2", (), "belongs to GitHub owner 'alice'"),
        ("other_repo2", (), "expected 'alice/docs'"),
        ("deploy2", ("--workflow", ".github/workflows/sign.yml"), "signing workflow is"),
        ("rev1", ("--owner-id", "42"), "owner id is '1001', expected '42'"),
    ],
)
def test_add_refuses_what_the_pin_does_not_cover(
    client: Client, latest: str, extra: tuple[str, ...], needle: str
) -> None:
    run = client.add(client.publish("pub", latest), *extra)
    assert run.code == 1 and "identity" in run.stderr and needle in run.stderr, run
    assert not client.pins.exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--repository", "mallory/docs"], "is not owned by alice"),
        (["--repository", "alice"], "--repository must be a GitHub repository OWNER/REPO"),
        (["--workflow", "sign.yml"], "--workflow must be a workflow file path"),
        (["--envelope", "http://example.org/latest.envelope.json"], "loopback"),
        (["--envelope", "https://user:pw@example.org/x.json"], "credentials"),
        (["--owner-id", "x1"], "--owner-id must be a decimal number"),
    ],
)
def test_add_bad_input_is_one_line_and_touches_nothing(
    client: Client, args: list[str], needle: str
) -> None:
    where = str(client.publish("pub", "rev1"))
    base = {"--repository": "alice/docs", "--envelope": where}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    flat = [x for kv in base.items() for x in kv]
    run = client.run("trust", "add", SERVER, *flat)
    assert_bad_input(run, needle)
    assert run.stdout == "" and not client.pins.exists()


def test_check_server_follows_the_chain_then_refuses_rollback_and_fork(client: Client) -> None:
    # Revision 3 is released from a tag after branch releases: allow both refs.
    assert client.add(client.publish("pub1", "rev1"), "--ref-pattern", "refs/**").code == 0
    # Skip ahead from 1 to 3: revision 2 is fetched from the pinned location.
    location = client.publish("pub", "rev3", "rev1", "rev2")
    entry = client.pinned()
    entry["envelope"] = str(location)
    client.pins.write_text(json.dumps({"version": 2, "servers": {SERVER: entry}}))
    run = client.run("check", "--server", SERVER, client.served(3), subprocess=True)
    assert run.code == 0, run.stderr
    first, second = run.stdout.splitlines()[:2]
    assert first == f"match · {SERVER} revision 3 · signed by {WF_ALICE_TAG}"
    assert second == "  pin advanced: revision 3 chains from the pinned revision 1 through 2"
    assert client.pinned()["revision"] == 3
    # Served tools that drifted: different, with the changed field named from the signed
    # snapshot published beside the envelope.
    drift = client.run("check", "--server", SERVER, client.served(3, " now"), "--format", "json")
    assert drift.code == 1
    doc = json.loads(drift.stdout)
    assert doc["status"] == "different" and doc["verified"]["freshness"] == "current"
    assert doc["verified"]["signer"]["identity"] == WF_ALICE_TAG
    assert [(t["name"], t["fields"]) for t in doc["tools"]] == [("search", ["description"])]
    # Rollback: the location serves revision 1 again.
    client.history.publish(location, "rev1")
    assert_refused(client.run("check", "--server", SERVER, client.served(1)),
                   f"{SERVER}: rollback: revision 1 is older than the pinned revision 3")
    # Fork: another revision 3 under the pinned identity.
    client.history.publish(location, "broken3")
    assert_refused(client.run("check", "--server", SERVER, client.served(3, " fork")),
                   f"{SERVER}: fork: revision 3 has manifest")
    assert client.pinned()["revision"] == 3


def test_check_server_refuses_a_broken_chain_and_another_signer(client: Client) -> None:
    assert client.add(client.publish("pub", "rev1"), "--ref-pattern", "refs/**").code == 0
    pub = client.base / "pub"
    client.history.publish(pub, "broken3", "rev2")
    assert_refused(client.run("check", "--server", SERVER, client.served(3, " fork")),
                   "broken-chain", "revision 3", "chain: previousManifestDigest is")
    (pub / "2.envelope.json").unlink()
    client.history.publish(pub, "rev3")
    assert_refused(client.run("check", "--server", SERVER, client.served(3)),
                   "broken-chain", "revision 2", "not published")
    client.history.publish(pub, "mallory2")
    assert_refused(client.run("check", "--server", SERVER, client.served(2)), "identity",
                   "belongs to GitHub owner 'alice'")
    client.history.publish(pub, "reregistered2")
    assert_refused(client.run("check", "--server", SERVER, client.served(2)), "identity",
                   "owner id is '9999', expected '1001'")
    assert client.pinned()["revision"] == 1


def test_check_and_guard_server_need_a_pin(client: Client) -> None:
    served = client.served(1)
    run = client.run("check", "--server", SERVER, served)
    assert_bad_input(run, "is not pinned in", "trust add io.github.alice/docs")
    assert client.add(client.publish("pub", "rev1")).code == 0
    run = client.run("check", "--server", SERVER, served, "--cert-identity", WF_ALICE)
    assert_bad_input(run, "identity flags cannot be added")
    run = client.run("check", "--server", SERVER, served, "--signed-tools", served)
    assert_bad_input(run, "--signed-tools needs --envelope")
    call = client.base / "call.json"
    call.write_text(json.dumps({"name": "search", "arguments": {"query": "x"}}))
    run = client.run("guard", "--server", SERVER, str(call), "--catalog", served)
    assert_bad_input(run, "drop --catalog")


def test_check_verify_uses_the_pin_store(client: Client) -> None:
    assert client.add(client.publish("pub", "rev1")).code == 0
    run = client.run("check", "--envelope", str(client.history.envelopes["rev1"]), "--verify",
                     client.served(1))
    assert run.code == 0, run.stderr
    assert run.stdout.startswith(f"match · {SERVER} revision 1 · signed by {WF_ALICE}")
    # The store's pin applies to an explicit envelope too: another owner is refused ...
    assert_refused(client.run("check", "--envelope", str(client.history.envelopes["mallory2"]),
                              "--verify", client.served(2)), "identity")
    # ... and so is an older revision once the pin moved on.
    client.history.publish(client.base / "pub", "rev2")
    assert client.run("check", "--server", SERVER, client.served(2)).code == 0
    assert_refused(client.run("check", "--envelope", str(client.history.envelopes["rev1"]),
                              "--verify", client.served(1)), "rollback")


def test_guard_server_takes_the_signed_contract_from_the_location(client: Client) -> None:
    assert client.add(client.publish("pub", "rev1")).code == 0
    client.history.publish(client.base / "pub", "rev2")
    call = client.base / "call.json"
    call.write_text(json.dumps({"name": "search", "arguments": {"query": "x"}}))
    run = client.run("guard", "--server", SERVER, str(call), subprocess=True)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("ALLOW search")
    assert f"contract: {SERVER} revision 2 · signed by {WF_ALICE}" in run.stdout
    assert client.pinned()["revision"] == 2
    bad = client.base / "bad.json"
    bad.write_text(json.dumps({"name": "search", "arguments": {"query": 3}}))
    denied = client.run("guard", "--server", SERVER, str(bad), "--format", "json")
    assert denied.code == 1 and json.loads(denied.stdout)["verified"]["revision"] == 2
    # Guard needs the signed definitions: without the snapshot nothing is decided.
    (client.base / "pub" / "2.tools.snapshot.json").unlink()
    assert_bad_input(client.run("guard", "--server", SERVER, str(call)), "2.tools.snapshot.json")


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'{"version": 9, "servers": {}}', b'{"version": 1, "servers": {"x/y": 1}}'],
)
def test_corrupted_pin_file_is_one_clear_error_and_left_alone(client: Client,
                                                             content: bytes) -> None:
    client.pins.parent.mkdir(parents=True)
    client.pins.write_bytes(content)
    where = str(client.publish("pub", "rev1"))
    call = client.base / "call.json"
    call.write_text(json.dumps({"name": "search", "arguments": {"query": "x"}}))
    for args in (
        ["trust", "add", SERVER, "--repository", "alice/docs", "--envelope", where],
        ["trust", "remove", SERVER],
        ["check", "--server", SERVER, client.served(1)],
        ["check", "--envelope", str(client.history.envelopes["rev1"]), "--verify",
         client.served(1)],
        ["guard", "--server", SERVER, str(call)],
    ):
        run = client.run(*args)
        assert_bad_input(run, f"pins file {client.pins}")
        assert client.pins.read_bytes() == content
    listed = run_main("trust", "list", "--pins", str(client.pins))
    assert_bad_input(listed, "pins file")


def test_check_verify_with_identity_flags_or_server_prints_who_signed(client: Client) -> None:
    envelope = str(client.history.envelopes["rev1"])
    for pin in (["--cert-identity", WF_ALICE], ["--repository", "alice/docs"],
                ["--server", SERVER]):
        run = client.run("check", "--envelope", envelope, "--verify", *pin, client.served(1))
        assert run.code == 0, (pin, run.stderr)
        assert run.stdout.startswith(f"match · {SERVER} revision 1 · signed by {WF_ALICE}")
        as_json = client.run("check", "--envelope", envelope, "--verify", *pin,
                             client.served(1), "--format", "json")
        verified = json.loads(as_json.stdout)["verified"]
        assert (verified["server"], verified["signer"]["identity"]) == (SERVER, WF_ALICE)
    assert not client.pins.exists()  # none of these needed or wrote a pin
    assert_refused(client.run("check", "--envelope", envelope, "--server", "io.github.alice/x",
                              client.served(1)), "identity", "not --server 'io.github.alice/x'")
    unpinned = client.run("check", "--envelope", envelope, "--verify", client.served(1))
    assert_bad_input(unpinned, "only from a pinned publisher")


def test_add_stores_a_relative_envelope_path_as_absolute(client: Client) -> None:
    # `trust add --envelope ./pub` typed in one directory; `check --server` run from another.
    client.publish("pub", "rev1")
    elsewhere = client.base / "elsewhere"
    elsewhere.mkdir()
    trust = ("--pins", str(client.pins), "--trust-config", str(client.history.trust_config))
    added = run_cli("trust", "add", SERVER, "--repository", "alice/docs", "--envelope",
                    "./pub", *trust, cwd=client.base)
    assert added.code == 0, added.stderr
    assert client.pinned()["envelope"] == str(client.base / "pub")
    run = run_cli("check", "--server", SERVER, client.served(1), *trust, cwd=elsewhere)
    assert run.code == 0, run.stdout + run.stderr


def test_pin_records_its_trust_root_and_check_uses_it(client: Client) -> None:
    # Pinned with --trust-config; `check --server` without it verifies against the same
    # root (not production, whose failure would be a misleading hint).
    assert client.add(client.publish("pub", "rev1")).code == 0
    assert client.pinned()["trustRoot"] == f"trust-config:{client.history.trust_config}"
    pins = ("--pins", str(client.pins))
    run = run_cli("check", "--server", SERVER, client.served(1), *pins)
    assert run.code == 0, run.stdout + run.stderr
    assert "dev-sigstore" in run.stderr  # the recorded root's warning is still shown
    # A pin file written before the member existed (version 2 without it) stays readable.
    entry = client.pinned()
    del entry["trustRoot"]
    client.pins.write_text(json.dumps({"version": 2, "servers": {SERVER: entry}}))
    listed = run_main("trust", "list", *pins)
    assert listed.code == 0, listed.stderr
    # A flag still wins over the recorded root.
    again = client.run("check", "--server", SERVER, client.served(1))
    assert again.code == 0, again.stdout + again.stderr


def test_trust_list_shows_the_yanked_revisions_of_a_pin(tmp_path: Path) -> None:
    """A pin remembers the revisions its publisher yanked (they stay refused); the human
    listing names each, in revision order, with its reason."""
    pins = tmp_path / "pins.json"
    entry = {"envelope": "https://example.invalid/revisions/latest.envelope.json",
             "issuer": "https://token.actions.githubusercontent.com",
             "manifestDigest": "sha256:" + "d" * 64, "repository": "example/notes-server",
             "revision": 3, "workflow": ".github/workflows/sign.yml", "attested": False,
             "ownerId": "1000001", "repositoryId": "2000001", "refPattern": None,
             "signer": "https://github.com/example/notes-server/.github/workflows/sign.yml"
                       "@refs/heads/main",
             "yanked": {"2": "description injected by a dependency", "1": "broken build"}}
    pins.write_text(json.dumps({"version": 2, "servers": {"io.github.example/notes": entry}}))
    listed = run_main("trust", "list", "--pins", str(pins))
    assert listed.code == 0, listed.stderr
    yanked = [line for line in listed.stdout.splitlines() if "yanked" in line]
    assert yanked == ["  yanked         revision 1: broken build",
                      "  yanked         revision 2: description injected by a dependency"]


def test_trust_show_and_list_name_the_root_and_flag_a_non_production_one(
        client: Client) -> None:
    """A pin made under the local instance says so wherever it is shown: ``trust show``,
    ``trust list`` (human and JSON, with ``schemaVersion``); a pin without a recorded root
    verifies under production and is not flagged."""
    assert client.add(client.publish("pub", "rev1")).code == 0
    pins = ("--pins", str(client.pins))
    root = f"trust-config:{client.history.trust_config}"
    for argv in (("trust", "show", SERVER, *pins), ("trust", "list", *pins)):
        shown = run_main(*argv)
        assert shown.code == 0, shown.stderr
        (line,) = [x for x in shown.stdout.splitlines() if x.startswith("  trust root")]
        assert line == f"  trust root     {root}  [NOT PRODUCTION]", line
    listed = json.loads(run_main("trust", "list", *pins, "--format", "json").stdout)
    assert listed["schemaVersion"] == JSON_SCHEMA_VERSION
    assert listed["servers"][SERVER] == client.pinned()  # the pin file's entry, as written
    trust = listed["trustRoots"][SERVER]
    assert (trust["root"], trust["production"]) == (root, False)
    assert trust["warning"].startswith("using the LOCAL dev-sigstore instance")
    shown = json.loads(run_main("trust", "show", SERVER, *pins, "--format", "json").stdout)
    assert shown["trust"] == trust
    entry = client.pinned()
    del entry["trustRoot"]  # a pin with no recorded root: production
    client.pins.write_text(json.dumps({"version": 2, "servers": {SERVER: entry}}))
    shown = run_main("trust", "show", SERVER, *pins)
    assert "  trust root     production\n" in shown.stdout
    listed = json.loads(run_main("trust", "list", *pins, "--format", "json").stdout)
    assert listed["trustRoots"][SERVER] == {"root": "production", "production": True,
                                            "warning": None}
