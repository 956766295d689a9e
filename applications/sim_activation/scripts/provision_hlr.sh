#!/bin/sh
# Provision the subscriber on the home location register (the `provision_hlr` recipe),
# simulated: the number must be E.164 (`+` and 8 to 15 digits), else the HLR refuses it
# (exit 2, the reason on stderr: the task fails with COMMAND_FAILED).
set -eu
msisdn=""
while [ $# -gt 0 ]; do
  case "$1" in
    --params) shift; case "${1-}" in msisdn=*) msisdn=${1#msisdn=} ;; esac ;;
  esac
  shift
done
if ! printf '%s' "$msisdn" | grep -Eq '^\+[0-9]{8,15}$'; then
  echo "HLR: refused: '$msisdn' is not an E.164 number" >&2
  exit 2
fi
echo "HLR: provisioned $msisdn" >&2
printf '{"provisioned": true}\n'
