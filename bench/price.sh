#!/usr/bin/env bash
# scripts/bench.sh price: the advisor's dollars per epoch at each worker count against the
# measured ones, at the post's prices (bench/price_bench.cc). About 35 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh price_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/price_bench" "$@"
