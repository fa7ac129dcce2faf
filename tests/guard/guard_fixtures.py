"""The seed-003 tools as an MCP catalog (the contract the guard tests decide against)."""

from __future__ import annotations

from typing import Any

DESTRUCTIVE = {"readOnlyHint": False, "destructiveHint": True}

SEED_TOOLS: list[dict[str, Any]] = [
    {
        "name": "update_user_email",
        "description": "Change a user's email address.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "user_id": {"type": "integer", "minimum": 1},
                "email": {"type": "string", "minLength": 5, "maxLength": 320, "format": "email"},
                "dry_run": {"type": "boolean"},
            },
            "required": ["user_id", "email", "dry_run"],
        },
        "annotations": DESTRUCTIVE,
    },
    {
        "name": "delete_user",
        "description": "Delete a user.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "user_id": {"type": "integer", "minimum": 1},
                "reason": {"type": "string", "minLength": 3, "maxLength": 200},
                "dry_run": {"type": "boolean"},
            },
            "required": ["user_id", "reason", "dry_run"],
            "additionalProperties": False,
        },
        "annotations": DESTRUCTIVE,
    },
    {
        "name": "bulk_update_emails",
        "description": "Set the same email for several users.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "user_ids": {
                    "type": "array",
                    "items": {"type": "integer", "minimum": 1},
                    "minItems": 1,
                    "maxItems": 10,
                },
                "new_email": {"type": "string", "minLength": 5, "maxLength": 320},
                "dry_run": {"type": "boolean"},
            },
            "required": ["user_ids", "new_email", "dry_run"],
        },
        "annotations": DESTRUCTIVE,
    },
    {
        "name": "search_users",
        "description": "Search users by name.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "maxLength": 200},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "ratio": {"type": "number"},
                "sort": {"enum": ["name", "created"]},
                "api_token": {"type": "string", "minLength": 20},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True},
    },
]

SEED_POLICY: dict[str, Any] = {
    "defaults": {"require_dry_run_for_destructive": True},
    "tools": {
        "bulk_update_emails": {"max_effect": 5, "effect_from": "user_ids"},
        "search_users": {"secret": ["api_token"]},
    },
}

SEED_POLICY_TOML = """
[defaults]
require_dry_run_for_destructive = true
dry_run_parameter = "dry_run"
deny_unknown_arguments = true

[tools.bulk_update_emails]
max_effect = 5
effect_from = "user_ids"

[tools.search_users]
secret = ["api_token"]
"""
