"""``check --all``: every pinned server at once — its latest revision followed under the pin
— or, with ``--host-config FILE``, every server of an MCP host config that runs through the
proxy, fetched live and compared with its latest revision under the pin."""


import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from histor_sign._escape import printable
from histor_sign.cli.app import OutputFormat, emit, json_document, warn
from histor_sign.cli.signing_commands import VerifyFlags
from histor_sign.cli.target_options import fetch_snapshot, target_from_flags
from histor_sign.errors import HistorError, UsageError

if TYPE_CHECKING:
    from histor_sign.hostconfig import HostServer
    from histor_sign.mcp._target import FetchOptions, Target
    from histor_sign.pins import PinEntry, PinStore


@dataclass
class _Line:
    """One server's outcome: ``ok`` (fresh and, when fetched, matching), ``failed`` (a
    verification, freshness or drift failure, a wrapped entry whose own flags weaken it, or
    an error), ``locked`` (a host entry serving a lock file's entry, matching it: trust on
    first use, never reported as ok), or ``skipped`` (nothing to check)."""

    name: str
    status: str
    text: str
    document: dict[str, Any] = field(default_factory=dict)


def check_all(
    flags: VerifyFlags, pins: Path | None, host_config: Path | None, *,
    options: "FetchOptions", trusted_code: bool, format: OutputFormat, output: Path | None,
) -> None:
    """Check every server; one outcome each; exit 1 when any failed."""
    from histor_sign.pins import PinStore

    if flags.pins().names_publisher():
        raise UsageError("--all checks each server under its own pin; identity flags cannot "
                         "be added to it")
    store = PinStore.load(pins)
    if host_config is None:
        if not len(store):
            raise UsageError(f"no servers pinned in {store.path}: nothing to check")
        lines = [_latest(store, name, flags) for name in sorted(store.entries)]
    else:
        from histor_sign.hostconfig import host_servers

        lines = [_served(store, entry, flags, options, trusted_code)
                 for entry in host_servers(host_config)]
    failed = sum(line.status == "failed" for line in lines)
    _emit_lines(lines, store.path, format, output)
    if failed:
        raise typer.Exit(1)


def _emit_lines(lines: list[_Line], pins: Path, format: OutputFormat,
                output: Path | None) -> None:
    """Step: every server's outcome, as JSON or as one line each and a summary."""
    if format is OutputFormat.json:
        emit(json_document({"pins": str(pins), "servers": [
            {"name": line.name, "status": line.status, "detail": line.text, **line.document}
            for line in lines]}), output)
    else:
        emit("\n".join([*(f"{line.status:<7} {printable(line.name, 200)}: {line.text}"
                          for line in lines),
                        _summary(lines)]),
             output)


def _summary(lines: list[_Line]) -> str:
    """``2 checked, 1 failed, 1 skipped`` (and ``, 1 locked (not publisher-signed)``)."""
    checked = sum(line.status != "skipped" for line in lines)
    failed = sum(line.status == "failed" for line in lines)
    locked = sum(line.status == "locked" for line in lines)
    more = f", {locked} locked (not publisher-signed)" if locked else ""
    return f"{checked} checked, {failed} failed, {len(lines) - checked} skipped{more}"


def _latest(store: "PinStore", name: str, flags: VerifyFlags) -> _Line:
    from histor_sign.pins import latest_for_use

    try:
        trust = flags.trust_for_pin(store.get(name))
        warn(trust.warning())
        pinned = latest_for_use(name, trust=trust, store=store)
    except HistorError as exc:
        return _Line(name, "failed", exc.message)
    return _Line(name, "ok", f"{pinned.freshness.value} · {pinned.headline()}",
                 {"verified": pinned.to_json()})


def _served(
    store: "PinStore", entry: "HostServer", flags: VerifyFlags, options: "FetchOptions",
    trusted_code: bool,
) -> _Line:
    """One wrapped entry, judged by what it will actually run: its whole proxy command line
    read by the proxy's own parser; an entry whose flags weaken what the pin promises fails
    naming the flag, a locked one is said to be locked (not publisher-signed)."""
    from histor_sign.cli.proxy_commands import proxy_parameters

    label = f"{entry.name} ({entry.location})"
    if entry.proxy_args is None:
        return _Line(label, "skipped", entry.detail)
    try:
        run = proxy_parameters(entry.proxy_args)
    except UsageError as exc:
        return _Line(label, "failed", f"the proxy refuses its command line: {exc.message}")
    if run["lock"] is not None:
        return _locked(label, run, entry, options, trusted_code)
    server = run["server"]
    if server is None:
        return _Line(label, "failed", "runs the proxy without --server or --lock")
    document = {"server": server}
    pin = store.get(server)
    if pin is None:
        return _Line(label, "failed", f"runs as {printable(server, 200)}, which is not pinned "
                     f"in {printable(str(store.path), 300)}", document)
    weakened = _weakened(run, store, pin)
    if weakened is not None:
        return _Line(label, "failed", weakened, document)
    from histor_sign.pins import check_served

    try:
        trust = flags.trust_for_pin(pin)
        if run["offline"]:
            trust = trust.with_offline()
        warn(trust.warning())
        result = check_served(store, server, fetch_snapshot(_target(run, entry, trusted_code),
                                                            options), trust=trust)
    except HistorError as exc:
        return _Line(label, "failed", exc.message, document)
    return _Line(label, "ok" if result.ok else "failed", result.to_text().splitlines()[0],
                 {**document, **result.to_json()})


