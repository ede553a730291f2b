#!/usr/bin/env bash
# scripts/bench.sh cluster: K = 1, 2, 4, 8, 16, 32 simulated workers (one producer thread each,
# a 12 KB batch every 40 ms at most: worker/simulated_batch.h) streaming to one trainer client
# over real gRPC on loopback, all in one process; delivered batches/s vs the sum of the
# producers' nominal rates (K x 25/s). The producers burn CPU (half a core in all, whatever K)
# for part of each batch's time, so they compete for the cores with the protocol; the process's
# cores and its CPU per batch beyond that burn are printed beside. Negative control in each
# round: K = 32 with the producers asking for 1.5x the machine's cores (must read low). 3
# alternating rounds, medians; about 2 minutes. Extra arguments go to cluster_bench (e.g.
# --simulate-batch-mode=sleep for the protocol alone, --producer-cores=0.25, --period-ms=10).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh cluster_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/cluster_bench" --mode=cluster --workers=1,2,4,8,16,32 \
  --seconds="${CLUSTER_BENCH_SECONDS:-3}" --rounds="${ROUNDS:-3}" "$@"
