"""Shared fixtures. Helpers live in ``testkit/`` (``cli_harness`` and the others: importable
from every test and benchmark by module name; testkit/README.md)."""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

import pytest
from cli_harness import REPO, run_cli

#: The suite's long poles, longest first (each one module; measured with --durations under
#: ``-n auto``): scheduled before everything else, so the other worker's shorter modules
#: fill in around them instead of one of them running alone at the end.
LONG_POLES = (
    "tests/pipeline/test_action.py",      # the release workflow: a hashed install per job
    "tests/compat/test_matrix.py",        # every host x server, direct and proxied
    "tests/compat/test_conformance.py",   # the MCP conformance suite through the proxy
    "tests/cli/test_golden_outputs.py",   # every CLI command as a process
)


#: The bytecode cache this run created (removed when the run ends), if it created one.
_PYCACHE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """Every Python process the suite starts (thousands: each CLI run, proxy, keeper, peer)
    reads and writes its bytecode under one directory of this run, outside the checkout —
    also where PYTHONDONTWRITEBYTECODE is set, which would make each of them compile every
    module of ours it imports again. A prefix of the caller's own is kept; xdist workers
    inherit the controller's."""
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    _PYCACHE.append(tempfile.mkdtemp(prefix="histor-sign-tests-pycache-"))
    os.environ["PYTHONPYCACHEPREFIX"] = _PYCACHE[0]
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_unconfigure(config: pytest.Config) -> None:
    for prefix in _PYCACHE:
        shutil.rmtree(prefix, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n``, a worker takes a whole module at a time, in the order the collection
    below gives: a module's module-scoped fixtures (a release through the workflow, every
    matrix server signed and every cell run, a signed set) are set up once, not once per
    worker that happens to get one of its tests."""
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False  # keep the collection's order (as --no-loadscope-reorder)
    return LoadFileScheduling(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: the long poles first, then the other modules that hold slow
    tests, then the rest (each in collection order; tests keep their order in a module).
    A run without ``-n`` keeps pytest's order."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    with_slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}

    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::")[0]
        if module in LONG_POLES:
            return LONG_POLES.index(module)
        return len(LONG_POLES) + (module not in with_slow)

    items.sort(key=rank)


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


@pytest.fixture(scope="session")
def local_sigstore(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """One running LocalSigstore for the whole session, for tests that only sign against it.

    A test that counts log entries compares before and after (never absolute indexes); a
    test that needs a fresh log, a first log index, a stopped instance, fault injection, a
    TSA or Rekor v2 starts its own."""
    from sigstore_testkit import LocalSigstore

    with LocalSigstore(directory=tmp_path_factory.mktemp("shared-sigstore")) as instance:
        yield instance


@pytest.fixture(scope="session")
def signed_set(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Five envelopes signed once per session against a LocalSigstore that is stopped
    before any test verifies them (sigstore_testkit.make_signed_set); shared by the signing,
    attestation and verification tests, which only read them."""
    from sigstore_testkit import make_signed_set

    return make_signed_set(tmp_path_factory.mktemp("signed-set"))


@pytest.fixture(scope="session")
def corpus_tools() -> list[dict[str, object]]:
    """The 527 real MCP tools of the LiveMCPBench corpus (tests/data; from
    icip-cas/LiveMCPBench tools/LiveMCPTool/tools.json, Apache-2.0)."""
    import json

    doc = json.loads((REPO / "tests" / "data" / "livemcpbench-tools.json").read_text())
    tools: list[dict[str, object]] = []
    for server in doc:
        for entry in server.get("tools", {}).values():
            tools.extend(entry.get("tools", []))
    return tools


@pytest.fixture(scope="session", autouse=True)
def _isolated_pin_store(tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test reads or writes the user's pin file: the per-user default
    ($XDG_CONFIG_HOME/histor-sign/pins.json) points into a session temp dir, for in-process
    runs and the subprocesses they start alike."""
    import os

    os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("xdg-config"))


@pytest.fixture(scope="session", autouse=True)
def _not_in_a_github_actions_job() -> None:
    """Tests run as on a developer's machine even when CI runs them in GitHub Actions: the
    runner's own job variables (which `build` reads for its namespace pre-flight) are
    removed for in-process runs and the subprocesses they start alike. A test that wants a
    GitHub Actions job sets these variables itself."""
    import os

    for name in ("GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_ID",
                 "GITHUB_REPOSITORY_OWNER", "GITHUB_REPOSITORY_OWNER_ID", "GITHUB_REF"):
        os.environ.pop(name, None)
