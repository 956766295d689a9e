#!/usr/bin/env bash
# Stop a server tests/postgres/start-server.sh started, and remove its data directory.
#
#   tests/postgres/stop-server.sh DATADIR [--keep]
#
# `--keep` stops it and keeps the data.
set -euo pipefail
DATA="${1:?the data directory start-server.sh printed}"
KEEP="${2:-}"
case "$DATA" in
    "${TMPDIR:-/tmp}"/cuga-flo-postgres.*) ;;
    *) echo "postgres: $DATA is not a data directory start-server.sh made" >&2; exit 1 ;;
esac
BIN="${POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
as_owner=()
[ "$(id -u)" -ne 0 ] || as_owner=(runuser -u postgres --)
if [ -f "$DATA/postmaster.pid" ]; then
    "${as_owner[@]}" "$BIN/pg_ctl" -D "$DATA" -m fast -w -t 30 stop >/dev/null 2>&1 ||
        kill -9 "$(head -n 1 "$DATA/postmaster.pid")" 2>/dev/null || true
fi
[ "$KEEP" = "--keep" ] || rm -rf "$DATA"
