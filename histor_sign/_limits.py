"""Default bounds on untrusted input, in one place.

Every byte, tool, call and second histor-sign accepts from a file, a server or a trace is
bounded, so hostile input ends in a clean ``LimitExceeded`` instead of exhausting memory or
time. Each bound below is a *default*: the function that enforces it takes it as a keyword
parameter and the CLI exposes it as an option; the CLI help and the docs quote these values.

Two pairs look alike but bound different things, on purpose:

* bytes — :data:`DEFAULT_MAX_RECEIVED_BYTES` counts everything one server sends during a
  fetch (framing included); :data:`DEFAULT_MAX_FILE_BYTES` bounds one JSON file read from
  disk or stdin. The file bound is the larger because what ``fetch`` and ``release`` write
  is pretty-printed: a catalog received within the fetch bound must still be readable as a
  file by ``digest``, ``build``, ``scan`` and ``check``.
* tools — :data:`DEFAULT_MAX_TOOLS` bounds one server's ``tools/list``;
  :data:`DEFAULT_MAX_SCAN_TOOLS` bounds the tools one ``scan``/``replay`` imports across all
  its catalogs, where every tool is indexed against every other and the candidate pairs
  get schema proofs — work that grows faster than the tool count.
"""

from __future__ import annotations

_KIB = 1024
_MIB = 1024 * _KIB

# --- JSON documents -------------------------------------------------------------------------

#: One JSON file (or stdin) read by the strict reader.
DEFAULT_MAX_FILE_BYTES = 64 * _MIB
#: Nesting depth of any JSON document; real tool schemas stay far below, and the bound keeps
#: every recursive consumer (schema validators, the scanner) clear of Python's stack limit.
DEFAULT_MAX_DEPTH = 256

# --- fetching tools/list --------------------------------------------------------------------

#: Pages of one ``tools/list`` walk: a server that paginates forever is cut off.
DEFAULT_MAX_PAGES = 1000
#: Tools one server may list; far above any real server, low enough to bound memory.
DEFAULT_MAX_TOOLS = 100_000
#: Everything one server sends during a fetch (responses, notifications, framing).
DEFAULT_MAX_RECEIVED_BYTES = 32 * _MIB
#: Seconds for one request, and for the whole fetch including starting the server.
DEFAULT_TIMEOUT = 30.0
DEFAULT_TOTAL_TIMEOUT = 600.0
#: Lines on a stdio server's stdout that are not JSON at all (a start-up banner, a log line)
#: are skipped, as the official SDKs do, up to these many lines and bytes in one fetch; one
#: more is an error. Skipped text is never recorded: only parsed JSON-RPC messages are.
MAX_SKIPPED_STDOUT_LINES = 100
MAX_SKIPPED_STDOUT_BYTES = 64 * _KIB

# --- scan and replay ------------------------------------------------------------------------

#: Tools imported into one scan or replay, across all catalogs given.
DEFAULT_MAX_SCAN_TOOLS = 20_000
#: Candidate pairs analysed per scan; pairs beyond it (in priority order) are reported as
#: not analysed rather than silently dropped.
DEFAULT_MAX_CANDIDATES = 2_048
#: Candidate partners one tool may have in a large group of same-action, same-object tools
#: (and per description probe): lexical work per tool is bounded, so candidate selection is
#: linear in the number of tools; partners beyond it are reported as not analysed.
DEFAULT_MAX_PARTNERS = 8
#: Wall-clock seconds one scan may spend deciding candidate pairs; pairs left when it runs
#: out are reported as not analysed (``unknown``). Each pair has its own bound besides.
DEFAULT_SCAN_BUDGET_SECONDS = 600.0
#: Scan: description similarity that makes two same-action tools confusable when their object
#: words do not match exactly (calibrated on tests/data/confusable-pairs.json, docs/scan.md).
DEFAULT_SCAN_THRESHOLD = 0.4
#: Size of one generated witness (an argument object both tools accept).
DEFAULT_MAX_WITNESS_BYTES = 64 * _KIB
#: Full schema validations one replay may run (calls × accepting tools).
DEFAULT_MAX_VALIDATIONS = 50_000

