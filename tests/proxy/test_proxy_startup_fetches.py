"""What the proxy's start-up reads from the pinned location: the latest envelope, the signed
tools and one look for a yank (usually absent) — the yank is never looked for twice."""

from __future__ import annotations

import asyncio
import collections
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from proxy_fixtures import SERVER, World, recorder

from histor_sign._chain_store import ReleaseLocation
from histor_sign._sigstore_trust import Trust
from histor_sign.mcp import Target
from histor_sign.proxy import Proxy

pytestmark = pytest.mark.slow


class _Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None


def test_start_up_looks_for_the_yank_once(world: World, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    reads: collections.Counter[str] = collections.Counter()
    fetch_json = ReleaseLocation.fetch_json

    def counting(self: ReleaseLocation, address: str, **options: Any) -> Any:
        reads[Path(address).name] += 1
        return fetch_json(self, address, **options)

    monkeypatch.setattr(ReleaseLocation, "fetch_json", counting)
    pins = tmp_path / "pins.json"
    shutil.copy(world.pins, pins)
    proxy = Proxy(server=SERVER, upstream=Target.stdio(recorder(tmp_path / "up.jsonl")),
                  trust=Trust.from_trust_config(world.released.trust_config), store=pins)

    async def session() -> bytes:
        host_in = asyncio.StreamReader()
        host_in.feed_data(json.dumps({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "h", "version": "0"}}}).encode() + b"\n")
        host_in.feed_eof()
        sink = _Sink()
        outcome = await proxy.serve(host_in, sink)
        assert outcome.status == "ended", outcome
        return bytes(sink.data)

    answer = json.loads(asyncio.run(session()).splitlines()[0])
    assert "result" in answer, answer  # served: verified and compared
    assert reads["1.yank.envelope.json"] == 1, reads
    assert reads["latest.envelope.json"] == 1, reads
