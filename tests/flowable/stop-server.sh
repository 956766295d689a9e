#!/usr/bin/env bash
# Stop a server started by start-server.sh:  tests/flowable/stop-server.sh PORT [PID]
# TERM, then KILL after 10 s; removes the pid file. A server that is not
# running is not an error.
set -euo pipefail

PORT="${1:?usage: stop-server.sh PORT [PID]}"
# With PID, only that process: the watchdog of a server restarted on the same port must
# not stop its successor.
ONLY="${2:-}"
CACHE="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/flowable"
RUN="${CUGA_FLO_FLOWABLE_DIR:-$CACHE/run-$PORT}"
PIDFILE="$RUN/server.pid"

say() { echo "flowable: $*" >&2; }

if [ ! -s "$PIDFILE" ]; then
    say "no pid file in $RUN: nothing to stop"
    exit 0
fi
PID="$(cat "$PIDFILE")"
if [ -n "$ONLY" ] && [ "$ONLY" != "$PID" ]; then
    exit 0
fi
# Only signal the process if it is still our server (pids get reused).
CMD="$(tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null || true)"
case "$CMD" in
    *java*-jar*.jar*) OURS=1 ;;
    *) OURS=0 ;;
esac
if [ "$OURS" = 1 ] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 100); do
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$PID" 2>/dev/null; then
        say "pid $PID still alive after 10 s: KILL"
        kill -KILL "$PID" 2>/dev/null || true
    fi
    say "stopped pid $PID"
else
    say "pid $PID is not running"
fi
rm -f "$PIDFILE"
