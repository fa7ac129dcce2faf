"""The cases of the golden CLI outputs (``test_golden_outputs.py``) and the inputs they run on.

Each case is one or more ``histor-sign`` command lines run in order in a fresh copy of the
inputs (:func:`build_inputs`), with that copy as the working directory, so every path a
command prints is the relative one given here. A case may also name files a command writes;
their bytes are part of its golden output.

The inputs, relative to the working directory:

- ``ref/*.json``: tests/data/reference-servers (the official MCP reference servers);
- ``corpus/live/<server>.json``: the LiveMCPBench corpus (tests/data/livemcpbench-tools.json),
  one ``{"tools": [...]}`` file per server entry, as testkit/labeled_pairs.py scans it;
  ``corpus/bfcl/<suite>.json``: BFCL's multi-turn suites (tests/data/bfcl-multi-turn-tools.json),
  one file per suite; the two source files themselves are there too (``livemcpbench-tools.json``,
  ``bfcl-multi-turn-tools.json``: neither is a tool list, which the CLI must say);
- ``examples/``: the repository's examples/ (guard and scan samples);
- ``demo/``: tests/data/golden/signed-demo, one release signed once by ``histor-sign demo``
  (two chained revisions of io.github.example/notes-server) and its trust config;
- ``pub/revisions/io.github.example/notes-server/``: the demo's two revisions in the layout the
  release action publishes (``<n>.envelope.json``, ``<n>.tools.snapshot.json``,
  ``<n>.intoto.sigstore.json``, ``latest.envelope.json`` = revision 2); ``pub1/…``: the same
  with revision 1 only;
- ``inputs/``: tests/data/golden/inputs (``big-group.json``: 72 same-named tools, generated
  like tests/collisions/test_scan_bounds.py's ``_group(72)``), plus ``inputs/tampered.envelope.json`` (revision 2
  with its serverVersion changed after signing) and ``inputs/truncated.envelope.json``;
- ``bin/python``: runs the interpreter the tests run with, first on PATH, so a stdio server
  is started as ``python -m histor_sign.demo.example_server`` on every machine.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO / "testkit") not in sys.path:  # run as a script (--regenerate): as pytest has it
    sys.path.insert(0, str(REPO / "testkit"))

from cli_harness import bytecode_env  # noqa: E402

DATA = REPO / "tests" / "data"
GOLDEN = DATA / "golden"

SERVER = "io.github.example/notes-server"
IDENTITY = "https://github.com/example/notes-server/.github/workflows/sign.yml@refs/heads/main"
TRUST = "demo/dev-sigstore/dev-sigstore.trust.json"
ROOT = "demo/dev-sigstore/dev-sigstore.trusted_root.json"
R1 = "demo/revision-1"
R2 = "demo/revision-2"
PUB = "pub/revisions/io.github.example/notes-server"
PUB1 = "pub1/revisions/io.github.example/notes-server"
EXAMPLE = "python -m histor_sign.demo.example_server"
EXAMPLE_DRIFTED = EXAMPLE + " --description 'search_notes=Search every note, including private.'"
#: An unsigned JWT-shaped GitHub Actions token (HS256 under a throwaway key; audience
#: sigstore; expires in 2100): enough for release's pre-flight, never sent anywhere (every
#: case that takes it stops at the scan gate, before signing).
FAKE_TOKEN = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwczovL3Rva2VuLmFjdGlvbnMuZ2l0aHVidXN"
    "lcmNvbnRlbnQuY29tIiwiYXVkIjoic2lnc3RvcmUiLCJzdWIiOiJyZXBvOmV4YW1wbGUvbm90ZXMtc2VydmVyOnJl"
    "ZjpyZWZzL2hlYWRzL21haW4iLCJpYXQiOjE3NjcyMjU2MDAsIm5iZiI6MTc2NzIyNTYwMCwiZXhwIjo0MTAyNDQ0"
    "ODAwLCJqb2Jfd29ya2Zsb3dfcmVmIjoiZXhhbXBsZS9ub3Rlcy1zZXJ2ZXIvLmdpdGh1Yi93b3JrZmxvd3Mvc2ln"
    "bi55bWxAcmVmcy9oZWFkcy9tYWluIiwicmVwb3NpdG9yeSI6ImV4YW1wbGUvbm90ZXMtc2VydmVyIiwicmVwb3Np"
    "dG9yeV9vd25lciI6ImV4YW1wbGUiLCJyZWYiOiJyZWZzL2hlYWRzL21haW4iLCJlbWFpbCI6InhAZXhhbXBsZS5j"
    "b20ifQ.nUv_hgn6idefSY7V6fKa5ZEnBFwyDSxBg40kwzSOP60"
)


def _live_servers() -> list[str]:
    doc = json.loads((DATA / "livemcpbench-tools.json").read_text(encoding="utf-8"))
    return sorted(key for server in doc for key in server["tools"])


def _bfcl_suites() -> list[str]:
    return sorted(json.loads((DATA / "bfcl-multi-turn-tools.json").read_text(encoding="utf-8")))


LIVE = [f"corpus/live/{key}.json" for key in _live_servers()]
BFCL = [f"corpus/bfcl/{suite}.json" for suite in _bfcl_suites()]
#: Every command ``histor-sign --help`` lists.
COMMANDS = ("digest", "build", "sign", "verify", "dev-sigstore", "guard", "check", "fetch",
            "release", "demo", "scan", "replay", "init", "trust")
REF = [f"ref/{p.name}" for p in sorted((DATA / "reference-servers").glob("*.json"))]


@dataclass(frozen=True)
class Step:
    """One command line: ``python -m histor_sign ARGV``."""

    argv: tuple[str, ...]
    stdin: bytes | None = None
    env: tuple[tuple[str, str], ...] = ()  # added to the case environment

    def shown(self) -> str:
        env = "".join(f"{k}={shlex.quote(v)} " for k, v in self.env)
        return env + shlex.join(["histor-sign", *self.argv])


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Step, ...]
    files: tuple[str, ...] = ()  # written by the steps; captured after the last one
    fetched: bool = False  # output holds a fetch snapshot's "fetchedAt" (see the test module)
    large: bool = False  # stdout too large to keep: its length and SHA-256 only

    @property
    def command(self) -> str:
        """The (sub)command the case exercises, for counting: 'root' for the bare program."""
        words: list[str] = []
        for arg in self.steps[0].argv:
            if arg.startswith("-"):
                break
            words.append(arg)
            if arg != "trust":
                break
        return " ".join(words) if words and words[0] in COMMANDS else "root"


CASES: list[Case] = []


def case(case_id: str, *argv: str, stdin: bytes | None = None, files: tuple[str, ...] = (),
         env: dict[str, str] | None = None, fetched: bool = False, large: bool = False) -> None:
    step = Step(tuple(argv), stdin, tuple(sorted((env or {}).items())))
    CASES.append(Case(case_id, (step,), files, fetched, large))


def steps(case_id: str, *argvs: tuple[str, ...], files: tuple[str, ...] = ()) -> None:
    CASES.append(Case(case_id, tuple(Step(argv) for argv in argvs), files))


def read(path: str) -> bytes:
    """Bytes of a committed input, for a case's stdin (``path`` as in the working copy)."""
    sources = {"examples": REPO / "examples", "inputs": GOLDEN / "inputs", "ref": DATA /
               "reference-servers", "demo": GOLDEN / "signed-demo"}
    top, _, rest = path.partition("/")
    return (sources[top] / rest).read_bytes()


