"""The pin file: round trip, human-readable layout, strict parse of every bad-input class
(clear error, the file left byte for byte as it was), and the change rules."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from histor_sign._limits import MAX_PIN_FILE_BYTES
from histor_sign.errors import InputError, LimitExceeded, UsageError, VerificationFailed
from histor_sign.pins import PinEntry, PinStore, default_pins_path

DIGEST = "sha256:" + "ab" * 32
OTHER = "sha256:" + "cd" * 32
ENTRY = PinEntry(
    server="io.github.acme/search", repository="acme/search-mcp",
    location="https://example.org/releases/latest.envelope.json", revision=3,
    manifest_digest=DIGEST, signer="https://github.com/acme/search-mcp/.github/workflows/"
    "sign.yml@refs/tags/v1.0.0", workflow=".github/workflows/sign.yml", owner_id="11",
    repository_id="22",
)


def good_document() -> dict[str, Any]:
    return json.loads(PinStore(Path("x"), {ENTRY.server: ENTRY}).to_bytes())


def test_round_trip_is_sorted_indented_and_secret_free(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "pins.json"
    second = replace(ENTRY, server="io.github.acme/alpha", workflow=None)
    store = PinStore.load(path).add(ENTRY).add(second)
    text = path.read_text()
    assert text.endswith("}\n") and '\n  "servers": {\n' in text
    assert text.index("io.github.acme/alpha") < text.index("io.github.acme/search")
    assert PinStore.load(path) == store
    assert PinStore.load(path).get(ENTRY.server) == ENTRY
    assert len(store) == 2 and "io.github.acme/alpha" in store
    # Only public facts: names, ids, digests, the location.
    assert set(json.loads(text)["servers"][ENTRY.server]) == {
        "repository", "workflow", "ownerId", "repositoryId", "issuer", "envelope", "revision",
        "manifestDigest", "signer", "refPattern", "attested",
    }


def test_missing_file_is_an_empty_store(tmp_path: Path) -> None:
    assert len(PinStore.load(tmp_path / "none.json")) == 0


def test_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_pins_path() == tmp_path / "histor-sign" / "pins.json"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_pins_path() == tmp_path / "home" / ".config" / "histor-sign" / "pins.json"


def _edit(edit: Any) -> bytes:
    doc = good_document()
    edit(doc)
    return json.dumps(doc).encode()


def _entry(key: str, value: Any) -> Any:
    def edit(doc: dict[str, Any]) -> None:
        doc["servers"][ENTRY.server][key] = value
    return edit


CORRUPT: list[tuple[str, bytes, str]] = [
    ("not-json", b'{"version": 1, "servers": {', "pins file"),
    ("empty", b"", "empty file"),
    ("array", b"[]", "must be a JSON object"),
    ("duplicate-key", b'{"version": 1, "version": 1, "servers": {}}', "duplicate"),
    ("no-version", b'{"servers": {}}', "version must be 2"),
    ("newer-version", b'{"version": 3, "servers": {}}', "newer than this histor-sign"),
    ("bool-version", b'{"version": true, "servers": {}}', "version must be 2"),
    ("bad-ref-pattern", _edit(_entry("refPattern", "main")), "glob over full git refs"),
    ("bad-attested", _edit(_entry("attested", "yes")), "attested must be true or false"),
    ("unknown-top", _edit(lambda d: d.update(extra=1)), "unknown member(s) extra"),
    ("servers-list", b'{"version": 1, "servers": []}', "servers must be a JSON object"),
    ("bad-name", _edit(lambda d: d["servers"].update({"no slash": d["servers"][ENTRY.server]})),
     "not a server name"),
    ("entry-not-object", _edit(lambda d: d["servers"].update({ENTRY.server: 3})),
     "must be a JSON object"),
    ("missing-member", _edit(lambda d: d["servers"][ENTRY.server].pop("signer")),
     "missing signer"),
    ("unknown-member", _edit(_entry("token", "x")), "unknown member(s) token"),
    ("revision-zero", _edit(_entry("revision", 0)), "revision must be a positive integer"),
    ("revision-string", _edit(_entry("revision", "3")), "revision must be a positive integer"),
    ("bad-digest", _edit(_entry("manifestDigest", "sha256:xyz")), "manifest_digest"),
    ("bad-repository", _edit(_entry("repository", "acme")), "OWNER/REPO"),
    ("bad-workflow", _edit(_entry("workflow", "../sign.yml")), "workflow file path"),
    ("bad-owner-id", _edit(_entry("ownerId", "12a")), "decimal number"),
    ("null-issuer", _edit(_entry("issuer", None)), "issuer must be a non-empty string"),
    ("plain-http", _edit(_entry("envelope", "http://example.org/latest.envelope.json")),
     "loopback"),
    ("too-big", b" " * (MAX_PIN_FILE_BYTES + 1), "larger than the limit"),
]


@pytest.mark.parametrize(("case", "data", "needle"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupted_file_is_a_clear_error_and_never_overwritten(
    tmp_path: Path, case: str, data: bytes, needle: str
) -> None:
    path = tmp_path / "pins.json"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        PinStore.load(path)
    message = str(info.value)
    assert needle in message, message
    assert "\n" not in message
    if not isinstance(info.value, LimitExceeded):
        assert str(path) in message
    for change in (lambda s: s.add(ENTRY), lambda s: s.remove(ENTRY.server),
                   lambda s: s.advance(ENTRY)):
        with pytest.raises(InputError):
            change(PinStore(path, {}))
        assert path.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pins.json"]  # locked: no lock file


def test_add_refuses_to_replace_unless_asked(tmp_path: Path) -> None:
    store = PinStore.load(tmp_path / "pins.json").add(ENTRY)
    moved = replace(ENTRY, repository="acme/other")
    with pytest.raises(UsageError, match="already pinned"):
        store.add(moved)
    assert store.add(moved, replace_existing=True).get(ENTRY.server) == moved


def test_remove(tmp_path: Path) -> None:
    store = PinStore.load(tmp_path / "pins.json").add(ENTRY)
    assert len(store.remove(ENTRY.server)) == 0
    with pytest.raises(UsageError, match="is not pinned"):
        store.remove(ENTRY.server)


def test_advance_never_moves_back_and_detects_a_concurrent_fork(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    PinStore.load(path).add(ENTRY)
    stale = PinStore.load(path)
    PinStore.load(path).advance(replace(ENTRY, revision=5))
    # A process that verified only revision 4 must not lower the pin another one raised.
    assert stale.advance(replace(ENTRY, revision=4)).get(ENTRY.server).revision == 5  # type: ignore[union-attr]
    with pytest.raises(VerificationFailed, match="fork"):
        stale.advance(replace(ENTRY, revision=5, manifest_digest=OTHER))
    with pytest.raises(VerificationFailed, match="changed by another process"):
        stale.advance(replace(ENTRY, revision=6, repository="acme/elsewhere"))
    assert PinStore.load(path).get(ENTRY.server).revision == 5  # type: ignore[union-attr]


def test_entries_are_validated_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "pins.json"
    with pytest.raises(UsageError, match="OWNER/REPO"):
        PinStore.load(path).add(replace(ENTRY, repository="not a repo"))
    with pytest.raises(UsageError, match="loopback"):
        PinStore.load(path).add(replace(ENTRY, location="ftp://x/y.json"))
    assert not path.exists()
