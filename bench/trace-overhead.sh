#!/usr/bin/env bash
# scripts/bench.sh trace-overhead: CPU per image of a batch's worker and client path with batch
# timelines off vs on for every batch, alternating rounds (bench/trace_overhead_bench.cc); the
# RESULT line's ratio is on/off (issue 26: <= 1.01). About 15 s. Extra arguments go to the bench
# (e.g. --pipeline="to_float, gaussian_blur(ksize=11)*10" for the demo's blur workload).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh trace_overhead_bench
exec "${STOKER_BUILD_DIR:-build}/bench/trace_overhead_bench" "$@"
