#!/usr/bin/env bash
# Builds tests/kogito/proto (unless already built; FORCE_BUILD=1 rebuilds), starts it
# on 127.0.0.1:$PORT (default 8089), runs contract.sh against it and stops it.
# Needs Java 17, Maven (Maven Central reachable for the first build), curl, jq.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${PORT:-8089}
cd "$HERE/proto"
if [ -n "${FORCE_BUILD:-}" ] || [ ! -f target/quarkus-app/quarkus-run.jar ]; then
    mvn -B -q package -DskipTests
fi
LOG=$(mktemp)
java -Xmx128m -XX:+UseSerialGC -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$PORT" \
    -jar target/quarkus-app/quarkus-run.jar >"$LOG" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 600); do
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/proto"; then break; fi
    if ! kill -0 $PID 2>/dev/null; then cat "$LOG"; exit 1; fi
    sleep 0.1
done
grep 'started in' "$LOG" || true
KOGITO_URL="http://127.0.0.1:$PORT" "$HERE/contract.sh"
