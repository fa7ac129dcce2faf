"""Third-party Sigstore verifiers for the interop tests, installed by the repo's own files.

* sigstore-js: ``@sigstore/verify`` from ``tests/peers`` (``npm ci --prefix tests/peers``),
  driven by ``sigstore_js_verify.cjs``.
* cosign ≥ 3 and sigstore-go: this machine's Debian release is older than the ones that ship
  them, so the .debs of the newer suite are fetched with a private apt configuration (its own
  sources list naming the machine's own Debian mirror, lists and cache under
  ``build/interop-tools``) and unpacked with ``dpkg-deb -x`` — nothing is installed on the
  system. The unpacked binaries are kept there, so later runs download nothing.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PEERS = REPO / "tests" / "peers"
SJS_SCRIPT = Path(__file__).with_name("sigstore_js_verify.cjs")
CACHE = REPO / "build" / "interop-tools"
ROOT = CACHE / "root"
#: The Debian suite whose packages are new enough (cosign 3.x, sigstore-go 1.x).
SUITE = "sid"
PACKAGES = {"cosign": "cosign", "sigstore-go-verification": "sigstore-go"}
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")


class Unavailable(Exception):
    """A verifier cannot be obtained here (the reason is the message)."""


def sigstore_js() -> tuple[str, Path]:
    """``(node, script)`` once ``@sigstore/verify`` is installed in tests/peers."""
    node = shutil.which("node")
    if node is None:
        raise Unavailable("node is not installed")
    if not (PEERS / "node_modules" / "@sigstore" / "verify").is_dir():
        raise Unavailable("@sigstore/verify is not installed: npm ci --prefix tests/peers")
    return node, SJS_SCRIPT


def debian_mirror() -> str:
    """The machine's own Debian archive URL, read from its apt sources."""
    sources = [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]
    for path in sources:
        try:
            text = path.read_text()
        except OSError:
            continue
        for match in re.finditer(r"^(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(\S+)", text, re.M):
            url = match.group(1).rstrip("/")
            if url.endswith("/debian"):
                return url
    raise Unavailable("no Debian mirror in /etc/apt/sources.list*")


def _run(args: list[str], cwd: Path | None = None) -> None:
    try:
        done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise Unavailable(f"{args[0]} failed: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise Unavailable(f"{' '.join(args[:2])} failed: {tail[0]}")


def debian_tools() -> dict[str, Path]:
    """Paths of ``cosign`` and ``sigstore-go-verification``, downloading them once."""
    wanted = {name: ROOT / "usr" / "bin" / name for name in PACKAGES}
    if all(p.is_file() for p in wanted.values()):
        return wanted
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise Unavailable(f"{tool} is not available")
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(p.is_file() for p in wanted.values()):
            return wanted
        lists, archives, debs = CACHE / "lists", CACHE / "cache", CACHE / "debs"
        for directory in (lists / "partial", archives / "archives" / "partial", debs):
            directory.mkdir(parents=True, exist_ok=True)
        signed_by = f" [signed-by={KEYRING}]" if KEYRING.is_file() else ""
        source_list = CACHE / "sources.list"
        source_list.write_text(f"deb{signed_by} {debian_mirror()} {SUITE} main\n")
        options = [
            "-q", "-o", f"Dir::Etc::SourceList={source_list}",
            "-o", "Dir::Etc::SourceParts=/nonexistent", "-o", f"Dir::State::Lists={lists}",
            "-o", f"Dir::Cache={archives}", "-o", "Dir::State::status=/dev/null",
            "-o", "Debug::NoLocking=1",
        ]
        if os.geteuid() == 0:  # root: keep the files it downloads into our own cache dir
            options += ["-o", "APT::Sandbox::User=root"]
        _run(["apt-get", *options, "update"])
        _run(["apt-get", *options, "download", *sorted(set(PACKAGES.values()))], cwd=debs)
        staging = CACHE / "root.partial"
        shutil.rmtree(staging, ignore_errors=True)
        for deb in sorted(debs.glob("*.deb")):
            _run(["dpkg-deb", "-x", str(deb), str(staging)])
        shutil.rmtree(ROOT, ignore_errors=True)
        staging.rename(ROOT)
        shutil.rmtree(lists, ignore_errors=True)  # ~10 MB of indexes; the binaries stay
        shutil.rmtree(debs, ignore_errors=True)
    missing = [name for name, p in wanted.items() if not p.is_file()]
    if missing:
        raise Unavailable(f"the Debian packages did not contain {', '.join(missing)}")
    return wanted
