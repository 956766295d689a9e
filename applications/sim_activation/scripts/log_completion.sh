#!/bin/sh
# Log how the request was handled (the `log_completion` recipe).
set -eu
severity="" ticket="" provisioned=""
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift
      case "${1-}" in
        severity=*) severity=${1#severity=} ;;
        ticket=*) ticket=${1#ticket=} ;;
        provisioned=*) provisioned=${1#provisioned=} ;;
      esac ;;
  esac
  shift
done
if [ -n "$ticket" ]; then
  entry="$severity request escalated as $ticket"
elif [ "$provisioned" = true ]; then
  entry="$severity request provisioned"
else
  entry="$severity request: nothing done"
fi
printf '{"log_entry": "%s"}\n' "$entry"
