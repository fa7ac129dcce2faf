#!/usr/bin/env bash
# Turn the action's inputs (HS_* environment variables, never spliced into the script text)
# into one `histor-sign release` call, with the chain kept on the revisions branch:
#   previous: auto  -> the branch is checked out into a worktree (created empty if it does
#                      not exist yet: the first release) and --previous auto reads it;
#   publish: true   -> the release writes revisions/<server>/… there, which is committed
#                      and pushed (a concurrent release makes the push fail: nothing is lost,
#                      re-run it).
set -euo pipefail
bin="${HISTOR_SIGN_BIN:-histor-sign}"

args=(release --server "$HS_SERVER" --server-version "$HS_SERVER_VERSION" --out-dir "$HS_OUT_DIR" --fail-on "${HS_FAIL_ON:-error}")
[[ -n "${HS_IDENTITY:-}" ]] && args+=(--identity "$HS_IDENTITY")
[[ -n "${HS_TOOLS:-}" ]] && args+=(--tools "$HS_TOOLS")
[[ -n "${HS_STDIO:-}" ]] && args+=(--stdio "$HS_STDIO")
[[ "${HS_TRUSTED_CODE:-false}" == "true" ]] && args+=(--server-is-trusted-code)
[[ -n "${HS_URL:-}" ]] && args+=(--url "$HS_URL")
[[ -n "${HS_BEARER_TOKEN_ENV:-}" ]] && args+=(--bearer-token-env "$HS_BEARER_TOKEN_ENV")
while IFS= read -r line; do
  [[ -n "${line//[[:space:]]/}" ]] && args+=(--header "$line")
done <<< "${HS_HEADERS:-}"
read -r -d '' -a artifacts <<< "${HS_ARTIFACTS:-}" || true
for artifact in ${artifacts[@]+"${artifacts[@]}"}; do
  args+=(--artifact "$artifact")
done
[[ "${HS_STRICT:-false}" == "true" ]] && args+=(--strict)
[[ -n "${HS_POLICY:-}" ]] && args+=(--policy "$HS_POLICY")
[[ "${HS_STAGING:-false}" == "true" ]] && args+=(--staging)
[[ -n "${HS_TRUST_CONFIG:-}" ]] && args+=(--trust-config "$HS_TRUST_CONFIG")

branch="${HS_REVISIONS_BRANCH:-histor-revisions}"
chain="${RUNNER_TEMP:-/tmp}/histor-revisions"
if [[ "${HS_PREVIOUS:-}" == "auto" || "${HS_PUBLISH:-false}" == "true" ]]; then
  git check-ref-format --branch "$branch" > /dev/null
  rm -rf "$chain"
  git worktree prune
  if git ls-remote --exit-code --heads origin "$branch" > /dev/null; then
    git fetch --quiet --depth=1 origin "+refs/heads/$branch:refs/remotes/origin/$branch"
    git worktree add --quiet --detach "$chain" "refs/remotes/origin/$branch"
  else
    code=$?
    [[ $code -eq 2 ]] || { echo "::error title=histor-sign::cannot read branch $branch from origin"; exit 1; }
    echo "histor-sign: no $branch branch on origin yet: this is the first release"
    git worktree add --quiet --detach "$chain"
    git -C "$chain" checkout --quiet --orphan "$branch"
    git -C "$chain" rm -r --quiet --force . > /dev/null 2>&1 || true
  fi
  args+=(--revisions "$chain/revisions")
fi
if [[ "${HS_PREVIOUS:-}" == "auto" ]]; then
  args+=(--previous auto)
elif [[ -n "${HS_PREVIOUS:-}" ]]; then
  args+=(--previous "$HS_PREVIOUS")
fi

"$bin" "${args[@]}"

if [[ "${HS_PUBLISH:-false}" == "true" ]]; then
  git -C "$chain" add revisions
  git -C "$chain" -c user.name="github-actions[bot]" \
    -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
    commit --quiet -m "histor-sign: ${HS_SERVER} ${HS_SERVER_VERSION}"
  git -C "$chain" push --quiet origin "HEAD:refs/heads/$branch"
  echo "histor-sign: published to branch $branch (revisions/${HS_SERVER}/latest.envelope.json)"
fi