VERIFY = ("--trust-config", TRUST, "--cert-identity", IDENTITY)
PINNED = ("--server", SERVER, "--pins", "inputs/pins-rev1.json", "--trust-config", TRUST)

# --- the program itself, and every command's help ---------------------------------------
case("root-help", "--help")
case("root-version", "--version")
case("root-no-args")
steps("root-unknown-command-and-option", ("frobnicate",), ("--frobnicate",))
for command in COMMANDS:
    case(f"{command}-help", command, "--help")
steps("trust-no-subcommand-and-subcommands-help", ("trust",),
      *(("trust", sub, "--help") for sub in ("add", "list", "remove")))
case("yank-help", "yank", "--help")
case("monitor-help", "monitor", "--help")

# --- digest --------------------------------------------------------------------------------
case("digest-ref-everything", "digest", "ref/everything.json")
case("digest-ref-filesystem-json", "digest", "ref/filesystem.json", "--format", "json")
case("digest-demo-snapshot", "digest", f"{R2}/tools.snapshot.json")
case("digest-stdin", "digest", "-", stdin=read("examples/docs-tools.json"))
case("digest-output-file", "digest", "ref/git.json", "-f", "json", "-o", "digest.json",
     files=("digest.json",))
case("digest-stdio-example-server", "digest", "--stdio", EXAMPLE)
case("digest-error-missing-file", "digest", "no-such-file.json")
case("digest-error-not-json", "digest", "inputs/not-json.json")
case("digest-error-server-entries", "digest", "livemcpbench-tools.json")
case("digest-error-no-input", "digest")

