#!/usr/bin/env bash
# Turn the monitor sub-action's inputs (HS_* environment variables, never spliced into the
# script text) into one `histor-sign monitor` call; the report goes to the log and the step
# summary, and the exit code is the monitor's (1: an alarm, 2: the log could not be read).
set -euo pipefail
bin="${HISTOR_SIGN_BIN:-histor-sign}"

args=(monitor --server "$HS_SERVER" --repository "$HS_REPOSITORY" --revisions "$HS_REVISIONS"
      --since "$HS_CHECKPOINT" --max-entries "${HS_MAX_ENTRIES:-10000}")
[[ -n "${HS_WORKFLOW:-}" ]] && args+=(--workflow "$HS_WORKFLOW")
[[ -n "${HS_REF_PATTERN:-}" ]] && args+=(--ref-pattern "$HS_REF_PATTERN")
[[ -n "${HS_REKOR_URL:-}" ]] && args+=(--rekor-url "$HS_REKOR_URL")
[[ "${HS_STAGING:-false}" == "true" ]] && args+=(--staging)
[[ -n "${HS_TRUST_CONFIG:-}" ]] && args+=(--trust-config "$HS_TRUST_CONFIG")
# acknowledge: log indexes separated by commas or spaces (checked by the action's first
# step), each one --acknowledge flag.
set -f  # split on commas and spaces, never expand a pattern
for index in ${HS_ACKNOWLEDGE//,/ }; do
  args+=(--acknowledge "$index")
done
set +f
[[ -n "${HS_REASON:-}" ]] && args+=(--reason "$HS_REASON")

report="${RUNNER_TEMP:-/tmp}/histor-monitor.txt"
status=0
"$bin" "${args[@]}" > "$report" || status=$?
cat "$report"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  { echo '### histor-sign monitor'; echo '```'; cat "$report"; echo '```'; } >> "$GITHUB_STEP_SUMMARY"
fi
exit "$status"
