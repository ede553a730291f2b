#!/usr/bin/env bash
# scripts/bench.sh decoded-cache: a worker's CPU per image with the decoded cache against without
# (docs/benchmarks/decoded-cache.md), one producer thread on the generated JPEG set
# (bench/jpeg_set.sh): one job over several epochs, and four jobs on the same data started
# together; alternating rounds, medians, minor page faults beside CPU. About 2 minutes on 2 cores
# (first run: +1 minute to generate the images). Extra arguments go to decoded_cache_bench
# (--images, --epochs, --jobs, --rounds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-gen-images stoker-pack decoded_cache_bench
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
make_jpeg_set shards
exec "$BIN/bench/decoded_cache_bench" --manifest="$CACHE/shards/manifest.json" "$@"