# --- build ---------------------------------------------------------------------------------
BUILD = ("--server", SERVER, "--identity", IDENTITY)
case("build-revision-1", "build", f"{R1}/tools.snapshot.json", *BUILD, "--server-version", "1.0.0")
case("build-chained-to-envelope", "build", f"{R2}/tools.snapshot.json", *BUILD,
     "--server-version", "1.1.0", "--previous", f"{R1}/envelope.json")
case("build-chained-to-statement", "build", f"{R2}/tools.snapshot.json", *BUILD,
     "--server-version", "1.1.0", "--previous", f"{R1}/statement.json", "-o", "next.json",
     files=("next.json",))
case("build-stdio-example-server", "build", "--stdio", EXAMPLE, *BUILD, "--server-version", "1.4.2")
case("build-error-bad-server-name", "build", "ref/time.json", "--server", "not a name",
     "--server-version", "1", "--identity", IDENTITY)
case("build-error-previous-not-statement", "build", "ref/time.json", *BUILD, "--server-version",
     "1", "--previous", "ref/git.json")

# --- sign (no Sigstore instance runs: only what fails before signing) ------------------------
case("sign-error-no-token", "sign", f"{R1}/statement.json", "-o", "out.envelope.json")
case("sign-error-token-not-jwt", "sign", f"{R1}/statement.json", "-o", "out.envelope.json",
     "--identity-token", "not-a-token")
case("sign-error-missing-statement", "sign", "no-such-statement.json", "-o", "out.envelope.json",
     "--identity-token", FAKE_TOKEN)

# --- verify (offline, against the committed demo release) ---------------------------------
case("verify-full", "verify", f"{R2}/envelope.json", *VERIFY, "--previous", f"{R1}/envelope.json",
     "--tools", f"{R2}/tools.snapshot.json")
case("verify-namespace-only", "verify", f"{R1}/envelope.json", "--trust-config", TRUST,
     "--any-workflow-of-owner")
case("verify-error-no-signer-pin", "verify", f"{R1}/envelope.json", "--trust-config", TRUST)
case("verify-attestation", "verify", "--attestation", f"{R2}/intoto.sigstore.json", *VERIFY,
     "--tools", f"{R2}/tools.snapshot.json")
case("verify-envelope-and-attestation", "verify", f"{R2}/envelope.json", "--attestation",
     f"{R2}/intoto.sigstore.json", *VERIFY, "-f", "json")
case("verify-repository-workflow", "verify", f"{R2}/envelope.json", "--trust-config", TRUST,
     "--repository", "example/notes-server", "--workflow", ".github/workflows/sign.yml",
     "--ref-pattern", "refs/heads/*", "--owner-id", "1000001", "--repository-id", "2000001")
