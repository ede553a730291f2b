#!/usr/bin/env bash
# scripts/bench.sh cluster: K = 1, 2, 4, 8, 16, 32 simulated workers (one producer thread each,
# a ready 12 KB batch every 40 ms: worker/simulated_batch.h) streaming to one trainer client
# over real gRPC on loopback; delivered batches/s vs K x the single-worker rate measured in the
# same run. About 70 s. Extra arguments go to cluster_bench (e.g. --period-ms=10).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh cluster_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/cluster_bench" --mode=cluster --workers=1,2,4,8,16,32 \
  --seconds="${CLUSTER_BENCH_SECONDS:-5}" "$@"
