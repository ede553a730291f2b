#!/usr/bin/env bash
# Configures (once) and builds the given targets (all when none) in build/. Used by demo.sh,
# test.sh and bench.sh. Quiet unless something is rebuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${STOKER_BUILD_DIR:-build}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  mkdir -p "$BUILD_DIR"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$BUILD_DIR/configure.log" 2>&1 \
    || { cat "$BUILD_DIR/configure.log" >&2; exit 1; }
fi
# --quiet drops progress lines; the one line left on a no-op build is dropped too.
output=$(ninja -C "$BUILD_DIR" --quiet "$@" 2>&1) || { echo "$output" >&2; exit 1; }
[ "$output" = "ninja: no work to do." ] || [ -z "$output" ] || echo "$output"