def _weakened(run: dict[str, Any], store: "PinStore", pin: "PinEntry") -> str | None:
    """Why the entry's own proxy flags make it run weaker than its pin, naming the flag (None
    when they do not): passing drifted tools, another pin file than the one checked, or a
    trust root of its own (a non-production one may mint any identity)."""
    from histor_sign.pins import default_pins_path

    if run["on_drift"] == "warn":
        return ("runs with --on-drift warn: a tool that is not the signed one is passed to "
                "the host")
    pins = run["pins"]
    if pins is not None and not pins.is_absolute():
        return (f"runs with --pins {printable(str(pins), 300)}, a relative path: the host's "
                "working directory decides which pin file it reads")
    used = pins if pins is not None else default_pins_path()
    if os.path.realpath(used) != os.path.realpath(store.path):
        flag = f"--pins {printable(str(pins), 300)}" if pins is not None else (
            f"no --pins (the per-user pin file {printable(str(used), 300)})")
        return (f"runs with {flag}, not the pin file checked "
                f"({printable(str(store.path), 300)}): another pin file decides what it serves")
    return _own_trust(run, pin)


def _own_trust(run: dict[str, Any], pin: "PinEntry") -> str | None:
    """A trust flag on the entry: one naming another root than the pin records, or any
    non-production root, is a weakening (the wrapped entry needs no trust flag)."""
    from histor_sign._sigstore_trust import PRODUCTION

    flag = ("--staging" if run["staging"] else
            f"--trusted-root {printable(str(run['trusted_root']), 300)}"
            if run["trusted_root"] is not None else
            f"--trust-config {printable(str(run['trust_config']), 300)}"
            if run["trust_config"] is not None else None)
    if flag is None:
        return None
    own = VerifyFlags(None, "", None, None, None, None, run["trusted_root"],
                      run["trust_config"], run["staging"], run["offline"]).trust()
    recorded = pin.trust()
    if own.name() != recorded.name():
        return (f"runs with {flag}, not the trust root its pin records "
                f"({printable(recorded.describe(), 300)})")
    if own.kind != PRODUCTION:
        return (f"runs with {flag}: a non-production trust root, which may mint any "
                "identity; the pin's recorded root applies without the flag")
    return None


def _target(run: dict[str, Any], entry: "HostServer", trusted_code: bool) -> "Target":
    """The server the entry runs behind the proxy: its command (in the entry's environment)
    or its ``--url``."""
    from histor_sign.mcp._target import Target

    if run["url"] is not None:
        target = target_from_flags(None, run["url"], list(run["header"]),
                                   run["bearer_token_env"])
        assert target is not None
        return target
    if not run["command"]:
        raise UsageError("runs the proxy with no command after -- and no --url")
    return Target.stdio(run["command"], env=entry.env, trusted_code=trusted_code)


def _locked(label: str, run: dict[str, Any], entry: "HostServer", options: "FetchOptions",
            trusted_code: bool) -> _Line:
    """An entry serving a lock file's entry: compared with it as ``check --lock`` does, and
    never reported as signed."""
    from histor_sign.lock import LockFile, check_locked

    lock = run["lock"]
    headline = ("locked (trust on first use), not publisher-signed: --lock "
                f"{printable(str(lock), 300)}")
    try:
        served = fetch_snapshot(_target(run, entry, trusted_code), options)
        result = check_locked(LockFile.load(lock), served, run["server"], ran_command=False)
    except HistorError as exc:
        return _Line(label, "failed", f"{headline}; {exc.message}")
    document = {"server": run["server"], "locked": True, **result.to_json()}
    if not result.matches:
        return _Line(label, "failed", f"{headline}; {result.drift.headline()}", document)
    return _Line(label, "locked", f"{headline}; {result.drift.headline()}", document)
