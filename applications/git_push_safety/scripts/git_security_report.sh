#!/bin/sh
# Write the pre-push security report the approver reads (the `git_security_report` recipe).
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
secrets=false
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in secrets_found=*) secrets=${1#secrets_found=} ;; esac ;;
  esac
  shift
done
cd "${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}/work"
files=$(git diff --cached --name-only | tr '\n' ' ' | sed 's/ $//')
n=$(git diff --cached --name-only | wc -l | tr -d ' ')
if [ "$secrets" = true ]; then
  verdict="BLOCKER: secrets staged"
else
  verdict="no secrets"
fi
printf '{"report": "%s files (%s); %s"}\n' "$n" "$files" "$verdict"
