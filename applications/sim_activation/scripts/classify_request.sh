#!/bin/sh
# Classify a SIM activation request (the `classify_request` recipe), deterministically:
# fraud, a stolen or lost SIM, or a network fault is CRITICAL; anything else is STANDARD.
# Called as `sh classify_request.sh --params request=... --params msisdn=...`.
set -eu
request=""
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in request=*) request=${1#request=} ;; esac ;;
  esac
  shift
done
lower=$(printf '%s' "$request" | tr '[:upper:]' '[:lower:]')
case "$lower" in
  *fraud*|*stolen*|*lost*|*"network fault"*|*outage*|*hijack*) severity=CRITICAL ;;
  *) severity=STANDARD ;;
esac
printf '{"severity": "%s"}\n' "$severity"
