"""Candidates from the catalog's own structure (issue 38): template siblings — one template
written per backend — are confusable whatever words the backends are called; the same
template over different objects is not."""

from __future__ import annotations

from typing import Any

from histor_sign.collisions import ScanOptions, scan_catalogs
from histor_sign.collisions._structure import template_siblings
from histor_sign.models import Finding, parse_catalog

QUERY = {"type": "object", "properties": {"query": {"type": "string"},
                                          "max_results": {"type": "integer"}},
         "required": ["query"]}
#: paper-search-mcp's shape: 16 search_<source> tools share one description template
SOURCES = ["arxiv", "pubmed", "biorxiv", "medrxiv", "iacr", "semantic", "crossref", "dblp",
           "hal", "ssrn", "core", "openalex", "citeseerx", "pmc", "europepmc", "doaj"]


def search_tool(source: str) -> dict[str, Any]:
    return {"name": f"search_{source}",
            "description": (f"Search academic papers from {source.upper()}.\n\n    Args:\n"
                            "        query: Search query string.\n"
                            "        max_results: Maximum number of papers to return.\n"),
            "inputSchema": QUERY}


def scan(tools: list[dict[str, Any]]) -> list[Finding]:
    cat = parse_catalog({"tools": tools}, "paper-search.json")
    return scan_catalogs([cat], ScanOptions(budget_seconds=None)).findings


def test_one_template_per_backend_makes_every_pair_confusable() -> None:
    """The 16 search tools: 120 pairs, each TC003 with the reason it fires."""
    found = [f for f in scan([search_tool(s) for s in SOURCES]) if f.rule == "TC003"]
    assert len(found) == len(SOURCES) * (len(SOURCES) - 1) // 2
    first = next(f for f in found if {t.name for t in f.tools} == {"search_arxiv",
                                                                    "search_pubmed"})
    assert first.properties["basis"] == ("template siblings: names and descriptions differ "
                                         "only in 'arxiv' / 'pubmed'")
    assert "template siblings" in first.message and first.witness == {"query": "a"}


def test_one_template_over_different_objects_is_not_a_sibling() -> None:
    """"Get a user by id" / "Get a team by id": the differing word is what the tool acts on,
    not where it acts — two objects. A template that does not name the word, or is too
    short to say what a tool does, gives no pair either."""
    crud = [{"name": f"get_{o}", "description": f"Get a {o} by its id from the API",
             "inputSchema": QUERY} for o in ("user", "team", "project")]
    assert template_siblings(parse_catalog({"tools": crud}, "c").tools) == []
    unnamed = [{"name": f"search_{s}", "description": "Search academic papers.",
                "inputSchema": QUERY} for s in ("arxiv", "pubmed")]
    short = [{"name": f"search_{s}", "description": f"From {s}", "inputSchema": QUERY}
             for s in ("arxiv", "pubmed")]
    for tools in (unnamed, short):
        assert template_siblings(parse_catalog({"tools": tools}, "c").tools) == []


def test_siblings_are_found_within_one_source_only() -> None:
    a = parse_catalog({"tools": [search_tool("arxiv")]}, "a").tools
    b = parse_catalog({"tools": [search_tool("pubmed")]}, "b").tools
    assert template_siblings([*a, *b]) == []
    both = parse_catalog({"tools": [search_tool("arxiv"), search_tool("pubmed")]}, "a").tools
    assert [(i, j) for i, j, _ in template_siblings(both)] == [(0, 1)]
