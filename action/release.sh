#!/usr/bin/env bash
# Turn the action's inputs (passed as HS_* environment variables, never spliced into the
# script text) into one `histor-sign release` call.
set -euo pipefail
bin="${HISTOR_SIGN_BIN:-histor-sign}"

if [[ -z "${HS_TRUST_CONFIG:-}" && -z "${ACTIONS_ID_TOKEN_REQUEST_URL:-}" ]]; then
  echo "::error title=histor-sign::this job cannot request an OIDC token: add 'permissions: id-token: write' to the job (pull requests from forks never get one)"
  exit 1
fi

args=(release --server "$HS_SERVER" --server-version "$HS_SERVER_VERSION" --out-dir "$HS_OUT_DIR" --fail-on "${HS_FAIL_ON:-error}")
[[ -n "${HS_IDENTITY:-}" ]] && args+=(--identity "$HS_IDENTITY")
[[ -n "${HS_STDIO:-}" ]] && args+=(--stdio "$HS_STDIO")
[[ -n "${HS_URL:-}" ]] && args+=(--url "$HS_URL")
[[ -n "${HS_PREVIOUS:-}" ]] && args+=(--previous "$HS_PREVIOUS")
[[ "${HS_STAGING:-false}" == "true" ]] && args+=(--staging)
[[ -n "${HS_TRUST_CONFIG:-}" ]] && args+=(--trust-config "$HS_TRUST_CONFIG")

exec "$bin" "${args[@]}"
