"""``action/setup.sh`` on its own: the install every action job starts with.

The release, snapshot and monitor workflows run it through the simulated runner
(tests/pipeline/test_action.py), always on the fast path (an interpreter with its own pip,
which installs into a venv that gets no copy of pip) with a cache the session filled. Here the
paths those runs never take, in one install: an interpreter without pip (the venv seeds its
own) and a wheel cache poisoned by another job (a wheel under a locked file name with other
bytes, which must never be installed).
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from actions_runner import action_checkout

pytestmark = pytest.mark.slow


def _poisoned_wheel(wheelhouse: Path, lock: str) -> tuple[Path, set[str]]:
    """A pyjwt wheel under the lock's file name whose bytes are not the locked ones (a
    module the real wheel does not have); returns it and the lock's sha256s for pyjwt."""
    entry = re.search(r"^pyjwt==(\S+)((?: \\\s+--hash=sha256:[0-9a-f]{64})+)", lock,
                      re.MULTILINE)
    assert entry is not None
    version, digests = entry[1], set(re.findall(r"[0-9a-f]{64}", entry[2]))
    wheel = wheelhouse / f"pyjwt-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("jwt/__init__.py", "")
        z.writestr("jwt/poisoned.py", "POISONED = True\n")
        z.writestr(f"pyjwt-{version}.dist-info/METADATA",
                   f"Metadata-Version: 2.1\nName: PyJWT\nVersion: {version}\n")
        z.writestr(f"pyjwt-{version}.dist-info/WHEEL",
                   "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"pyjwt-{version}.dist-info/RECORD", "")
    return wheel, digests


def test_an_interpreter_without_pip_and_a_poisoned_cache_still_install_only_locked_files(
        tmp_path: Path) -> None:
    action = action_checkout(tmp_path / "action")
    no_pip = tmp_path / "python-without-pip"
    venv.create(no_pip, with_pip=False)
    python = no_pip / "bin" / "python"
    assert subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode
    wheelhouse = tmp_path / "wheels"
    wheelhouse.mkdir()
    poisoned, locked = _poisoned_wheel(
        wheelhouse, (action / "action" / "requirements.txt").read_text())
    target, github_env = tmp_path / "venv", tmp_path / "github-env"
    github_env.touch()
    env = {**os.environ, "GITHUB_ACTION_PATH": str(action), "HS_PYTHON": str(python),
           "HS_VENV": str(target), "HS_WHEELHOUSE": str(wheelhouse),
           "GITHUB_ENV": str(github_env), "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run(["bash", str(action / "action" / "setup.sh")], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    # The fallback seeded the venv's own pip; the install is the action's histor-sign.
    assert subprocess.run([target / "bin" / "python", "-m", "pip", "--version"],
                          capture_output=True).returncode == 0
    assert f"HISTOR_SIGN_BIN={target}/bin/histor-sign" in github_env.read_text()
    version = subprocess.run([target / "bin" / "histor-sign", "--version"],
                             capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("histor-sign "), version
    # The poisoned wheel was replaced by the locked file, and its module never landed.
    assert hashlib.sha256(poisoned.read_bytes()).hexdigest() in locked
    site = target / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert not list(site.glob("site-packages/jwt/poisoned.py"))
    assert list(site.glob("site-packages/jwt/api_jwt.py"))
