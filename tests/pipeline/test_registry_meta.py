"""The MCP Registry ``_meta`` fragment a release writes (``registry-meta.json``): valid
under the registry's own server.json schema (vendored in tests/data/mcp-registry), at most
4 KB, and enough for ``trust add --server-json`` to pin the publisher from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from artifact_kit import BoundRelease, release_with_artifacts
from cli_harness import REPO, assert_clean_error, run_cli

from histor_sign.errors import InputError, LimitExceeded
from histor_sign.registry import (
    HISTOR_META,
    PUBLISHER_PROVIDED,
    read_registry_pin,
    registry_meta,
)

SCHEMA = json.loads((REPO / "tests" / "data" / "mcp-registry" / "server.schema.json")
                    .read_text())


def validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def server_json(fragment: dict[str, Any], name: str) -> dict[str, Any]:
    """A minimal server.json with the fragment merged in (what `jq -s '.[0] * .[1]'` does)."""
    return {"$schema": SCHEMA["$id"], "name": name, "description": "Search notes",
            "version": "2.3.0", **fragment}


@pytest.fixture(scope="module")
def bound(tmp_path_factory: pytest.TempPathFactory) -> BoundRelease:
    return release_with_artifacts(tmp_path_factory.mktemp("registry"))


@pytest.mark.slow
def test_fragment_is_small_and_valid_under_the_registry_schema(bound: BoundRelease) -> None:
    data = (bound.out_dir / "registry-meta.json").read_bytes()
    assert len(data) <= 4096
    fragment = json.loads(data)
    member = fragment["_meta"][PUBLISHER_PROVIDED][HISTOR_META]
    envelope = json.loads((bound.out_dir / "envelope.json").read_text())
    assert member["manifestDigest"] == envelope["manifestDigest"]
    assert member["revision"] == 1 and member["repository"] == "example/notes-server"
    assert member["workflow"] == ".github/workflows/sign.yml"
    assert member["location"] == f"{bound.chain}/latest.envelope.json"
    assert Path(member["envelope"]).is_file() and Path(member["attestation"]).is_file()
    document = server_json(fragment, bound.server)
    assert list(validator().iter_errors(document)) == []
    # The negative control: the schema does check the member's type.
    broken = server_json({"_meta": {PUBLISHER_PROVIDED: "histor"}}, bound.server)
    assert list(validator().iter_errors(broken)) != []


def test_default_location_and_the_size_bound(signed_set: Any) -> None:
    from histor_sign.models import load_envelope

    envelope = load_envelope(signed_set.rev1)
    base = "https://raw.githubusercontent.com/alice/docs/histor-revisions/revisions/x"
    fragment = json.loads(registry_meta(envelope, base=base, repository="alice/docs",
                                        workflow=None))
    assert fragment["_meta"][PUBLISHER_PROVIDED][HISTOR_META]["location"] == (
        base + "/latest.envelope.json")
    with pytest.raises(LimitExceeded):
        registry_meta(envelope, base="https://example.com/" + "a" * 4000, repository=None,
                      workflow=None)


def test_reading_is_strict(signed_set: Any) -> None:
    from histor_sign.models import load_envelope

    envelope = load_envelope(signed_set.rev1)
    fragment = json.loads(registry_meta(envelope, base="/srv/chain", repository="alice/docs",
                                        workflow=".github/workflows/sign.yml"))
    pin = read_registry_pin(fragment, "frag")
    assert (pin.server, pin.revision, pin.location) == (
        envelope.statement.server, envelope.statement.revision, "/srv/chain/latest.envelope.json")
    member = fragment["_meta"][PUBLISHER_PROVIDED][HISTOR_META]
    for edit, message in [({"version": 2}, "version must be 1"),
                          ({"extra": 1}, "unknown members"),
                          ({"revision": True}, "positive integer"),
                          ({"manifestDigest": "md5:1"}, "sha256")]:
        changed = {"_meta": {PUBLISHER_PROVIDED: {HISTOR_META: {**member, **edit}}}}
        with pytest.raises(InputError, match=message):
            read_registry_pin(changed, "frag")
    with pytest.raises(InputError, match="differs from the fragment"):
        read_registry_pin({**fragment, "name": "io.github.mallory/docs"}, "frag")
    with pytest.raises(InputError, match="not published with a histor-sign release"):
        read_registry_pin({"name": "io.github.alice/docs"}, "frag")


@pytest.mark.slow
def test_trust_add_from_server_json_then_check_the_artifact(
    bound: BoundRelease, tmp_path: Path
) -> None:
    fragment = json.loads((bound.out_dir / "registry-meta.json").read_text())
    path = tmp_path / "server.json"
    path.write_text(json.dumps(server_json(fragment, bound.server)))
    pins = ["--pins", str(tmp_path / "pins.json"), "--trust-config", str(bound.trust_config)]
    conflict = run_cli("trust", "add", "--server-json", str(path), "--repository",
                       "mallory/notes-server", *pins)
    assert_clean_error(conflict)
    assert "contradict the server.json" in conflict.stderr
    # A server.json naming a revision the location does not serve: nothing is pinned.
    ahead = json.loads(json.dumps(fragment))
    ahead["_meta"][PUBLISHER_PROVIDED][HISTOR_META]["revision"] = 2
    ahead_path = tmp_path / "ahead.json"
    ahead_path.write_text(json.dumps(server_json(ahead, bound.server)))
    refused = run_cli("trust", "add", "--server-json", str(ahead_path), *pins)
    assert refused.code == 1 and "names revision 2" in refused.stderr
    assert not (tmp_path / "pins.json").exists()

    added = run_cli("trust", "add", "--server-json", str(path), *pins)
    assert added.code == 0, added.stderr
    entry = json.loads((tmp_path / "pins.json").read_text())["servers"][bound.server]
    assert entry["repository"] == "example/notes-server"
    assert entry["workflow"] == ".github/workflows/sign.yml"
    checked = run_cli("check", "--server", bound.server, "--artifact", str(bound.wheel), *pins)
    assert checked.code == 0, checked.stderr
