#!/usr/bin/env bash
# Stop a test LLM server started by tests/llm/start-server.sh.
#
#   tests/llm/stop-server.sh [small|qwen|all]     (default: all)
#
# Only the process recorded in the pid file is signalled, and only if it still is oai-server.mjs.
# Stopping a server that is not running is not an error.
set -euo pipefail

which_server="${1:-all}"
state="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/llm-server"
case "$which_server" in
  all) names=(small qwen) ;;
  small | qwen) names=("$which_server") ;;
  *) echo "usage: $0 [small|qwen|all]" >&2; exit 2 ;;
esac

for name in "${names[@]}"; do
  pid_file="$state/$name.pid"
  [ -f "$pid_file" ] || continue
  pid="$(cat "$pid_file")"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null &&
    grep -qa 'oai-server\.mjs' "/proc/$pid/cmdline" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
    echo "stop-server: stopped $name server (pid $pid)" >&2
  fi
  rm -f "$pid_file" "$state/$name.url" "$state/$name.key"
done
