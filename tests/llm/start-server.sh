#!/usr/bin/env bash
# Start the local OpenAI-compatible test LLM server in the background and print its base URL.
#
#   url=$(tests/llm/start-server.sh [small|qwen])    # e.g. http://127.0.0.1:41234/v1
#   ...
#   tests/llm/stop-server.sh [small|qwen]
#
# Steps, each skipped when its result is already in the cache:
#   1. `npm ci` of tests/llm/server into $CACHE/llm-server/node-<hash of package-lock.json>/
#      (node_modules lives outside the repo, so fresh clones on the same machine share it);
#   2. tests/llm/fetch-model.sh to get and verify the model;
#   3. start oai-server.mjs on a free port of 127.0.0.1, wait until GET /v1/models answers.
# If a server for the same model, script and settings is already running, its URL is reused.
#
# Environment:
#   CUGA_FLO_CACHE            cache root (default ~/.cache/cuga-flo)
#   CUGA_FLO_LLM_THREADS      llama.cpp threads (default 1: spin-waiting threads collapse on a busy
#                             2-core machine)
#   CUGA_FLO_LLM_CTX          context size in tokens (default 2048)
#   CUGA_FLO_LLM_PORT         fixed port (default 0: any free port)
#   CUGA_FLO_LLM_START_TIMEOUT  seconds to wait for readiness (default 120)
#
# Progress and errors go to stderr; stdout gets only the base URL. The server's log, pid and URL
# files are in $CACHE/llm-server/.
set -euo pipefail

name="${1:-small}"
case "$name" in
  small | qwen) ;;
  *) echo "usage: $0 [small|qwen]" >&2; exit 2 ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}"
state="$cache/llm-server"
threads="${CUGA_FLO_LLM_THREADS:-1}"
ctx="${CUGA_FLO_LLM_CTX:-2048}"
port="${CUGA_FLO_LLM_PORT:-0}"
timeout="${CUGA_FLO_LLM_START_TIMEOUT:-120}"
mkdir -p "$state"

log() { echo "start-server: $*" >&2; }
die() { echo "start-server: $*" >&2; exit 1; }

command -v node >/dev/null || die "node is not installed (Node.js >= 20 is needed)"
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" -ge 20 ] || die "Node.js >= 20 is needed, found $(node --version)"

# --- 1. node_modules, keyed on the lock file -----------------------------------------------------
src="$here/server"
lock_hash="$(cat "$src/package.json" "$src/package-lock.json" "$src/.npmrc" | sha256sum | cut -c1-16)"
env_dir="$state/node-$lock_hash"
if [ ! -f "$env_dir/.installed" ]; then
  exec 8>"$state/.install.lock"
  command -v flock >/dev/null && flock 8
  if [ ! -f "$env_dir/.installed" ]; then
    log "installing node-llama-cpp into $env_dir (one time per package-lock.json)"
    started=$SECONDS
    tmp="$(mktemp -d "$state/.node-install.XXXXXX")"
    chmod 755 "$tmp"
    cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$tmp/"
    if ! (cd "$tmp" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2); then
      rm -rf "$tmp"
      die "npm ci failed in a copy of $src"
    fi
    touch "$tmp/.installed"
    rm -rf "$env_dir"
    mv "$tmp" "$env_dir"
    log "npm ci took $((SECONDS - started)) s ($(du -sh "$env_dir/node_modules" | cut -f1))"
    # Drop environments of older lock files.
    for old in "$state"/node-*; do
      [ "$old" = "$env_dir" ] || rm -rf "$old"
    done
  fi
  exec 8>&-
fi
# The script runs from beside its node_modules; copy the current version on every start.
cp "$src/oai-server.mjs" "$env_dir/oai-server.mjs"

# --- 2. model -----------------------------------------------------------------------------------
model="$("$here/fetch-model.sh" "$name" | tail -n 1)"
[ -f "$model" ] || die "fetch-model.sh printed no model path"

# --- 3. server ----------------------------------------------------------------------------------
pid_file="$state/$name.pid"
url_file="$state/$name.url"
key_file="$state/$name.key"
log_file="$state/$name.log"
out_file="$state/$name.stdout"
key="$(
  {
    echo "$model $threads $ctx $port $lock_hash"
    cat "$src/oai-server.mjs"
  } | sha256sum | cut -c1-16
)"

is_our_server() { # pid
  [ -n "$1" ] && kill -0 "$1" 2>/dev/null && grep -qa 'oai-server\.mjs' "/proc/$1/cmdline" 2>/dev/null
}
answers() { # base url
  node -e '
    const c = new AbortController(); setTimeout(() => c.abort(), 3000);
    fetch(process.argv[1] + "/models", {signal: c.signal})
      .then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1));' "$1"
}

old_pid="$(cat "$pid_file" 2>/dev/null || true)"
if is_our_server "$old_pid"; then
  if [ "$(cat "$key_file" 2>/dev/null)" = "$key" ] && answers "$(cat "$url_file")"; then
    log "reusing running server (pid $old_pid)"
    cat "$url_file"
    exit 0
  fi
  log "stopping outdated server (pid $old_pid)"
  "$here/stop-server.sh" "$name" >&2
fi
rm -f "$pid_file" "$url_file" "$key_file"

log "starting server for $(basename "$model") ($threads thread(s), context $ctx); log: $log_file"
started=$SECONDS
# setsid: own session, so the server outlives this script and ignores the caller's Ctrl-C.
# stdout/stderr go to files: a caller doing url=$(start-server.sh) must not wait on the server.
MODEL="$model" PORT="$port" THREADS="$threads" CTX="$ctx" \
  setsid node "$env_dir/oai-server.mjs" </dev/null >"$out_file" 2>"$log_file" &
pid=$!
echo "$pid" >"$pid_file"

fail() {
  echo "start-server: $*" >&2
  echo "----- $log_file (last 40 lines) -----" >&2
  tail -n 40 "$log_file" >&2 || true
  echo "-----" >&2
  "$here/stop-server.sh" "$name" >/dev/null 2>&1 || true
  exit 1
}

url=""
deadline=$((SECONDS + timeout))
while :; do
  if ! kill -0 "$pid" 2>/dev/null; then
    fail "the server exited during start-up"
  fi
  if [ -z "$url" ] && grep -q '^listening ' "$out_file" 2>/dev/null; then
    url="$(sed -n 's/^listening //p' "$out_file" | head -n 1)"
  fi
  if [ -n "$url" ] && answers "$url"; then
    break
  fi
  if [ "$SECONDS" -ge "$deadline" ]; then
    fail "the server did not answer GET /v1/models within $timeout s"
  fi
  sleep 0.3
done

echo "$url" >"$url_file"
echo "$key" >"$key_file"
log "ready at $url after $((SECONDS - started)) s (pid $pid)"
echo "$url"
