"""The dry-run argument as real servers name it: ``dry_run`` or ``dryRun`` (or what the
policy names), and the approval outcome of the guard."""

from __future__ import annotations

from histor_sign.catalog import as_tools
from histor_sign.guard import Guard, Policy, lint_catalog

EDIT_FILE = {  # @modelcontextprotocol/server-filesystem's edit_file, abridged
    "name": "edit_file",
    "inputSchema": {"type": "object", "properties": {
        "path": {"type": "string"}, "edits": {"type": "array"},
        "dryRun": {"type": "boolean", "default": False}}, "required": ["path", "edits"]},
    "annotations": {"readOnlyHint": False, "destructiveHint": True},
}


def test_dry_run_camel_case_is_recognised() -> None:
    guard = Guard.from_catalog([EDIT_FILE])
    assert guard.check_arguments("edit_file", {"path": "a", "edits": [], "dryRun": True}).allowed
    denied = guard.check_arguments("edit_file", {"path": "a", "edits": []})
    assert not denied.allowed and denied.needs_approval
    assert [r.pointer for r in denied.reasons] == ["/dryRun"]
    assert [f.rule for f in lint_catalog(as_tools([EDIT_FILE]))
            if f.rule == "HS101"] == []


def test_policy_names_the_dry_run_argument() -> None:
    policy = Policy.from_dict({"defaults": {"dry_run_parameter": "preview"}})
    tool = {**EDIT_FILE, "inputSchema": {**EDIT_FILE["inputSchema"], "properties": {
        **EDIT_FILE["inputSchema"]["properties"], "preview": {"type": "boolean"}}}}
    guard = Guard.from_catalog([tool], policy)
    assert not guard.check_arguments("edit_file", {"path": "a", "edits": [],
                                                   "dryRun": True}).allowed
    assert guard.check_arguments("edit_file", {"path": "a", "edits": [],
                                               "preview": True}).allowed


def test_a_broken_contract_never_needs_approval() -> None:
    guard = Guard.from_catalog([EDIT_FILE])
    decision = guard.check_arguments("edit_file", {"path": 1, "edits": []})
    assert not decision.allowed and not decision.needs_approval


def test_sdk_style_destructive_hint_is_linted_hs101() -> None:
    """``{"destructiveHint": true}`` (the Python SDK's ``ToolAnnotations(destructiveHint=True)``,
    readOnlyHint false by MCP default) states a destructive tool: HS101 when it has no dry-run
    parameter, as for ``readOnlyHint: false, destructiveHint: true`` (issue 38); a read-only
    tool's destructiveHint means nothing."""
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}

    def hs101(annotations: dict[str, object]) -> list[str]:
        tool = {"name": "purge", "inputSchema": schema, "annotations": annotations}
        return [f.rule for f in lint_catalog(as_tools([tool])) if f.rule == "HS101"]

    assert hs101({"destructiveHint": True}) == ["HS101"]
    assert hs101({"readOnlyHint": False, "destructiveHint": True}) == ["HS101"]
    assert hs101({"readOnlyHint": True, "destructiveHint": True}) == []
    assert hs101({"readOnlyHint": False}) == []
