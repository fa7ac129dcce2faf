"""A publisher's releases of the bundled example server, signed once per session by a real
LocalSigstore (stopped before anything is verified), and every case of the verdict matrix
laid out as a chain location plus a pin file made by ``trust add`` under that local root.

The releases (``release`` out-dirs: envelope, snapshot, attestation):

* ``r1``      revision 1 from tag v1.0.0 (the pin's first use: ref pattern refs/tags/**)
* ``r2``      revision 2 from tag v1.1.0, the same tools (nothing to accept)
* ``r2high``  revision 2 from tag v1.1.0 whose search_notes description widens its scope
              (triaged high risk: waits for acceptance)
* ``fork1``   another revision 1 (other tools) from the same workflow
* ``r2deploy`` revision 2 from another workflow file of the repository
* ``r2branch`` revision 2 from the pinned workflow run on a pushed branch
* ``r2mallory`` revision 2 of the pinned name, signed by another owner's workflow
"""

from __future__ import annotations

import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_harness import run_cli

from histor_sign._sigstore_trust import Trust
from histor_sign.layout import chain_dir
from histor_sign.models import load_envelope
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

SERVER = "io.github.example/notes-server"
REPO = "https://github.com/example/notes-server"
TAG1 = f"{REPO}/.github/workflows/sign.yml@refs/tags/v1.0.0"
TAG2 = f"{REPO}/.github/workflows/sign.yml@refs/tags/v1.1.0"
BRANCH = f"{REPO}/.github/workflows/sign.yml@refs/heads/evil"
DEPLOY = f"{REPO}/.github/workflows/deploy.yml@refs/tags/v1.1.0"
MALLORY = "https://github.com/mallory/notes-server/.github/workflows/sign.yml@refs/tags/v1.1.0"
HIGH = "search_notes=Search every note, including private notebooks."
LOW_FORK = "list_notebooks=List the notebooks."
FILES = ("envelope.json", "tools.snapshot.json", "intoto.sigstore.json")


def server_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "histor_sign.demo.example_server", *extra]


@dataclass
class World:
    base: Path
    trust_config: Path
    releases: dict[str, Path] = field(default_factory=dict)
    yank_dir: Path | None = None  # r1 and r2 published, revision 2 yanked by its publisher

    def location(self, where: Path, latest: str, *others: str,
                 attest: bool = True) -> Path:
        """``others`` then ``latest`` published as their revisions, latest last."""
        where.mkdir(parents=True, exist_ok=True)
        for name in (*others, latest):
            directory = self.releases[name]
            n = load_envelope(directory / "envelope.json").revision
            for file in FILES:
                if file != "intoto.sigstore.json" or attest or name != latest:
                    shutil.copy(directory / file, where / f"{n}.{file}")
        shutil.copy(self.releases[latest] / "envelope.json", where / "latest.envelope.json")
        return where

    def pin(self, location: Path, pins: Path) -> Path:
        """``trust add`` under the local root (recorded in the pin): no trust flag later."""
        added = run_cli("trust", "add", SERVER, "--repository", "example/notes-server",
                        "--envelope", str(location), "--pins", str(pins),
                        "--trust-config", str(self.trust_config))
        assert added.code == 0, added.stderr
        return pins


def _release(sigstore: LocalSigstore, out: Path, identity: str, *served: str,
             previous: Path | None = None, version: str = "1.0.0") -> Path:
    token = sigstore.mint_token(identity)
    args = ["release", "--server", SERVER, "--server-version", version, "--out-dir", str(out),
            "--trust-config", str(sigstore.trust_config_path), "--stdio",
            shlex.join(server_command(*served)), "--server-is-trusted-code",
            "--identity-token", token]
    if previous is not None:
        args += ["--previous", str(previous / "envelope.json")]
    run = run_cli(*args)
    assert run.code == 0, run.stderr
    return out


def _foreign(sigstore: LocalSigstore, out: Path, like: Path, identity: str,
             **claims: Any) -> Path:
    """``like``'s statement signed by ``identity`` (no owned-namespace check: a forgery)."""
    from dataclasses import replace

    out.mkdir(parents=True)
    statement = replace(load_envelope(like / "envelope.json").statement, identity=identity)
    trust = Trust.from_trust_config(sigstore.trust_config_path)
    sign_statement(statement, trust=trust, identity_token=sigstore.mint_token(identity, **claims),
                   require_owned_namespace=False).write(out / "envelope.json")
    for file in FILES[1:]:
        shutil.copy(like / file, out / file)
    return out


def make_world(base: Path) -> World:
    world = World(base, base / "unset")
    with LocalSigstore(directory=base / "sigstore") as sigstore:
        world.trust_config = sigstore.trust_config_path
        r = world.releases
        r["r1"] = _release(sigstore, base / "r1", TAG1)
        r["r2"] = _release(sigstore, base / "r2", TAG2, previous=r["r1"], version="1.1.0")
        r["r2high"] = _release(sigstore, base / "r2high", TAG2, "--description", HIGH,
                               previous=r["r1"], version="1.1.0")
        r["fork1"] = _release(sigstore, base / "fork1", TAG1, "--description", LOW_FORK)
        # (release itself refuses to chain these: re-signed as an attacker would)
        r["r2deploy"] = _foreign(sigstore, base / "r2deploy", r["r2"], DEPLOY)
        r["r2branch"] = _foreign(sigstore, base / "r2branch", r["r2"], BRANCH)
        r["r2mallory"] = _foreign(sigstore, base / "r2mallory", r["r2"], MALLORY,
                                  owner_id="6666", repository_id="7777")
        world.yank_dir = _yanked(world, sigstore)
    return world


def _yanked(world: World, sigstore: LocalSigstore) -> Path:
    """A chain directory holding revisions 1 and 2, revision 2 yanked by its publisher."""
    root = world.base / "yank-root"
    where = chain_dir(root, SERVER)
    world.location(where, "r2", "r1")
    from histor_sign.yank import yank_revision

    yank_revision(SERVER, 2, "leaks notes", revisions=root,
                  trust=Trust.from_trust_config(sigstore.trust_config_path),
                  identity_token=sigstore.mint_token(TAG2))
    return where
