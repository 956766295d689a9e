#!/usr/bin/env bash
# Stop a service started by start-service.sh:  tests/kogito/stop-service.sh PORT [PID]
# TERM, then KILL after 10 s. A service that is not running is not an error. With PID,
# only that process (the watchdog of a service that was restarted on the same port must
# not stop its successor).
set -euo pipefail
PORT="${1:?usage: stop-service.sh PORT [PID]}"
ONLY="${2:-}"
RUN="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/kogito/run-$PORT"
PIDFILE="$RUN/service.pid"
[ -s "$PIDFILE" ] || exit 0
PID="$(cat "$PIDFILE")"
[ -z "$ONLY" ] || [ "$ONLY" = "$PID" ] || exit 0
case "$(tr '\0' ' ' <"/proc/$PID/cmdline" 2>/dev/null || true)" in
    *quarkus-run.jar*) ;;
    *) rm -f "$PIDFILE"; exit 0 ;;
esac
kill -TERM "$PID" 2>/dev/null || true
for _ in $(seq 1 100); do
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
done
kill -KILL "$PID" 2>/dev/null || true
rm -f "$PIDFILE"
