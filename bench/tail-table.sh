#!/usr/bin/env bash
# scripts/bench.sh tail-table: the fused to_float/normalize tail alone (ConvertThroughTable),
# 224x224x3 uint8 -> float32 CHW and HWC, into a batch-sized output and into one cache-resident
# slot: the portable build against the AVX-512 VBMI one (streaming and ordinary stores), same
# run, alternating rounds, one thread. About 1 minute. Extra arguments go to tail_table_bench
# (--rounds, --seconds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh tail_table_bench
exec "${STOKER_BUILD_DIR:-build}/bench/tail_table_bench" "$@"