case("verify-identity-regexp-trusted-root", "verify", f"{R1}/envelope.json", "--trusted-root",
     ROOT, "--cert-identity-regexp", r"https://github\.com/example/notes-server/.*")
case("verify-fail-identity", "verify", f"{R2}/envelope.json", "--trust-config", TRUST,
     "--cert-identity", IDENTITY.replace("main", "evil"))
case("verify-fail-chain", "verify", f"{R2}/envelope.json", *VERIFY, "--previous",
     f"{R2}/envelope.json")
case("verify-fail-tools", "verify", f"{R2}/envelope.json", *VERIFY, "--tools",
     f"{R1}/tools.snapshot.json", "-f", "json")
case("verify-fail-tampered", "verify", "inputs/tampered.envelope.json", *VERIFY)
case("verify-fail-offline-production", "verify", f"{R2}/envelope.json", "--offline",
     "--cert-identity", IDENTITY)
case("verify-error-truncated", "verify", "inputs/truncated.envelope.json", *VERIFY)
case("verify-error-two-trust-roots", "verify", f"{R2}/envelope.json", *VERIFY, "--staging")

# --- guard -----------------------------------------------------------------------------------
GUARD = ("--catalog", "examples/guard/tools.json", "--policy", "examples/guard/guard.toml")
case("guard-allow", "guard", "examples/guard/call-ok.json", *GUARD)
case("guard-deny-dangerous", "guard", "examples/guard/call-dangerous.json", *GUARD)
case("guard-deny-budget-json", "guard", "examples/guard/call-bulk.json", *GUARD, "-f", "json")
case("guard-stdin-anthropic", "guard", "-", "--catalog", f"{R2}/tools.snapshot.json",
     stdin=read("inputs/call-delete-anthropic.json"))
case("guard-deny-malformed-call", "guard", "inputs/call-malformed.json", *GUARD)
case("guard-deny-schema", "guard", "inputs/call-search-bad.json", "--tools",
     f"{R2}/tools.snapshot.json", "-o", "decision.txt", files=("decision.txt",))
case("guard-envelope-digest-drift", "guard", "inputs/call-search.json", "--envelope",
     f"{R1}/envelope.json", "--catalog", f"{R2}/tools.snapshot.json")
case("guard-envelope-verified", "guard", "inputs/call-search.json", "--envelope",
     f"{R2}/envelope.json", "--catalog", f"{R2}/tools.snapshot.json", "--verify", *VERIFY)
case("guard-pinned-server-json", "guard", "inputs/call-search.json", *PINNED, "-f", "json",
     files=("inputs/pins-rev1.json",))
case("guard-error-no-contract", "guard", "inputs/call-search.json")
case("guard-error-verify-without-envelope", "guard", "inputs/call-search.json", "--catalog",
     f"{R2}/tools.snapshot.json", "--verify", *VERIFY)
case("guard-error-bad-policy", "guard", "examples/guard/call-ok.json", "--catalog",
     "examples/guard/tools.json", "--policy", "inputs/bad-policy.toml")

# --- check -----------------------------------------------------------------------------------
case("check-match", "check", f"{R2}/tools.snapshot.json", "--envelope", f"{R2}/envelope.json")
case("check-drift-fields-unknown", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R1}/envelope.json")
case("check-drift-signed-tools", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R1}/envelope.json", "--signed-tools", f"{R1}/tools.snapshot.json")
case("check-drift-fail-on-medium-json", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R1}/envelope.json", "--signed-tools", f"{R1}/tools.snapshot.json", "--fail-on", "medium",
     "-f", "json")
case("check-verify-match", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R2}/envelope.json", "--verify", *VERIFY)
case("check-attestation", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R1}/envelope.json", "--attestation", f"{R1}/intoto.sigstore.json", *VERIFY,
     "-o", "drift.txt", files=("drift.txt",))
case("check-stdio-drifted", "check", "--stdio", EXAMPLE_DRIFTED, "--envelope",
     f"{R1}/envelope.json", "--signed-tools", f"{R1}/tools.snapshot.json", "-f", "json")
