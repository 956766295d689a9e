#!/usr/bin/env bash
# Start an Apache Jena Fuseki server for the graph-mode tests.
#
#   tests/fuseki/start-server.sh [PORT]
#
# Fetches org.apache.jena:jena-fuseki-main 5.6.0 and its dependencies with Maven (from
# Maven Central, once: pom.xml beside this file) into the cache, starts Fuseki on
# 127.0.0.1:PORT (a free port when PORT is not given) with one in-memory dataset `/ds`,
# updates enabled, waits until it answers a query and prints exactly one line on stdout:
#
#   listening http://127.0.0.1:PORT
#
# (the dataset is at .../ds: query, update, data). Everything else goes to stderr. Stop
# it with stop-server.sh PORT.
#
# Environment:
#   CUGA_FLO_CACHE        cache root (default ~/.cache/cuga-flo); the jars go to
#                         $CUGA_FLO_CACHE/fuseki/<sha256 of pom.xml>/lib
#   FUSEKI_JAVA_OPTS      extra JVM options
#   FUSEKI_START_TIMEOUT  seconds to wait for the server (default 120)
#   CUGA_FLO_OWNER_PID    stop the server once this process has exited (tests set it to
#                         their own pid, so no server outlives its test binary)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/fuseki"
TIMEOUT="${FUSEKI_START_TIMEOUT:-120}"

say() { echo "fuseki: $*" >&2; }
# shellcheck source=../suite/support/server.sh
source "$HERE/../suite/support/server.sh"
die() { say "$*"; exit 1; }

command -v java >/dev/null || die "java not found (Java 17 is needed)"
command -v curl >/dev/null || die "curl not found"

PORT="${1:-}"
if [ -z "$PORT" ]; then
    PORT="$(free_port)"
fi
case "$PORT" in
    ''|*[!0-9]*) die "bad port: $PORT" ;;
esac
mkdir -p "$CACHE"

# --- the jars for the current pom.xml -------------------------------------------
HASH="$(sha256sum "$HERE/pom.xml" | cut -d' ' -f1)"
LIB="$CACHE/$HASH/lib"
if [ ! -s "$CACHE/$HASH/done" ]; then
    command -v mvn >/dev/null || die "mvn not found (Maven fetches Fuseki)"
    exec 9>"$CACHE/fetch.lock"
    flock 9
    if [ ! -s "$CACHE/$HASH/done" ]; then
        rm -rf "$CACHE/$HASH"
        mkdir -p "$CACHE/$HASH"
        cp "$HERE/pom.xml" "$CACHE/$HASH/"
        say "fetching jena-fuseki-main with Maven (once; Maven downloads into ~/.m2)..."
        started=$SECONDS
        if ! (cd "$CACHE/$HASH" && mvn -B -q dependency:copy-dependencies -DoutputDirectory=lib 2>&1) \
            | sed -e 's/\x1b\[[0-9;]*m//g' >&2; then
            die "mvn dependency:copy-dependencies failed in $CACHE/$HASH"
        fi
        echo ok >"$CACHE/$HASH/done"
        say "fetched $(ls "$LIB" | wc -l) jars in $((SECONDS - started)) s"
    fi
    exec 9>&-
fi

# --- start ----------------------------------------------------------------------
RUN="$CACHE/run-$PORT"
mkdir -p "$RUN"
PIDFILE="$RUN/server.pid"
LOG="$RUN/server.log"
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    die "a server is already running from $RUN (pid $(cat "$PIDFILE")); stop it with stop-server.sh $PORT"
fi
if ! port_free "$PORT"; then
    die "port $PORT is already in use on 127.0.0.1"
fi

say "starting on 127.0.0.1:$PORT (log: $LOG)"
# shellcheck disable=SC2086  # FUSEKI_JAVA_OPTS is a list of options
java -Xmx512m -XX:TieredStopAtLevel=1 ${FUSEKI_JAVA_OPTS:-} -cp "$LIB/*" \
    org.apache.jena.fuseki.main.cmds.FusekiMainCmd \
    --localhost --port "$PORT" --mem --update /ds \
    </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"

URL="http://127.0.0.1:$PORT"
wait_up "$PID" "$PIDFILE" "$LOG" server "$URL/ds" \
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 --data-urlencode 'query=ASK {}' "$URL/ds/query"
watch_owner "$PID" "$HERE/stop-server.sh" "$PORT" "$PID"
echo "listening $URL"
