"""Digest a generated catalog against fair baselines, interleaved in one run.

Baselines on the same bytes: a one-pass ``rfc8785`` loop (``json.loads``, each projected
tool canonicalised once, the manifest built from those parts: what an implementation
without the strict I-JSON reader would do) and ``json.loads`` alone (the floor).
Ratio = histor-sign / baseline. Run: ``python benchmarks/bench_digest.py [--quick]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import Case, run_cases, run_command

from histor_sign.models import parse_catalog_bytes
from histor_sign.revision import digests


def make_catalog(n: int = 10_000) -> bytes:
    tools = []
    for i in range(n):
        tools.append(
            {
                "name": f"tool_{i:05d}",
                "title": f"Tool number {i}",
                "description": f"Does thing {i} to a document. Returns a summary of the result; "
                "use it when the user asks about documents.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "description": "Document path"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100 + i},
                        "ratio": {"type": "number", "minimum": 0.25, "maximum": 0.75},
                        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                        "mode": {"type": "string", "enum": ["fast", "slow", "exact"]},
                    },
                    "required": ["path"],
                    "additionalProperties": False,
                },
                "annotations": {"readOnlyHint": i % 3 == 0, "openWorldHint": False},
                "_meta": {"com.example/seq": i},
            }
        )
    return json.dumps({"tools": tools}).encode()


_KEYS = ("name", "title", "description", "inputSchema", "outputSchema", "annotations",
         "execution")


def one_pass_rfc8785(data: bytes) -> str:
    """The fair baseline: parse with ``json.loads``, canonicalise each projected tool ONCE
    with ``rfc8785``, and build the manifest's bytes from those parts (no strictness)."""
    parts = {}
    for t in json.loads(data)["tools"]:
        parts[t["name"]] = rfc8785.dumps({k: t[k] for k in _KEYS if k in t})
    for part in parts.values():
        hashlib.sha256(part).hexdigest()
    body = b",".join(rfc8785.dumps(name) + b":" + parts[name]
                     for name in sorted(parts, key=lambda k: k.encode("utf-16-be")))
    return hashlib.sha256(b"{" + body + b"}").hexdigest()


def loads_alone(data: bytes) -> None:
    """The floor: ``json.loads``, its value dropped inside the timed call as ``ours`` drops
    everything it built (returned, the value would be freed after the clock stops)."""
    json.loads(data)


def ours(data: bytes) -> str:
    """Read, import and digest, as the ``digest`` command does (``load_catalog``)."""
    return digests(parse_catalog_bytes(data, "bench").tools)[0]


_BASELINE_SCRIPT = """\
import hashlib, json, sys, rfc8785
keys = KEYS
parts = {}
for t in json.load(open(sys.argv[1], "rb"))["tools"]:
    parts[t["name"]] = rfc8785.dumps({k: t[k] for k in keys if k in t})
out = {n: "sha256:" + hashlib.sha256(p).hexdigest() for n, p in parts.items()}
body = b",".join(rfc8785.dumps(n) + b":" + parts[n] for n in sorted(parts, key=lambda k: k.encode("utf-16-be")))
print(json.dumps({"manifestDigest": "sha256:" + hashlib.sha256(b"{" + body + b"}").hexdigest(), "toolDigests": out}))
""".replace("KEYS", repr(_KEYS))


def cases(quick: bool = False, tools: int | None = None) -> list[Case]:
    """Digest of a generated catalog: the library against a one-pass ``rfc8785`` loop and
    against ``json.loads`` alone; the ``digest`` command against a script doing the
    one-pass loop (read, parse, canonicalise, hash, print)."""
    n_tools = tools or (1_000 if quick else 5_000)
    data = make_catalog(n_tools)
    assert "sha256:" + one_pass_rfc8785(data) == ours(data), "digests disagree"
    work = Path(tempfile.mkdtemp(prefix="bench-digest-"))
    path = work / "tools.json"
    path.write_bytes(data)
    runs = 7 if quick else 21
    label = f"{n_tools} tools, {len(data) / 1e6:.1f} MB"
    py = sys.executable
    return [
        Case(f"digest lib ({label})", "lib", lambda: ours(data),
             lambda: one_pass_rfc8785(data), "one-pass rfc8785 loop", runs),
        Case(f"digest lib ({label})", "lib", lambda: ours(data),
             lambda: loads_alone(data), "json.loads alone", runs, target=3.0),
        Case(f"digest command ({label})", "cli",
             lambda: run_command([py, "-m", "histor_sign", "digest", str(path), "-f", "json"]),
             lambda: run_command([py, "-c", _BASELINE_SCRIPT, str(path)]),
             "python script: one-pass rfc8785 loop", 5 if quick else 11),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer tools and runs")
    parser.add_argument("--tools", type=int, help="catalog size (default 5,000)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    run_cases(cases(args.quick, args.tools), args.json)


if __name__ == "__main__":
    main()
