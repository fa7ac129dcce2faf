"""``check --all``: every pinned server at once — its latest revision followed under the pin
— or, with ``--host-config FILE``, every server of an MCP host config that runs through the
proxy, fetched live and compared with its latest revision under the pin."""


from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from histor_sign._escape import printable
from histor_sign.cli.app import OutputFormat, emit, json_document, warn
from histor_sign.cli.signing_commands import VerifyFlags
from histor_sign.errors import HistorError, UsageError

if TYPE_CHECKING:
    from histor_sign.hostconfig import HostServer
    from histor_sign.mcp._target import FetchOptions
    from histor_sign.pins import PinStore


@dataclass
class _Line:
    """One server's outcome: ``ok`` (fresh and, when fetched, matching), ``failed`` (a
    verification, freshness or drift failure, or an error), or ``skipped`` (nothing to check)."""

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
    if format is OutputFormat.json:
        emit(json_document({"pins": str(store.path), "servers": [
            {"name": line.name, "status": line.status, "detail": line.text, **line.document}
            for line in lines]}), output)
    else:
        checked = sum(line.status != "skipped" for line in lines)
        emit("\n".join([*(f"{line.status:<7} {printable(line.name, 200)}: {line.text}"
                          for line in lines),
                        f"{checked} checked, {failed} failed, {len(lines) - checked} skipped"]),
             output)
    if failed:
        raise typer.Exit(1)


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
    from histor_sign.cli.target_options import fetch_snapshot
    from histor_sign.mcp._target import Target
    from histor_sign.pins import check_served

    label = f"{entry.name} ({entry.location})"
    if entry.server is None:
        return _Line(label, "skipped", entry.detail)
    if entry.server not in store:
        return _Line(label, "failed", f"runs as {printable(entry.server, 200)}, which is not "
                     f"pinned in {store.path}")
    try:
        trust = flags.trust_for_pin(store.get(entry.server))
        warn(trust.warning())
        target = Target.stdio(entry.argv, env=entry.env, trusted_code=trusted_code)
        result = check_served(store, entry.server, fetch_snapshot(target, options),
                              trust=trust)
    except HistorError as exc:
        return _Line(label, "failed", exc.message, {"server": entry.server})
    return _Line(label, "ok" if result.ok else "failed", result.to_text().splitlines()[0],
                 {"server": entry.server, **result.to_json()})
