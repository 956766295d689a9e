#!/bin/sh
# Commit the staged changes and push the branch to the throwaway `origin` (the `git_push`
# recipe). Only ever reached through the approval gateway.
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
branch=main
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in branch=*) branch=${1#branch=} ;; esac ;;
  esac
  shift
done
work="${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}/work"
# The repository is gone when the staging was answered without running git_stage.sh (a
# scenario's answers), or the temporary folder was cleaned while the run waited for its
# approval: staged again, as git_stage.sh stages it.
if [ ! -d "$work" ]; then
  sh "$(dirname "$0")/git_stage.sh" --params "branch=$branch" >/dev/null
fi
cd "$work"
export GIT_AUTHOR_NAME=cuga-flo GIT_AUTHOR_EMAIL=demo@cuga-flo.invalid
export GIT_COMMITTER_NAME=cuga-flo GIT_COMMITTER_EMAIL=demo@cuga-flo.invalid
export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
git commit -q -m "login with a password"
git push -q origin "HEAD:refs/heads/$branch" >&2
sha=$(git -C ../origin.git rev-parse --short=7 "refs/heads/$branch")
printf '{"push_result": "pushed %s at %s"}\n' "$branch" "$sha"
