#!/bin/sh
# Open an escalation ticket (the `escalate_issue` recipe), simulated: the ticket number is
# derived from the number, so the same request always gets the same ticket.
set -eu
msisdn=""
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in msisdn=*) msisdn=${1#msisdn=} ;; esac ;;
  esac
  shift
done
n=$(printf '%s' "$msisdn" | cksum | cut -d' ' -f1)
printf '{"ticket": "SEC-%04d"}\n' $((n % 10000))
