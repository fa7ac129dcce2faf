"""The package version: the one place it is written (``pyproject.toml`` reads no other)."""

__version__ = "0.1.0"

#: ``schemaVersion`` of every JSON document the CLI prints (reports, results): raised only
#: when a member is removed, renamed or changes meaning; adding members keeps it (see
#: docs/api.md "Stable JSON output").
JSON_SCHEMA_VERSION = 1
