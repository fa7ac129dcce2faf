#!/usr/bin/env bash
# The snapshot sub-action: fetch (duplicates refused) -> scan gate -> tools.snapshot.json.
# Nothing here is trusted by the signing job, which repeats the checks on the file.
set -euo pipefail
bin="${HISTOR_SIGN_BIN:-histor-sign}"
target=()
[[ -n "${HS_STDIO:-}" ]] && target+=(--stdio "$HS_STDIO")
[[ -n "${HS_URL:-}" ]] && target+=(--url "$HS_URL")
[[ -n "${HS_BEARER_TOKEN_ENV:-}" ]] && target+=(--bearer-token-env "$HS_BEARER_TOKEN_ENV")
while IFS= read -r line; do
  [[ -n "${line//[[:space:]]/}" ]] && target+=(--header "$line")
done <<< "${HS_HEADERS:-}"
out="${HS_OUT_DIR:-histor-snapshot}"
mkdir -p "$out"
"$bin" fetch "${target[@]}" --output "$out/tools.snapshot.json"
scan=(scan "$out/tools.snapshot.json" --fail-on "${HS_FAIL_ON:-error}")
[[ "${HS_STRICT:-false}" == "true" ]] && scan+=(--strict)
"$bin" "${scan[@]}" --format sarif --output "$out/scan.sarif" || {
  echo "::error title=histor-sign::scan gate failed at --fail-on ${HS_FAIL_ON:-error} (see $out/scan.sarif)"
  "$bin" "${scan[@]}" || true
  exit 1
}
echo "snapshot=$out/tools.snapshot.json" >> "${GITHUB_OUTPUT:-/dev/null}"
