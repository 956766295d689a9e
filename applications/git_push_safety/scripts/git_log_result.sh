#!/bin/sh
# Log the push's result (the `git_log_result` recipe), and remove the run's throwaway
# repository.
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
result=""
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in push_result=*) result=${1#push_result=} ;; esac ;;
  esac
  shift
done
rm -rf "${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}"
printf '{"log_entry": "push approved and done: %s"}\n' "$result"
