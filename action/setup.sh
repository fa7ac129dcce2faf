#!/usr/bin/env bash
# Install histor-sign into a fresh, isolated venv from the hashed lock (action/requirements.txt).
#
# Every dependency, the build backend included, is checked against its sha256 in the lock
# (--require-hashes); histor-sign itself is then built from this action's own checkout with
# that pinned backend (--no-build-isolation --no-deps --no-index), so nothing unpinned is
# ever downloaded in a job that may hold `id-token: write`. The wheel files are kept in
# $HS_WHEELHOUSE, which the action caches: a cache written by another job cannot smuggle code
# in, because every wheel is hash-checked again on each install. The venv itself is never
# cached or reused across jobs.
set -euo pipefail
action_path="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
python="${HS_PYTHON:-python3}"
venv="${HS_VENV:-${RUNNER_TEMP:-/tmp}/histor-sign-venv}"
wheelhouse="${HS_WHEELHOUSE:-${RUNNER_TEMP:-/tmp}/histor-sign-wheels}"
lock="$action_path/action/requirements.txt"
pip=(--disable-pip-version-check --no-input -q)

rm -rf "$venv"
# The interpreter's own pip installs into the venv (pip --python, pip >= 22.3), so the venv
# needs no copy of pip: seeding one (ensurepip) is a third of a warm install. An interpreter
# without such a pip seeds the venv's own, as before.
if "$python" -m pip --python "$python" --version >/dev/null 2>&1; then
  "$python" -m venv --without-pip "$venv"
  pip=("$python" -m pip --python "$venv/bin/python" "${pip[@]}")
else
  "$python" -m venv "$venv"
  pip=("$venv/bin/python" -m pip "${pip[@]}")
fi
# --no-compile: this venv serves one job, whose commands compile only the modules they import
# (pip would compile every module of every package: 2.4 s of a 7 s install).
if ! "${pip[@]}" install --no-compile --require-hashes --no-index \
    --find-links "$wheelhouse" -r "$lock" 2>/dev/null; then
  # Cold (or stale) cache: download exactly the locked files, then install them offline.
  "${pip[@]}" download --require-hashes --only-binary :all: -d "$wheelhouse" -r "$lock"
  "${pip[@]}" install --no-compile --require-hashes --no-index --find-links "$wheelhouse" -r "$lock"
fi
"${pip[@]}" install --no-compile --no-deps --no-build-isolation --no-index "$action_path"
echo "HISTOR_SIGN_BIN=$venv/bin/histor-sign" >> "${GITHUB_ENV:?GITHUB_ENV is not set}"
echo "bin=$venv/bin/histor-sign" >> "${GITHUB_OUTPUT:-/dev/null}"
