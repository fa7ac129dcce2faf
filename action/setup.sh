#!/usr/bin/env bash
# Install histor-sign from this action's own checkout into an isolated venv with pinned
# requirements, like sigstore/gh-action-sigstore-python does.
set -euo pipefail
action_path="${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}"
venv="${RUNNER_TEMP:-/tmp}/histor-sign-venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$action_path/action/requirements.txt"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "$action_path"
echo "HISTOR_SIGN_BIN=$venv/bin/histor-sign" >> "${GITHUB_ENV:?GITHUB_ENV is not set}"
echo "HISTOR_SIGN_BIN=$venv/bin/histor-sign" >> "${GITHUB_OUTPUT:-/dev/null}"
