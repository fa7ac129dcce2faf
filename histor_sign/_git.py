"""What ``init`` reads from git, offline: the GitHub repository of a checkout's ``origin``
remote, and the commit a tag names in a local repository. Never a network call: ``git``
is run with a short timeout on local data only, and anything unexpected is "unknown"."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

#: ``https://github.com/O/R(.git)``, ``git@github.com:O/R(.git)``, ``ssh://git@github.com/O/R``,
#: ``git://github.com/O/R`` (a port, user or trailing slash allowed where git allows one).
_GITHUB_REMOTE = re.compile(
    r"(?:(?:https?|git|ssh|git\+ssh)://(?:[^@/]+@)?github\.com(?::\d+)?/|"
    r"(?:[^@/]+@)?github\.com:/?)"
    r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))/(?P<repo>[A-Za-z0-9._-]{1,100}?)"
    r"(?:\.git)?/?\Z"
)
_FULL_SHA = re.compile(r"[0-9a-f]{40}\Z")
GIT_TIMEOUT = 5.0


def github_repository(remote_url: str) -> str | None:
    """``OWNER/REPO`` for a GitHub remote URL in any form git accepts, else None."""
    match = _GITHUB_REMOTE.match(remote_url.strip())
    if match is None or match["repo"] in (".", ".."):
        return None
    return f"{match['owner']}/{match['repo']}"


def _git(directory: Path, *args: str) -> str | None:
    try:
        run = subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                             text=True, errors="replace", timeout=GIT_TIMEOUT, check=False,
                             stdin=subprocess.DEVNULL)  # not UTF-8: matches nothing, unknown
    except (OSError, subprocess.TimeoutExpired):
        return None
    return run.stdout.strip() if run.returncode == 0 else None


def origin_url(directory: Path) -> str | None:
    """The ``origin`` remote's URL of the checkout at ``directory`` (None: no git, no
    checkout, no origin)."""
    return _git(directory, "remote", "get-url", "origin")


def tag_commit(directory: Path, tag: str) -> str | None:
    """The full commit SHA the tag ``tag`` names in the repository at ``directory``, from
    local refs only (None when git, the repository or the tag is not there)."""
    sha = _git(directory, "rev-parse", f"refs/tags/{tag}^{{commit}}")
    return sha if sha is not None and _FULL_SHA.match(sha) else None