# Revision 2's change is triaged high risk: it waits for acceptance, then is accepted.
steps("check-pinned-server-waits-then-accepted",
      ("check", f"{R2}/tools.snapshot.json", *PINNED),
      ("trust", "update", "io.github.example/notes-server", "--accept", "--pins",
       "inputs/pins-rev1.json", "--trust-config", TRUST),
      ("check", f"{R2}/tools.snapshot.json", *PINNED),
      ("trust", "list", "--pins", "inputs/pins-rev1.json"),
      files=("inputs/pins-rev1.json",))
case("check-fail-verify-identity", "check", f"{R2}/tools.snapshot.json", "--envelope",
     f"{R2}/envelope.json", "--verify", "--trust-config", TRUST, "--cert-identity",
     IDENTITY.replace("main", "evil"))
case("check-error-no-envelope", "check", f"{R2}/tools.snapshot.json")

# --- fetch (the bundled example server over stdio) -----------------------------------------
case("fetch-example-server", "fetch", "--stdio", EXAMPLE, fetched=True)
case("fetch-example-server-legacy-output", "fetch", "--stdio", EXAMPLE + " --page-size 2",
     "--protocol", "legacy", "-o", "snapshot.json", files=("snapshot.json",), fetched=True)
case("fetch-error-max-pages", "fetch", "--stdio", EXAMPLE, "--max-pages", "2")
case("fetch-error-no-target", "fetch")
case("fetch-error-command-not-found", "fetch", "--stdio", "no-such-mcp-server-command --flag")
case("fetch-error-bad-url", "fetch", "--url", "ftp://example.com/mcp")

# --- scan -----------------------------------------------------------------------------------
case("scan-reference-servers", "scan", *REF)
case("scan-reference-servers-json", "scan", *REF, "--format", "json")
case("scan-reference-servers-sarif", "scan", *REF, "--format", "sarif")
case("scan-collision-example", "scan", "examples/scan/collision-mcp.json")
case("scan-collision-example-sarif-output", "scan", "examples/scan/collision-mcp.json", "-f",
     "sarif", "-o", "scan.sarif", files=("scan.sarif",))
case("scan-collision-strict-fail-on-never", "scan", "examples/scan/collision-mcp.json",
     "--strict", "--fail-on", "never")
case("scan-livemcpbench-corpus", "scan", *LIVE)
case("scan-livemcpbench-corpus-json", "scan", *LIVE, "--format", "json")
case("scan-bfcl-suites", "scan", *BFCL)
case("scan-bfcl-threshold-fail-on-warning", "scan", *BFCL, "--threshold", "0.9",
     "--fail-on", "warning")
case("scan-bfcl-bounded", "scan", *BFCL, "--max-candidates", "5", "--max-partners", "1")
case("scan-stdio-example-server", "scan", "--stdio", EXAMPLE, "-f", "json")
case("scan-stdio-example-server-collision", "scan", "--stdio", EXAMPLE + " --collision",
     "ref/fetch.json")
# 72 tools of one action and object: 2556 candidate pairs, so the pairs are decided by a pool
# of worker processes (2000 or more); 1.8 MB of JSON, kept as its length and digest.
case("scan-large-group-worker-processes", "scan", "inputs/big-group.json", "--max-partners",
     "100", "-f", "json", large=True)
case("scan-error-threshold", "scan", "ref/time.json", "--threshold", "2")
case("scan-error-too-many-tools", "scan", *REF, "--max-tools", "10")
case("scan-error-server-entries", "scan", "livemcpbench-tools.json")
case("scan-error-suites-object", "scan", "bfcl-multi-turn-tools.json")

# --- replay ---------------------------------------------------------------------------------
REPLAY = ("-c", "examples/scan/replay-catalog-mcp.json")
case("replay-openai-response", "replay", "examples/scan/replay-openai-responses.json", *REPLAY)
case("replay-openai-response-json", "replay", "examples/scan/replay-openai-responses.json",
     *REPLAY, "-f", "json")
