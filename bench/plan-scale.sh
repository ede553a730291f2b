#!/usr/bin/env bash
# scripts/bench.sh plan-scale: time to the first batch and peak RSS of the coordinator and one
# worker for synthetic datasets of 10^6, 10^8, 10^9 and 2^36 samples (8x8 images, 4 batches
# each), and 20 concurrent jobs of 10^9 samples on one worker (bench/plan_scale.py). About 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client
BIN=${STOKER_BUILD_DIR:-build}
exec /usr/bin/python3 bench/plan_scale.py "$BIN" "$@"
