#!/usr/bin/env bash
# Start a real Jaeger (v2, the Go module github.com/jaegertracing/jaeger v1.75.0) for the
# telemetry tests, with in-memory storage, on 127.0.0.1 only.
#
#   tests/telemetry/start-jaeger.sh [--build]
#
# Builds the binary once with Go from the Go module proxy (about 4 minutes on 2 cores)
# into the cache, starts it with OTLP/HTTP and the query API on free ports, waits until
# the query API answers and prints exactly one line on stdout:
#
#   listening otlp=http://127.0.0.1:PORT query=http://127.0.0.1:PORT
#
# (OTLP/HTTP takes /v1/traces; the query API serves /api/traces and the UI at /.)
# Everything else goes to stderr. With --build: build (when not cached) and exit.
#
# Environment:
#   CUGA_FLO_CACHE        cache root (default ~/.cache/cuga-flo); the binary goes to
#                         $CUGA_FLO_CACHE/jaeger/v1.75.0/jaeger
#   JAEGER_START_TIMEOUT  seconds to wait for the server (default 60)
#   JAEGER_UI_ASSETS      a built Jaeger UI (jaeger-ui's packages/jaeger-ui/build) for the
#                         query port to serve; without it the port serves the API and a
#                         placeholder page (the Go module carries no UI assets)
#   CUGA_FLO_OWNER_PID    stop the server once this process has exited
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION=v1.75.0
CACHE="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/jaeger/$VERSION"
TIMEOUT="${JAEGER_START_TIMEOUT:-60}"

say() { echo "jaeger: $*" >&2; }
# shellcheck source=../suite/support/server.sh
source "$HERE/../suite/support/server.sh"
die() { say "$*"; exit 1; }

mkdir -p "$CACHE"
BIN="$CACHE/jaeger"
if [ ! -x "$BIN" ]; then
    command -v go >/dev/null || die "go not found (Go builds Jaeger from the Go module proxy once)"
    exec 9>"$CACHE/build.lock"
    flock 9
    if [ ! -x "$BIN" ]; then
        say "building Jaeger $VERSION with Go (once; about 4 minutes)..."
        started=$SECONDS
        MOD="$CACHE/mod"
        mkdir -p "$MOD"
        (
            cd "$MOD"
            [ -f go.mod ] || go mod init cuga-flo-jaeger >/dev/null 2>&1
            go get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$VERSION"
            go build -o "$BIN.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
        ) >&2 || die "go build failed"
        mv "$BIN.tmp" "$BIN"
        say "built in $((SECONDS - started)) s"
    fi
    exec 9>&-
fi

if [ "${1:-}" = "--build" ]; then
    exit 0
fi

OTLP="$(free_port)"
QUERY="$(free_port)"
GRPC="$(free_port)"
HEALTH="$(free_port)"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/cuga-flo-jaeger.XXXXXX")"
CONFIG="$RUN/config.yaml"
LOG="$RUN/server.log"
PIDFILE="$RUN/server.pid"
cat >"$CONFIG" <<YAML
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$HEALTH
  jaeger_query:
    storage:
      traces: memstore
$(if [ -n "${JAEGER_UI_ASSETS:-}" ]; then printf '    ui:\n      assets_path: %s\n' "$JAEGER_UI_ASSETS"; fi)
    http:
      endpoint: 127.0.0.1:$QUERY
    grpc:
      endpoint: 127.0.0.1:$GRPC
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:$OTLP
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML

say "starting (log: $LOG)"
"$BIN" --config "file:$CONFIG" </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"
wait_up "$PID" "$PIDFILE" "$LOG" server "http://127.0.0.1:$QUERY/api/services" \
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$QUERY/api/services"
# The OTLP receiver answers too (an empty export is accepted).
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -H 'content-type: application/json' \
    -d '{"resourceSpans":[]}' "http://127.0.0.1:$OTLP/v1/traces" || true)"
[ "$code" = 200 ] || die "the OTLP receiver answered $code"
watch_owner "$PID" kill "$PID"
echo "listening otlp=http://127.0.0.1:$OTLP query=http://127.0.0.1:$QUERY"
