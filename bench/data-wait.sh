#!/usr/bin/env bash
# scripts/bench.sh data-wait: a consumer with a fixed 20 ms step; 4 simulated workers whose
# rates sum to 1.1x its demand; the fraction of the consumer's time spent waiting for data,
# over several epochs; and the negative control at 0.9x demand (about 10 % wait), 3 alternating
# rounds each; medians. The producers burn CPU (half a core in all) for part of each batch's
# time (--simulate-batch-mode=sleep: none). About 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh cluster_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/cluster_bench" --mode=data-wait --step-ms=20 --capacity=1.1 \
  --seconds="${DATA_WAIT_BENCH_SECONDS:-6}" --rounds="${ROUNDS:-3}" "$@"
