#!/usr/bin/env bash
# Start the cuga-flo Flowable test server (see README.md beside this file).
#
#   tests/flowable/start-server.sh [PORT]
#
# Builds server/ into a cached jar when the cache has none for the current
# sources, starts it in the background on 127.0.0.1:PORT (a free port when PORT
# is not given), waits until the REST API answers and prints exactly one line
# on stdout:
#
#   listening http://127.0.0.1:PORT/flowable-rest/service
#
# Everything else goes to stderr. Stop it with stop-server.sh PORT.
#
# Environment:
#   CUGA_FLO_CACHE         cache root (default ~/.cache/cuga-flo); jars go to
#                          $CUGA_FLO_CACHE/flowable/<sha256>.jar
#   CUGA_FLO_FLOWABLE_DIR  run folder (log, pid file); default
#                          $CUGA_FLO_CACHE/flowable/run-PORT
#   FLOWABLE_USER / FLOWABLE_PASSWORD  basic-auth user (default admin / test)
#   FLOWABLE_JAVA_OPTS     extra JVM options
#   FLOWABLE_CDS=0         no class data sharing archive (start-up ~2x slower)
#   FLOWABLE_START_TIMEOUT seconds to wait for the API (default 180)
#   SPRING_DATASOURCE_URL / _USERNAME / _PASSWORD  another database (PostgreSQL)
#   CUGA_FLO_OWNER_PID     stop the server once this process has exited (tests set it
#                          to their own pid, so no server outlives its test binary)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/server"
CACHE="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/flowable"
USER_NAME="${FLOWABLE_USER:-admin}"
USER_PASSWORD="${FLOWABLE_PASSWORD:-test}"
TIMEOUT="${FLOWABLE_START_TIMEOUT:-180}"

say() { echo "flowable: $*" >&2; }
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

# --- the jar for the current sources ------------------------------------------
HASH="$(cd "$SRC" && find pom.xml src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
JAR="$CACHE/$HASH.jar"
if [ ! -s "$JAR" ]; then
    command -v mvn >/dev/null || die "mvn not found (Maven is needed to build the server)"
    # One build at a time; a second caller waits and then finds the jar.
    exec 9>"$CACHE/build.lock"
    flock 9
    if [ ! -s "$JAR" ]; then
        BUILD="$CACHE/build-$HASH"
        rm -rf "$BUILD"
        mkdir -p "$BUILD"
        cp -R "$SRC/pom.xml" "$SRC/src" "$BUILD/"
        say "building the server jar (first run for these sources; Maven downloads into ~/.m2)..."
        started=$SECONDS
        # Maven 3.8 prints colour codes even with -B -q: strip them.
        # (pipefail makes a failing mvn fail the pipeline.)
        if ! (cd "$BUILD" && mvn -B -q -DskipTests package 2>&1) | sed -e 's/\x1b\[[0-9;]*m//g' >&2; then
            die "mvn package failed in $BUILD"
        fi
        cp "$BUILD/target/cuga-flo-flowable-server.jar" "$JAR.tmp.$$"
        mv -f "$JAR.tmp.$$" "$JAR"
        rm -rf "$BUILD"
        say "built $JAR in $((SECONDS - started)) s"
    fi
    exec 9>&-
fi

# --- class data sharing: about halves the start-up -----------------------------
# Once per jar (and JVM): extract the jar (Spring Boot's jarmode=tools) and make
# a CDS archive with a training run that stops after the context refresh, on
# a throw-away H2 database. The archive is tied to the extracted jar's path and
# to the JVM, so it lives in the cache beside the jar. FLOWABLE_CDS=0 skips it;
# any failure here only means starting without it.
CDS="$CACHE/$HASH.cds"
RUN_JAR="$JAR"
CDS_OPTS=()
if [ "${FLOWABLE_CDS:-1}" != 0 ]; then
    JAVA_ID="$(java -version 2>&1 | sha256sum | cut -c1-16)"
    if [ "$(cat "$CDS/java.id" 2>/dev/null)" != "$JAVA_ID" ]; then
        exec 9>"$CACHE/build.lock"
        flock 9
        if [ "$(cat "$CDS/java.id" 2>/dev/null)" != "$JAVA_ID" ]; then
            say "making a class data sharing archive (once per jar)..."
            started=$SECONDS
            rm -rf "$CDS"
            mkdir -p "$CDS"
            if java -Djarmode=tools -jar "$JAR" extract --destination "$CDS/app" >"$CDS/extract.log" 2>&1 \
                && (cd "$CDS" && SERVER_PORT=0 SERVER_ADDRESS=127.0.0.1 \
                    SPRING_DATASOURCE_URL="jdbc:h2:mem:cds-training;DB_CLOSE_DELAY=-1" \
                    SPRING_DATASOURCE_USERNAME=sa SPRING_DATASOURCE_PASSWORD='' \
                    java -Xmx512m -XX:TieredStopAtLevel=1 -XX:ArchiveClassesAtExit="$CDS/app.jsa" \
                    -Dspring.context.exit=onRefresh -jar "$CDS/app/$HASH.jar" \
                    </dev/null >"$CDS/training.log" 2>&1) \
                && [ -s "$CDS/app.jsa" ]; then
                echo "$JAVA_ID" >"$CDS/java.id"
                say "made $CDS/app.jsa in $((SECONDS - started)) s"
            else
                say "no CDS archive (see $CDS/*.log); starting without it"
            fi
        fi
        exec 9>&-
    fi
    if [ "$(cat "$CDS/java.id" 2>/dev/null)" = "$JAVA_ID" ]; then
        RUN_JAR="$CDS/app/$HASH.jar"
        CDS_OPTS=(-XX:SharedArchiveFile="$CDS/app.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off)
    fi
fi

# --- start ----------------------------------------------------------------------
RUN="${CUGA_FLO_FLOWABLE_DIR:-$CACHE/run-$PORT}"
mkdir -p "$RUN"
PIDFILE="$RUN/server.pid"
LOG="$RUN/server.log"
if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    die "a server is already running from $RUN (pid $(cat "$PIDFILE")); stop it with stop-server.sh $PORT"
fi

# Something else answering on the port would pass the readiness check below.
if ! port_free "$PORT"; then
    die "port $PORT is already in use on 127.0.0.1"
fi

say "starting on 127.0.0.1:$PORT (log: $LOG)"
# shellcheck disable=SC2086  # FLOWABLE_JAVA_OPTS is a list of options
SERVER_PORT="$PORT" FLOWABLE_USER="$USER_NAME" FLOWABLE_PASSWORD="$USER_PASSWORD" \
    java -Xmx512m -XX:TieredStopAtLevel=1 "${CDS_OPTS[@]}" ${FLOWABLE_JAVA_OPTS:-} -jar "$RUN_JAR" \
    </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"

URL="http://127.0.0.1:$PORT/flowable-rest/service"
wait_up "$PID" "$PIDFILE" "$LOG" server "$URL" \
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 -u "$USER_NAME:$USER_PASSWORD" \
    "$URL/repository/process-definitions?size=1"
watch_owner "$PID" "$HERE/stop-server.sh" "$PORT" "$PID"
echo "listening $URL"
