# What the start scripts of the test servers share (tests/flowable/start-server.sh,
# tests/kogito/start-service.sh, tests/fuseki/start-server.sh, tests/telemetry/*.sh).
# Sourced; the caller defines `say` (a line on stderr) and TIMEOUT (seconds).

# free_port: a port nothing listens on now on 127.0.0.1 (the kernel's choice).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# port_free PORT: whether nothing answers on 127.0.0.1:PORT (something else answering
# would pass the readiness check).
port_free() {
    python3 -c 'import socket, sys; s = socket.socket(); s.settimeout(2); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))) == 0)' "$1"
}

# wait_up PID PIDFILE LOG WHAT WHERE PROBE...: wait until PROBE (a command printing an
# HTTP status) prints 200. When the process PID dies, or TIMEOUT seconds pass, remove
# PIDFILE, show the tail of LOG and exit 1. WHAT names the process ("server"), WHERE what
# is asked.
wait_up() {
    local pid=$1 pidfile=$2 log=$3 what=$4 where=$5
    shift 5
    local started=$SECONDS code
    while :; do
        if ! kill -0 "$pid" 2>/dev/null; then
            rm -f "$pidfile"
            say "the $what died during start-up; last lines of $log:"
            tail -n 40 "$log" >&2 || true
            exit 1
        fi
        code="$("$@" || true)"
        [ "$code" = 200 ] && break
        if [ $((SECONDS - started)) -ge "$TIMEOUT" ]; then
            say "no answer from $where after ${TIMEOUT} s (last status: $code); last lines of $log:"
            tail -n 40 "$log" >&2 || true
            kill "$pid" 2>/dev/null || true
            rm -f "$pidfile"
            exit 1
        fi
        sleep 0.3
    done
    say "up after $((SECONDS - started)) s (pid $pid)"
}

# watch_owner PID STOP...: when CUGA_FLO_OWNER_PID is set, run STOP once that process has
# exited (so no server outlives its test binary). A watchdog detached from our stdout, so
# the caller is not kept waiting.
watch_owner() {
    local pid=$1
    shift
    [ -n "${CUGA_FLO_OWNER_PID:-}" ] || return 0
    (
        while kill -0 "$CUGA_FLO_OWNER_PID" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do
            sleep 1
        done
        "$@" >/dev/null 2>&1 || true
    ) </dev/null >/dev/null 2>&1 &
    disown
}