case("replay-jsonl-mix-fail-on-never", "replay", "inputs/traces.jsonl", *REPLAY,
     "--fail-on", "never")
case("replay-two-catalogs-strict", "replay", "inputs/traces.jsonl", *REPLAY, "-c",
     "examples/scan/collision-mcp.json", "--strict", "-o", "replay.txt", files=("replay.txt",))
case("replay-error-no-catalog", "replay", "inputs/traces.jsonl")
case("replay-error-bad-trace", "replay", "inputs/trace-bad.jsonl", *REPLAY)

# --- init -----------------------------------------------------------------------------------
WORKFLOW = ".github/workflows/sign.yml"
case("init-stdio", "init", "--server", SERVER, "--stdio", "node dist/index.js",
     files=(WORKFLOW,))
case("init-url-single-job-build", "init", "--server", SERVER, "--url",
     "http://127.0.0.1:8000/mcp", "--single-job", "--build", "npm ci && npm run build",
     "-o", "sign.yml", files=("sign.yml",))
steps("init-exists-then-force",
      ("init", "--server", SERVER, "--stdio", "node dist/index.js"),
      ("init", "--server", SERVER, "--stdio", "node server.js"),
      ("init", "--server", SERVER, "--stdio", "node server.js", "--force"),
      files=(WORKFLOW,))
case("init-server-outside-github-namespace", "init", "--server", "com.example/notes", "--stdio",
     "node dist/index.js", files=(WORKFLOW,))
case("init-error-bad-server", "init", "--server", "not a name", "--stdio", "node dist/index.js")

# --- trust ----------------------------------------------------------------------------------
TRUST_ADD = ("trust", "add", SERVER, "--repository", "example/notes-server")
case("trust-add-dry-run", *TRUST_ADD, "--envelope", PUB, "--trust-config", TRUST, "--pins",
     "pins.json", "--dry-run", files=("pins.json",))
steps("trust-add-list-remove",
      (*TRUST_ADD, "--envelope", PUB1, "--workflow", ".github/workflows/sign.yml",
       "--trust-config", TRUST, "--pins", "pins.json"),
      ("trust", "list", "--pins", "pins.json", "--format", "json"),
      (*TRUST_ADD, "--envelope", PUB, "--trust-config", TRUST, "--pins", "pins.json"),
      (*TRUST_ADD, "--envelope", PUB, "--trust-config", TRUST, "--pins", "pins.json",
       "--replace"),
      ("trust", "remove", SERVER, "--pins", "pins.json"),
      ("trust", "list", "--pins", "pins.json"),
      files=("pins.json",))
case("trust-list-default-pin-file", "trust", "list")
case("trust-fail-wrong-workflow", *TRUST_ADD, "--envelope", PUB, "--workflow",
     ".github/workflows/other.yml", "--trust-config", TRUST, "--pins", "pins.json")
case("trust-error-not-github-name", "trust", "add", "com.example/notes", "--repository",
     "example/notes-server", "--envelope", PUB, "--trust-config", TRUST, "--pins", "pins.json")
case("trust-error-remove-unknown", "trust", "remove", "io.github.example/other", "--pins",
     "inputs/pins-rev1.json")
case("trust-error-list-bad-pin-file", "trust", "list", "--pins", "inputs/not-a-catalog.json")

# --- release, demo, dev-sigstore: what they do before any Sigstore instance is needed -------
RELEASE = ("release", "--server", SERVER, "--server-version", "1.0.0")
case("release-gate-fails", *RELEASE, "--tools", "examples/scan/collision-mcp.json",
     "--identity-token", FAKE_TOKEN, "--out-dir", "rel",
     files=("rel/scan.sarif", "rel/summary.md"))
case("release-gate-fails-step-summary", *RELEASE, "--tools", "examples/scan/collision-mcp.json",
     "--fail-on", "warning", "--out-dir", "rel", env={"SIGSTORE_IDENTITY_TOKEN": FAKE_TOKEN,
                                                      "GITHUB_STEP_SUMMARY": "step-summary.md"},
     files=("step-summary.md",))
