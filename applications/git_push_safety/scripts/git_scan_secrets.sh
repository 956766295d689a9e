#!/bin/sh
# Scan the staged changes for secrets and personal data (the `git_scan_secrets` recipe):
# AWS access keys, private keys, and e-mail addresses in added lines.
# Every script of the demo works on one throwaway git repository per run, created by
# git_stage.sh under the temporary folder: ${TMPDIR:-/tmp}/cuga-flo-git-push-safety/<run id>
# (CUGA_FLO_RUN_ID), with a bare repository beside it as `origin`. Deterministic: fixed
# author, committer and dates.
set -eu
cd "${TMPDIR:-/tmp}/cuga-flo-git-push-safety/${CUGA_FLO_RUN_ID:?no run id}/work"
found=false
if git diff --cached -U0 | grep '^+' | grep -Eq 'AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----|[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}'; then
  found=true
  echo "secret or personal data in: $(git diff --cached -G 'AKIA|PRIVATE KEY|@' --name-only | tr '\n' ' ')" >&2
fi
printf '{"secrets_found": %s}\n' "$found"