# --- observed calls (guard, replay) ---------------------------------------------------------

#: Calls one replay imports from all its traces.
DEFAULT_MAX_CALLS = 4096
#: Trace bytes one replay reads, summed over all trace files.
DEFAULT_MAX_TRACE_BYTES = 32 * _MIB
#: One call's argument object (encoded or as JSON); larger arguments are denied, not parsed.
DEFAULT_MAX_ARGUMENT_BYTES = 1 * _MIB

# --- lock files ----------------------------------------------------------------------------

#: A lock file (``histor-sign lock``): every locked server's snapshot, pretty-printed, so as
#: large as one JSON file may be; its nesting is a snapshot's plus the lock's own levels.
MAX_LOCK_FILE_BYTES = DEFAULT_MAX_FILE_BYTES
MAX_LOCK_DEPTH = DEFAULT_MAX_DEPTH

# --- the proxy ------------------------------------------------------------------------------

#: Operator notices (one line per withheld tool or denied call) waiting for a slow or unread
#: stderr; more are dropped and counted, never allowed to hold up the session (the audit
#: log records every decision).
DEFAULT_MAX_PENDING_NOTICES = 256

# --- small configuration files --------------------------------------------------------------

#: A guard policy file: a few rules, never megabytes.
MAX_POLICY_BYTES = 1 * _MIB
#: A Sigstore trusted root or signing config (a handful of certificates and keys).
MAX_TRUST_FILE_BYTES = 4 * _MIB
#: A client's pin file (server name → trusted publisher); a few hundred bytes per server.
MAX_PIN_FILE_BYTES = 4 * _MIB
#: Verified revisions remembered beside a pin file (``_verified_cache``); oldest dropped.
MAX_VERIFIED_CACHE_ENTRIES = 512

# --- the local Sigstore instance (dev-sigstore) --------------------------------------------

#: Highest log index the local Rekor can start at: it keeps its tree whole and recomputes the
#: root and audit path per signature, about a third of a second at 100,000 leaves.
MAX_FIRST_INDEX = 100_000

#: How long an output that is a FIFO may wait for a reader to open it (``sign -o FIFO``);
#: past it the command stops with one error line, before anything is signed.
DEFAULT_OUTPUT_READER_SECONDS = 10.0
#: How long a writer waits for another process that is changing the same shared file (a pin
#: store, a lock file, a host config, a monitor checkpoint) before it gives up naming it.
DEFAULT_LOCK_WAIT_SECONDS = 30.0
#: Room checked free beside each output directory before signing, beyond the sizes known
#: then (a certificate, a bundle, log proofs): a full disk fails before a log entry exists.
OUTPUT_ROOM_SLACK = 256 * 1024
#: Artifacts one release may bind to its revision (each is a subject of every attestation
#: part, so they also shorten each part's tool list).
MAX_ARTIFACTS = 64
#: package.json inside an npm tarball, and a RECORD file, read for an artifact's identity.
MAX_PACKAGE_METADATA_BYTES = 4 * _MIB
#: The ``_meta`` fragment a release writes for the MCP Registry's server.json (the
#: registry bounds publisher-provided data; 4 KB keeps well inside it).
MAX_REGISTRY_META_BYTES = 4 * _KIB
# --- the transparency-log monitor ----------------------------------------------------------

#: Log entries one ``monitor`` run reads; the rest is read by the next run (the stored
#: cursor), so a run on a busy log stays bounded and nothing is skipped.
DEFAULT_MAX_LOG_ENTRIES = 10_000
#: Bytes of one log response (an entry, a proof, a tile of 256 hashes or entries).
MAX_LOG_RESPONSE_BYTES = 16 * _MIB
#: A monitor's checkpoint state file.
MAX_MONITOR_STATE_BYTES = 64 * _KIB
