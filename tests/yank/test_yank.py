"""``histor-sign yank`` and the rule that follows it, end to end against a running
LocalSigstore: a publisher yanks a revision with the same signing as its releases; check,
guard and trust refuse the yanked revision (exit 1, naming the yank and its reason) until a
later revision is published, then follow to it; the pin remembers the yank; a yank signed
by anyone else withdraws nothing."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_harness import run_cli
from sigstore_testkit import ALICE_OWNER_ID, ALICE_REPO_ID, error_lines, statement

from histor_sign._chain_store import publish
from histor_sign._sigstore_trust import Trust
from histor_sign.layout import chain_dir
from histor_sign.models import SignedYank, YankStatement
from histor_sign.pins import Freshness, PinStore, latest_for_use, pin_first_use
from histor_sign.signing import obtain_identity, sign_bytes, sign_statement
from histor_sign.sigstore_dev import LocalSigstore
from histor_sign.verification import log_entry_of

pytestmark = pytest.mark.slow

SERVER = "io.github.alice/docs"
WF = "https://github.com/alice/docs/.github/workflows/release.yml@refs/heads/main"
WF_DEPLOY = "https://github.com/alice/docs/.github/workflows/deploy.yml@refs/heads/main"
WF_OTHER_REF = "https://github.com/alice/docs/.github/workflows/release.yml@refs/heads/evil"
WF_MALLORY = "https://github.com/mallory/docs/.github/workflows/release.yml@refs/heads/main"
REASON = "description injected by a compromised dependency"


def tools(n: int) -> list[dict[str, Any]]:
    return [{"name": "search", "description": f"Search the docs (v{n}).",
             "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}},
                             "required": ["q"]}}]


@dataclass
class Publisher:
    inst: LocalSigstore
    trust: Trust
    root: Path  # the --revisions directory

    @property
    def directory(self) -> Path:
        return chain_dir(self.root, SERVER)

    def token(self, identity: str = WF, **claims: Any) -> str:
        claims.setdefault("owner_id", ALICE_OWNER_ID)
        claims.setdefault("repository_id", ALICE_REPO_ID)
        return self.inst.mint_token(identity, **claims)

    def release(self, n: int) -> None:
        previous = None
        if n > 1:
            previous = json.loads((self.directory / f"{n - 1}.envelope.json").read_text())
        stmt = statement(SERVER, WF, tools(n), previous=previous, version=f"1.{n}.0")
        signed = sign_statement(stmt, trust=self.trust, identity_token=self.token())
        publish(self.root, SERVER, n, signed.envelope.to_bytes(),
                json.dumps({"tools": tools(n)}).encode())

    def yank(self, n: int, *extra: str, identity: str = WF, **claims: Any) -> Any:
        return run_cli("yank", "--server", SERVER, "--revision", str(n), "--reason", REASON,
                       "--revisions", str(self.root), "--trust-config",
                       str(self.inst.trust_config_path), "--identity-token",
                       self.token(identity, **claims), *extra)

    def forge_yank(self, n: int, identity: str, **claims: Any) -> None:
        """A well-formed yank of revision n signed by ``identity``, written where the
        publisher's would be (the CLI refuses to make one)."""
        envelope = json.loads((self.directory / f"{n}.envelope.json").read_text())
        who = obtain_identity(self.token(identity, **claims))
        stmt = YankStatement(SERVER, n, envelope["manifestDigest"], who.identity, "forged")
        bundle = sign_bytes(stmt.signed_bytes(issuer=who.issuer, identity=who.identity),
                            who=who, trust=self.trust)
        yank = SignedYank(stmt, who.issuer, who.identity, bundle, log_entry_of(bundle))
        (self.directory / f"{n}.yank.envelope.json").write_bytes(yank.to_bytes())


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSigstore]:
    with LocalSigstore(directory=tmp_path_factory.mktemp("yank-sigstore")) as inst:
        yield inst


@pytest.fixture
def publisher(instance: LocalSigstore, tmp_path: Path) -> Publisher:
    pub = Publisher(instance, Trust.from_trust_config(instance.trust_config_path),
                    tmp_path / "revisions")
    pub.release(1)
    pub.release(2)
    return pub


def client(pub: Publisher, tmp_path: Path, *args: str) -> Any:
    return run_cli(*args, "--pins", str(tmp_path / "pins.json"), "--trust-config",
                   str(pub.inst.trust_config_path))


