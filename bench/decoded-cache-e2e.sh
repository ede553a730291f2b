#!/usr/bin/env bash
# scripts/bench.sh decoded-cache-e2e: what the workers' decoded cache saves, end to end
# (coordinator, one worker with one thread, stoker-bench-client, mutual TLS): one job of 3 epochs
# (worker CPU per image of epochs 2-3 against epoch 1) and a sweep of 4 jobs started together, each
# with the job's cache on and off, alternating, 3 rounds; two recipes (a fixed resize in the prefix,
# and random_resized_crop right after decode) on the generated Caltech-256-like JPEG set
# (bench/jpeg_set.sh). Extra arguments go to bench/decoded_cache_e2e.py (--plaintext, --pretouch,
# --aligned-sweep BLOCK, --cache-bytes N, --rounds N, --recipe NAME). About 10 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-gen-images stoker-pack
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
make_jpeg_set shards
exec /usr/bin/python3 bench/decoded_cache_e2e.py "$BIN" \
  --manifest "$CACHE/shards/manifest.json" "$@"
