#!/usr/bin/env bash
# scripts/bench.sh straggler: 4 simulated workers (a batch every 40 ms at most), one at a quarter
# of that speed, several epochs; delivered batches/s / the sum of the four rates, with credit
# balancing on and (negative control) off in 3 alternating rounds each; medians. The producers
# burn CPU (half a core in all) for part of each batch's time (--simulate-batch-mode=sleep: none).
# About 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh cluster_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/cluster_bench" --mode=straggler --slow-factor=4 \
  --seconds="${STRAGGLER_BENCH_SECONDS:-6}" --rounds="${ROUNDS:-3}" "$@"
