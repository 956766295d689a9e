#!/usr/bin/env bash
# Start Debian's Prometheus (the `prometheus` package) for the telemetry tests, scraping
# one target every second, with a throwaway data directory, on 127.0.0.1 only.
#
#   tests/telemetry/start-prometheus.sh HOST:PORT [PATH]
#
# scrapes http://HOST:PORT/PATH (default /metrics), waits until Prometheus is ready and
# prints exactly one line on stdout:
#
#   listening http://127.0.0.1:PORT
#
# Everything else goes to stderr.
#
# Environment:
#   PROMETHEUS_START_TIMEOUT  seconds to wait for the server (default 60)
#   CUGA_FLO_OWNER_PID        stop the server once this process has exited
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TIMEOUT="${PROMETHEUS_START_TIMEOUT:-60}"

say() { echo "prometheus: $*" >&2; }
# shellcheck source=../suite/support/server.sh
source "$HERE/../suite/support/server.sh"
die() { say "$*"; exit 1; }

TARGET="${1:?the target to scrape, HOST:PORT}"
METRICS_PATH="${2:-/metrics}"
command -v prometheus >/dev/null || die "prometheus not found (Debian: apt-get install prometheus)"

PORT="$(free_port)"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/cuga-flo-prometheus.XXXXXX")"
LOG="$RUN/server.log"
PIDFILE="$RUN/server.pid"
cat >"$RUN/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: cuga-flo
    metrics_path: $METRICS_PATH
    static_configs:
      - targets: ["$TARGET"]
YAML

say "starting (log: $LOG)"
prometheus --config.file="$RUN/prometheus.yml" --storage.tsdb.path="$RUN/data" \
    --web.listen-address="127.0.0.1:$PORT" </dev/null >"$LOG" 2>&1 &
PID=$!
echo "$PID" >"$PIDFILE"
wait_up "$PID" "$PIDFILE" "$LOG" server "http://127.0.0.1:$PORT/-/ready" \
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$PORT/-/ready"
watch_owner "$PID" kill "$PID"
echo "listening http://127.0.0.1:$PORT"
