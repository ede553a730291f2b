#!/usr/bin/env bash
# scripts/bench.sh h2d: step time with the next batch's host-to-device copy overlapped with the
# current step's compute, against compute alone, and the feeder's copy rate against the pinned
# cudaMemcpy peak (bench/h2d_bench.cc). Needs a CUDA build and a GPU: exits 77 without one.
# About 20 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh h2d_bench
exec "${STOKER_BUILD_DIR:-build}/bench/h2d_bench" "$@"