def pin_at(pub: Publisher, tmp_path: Path, n: int) -> None:
    """Pin SERVER at revision n (latest = n while pinning)."""
    shutil.copy(pub.directory / f"{n}.envelope.json", tmp_path / "latest.tmp")
    latest = pub.directory / "latest.envelope.json"
    saved = latest.read_bytes()
    latest.write_bytes((pub.directory / f"{n}.envelope.json").read_bytes())
    first = pin_first_use(SERVER, repository="alice/docs", location=str(pub.directory),
                          trust=pub.trust)
    PinStore.load(tmp_path / "pins.json").add(first.pin)
    latest.write_bytes(saved)


def served(tmp_path: Path, n: int) -> str:
    path = tmp_path / f"served-{n}.json"
    path.write_text(json.dumps({"tools": tools(n)}))
    return str(path)


def assert_yank_refusal(run: Any, n: int) -> None:
    assert run.code == 1, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and run.stdout == ""
    errors = error_lines(run.stderr)
    assert len(errors) == 1, run.stderr
    assert f"yanked: revision {n} is yanked by its publisher" in errors[0], errors[0]
    assert REASON in errors[0] and f"{n}.yank.envelope.json" in errors[0]


def pinned(tmp_path: Path) -> dict[str, Any]:
    entry: dict[str, Any] = json.loads((tmp_path / "pins.json").read_text())["servers"][SERVER]
    return entry


def test_yank_publishes_a_signed_yank_beside_the_revision(publisher: Publisher) -> None:
    run = publisher.yank(2)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith(f"yanked {SERVER} revision 2")
    assert f"reason     {REASON}" in run.stdout and f"signer     {WF}" in run.stdout
    doc = json.loads((publisher.directory / "2.yank.envelope.json").read_text())
    assert doc["type"] == "histor.yank/v1" and doc["revision"] == 2
    revision = json.loads((publisher.directory / "2.envelope.json").read_text())
    assert doc["manifestDigest"] == revision["manifestDigest"]
    assert doc["reason"] == REASON and doc["signer"]["identity"] == WF
    # its in-toto form, for other verifiers: the same signer, the yanked manifest as subject
    from histor_sign.attestation import verify_attestation_bundle

    bundle = json.loads((publisher.directory / "2.yank.intoto.sigstore.json").read_text())
    payload, facts = verify_attestation_bundle(bundle,
                                               trusted_root=publisher.trust.trusted_root())
    statement = json.loads(payload)
    assert statement["predicateType"] == "https://histor-sign.dev/yank/v1"
    assert statement["subject"] == [{"name": "manifest", "digest": {
        "sha256": revision["manifestDigest"].removeprefix("sha256:")}}]
    assert statement["predicate"]["yank"]["reason"] == REASON and facts.sans == (WF,)
    # a yank is never overwritten, and only a published revision can be yanked
    again = publisher.yank(2)
    assert again.code == 2 and "already yanked" in again.stderr
    missing = publisher.yank(9)
    assert missing.code == 2 and "not published" in missing.stderr


@pytest.mark.parametrize(("identity", "claims", "needle"), [
    (WF_MALLORY, {"owner_id": "6666", "repository_id": "7777"}, "owner id"),
    (WF_DEPLOY, {}, "workflow"),
    (WF_OTHER_REF, {"ref": "refs/heads/evil"}, "refs/heads/main"),
])
def test_yank_refuses_a_signer_other_than_the_publisher_before_signing(
    publisher: Publisher, identity: str, claims: dict[str, Any], needle: str
) -> None:
    run = publisher.yank(2, identity=identity, **claims)
    assert run.code == 2, (run.stdout, run.stderr)
    errors = error_lines(run.stderr)
    assert len(errors) == 1 and "did not publish revision 2" in errors[0], run.stderr
    assert needle in errors[0] and "nothing was signed" in errors[0]
    assert not (publisher.directory / "2.yank.envelope.json").exists()


