#!/usr/bin/env bash
# Build (once per content) and start the Kogito service of a cuga-flo app.
#
#   tests/kogito/start-service.sh APP [PORT]
#   tests/kogito/start-service.sh PROJECT_DIR [PORT]   (a project written already, e.g.
#                                                     by the conformance tests)
#
# Generates the app's service with `cuga-flo kogito build APP --no-build` (the binary is
# $CUGA_FLO_BIN, else target/debug/cuga-flo), builds it with Maven in
# $CUGA_FLO_CACHE/kogito/<sha256 of the generated project> unless that folder has a
# built jar (Maven downloads into ~/.m2), starts it on 127.0.0.1:PORT (a free port when
# not given), waits until the app's process answers, and prints exactly one line on
# stdout:
#
#   listening http://127.0.0.1:PORT
#
# Everything else goes to stderr. Stop it with stop-service.sh PORT. A service built with
# `kogito build --persistence postgresql` reads its database from the environment:
# QUARKUS_DATASOURCE_JDBC_URL, QUARKUS_DATASOURCE_USERNAME, QUARKUS_DATASOURCE_PASSWORD.
# CUGA_FLO_OWNER_PID: stop the service once this process has exited (tests set it).
# KOGITO_START_TIMEOUT: seconds to wait for the service (default 120).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
APP="${1:?usage: start-service.sh APP [PORT]}"
PORT="${2:-}"
CACHE="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/kogito"
BIN="${CUGA_FLO_BIN:-$ROOT/target/debug/cuga-flo}"
TIMEOUT="${KOGITO_START_TIMEOUT:-120}"

say() { echo "kogito: $*" >&2; }
# shellcheck source=../suite/support/server.sh
source "$HERE/../suite/support/server.sh"
die() { say "$*"; exit 1; }

command -v java >/dev/null || die "java not found (Java 17 is needed)"
command -v curl >/dev/null || die "curl not found"
[ -d "$APP" ] || [ -x "$BIN" ] || die "no cuga-flo binary at $BIN (set CUGA_FLO_BIN)"

if [ -z "$PORT" ]; then
    PORT="$(free_port)"
fi
mkdir -p "$CACHE"

# --- the project, and its build for this content -------------------------------
GEN="$(mktemp -d)"
trap 'rm -rf "$GEN"' EXIT
if [ -d "$APP" ]; then
    cp -R "$APP" "$GEN/project"
    APP="$(basename "$APP")"
else
    "$BIN" --apps-dir "$ROOT/applications" kogito build "$APP" --no-build --out "$GEN/project" >&2
fi
# The first process answers the readiness check.
PROCESS="$(basename "$(ls "$GEN"/project/src/main/resources/org/cugaflo/*.bpmn | head -n 1)" .bpmn)"
HASH="$(cd "$GEN/project" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32)"
PROJECT="$CACHE/$APP-$HASH"
JAR="$PROJECT/target/quarkus-app/quarkus-run.jar"
if [ ! -s "$JAR" ]; then
    command -v mvn >/dev/null || die "mvn not found (Maven is needed to build the service)"
    exec 9>"$CACHE/build.lock"
    flock 9
    if [ ! -s "$JAR" ]; then
        rm -rf "$PROJECT"
        cp -R "$GEN/project" "$PROJECT"
        say "building the $APP service (once for this content; Maven downloads into ~/.m2)..."
        started=$SECONDS
        if ! (cd "$PROJECT" && mvn -B -q -DskipTests package 2>&1) | sed -e 's/\x1b\[[0-9;]*m//g' >&2; then
            die "mvn package failed in $PROJECT"
        fi
        say "built in $((SECONDS - started)) s"
    fi
    exec 9>&-
fi

# --- start ------------------------------------------------------------------------
RUN="$CACHE/run-$PORT"
mkdir -p "$RUN"
LOG="$RUN/service.log"
if ! port_free "$PORT"; then
    die "port $PORT is already in use on 127.0.0.1"
fi
say "starting $APP on 127.0.0.1:$PORT (log: $LOG)"
java -Xmx256m -XX:TieredStopAtLevel=1 -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$PORT" \
    -jar "$JAR" </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$RUN/service.pid"
URL="http://127.0.0.1:$PORT"
wait_up "$PID" "$RUN/service.pid" "$LOG" service "$URL/$PROCESS" \
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/$PROCESS"
watch_owner "$PID" "$HERE/stop-service.sh" "$PORT" "$PID"
echo "listening $URL"