case("release-error-no-token", *RELEASE, "--tools", f"{R1}/tools.snapshot.json", "--out-dir", "rel")
case("release-error-previous-auto", *RELEASE, "--tools", f"{R1}/tools.snapshot.json",
     "--previous", "auto", "--identity-token", FAKE_TOKEN)
case("demo-error-output-under-file", "demo", "--output", "inputs/call-search.json/demo")
case("dev-sigstore-error-missing-option", "dev-sigstore")
case("dev-sigstore-error-rekor-v2-without-tsa", "dev-sigstore", "--trust-config-out", "t.json",
     "--rekor-version", "2", "--no-tsa")

_ids = [c.id for c in CASES]
assert len(_ids) == len(set(_ids)), "duplicate case ids"
assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in _ids), "case ids: [a-z0-9-]"


def build_inputs(dest: Path) -> Path:
    """Lay out the inputs every case starts from (see the module docstring) in ``dest``."""
    dest.mkdir(parents=True)
    shutil.copytree(DATA / "reference-servers", dest / "ref")
    shutil.copytree(REPO / "examples", dest / "examples")
    shutil.copytree(GOLDEN / "signed-demo", dest / "demo")
    shutil.copytree(GOLDEN / "inputs", dest / "inputs")
    for name in ("livemcpbench-tools.json", "bfcl-multi-turn-tools.json"):
        shutil.copyfile(DATA / name, dest / name)
    (dest / "corpus" / "live").mkdir(parents=True)
    (dest / "corpus" / "bfcl").mkdir(parents=True)
    live = json.loads((DATA / "livemcpbench-tools.json").read_text(encoding="utf-8"))
    for server in live:
        for key, entry in server["tools"].items():
            _write_json(dest / "corpus" / "live" / f"{key}.json", {"tools": entry["tools"]})
    suites = json.loads((DATA / "bfcl-multi-turn-tools.json").read_text(encoding="utf-8"))
    for suite, tools in suites.items():
        _write_json(dest / "corpus" / "bfcl" / f"{suite}.json", {"tools": tools})
    for layout, revisions in ((PUB, (1, 2)), (PUB1, (1,))):
        where = dest / layout
        where.mkdir(parents=True)
        for n in revisions:
            for name in ("envelope.json", "tools.snapshot.json", "intoto.sigstore.json"):
                shutil.copyfile(dest / "demo" / f"revision-{n}" / name, where / f"{n}.{name}")
        shutil.copyfile(where / f"{revisions[-1]}.envelope.json", where / "latest.envelope.json")
    envelope = (dest / R2 / "envelope.json").read_bytes()
    signed_version = b'"serverVersion": "1.1.0"'
    assert envelope.count(signed_version) == 1
    (dest / "inputs" / "tampered.envelope.json").write_bytes(
        envelope.replace(signed_version, b'"serverVersion": "1.1.1"'))
    (dest / "inputs" / "truncated.envelope.json").write_bytes(envelope[:300])
    (dest / "home").mkdir()
    (dest / "bin").mkdir()
    python = dest / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    python.chmod(0o755)
    return dest


def _write_json(path: Path, value: object) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def case_environment(work: Path) -> dict[str, str]:
    """The whole environment of a case: nothing is inherited but PATH (after ``work/bin``),
    so no variable of the caller's (COLUMNS, NO_COLOR, GITHUB_*, SIGSTORE_*, a TUF cache
    under HOME, proxies, a locale) can change a byte. PYTHONPATH and NO_PROXY as
    testkit/cli_harness.py's cli_env sets them."""
    home = work / "home"
    return {
        "PATH": os.pathsep.join([str(work / "bin"), os.environ.get("PATH", os.defpath)]),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PYTHONPATH": str(REPO),
        "NO_PROXY": "127.0.0.1,localhost",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "COLUMNS": "80",
        **bytecode_env(),  # changes no byte of a case's output
    }

