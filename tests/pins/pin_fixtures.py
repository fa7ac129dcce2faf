"""A publisher's history signed once per session against a real LocalSigstore (stopped
before any test verifies it), and helpers that publish parts of it in the documented
location layout (``latest.envelope.json``, ``<n>.envelope.json``,
``<n>.tools.snapshot.json``)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sigstore_testkit import ALICE_OWNER_ID, ALICE_REPO_ID, WF_ALICE, WF_ALICE_OTHER, statement

from histor_sign._sigstore_trust import Trust
from histor_sign.models import Statement
from histor_sign.signing import sign_statement
from histor_sign.sigstore_dev import LocalSigstore

SERVER = "io.github.alice/docs"
WF_MALLORY = "https://github.com/mallory/docs/.github/workflows/sign.yml@refs/heads/main"
WF_ALICE_TAG = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/tags/v3.0.0"
WF_ALICE_DEPLOY = "https://github.com/alice/docs/.github/workflows/deploy.yml@refs/heads/main"
WF_ALICE_EVIL = "https://github.com/alice/docs/.github/workflows/sign.yml@refs/heads/evil"


def tools(n: int, extra: str = "") -> list[dict[str, Any]]:
    """A small catalog that differs per revision."""
    return [
        {
            "name": "search",
            "description": f"Search the docs (v{n}){extra}.",
            "inputSchema": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
        {"name": "fetch", "description": f"Fetch page {n}.", "inputSchema": {"type": "object"}},
    ]


@dataclass
class History:
    directory: Path
    trust_config: Path
    envelopes: dict[str, Path]  # name -> envelope file
    tools: dict[str, list[dict[str, Any]]]  # name -> signed tools
    revisions: dict[str, int]

    def publish(self, target: Path, latest: str, *others: str, snapshots: bool = True) -> Path:
        """Lay ``latest`` and ``others`` out in the location layout; return the directory."""
        target.mkdir(parents=True, exist_ok=True)
        for name in (*others, latest):
            n = self.revisions[name]
            shutil.copy(self.envelopes[name], target / f"{n}.envelope.json")
            if snapshots:
                (target / f"{n}.tools.snapshot.json").write_text(
                    json.dumps({"tools": self.tools[name]}, indent=2)
                )
        shutil.copy(self.envelopes[latest], target / "latest.envelope.json")
        return target

    def trust(self) -> Trust:
        return Trust.from_trust_config(self.trust_config)


def make_history(directory: Path) -> History:
    directory.mkdir(parents=True, exist_ok=True)
    envelopes: dict[str, Path] = {}
    signed_tools: dict[str, list[dict[str, Any]]] = {}
    revisions: dict[str, int] = {}
    with LocalSigstore(directory=directory / "sigstore") as inst:
        trust = Trust.from_trust_config(inst.trust_config_path)

        def sign(name: str, stmt: Statement, identity: str, catalog: list[dict[str, Any]],
                 **claims: Any) -> Statement:
            claims.setdefault("owner_id", ALICE_OWNER_ID)
            claims.setdefault("repository_id", ALICE_REPO_ID)
            token = inst.mint_token(identity, **claims)
            out = directory / f"{name}.envelope.json"
            sign_statement(stmt, trust=trust, identity_token=token,
                           require_owned_namespace=False).write(out)
            envelopes[name], signed_tools[name], revisions[name] = out, catalog, stmt.revision
            return stmt

        s1 = sign("rev1", statement(SERVER, WF_ALICE, tools(1)), WF_ALICE, tools(1))
        s2 = sign("rev2", statement(SERVER, WF_ALICE, tools(2), previous=s1), WF_ALICE, tools(2))
        sign("rev3", statement(SERVER, WF_ALICE_TAG, tools(3), previous=s2), WF_ALICE_TAG,
             tools(3))
        # Another revision 2 from the same workflow: a fork of the history.
        f2 = sign("fork2", statement(SERVER, WF_ALICE, tools(2, " fork"), previous=s1),
                  WF_ALICE, tools(2, " fork"))
        # Revision 3 that descends from the fork, not from rev2: a broken chain after rev2.
        sign("broken3", statement(SERVER, WF_ALICE, tools(3, " fork"), previous=f2), WF_ALICE,
             tools(3, " fork"))
        # Validly signed revision 2 for the pinned name from elsewhere.
        sign("other_repo2", statement(SERVER, WF_ALICE_OTHER, tools(2), previous=s1),
             WF_ALICE_OTHER, tools(2), repository_id="2002")
        sign("mallory2", statement(SERVER, WF_MALLORY, tools(2), previous=s1), WF_MALLORY,
             tools(2), owner_id="6666", repository_id="7777")
        sign("reregistered2", statement(SERVER, WF_ALICE, tools(2), previous=s1), WF_ALICE,
             tools(2), owner_id="9999", repository_id="9998")
        sign("deploy2", statement(SERVER, WF_ALICE_DEPLOY, tools(2), previous=s1),
             WF_ALICE_DEPLOY, tools(2))
        # The pinned workflow file run from a pushed branch (anyone with push access).
        sign("evil_branch2", statement(SERVER, WF_ALICE_EVIL, tools(2), previous=s1),
             WF_ALICE_EVIL, tools(2), ref="refs/heads/evil")
        trust_config = inst.trust_config_path
    return History(directory, trust_config, envelopes, signed_tools, revisions)
