#!/usr/bin/env bash
# The peer benchmark (not run in CI): cuga-flo against SpiffWorkflow, LangGraph and
# bpmn-engine on generated models; writes bench/peers/results.md. See README.md here.
#
#   bench/peers/run.sh [--sizes 10,100,1000] [--shapes linear,xor] [--engines cuga-flo,spiff] [--repeats 5] [--cap 120]
#
# Environment: CUGA_FLO_PEERS_CACHE (default ~/.cache/cuga-flo/peers) holds the Python venv
# and the npm packages, installed on the first run and reused after (no network then);
# CARGO_TARGET_DIR as cargo reads it; CUGA_FLO_BIN to use a binary already built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${CUGA_FLO_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cuga-flo/peers}"

die() { echo "bench/peers: $*" >&2; exit 2; }
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is not installed ($2)"; }

need python3 "Python >= 3.10 with venv, for SpiffWorkflow and LangGraph"
need node "Node.js >= 18, for bpmn-engine"
need npm "npm, to install bpmn-engine"
python3 -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null \
  || die "python3 must be >= 3.10 with the venv module (apt-get install python3-venv)"

case "$repo" in
  "$cache"/*) die "the cache $cache must be outside the repository" ;;
esac
case "$cache" in
  "$repo"/*) die "the cache $cache must be outside the repository" ;;
esac
mkdir -p "$cache"

# Python peers: SpiffWorkflow 3.x and LangGraph 1.x from PyPI, in a venv of the cache.
venv="$cache/venv"
if ! "$venv/bin/python" -c 'import SpiffWorkflow, langgraph' 2>/dev/null; then
  echo "bench/peers: installing SpiffWorkflow 3.x and LangGraph 1.x into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "SpiffWorkflow>=3,<4" "langgraph>=1,<2" \
    || die "pip could not install SpiffWorkflow and LangGraph (network?)"
fi

# Node peer: bpmn-engine from npm, in the cache.
nodedir="$cache/node"
if [ ! -f "$nodedir/node_modules/bpmn-engine/package.json" ]; then
  echo "bench/peers: installing bpmn-engine into $nodedir" >&2
  mkdir -p "$nodedir"
  [ -f "$nodedir/package.json" ] || echo '{"name": "cuga-flo-peers", "private": true}' > "$nodedir/package.json"
  (cd "$nodedir" && npm install --silent --no-audit --no-fund bpmn-engine) \
    || die "npm could not install bpmn-engine (network?)"
fi

# cuga-flo: the release build (cargo builds once, then finds it up to date).
if [ -n "${CUGA_FLO_BIN:-}" ]; then
  bin="$CUGA_FLO_BIN"
else
  need cargo "Rust >= 1.89, to build cuga-flo"
  echo "bench/peers: cargo build --release" >&2
  (cd "$repo" && cargo build --release --locked --quiet) || die "cargo build --release failed"
  target="${CARGO_TARGET_DIR:-$repo/target}"
  case "$target" in /*) ;; *) target="$repo/$target" ;; esac
  bin="$target/release/cuga-flo"
fi
[ -x "$bin" ] || die "no cuga-flo binary at $bin"

# bench.py writes the models of the shapes and sizes it runs afresh (a changed generator
# takes effect) and leaves the others' models as they are.
work="$cache/work"
mkdir -p "$work"
exec "$venv/bin/python" "$here/bench.py" --cuga-flo "$bin" --node-dir "$nodedir" --work "$work" \
  --out "$here/results.md" "$@"