def test_check_refuses_a_yanked_latest_and_follows_to_the_next_revision(
    publisher: Publisher, tmp_path: Path
) -> None:
    pin_at(publisher, tmp_path, 1)
    assert client(publisher, tmp_path, "check", "--server", SERVER,
                  served(tmp_path, 2)).code == 0
    assert publisher.yank(2).code == 0
    assert_yank_refusal(client(publisher, tmp_path, "check", "--server", SERVER,
                               served(tmp_path, 2)), 2)
    assert pinned(tmp_path)["yanked"] == {"2": REASON}
    listed = run_cli("trust", "list", "--pins", str(tmp_path / "pins.json"))
    assert listed.code == 0 and f"  yanked         revision 2: {REASON}\n" in listed.stdout
    # The yank cannot be rolled back: served without it, revision 2 stays refused.
    (publisher.directory / "2.yank.envelope.json").unlink()
    assert_yank_refusal(client(publisher, tmp_path, "check", "--server", SERVER,
                               served(tmp_path, 2)), 2)
    publisher.release(3)
    run = client(publisher, tmp_path, "check", "--server", SERVER, served(tmp_path, 3),
                 "--format", "json")
    assert run.code == 0, run.stderr
    verified = json.loads(run.stdout)["verified"]
    assert verified["revision"] == 3 and verified["freshness"] == "advanced"
    assert pinned(tmp_path)["revision"] == 3


def test_an_older_latest_cannot_undo_a_yank(publisher: Publisher, tmp_path: Path) -> None:
    """The location serves the yanked revision as latest although revision 3 exists: the
    client follows the chain to 3 rather than use 2."""
    pin_at(publisher, tmp_path, 1)
    assert publisher.yank(2).code == 0
    latest = (publisher.directory / "latest.envelope.json").read_bytes()
    publisher.release(3)
    (publisher.directory / "latest.envelope.json").write_bytes(latest)
    text = client(publisher, tmp_path, "check", "--server", SERVER, served(tmp_path, 3))
    assert text.code == 0, text.stderr
    assert f"{SERVER} revision 3" in text.stdout
    assert f"revision 2 is yanked: {REASON!r}" in text.stdout
    # Serving the yanked revision to a client already past it is a rollback.
    run = client(publisher, tmp_path, "check", "--server", SERVER, served(tmp_path, 2))
    assert run.code == 1 and "rollback" in run.stderr


def test_check_envelope_of_a_yanked_revision_follows_to_the_next(
    publisher: Publisher, tmp_path: Path
) -> None:
    pin_at(publisher, tmp_path, 1)
    assert publisher.yank(2).code == 0
    envelope = str(publisher.directory / "2.envelope.json")
    assert_yank_refusal(client(publisher, tmp_path, "check", "--envelope", envelope,
                               "--verify", served(tmp_path, 2)), 2)
    publisher.release(3)
    run = client(publisher, tmp_path, "check", "--envelope", envelope, "--verify",
                 served(tmp_path, 3), "--format", "json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["verified"]["revision"] == 3


def test_guard_and_trust_refuse_a_yanked_revision(publisher: Publisher,
                                                  tmp_path: Path) -> None:
    pin_at(publisher, tmp_path, 1)
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "search", "arguments": {"q": "x"}}))
    assert client(publisher, tmp_path, "guard", "--server", SERVER, str(call)).code == 0
    assert publisher.yank(2).code == 0
    assert_yank_refusal(client(publisher, tmp_path, "guard", "--server", SERVER, str(call)), 2)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    added = client(publisher, fresh, "trust", "add", SERVER, "--repository", "alice/docs",
                   "--envelope", str(publisher.directory))
    assert_yank_refusal(added, 2)
    assert not (fresh / "pins.json").exists()
    publisher.release(3)
    allowed = client(publisher, tmp_path, "guard", "--server", SERVER, str(call))
    assert allowed.code == 0, allowed.stderr
    assert f"contract: {SERVER} revision 3" in allowed.stdout
    added = client(publisher, fresh, "trust", "add", SERVER, "--repository", "alice/docs",
                   "--envelope", str(publisher.directory))
    assert added.code == 0, added.stderr
    assert pinned(fresh)["revision"] == 3


@pytest.mark.parametrize(("identity", "claims"), [
    (WF_MALLORY, {"owner_id": "6666", "repository_id": "7777"}),
    (WF_DEPLOY, {}),
    (WF_OTHER_REF, {"ref": "refs/heads/evil"}),
])
def test_a_forged_yank_withdraws_nothing(publisher: Publisher, tmp_path: Path,
                                         identity: str, claims: dict[str, Any]) -> None:
    pin_at(publisher, tmp_path, 1)
    publisher.forge_yank(2, identity, **claims)
    result = latest_for_use(SERVER, trust=publisher.trust, store=tmp_path / "pins.json")
    assert result.freshness is Freshness.ADVANCED and result.revision == 2
    assert result.rejected_yank is not None and "identity" in result.rejected_yank
    run = client(publisher, tmp_path, "check", "--server", SERVER, served(tmp_path, 2),
                 "--format", "json")
    assert run.code == 0, run.stderr
    verified = json.loads(run.stdout)["verified"]
    assert verified["rejectedYank"] and verified["yanked"] == []
    assert "yanked" not in pinned(tmp_path)



