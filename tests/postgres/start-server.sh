#!/usr/bin/env bash
# Start Debian's PostgreSQL (the `postgresql` package's binaries, not its system
# cluster) for the tests: a throwaway cluster in a fresh data directory under $TMPDIR,
# listening on 127.0.0.1 only (TCP with password authentication; its Unix socket, which
# only the server's user can reach, in the data directory), with one database and one
# user of that name.
#
#   tests/postgres/start-server.sh [DATABASE]     (default: cugaflo)
#
# prints exactly one line on stdout once the server accepts connections:
#
#   listening postgres://USER:PASSWORD@127.0.0.1:PORT/DATABASE DATADIR
#
# Everything else goes to stderr. `tests/postgres/stop-server.sh DATADIR` stops it and
# removes the directory. Run as root, the server runs as the `postgres` user (PostgreSQL
# refuses to run as root); otherwise as the caller.
#
# Environment:
#   POSTGRES_BIN            the folder of initdb/pg_ctl (default: the newest
#                           /usr/lib/postgresql/*/bin)
#   POSTGRES_START_TIMEOUT  seconds to wait for the server (default 60)
#   CUGA_FLO_OWNER_PID      stop the server (and remove its data) once this process has
#                           exited
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TIMEOUT="${POSTGRES_START_TIMEOUT:-60}"
say() { echo "postgres: $*" >&2; }
die() { say "$*"; exit 1; }
# shellcheck source=../suite/support/server.sh
source "$HERE/../suite/support/server.sh"

DB="${1:-cugaflo}"
[[ "$DB" =~ ^[a-z_][a-z0-9_]*$ ]] || die "database name \`$DB\`: lower-case letters, digits and _ only"
BIN="${POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}"
[ -x "$BIN/initdb" ] && [ -x "$BIN/pg_ctl" ] ||
    die "PostgreSQL's initdb/pg_ctl not found (Debian: apt-get install postgresql; or set POSTGRES_BIN)"

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || die "running as root needs the \`postgres\` user (Debian's postgresql package creates it)"
    as_owner=(runuser -u postgres --)
fi

DATA="$(mktemp -d "${TMPDIR:-/tmp}/cuga-flo-postgres.XXXXXX")"
chmod 700 "$DATA"
[ ${#as_owner[@]} -eq 0 ] || chown postgres: "$DATA"
PASSWORD="$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
printf '%s\n' "$PASSWORD" >"$DATA.pw"
[ ${#as_owner[@]} -eq 0 ] || chown postgres: "$DATA.pw"
LOG="$DATA/server.log"

say "initdb $DATA"
"${as_owner[@]}" "$BIN/initdb" -D "$DATA" -U "$DB" --pwfile="$DATA.pw" --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$DATA.initdb.log" 2>&1 ||
    { tail -n 20 "$DATA.initdb.log" >&2; die "initdb failed"; }
rm -f "$DATA.pw" "$DATA.initdb.log"

PORT="$(free_port)"
say "starting on 127.0.0.1:$PORT (log: $LOG)"
# fsync stays on (the fault tests restart the server); a small cluster otherwise.
"${as_owner[@]}" "$BIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t "$TIMEOUT" start -o \
    "-c listen_addresses=127.0.0.1 -p $PORT -k $DATA -c max_connections=200 -c shared_buffers=64MB" \
    >&2 || { tail -n 40 "$LOG" >&2; die "the server did not start"; }
"${as_owner[@]}" "$BIN/psql" -h "$DATA" -p "$PORT" -U "$DB" -d postgres -qAt \
    -c "create database $DB" >&2 || die "cannot create database $DB"
# Watched by its data directory, not its pid: a test restarts the server (a new pid).
if [ -n "${CUGA_FLO_OWNER_PID:-}" ]; then
    (
        while kill -0 "$CUGA_FLO_OWNER_PID" 2>/dev/null && [ -d "$DATA" ]; do
            sleep 1
        done
        bash "$HERE/stop-server.sh" "$DATA" >/dev/null 2>&1 || true
    ) </dev/null >/dev/null 2>&1 &
    disown
fi
echo "listening postgres://$DB:$PASSWORD@127.0.0.1:$PORT/$DB $DATA"
