#!/bin/sh
# Say whether the README is stale (the `git_readme_check` recipe): source files change in
# the staged changes and README.md does not.
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
cd "${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}/work"
changed=$(git diff --cached --name-only)
stale=false
if printf '%s\n' "$changed" | grep -q '^src/' && ! printf '%s\n' "$changed" | grep -qx 'README.md'; then
  stale=true
fi
printf '{"readme_stale": %s}\n' "$stale"