def test_the_proxy_refuses_a_yanked_revision_and_serves_the_next(
    publisher: Publisher, tmp_path: Path
) -> None:
    """The proxy takes its revision from pins.latest_for_use: a yanked one refuses the
    session at initialize (the upstream never starts), the next one is served."""
    import sys

    from proxy_fixtures import RawHost, recorder

    pin_at(publisher, tmp_path, 1)
    assert publisher.yank(2).code == 0
    log = tmp_path / "up.jsonl"
    argv = [sys.executable, "-m", "histor_sign", "proxy", "--server", SERVER, "--pins",
            str(tmp_path / "pins.json"), "--trust-config", str(publisher.inst.trust_config_path),
            "--", *recorder(log)]
    host = RawHost(argv)
    answer = host.initialize()
    code, err = host.finish()
    assert "error" in answer, answer
    assert "yanked: revision 2 is yanked by its publisher" in answer["error"]["message"]
    assert REASON in answer["error"]["message"]
    assert code == 1 and "Traceback" not in err and not log.exists()
    publisher.release(3)
    host = RawHost(argv)
    answer = host.initialize()
    code, err = host.finish()
    assert "result" in answer, (answer, err)
    assert pinned(tmp_path)["revision"] == 3


def test_verify_shows_the_yank_beside_the_envelope(publisher: Publisher) -> None:
    envelope = str(publisher.directory / "2.envelope.json")
    args = ("verify", envelope, "--repository", "alice/docs", "--trust-config",
            str(publisher.inst.trust_config_path))
    clean = run_cli(*args)
    assert clean.code == 0 and " yank " not in clean.stdout, clean.stderr
    publisher.forge_yank(2, WF_DEPLOY)
    forged = run_cli(*args)
    assert forged.code == 0, forged.stderr
    assert "pass    yank" in forged.stdout and "withdraws nothing" in forged.stdout
    (publisher.directory / "2.yank.envelope.json").unlink()
    assert publisher.yank(2).code == 0
    yanked = run_cli(*args, "--format", "json")
    assert yanked.code == 1
    checks = {c["axis"]: c for c in json.loads(yanked.stdout)["checks"]}
    assert checks["yank"]["status"] == "fail" and REASON in checks["yank"]["detail"]
    assert ": yank: revision 2 is yanked by its publisher" in yanked.stderr


def test_check_with_identity_pins_and_no_pin_refuses_a_yanked_revision(
    publisher: Publisher, tmp_path: Path
) -> None:
    envelope = str(publisher.directory / "2.envelope.json")
    args = ("check", "--envelope", envelope, "--verify", "--repository", "alice/docs",
            "--workflow", ".github/workflows/release.yml")
    assert client(publisher, tmp_path, *args, served(tmp_path, 2)).code == 0
    assert publisher.yank(2).code == 0
    assert_yank_refusal(client(publisher, tmp_path, *args, served(tmp_path, 2)), 2)
    publisher.release(3)
    run = client(publisher, tmp_path, *args, served(tmp_path, 3))
    assert run.code == 0, run.stderr
    assert f"{SERVER} revision 3" in run.stdout and f"(revision 2 is yanked: {REASON!r})" \
        in run.stdout
    assert not (tmp_path / "pins.json").exists()  # identity pins: nothing was pinned


def test_guard_refuses_the_catalog_of_a_yanked_revision(publisher: Publisher,
                                                        tmp_path: Path) -> None:
    """guard --envelope of a yanked revision with its catalog: the pin follows to revision
    3, so the given catalog is no contract."""
    pin_at(publisher, tmp_path, 1)
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"name": "search", "arguments": {"q": "x"}}))
    assert publisher.yank(2).code == 0
    publisher.release(3)
    args = ("guard", str(call), "--envelope", str(publisher.directory / "2.envelope.json"),
            "--verify", "--catalog", served(tmp_path, 2))
    run = client(publisher, tmp_path, *args)
    assert run.code == 1 and "revision 2 is yanked; its catalog is no contract" in run.stderr
    ok = client(publisher, tmp_path, "guard", str(call), "--envelope",
                str(publisher.directory / "3.envelope.json"), "--verify", "--catalog",
                served(tmp_path, 3))
    assert ok.code == 0, ok.stderr
