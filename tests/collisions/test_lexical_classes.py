"""Lexicon classes that generalize beyond one corpus (issue 24): the scope a collection is
taken from, create-or-update verbs, plurals in -es, object aliases, and a write to every item
vs a write to one."""

from __future__ import annotations

from typing import Any

from histor_sign.collisions import scan_catalogs
from histor_sign.collisions._domains import canonical_words
from histor_sign.collisions._lexical import Profile, profiles_of, similarity, singular
from histor_sign.models import Finding, parse_catalog

ITEMS = {"type": "object", "properties": {"id": {"type": "string"}}}


def test_a_scope_after_for_keeps_the_head_noun_and_two_scopes_are_two_requests() -> None:
    scoped = Profile.of("get_tasks_for_project", "Get all tasks in a project")
    assert scoped.objects == {"task"} and scoped.kinds == {"in project"}
    # "the tasks in project X" reaches a scoped and an unscoped listing of tasks ...
    p = profiles_of([("asana", "get_tasks_for_project", "Get all tasks in a project"),
                     ("todo", "get_tasks_list", "Get all tasks of the to-do app")])
    sim = similarity(p[0], p[1], 0.4)
    assert sim is not None and sim.objects == ("task",)
    # ... but tags of a task and tags of a workspace are two requests
    assert similarity(Profile.of("get_tags_for_task", "Get a task's tags"),
                      Profile.of("get_tags_for_workspace", "Get tags in a workspace"),
                      0.1) is None


def test_create_or_update_verbs_meet_create_and_update_on_one_object() -> None:
    apply = Profile.of("kubectl_apply_manifest", "Apply a manifest")
    assert apply.action == "upsert" and apply.effect == "write"
    for other in ("create_manifest", "update_manifest", "upsert_manifest"):
        sim = similarity(apply, Profile.of(other, "A manifest"), 0.4)
        assert sim is not None and not sim.contrasting, other
    # create and update stay apart: the wording splits those requests
    assert similarity(Profile.of("create_manifest", ""), Profile.of("update_manifest", ""),
                      0.0) is None
    assert similarity(apply, Profile.of("delete_manifest", ""), 0.0) is None


def test_plurals_in_es_and_object_aliases_name_one_object() -> None:
    assert [singular(w) for w in ("statuses", "addresses", "matches", "boxes", "caches",
                                  "databases", "entities", "files")] == [
        "status", "address", "match", "box", "cache", "database", "entity", "file"]
    assert canonical_words(["get", "merge", "request", "notes"]) == ["get", "pr", "notes"]
    assert canonical_words(["list", "MRs"]) == ["list", "pr"]
    # GitLab's merge request is GitHub's pull request; a folder is a directory
    assert Profile.of("get_merge_request", "").objects == Profile.of("getPullRequest", "") \
        .objects == Profile.of("get_mr", "").objects == {"pr"}
    assert Profile.of("list_folders", "").objects == Profile.of("list_directory", "").objects
    assert canonical_words(["git", "pull"]) == ["git", "pull"]  # a verb alone stays a verb


def _divergent(*tools: dict[str, Any]) -> list[Finding]:
    """The effect findings of a scan of these tools: HS201 (effects as the words say) or
    TC004 (explicit hints that contradict)."""
    cat = parse_catalog({"tools": list(tools)}, "c.json")
    return [f for f in scan_catalogs([cat]).findings if f.rule in ("TC004", "HS201")]


def test_a_write_to_every_item_contradicts_a_write_to_one() -> None:
    """"Mark my to-do done": one item, or every pending item — HS201, a warning even when the
    change destroys (no hint states it: the gate does not fail on it)."""
    one = {"name": "mark_todo_done", "description": "Mark a to-do item as done",
           "inputSchema": ITEMS}
    every = {"name": "mark_all_todos_done", "description": "Mark all to-do items as done",
             "inputSchema": ITEMS}
    found = _divergent(one, every)
    assert [(f.rule, f.severity.value) for f in found] == [("HS201", "warning")]
    assert found[0].properties["similarity"]["bulk"] is True
    assert "one of them every item" in found[0].message
    gone = _divergent({"name": "delete_message", "description": "Delete a message",
                   "inputSchema": ITEMS},
                  {"name": "delete_all_messages", "description": "Delete all messages",
                   "inputSchema": ITEMS})
    assert [(f.rule, f.severity.value) for f in gone] == [("HS201", "warning")]
    # reading every item vs one is no contradiction, and nor are two single-item writes
    assert _divergent({"name": "get_message", "description": "Get a message",
                   "inputSchema": ITEMS},
                  {"name": "get_all_messages", "description": "Get all messages",
                   "inputSchema": ITEMS}) == []
    assert _divergent(one, {**one, "name": "mark_todo_as_done"}) == []
