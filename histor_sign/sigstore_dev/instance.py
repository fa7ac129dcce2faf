"""``LocalSigstore``: the local Fulcio, Rekor (v1 or v2), token endpoint and optional RFC 3161
timestamp authority behind one loopback HTTP server, plus the ClientTrustConfig that points
sigstore clients at it.

Usage (tests, demo, ``histor-sign dev-sigstore``)::

    with LocalSigstore(directory=tmp) as inst:
        token = inst.mint_token("https://github.com/o/r/.github/workflows/sign.yml@refs/heads/main")
        env = inst.github_env("https://github.com/o/r/.github/workflows/sign.yml@refs/heads/main")
        sign_statement(stmt, trust=Trust.from_trust_config(inst.trust_config_path), ...)
    # verification keeps working after the server stopped: only the trust config is needed
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlparse

from histor_sign.sigstore_dev.fulcio import CertificateAuthority
from histor_sign.sigstore_dev.oidc import SIGSTORE_AUDIENCE, TokenIssuer, WorkflowIdentity
from histor_sign.sigstore_dev.rekor import TransparencyLog
from histor_sign.sigstore_dev.trust import (
    DEV_ORGANIZATION,
    TIMESTAMP_PATH,
    client_trust_config,
)
from histor_sign.sigstore_dev.tsa import TimestampAuthority

MAX_REQUEST_BYTES = 1 << 20
TOKEN_PATH = "/github/token"


class LocalSigstore:
    """A running local Sigstore instance (Fulcio + Rekor + GitHub-style OIDC [+ TSA]).

    ``directory``: where ``trust_config_path`` / ``trusted_root_path`` are written; when
    omitted a temporary directory is used and removed again by :meth:`stop`.

    ``rekor_version``: 1 (``hashedrekord`` 0.0.1 with integrated time and SET, what the
    public-good signing config still hands out) or 2 (``hashedrekord`` 0.0.2, checkpoint
    only, ``integratedTime`` absent — production Rekor v2). ``tsa``: run an RFC 3161
    timestamp authority and list it in the signing config and trusted root; defaults to on
    for Rekor v2 (whose entries carry no time of their own), off for v1.
    ``first_index``: log index of the first signed entry (default 1; see ``rekor``).
    """

    def __init__(
        self,
        *,
        directory: str | Path | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        rekor_version: int = 1,
        tsa: bool | None = None,
        first_index: int = 1,
        state: str | Path | None = None,
    ) -> None:
        self._own_directory = directory is None
        self.directory = Path(directory) if directory is not None else None
        self.host = host
        self.port = port
        now = dt.datetime.now(dt.UTC).replace(microsecond=0)
        self.ca = CertificateAuthority(DEV_ORGANIZATION, now - dt.timedelta(days=1))
        self.log = TransparencyLog(version=rekor_version, first_index=first_index)
        use_tsa = rekor_version == 2 if tsa is None else tsa
        self.tsa = TimestampAuthority(DEV_ORGANIZATION, self.ca.not_before) if use_tsa else None
        self.tokens = TokenIssuer()
        #: Fault injections a test can switch on: with "corrupt-set" or
        #: "corrupt-inclusion-proof" the log answers with a broken SET or inclusion proof.
        self.faults: set[str] = set()
        #: When set, the log's read API answers that many more requests, then 503 (a test
        #: interrupts a monitor run with it).
        self.log_reads_left: int | None = None
        #: Tile paths (``tile/0/002``…) answered with these bytes instead of the log's own:
        #: a test plays a log that serves a forged tile with it.
        self.tile_overrides: dict[str, bytes] = {}
        self.url = ""
        self.trust_config: dict[str, Any] = {}
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: ``--state DIR``: keys and log kept across restarts (see :mod:`.state`).
        self.state = Path(state) if state is not None else None
        self.restored = False
        self._state_lock = threading.Lock()
        if self.state is not None:
            from histor_sign.sigstore_dev import state as kept

            self.restored = kept.load(self, self.state)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> LocalSigstore:
        if self._server is not None:
            return self
        self._server = ThreadingHTTPServer((self.host, self.port), _handler_for(self))
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.url = f"http://{host!s}:{port}"
        # The checkpoint signer name is the baseUrl's host without the port, as production
        # Rekor's is: sigstore-go builds its note verifier from url.Hostname(), and
        # @sigstore/verify needs the name inside the baseUrl.
        self.log.name = str(host)
        self.trust_config = client_trust_config(self.url, self.ca, self.log, self.tsa)
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="dev-sigstore-"))
        self.directory.mkdir(parents=True, exist_ok=True)
        self.trust_config_path.write_text(json.dumps(self.trust_config, indent=2) + "\n")
        self.trusted_root_path.write_text(
            json.dumps(self.trust_config["trustedRoot"], indent=2) + "\n"
        )
        self._save_state()
        # Polled every 50 ms (not the default 0.5 s): stop() waits for the loop to notice,
        # and tests start and stop an instance hundreds of times.
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="dev-sigstore", daemon=True
        )
        self._thread.start()
        return self

    def _save_state(self) -> None:
        if self.state is not None:
            from histor_sign.sigstore_dev import state as kept

            with self._state_lock:
                kept.save(self, self.state)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._own_directory and self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def serve_forever(self) -> None:
        """Block until interrupted (``histor-sign dev-sigstore``)."""
        if self._thread is None:
            self.start()
        assert self._thread is not None
        while self._thread.is_alive():
            self._thread.join(timeout=0.5)

    def __enter__(self) -> LocalSigstore:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # ------------------------------------------------------------------ trust files
    @property
    def trust_config_path(self) -> Path:
        """A ClientTrustConfig JSON file (signing and verification); readable after :meth:`stop`."""
        if self.directory is None:
            raise RuntimeError("LocalSigstore is not started")
        return self.directory / "dev-sigstore.trust.json"

    @property
    def trusted_root_path(self) -> Path:
        """The TrustedRoot alone (enough to verify, not to sign)."""
        if self.directory is None:
            raise RuntimeError("LocalSigstore is not started")
        return self.directory / "dev-sigstore.trusted_root.json"

    # ------------------------------------------------------------------ identities
    def mint_token(
        self,
        identity: str,
        *,
        repository: str | None = None,
        ref: str | None = None,
        owner_id: str | None = None,
        repository_id: str | None = None,
        audience: str = SIGSTORE_AUDIENCE,
        lifetime: int = 600,
        issued_at: int | None = None,
    ) -> str:
        """A GitHub-Actions-style OIDC token for ``identity`` (a workflow URI).

        ``repository`` is the calling repository (defaults to the workflow's own); pass a
        different one to model a reusable workflow. ``lifetime``/``issued_at``/``audience``
        let tests mint expired or wrong-audience tokens.
        """
        who = WorkflowIdentity.parse(
            identity, repository=repository, ref=ref, owner_id=owner_id,
            repository_id=repository_id,
        )
        return self.tokens.mint(who, audience=audience, lifetime=lifetime, issued_at=issued_at)

    def github_env(
        self,
        identity: str,
        *,
        repository: str | None = None,
        ref: str | None = None,
        owner_id: str | None = None,
        repository_id: str | None = None,
    ) -> dict[str, str]:
        """Environment of a GitHub Actions job with ``permissions: id-token: write``.

        With these set, sigstore's ambient detection fetches a token for ``identity`` from
        this instance exactly as it would from GitHub.
        """
        who = WorkflowIdentity.parse(
            identity, repository=repository, ref=ref, owner_id=owner_id,
            repository_id=repository_id,
        )
        return {
            "GITHUB_ACTIONS": "true",
            "ACTIONS_ID_TOKEN_REQUEST_URL": f"{self.url}{TOKEN_PATH}?api-version=2.0",
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": self.tokens.register(who),
        }

    # ------------------------------------------------------------------ service logic
    def _signing_cert(self, authorization: str, request: dict[str, Any]) -> dict[str, Any]:
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise PermissionError("missing bearer token")
        try:
            claims = self.tokens.verify(token)
        except Exception as exc:  # any PyJWT error: expired, wrong audience, foreign key
            raise PermissionError(f"invalid identity token: {exc}") from None
        csr_pem = base64.b64decode(request["certificateSigningRequest"])
        chain = self.ca.issue(csr_pem, claims)
        return {"signedCertificateEmbeddedSct": {"chain": {"certificates": chain}}}

    def _log_entry(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self.log.add(request)
        self._save_state()
        entry = next(iter(response.values()))
        if "corrupt-set" in self.faults:
            entry["verification"]["signedEntryTimestamp"] = base64.b64encode(
                b"\x30\x06\x02\x01\x01\x02\x01\x01"
            ).decode()
        if "corrupt-inclusion-proof" in self.faults:
            entry["verification"]["inclusionProof"]["rootHash"] = "00" * 32
        return response

    def _log_entry_v2(self, request: dict[str, Any]) -> dict[str, Any]:
        entry = self.log.add(request)
        self._save_state()
        if "corrupt-inclusion-proof" in self.faults:
            entry["inclusionProof"]["rootHash"] = base64.b64encode(bytes(32)).decode()
        return entry



    def _github_token(self, authorization: str, query: str) -> dict[str, Any]:
        scheme, _, request_token = authorization.partition(" ")
        who = self.tokens.lookup(request_token) if scheme.lower() == "bearer" else None
        if who is None:
            raise PermissionError("unknown ACTIONS_ID_TOKEN_REQUEST_TOKEN")
        audience = parse_qs(query).get("audience", [SIGSTORE_AUDIENCE])[0]
        return {"value": self.tokens.mint(who, audience=audience)}


def _handler_for(instance: LocalSigstore) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "dev-sigstore"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, document: dict[str, Any]) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._send(status, {"code": status, "message": message})

        def do_GET(self) -> None:
            parsed = urlparse(self.path)
            if parsed.path != TOKEN_PATH:
                return self._log_read(parsed.path, parse_qs(parsed.query))
            try:
                self._send(200, instance._github_token(self.headers.get("Authorization", ""),
                                                       parsed.query))
            except PermissionError as exc:
                self._error(403, str(exc))

        def _log_read(self, path: str, query: dict[str, list[str]]) -> None:
            """The log's read API: v1 log info, consistency proofs and entries by index;
            v2 the checkpoint and tiles (C2SP tlog-tiles)."""
            from histor_sign._merkle import parse_tile_path

            log = instance.log
            if instance.log_reads_left is not None:
                if instance.log_reads_left <= 0:
                    return self._error(503, "log unavailable")
                instance.log_reads_left -= 1

            def number(name: str) -> int:
                return int(query.get(name, ["x"])[0])

            try:
                if log.version == 1 and path == "/api/v1/log":
                    return self._send(200, log.log_info())
                if log.version == 1 and path == "/api/v1/log/proof":
                    return self._send(200, log.consistency_proof(
                        number("firstSize"), number("lastSize"),
                        query.get("treeID", [None])[0]))
                if log.version == 1 and path == "/api/v1/log/entries":
                    return self._send(200, log.entry(number("logIndex")))
                if log.version == 2 and path == "/checkpoint":
                    note = log.current_checkpoint()[2]
                    return self._send_bytes(200, "text/plain; charset=utf-8", note.encode())
                forged = instance.tile_overrides.get(path.lstrip("/"))
                if forged is not None and log.version == 2:
                    return self._send_bytes(200, "application/octet-stream", forged)
                tile = parse_tile_path(path.lstrip("/")) if log.version == 2 else None
                if tile is not None:
                    data = log.tile(*tile)
                    if data is not None:
                        return self._send_bytes(200, "application/octet-stream", data)
            except (KeyError, ValueError) as exc:
                return self._error(400 if isinstance(exc, ValueError) else 404, str(exc))
            self._error(404, "not found")

        def _send_bytes(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_REQUEST_BYTES:
                return self._error(413, "request too large")
            try:
                raw = self.rfile.read(length)
                if self.path == TIMESTAMP_PATH:
                    if instance.tsa is None:
                        return self._error(404, "this instance runs no timestamp authority")
                    reply = instance.tsa.respond(raw)
                    return self._send_bytes(200, "application/timestamp-reply", reply)
                request = json.loads(raw or b"{}")
                if not isinstance(request, dict):
                    raise ValueError("request body must be a JSON object")
                if self.path == "/api/v2/signingCert":
                    auth = self.headers.get("Authorization", "")
                    return self._send(201, instance._signing_cert(auth, request))
                if self.path == "/api/v1/log/entries" and instance.log.version == 1:
                    return self._send(201, instance._log_entry(request))
                if self.path == "/api/v2/log/entries" and instance.log.version == 2:
                    return self._send(201, instance._log_entry_v2(request))
                self._error(404, "not found")
            except PermissionError as exc:
                self._error(401, str(exc))
            except (ValueError, KeyError, TypeError) as exc:
                self._error(400, f"bad request: {exc}")

    return Handler
