"""A schema from an untrusted server must never make histor-sign send a request: jsonschema's
default registry fetches a remote ``$ref``; every validator here uses the local one (the
published meta-schemas only), so such a reference stays unresolvable."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from histor_sign._schema.validation import plain_class, prepare_root
from histor_sign.catalog import tools_from_dicts
from histor_sign.guard import Guard


class _Recorder(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        _Recorder.seen.append(self.path)
        body = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def remote() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    _Recorder.seen.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/x.json"
    finally:
        server.shutdown()
        server.server_close()


def test_no_validator_fetches_a_remote_ref(remote: str) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": remote}}}
    root = prepare_root(schema, "t", check=False)
    with pytest.raises(Exception):  # noqa: B017  unresolvable, never fetched
        root.accepts({"a": "x"})
    with pytest.raises(Exception):  # noqa: B017
        plain_class("2020-12")(schema).is_valid({"a": "x"})
    tools = tools_from_dicts([{"name": "t", "inputSchema": schema}])
    decision = Guard.from_catalog(tools).check({"name": "t", "arguments": {"a": "x"}})
    assert decision.verdict == "deny"
    assert _Recorder.seen == []


def test_meta_schema_refs_still_resolve() -> None:
    schema = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert plain_class("2020-12")(schema).is_valid({"type": "string"})
    assert not plain_class("2020-12")(schema).is_valid({"type": 12})
