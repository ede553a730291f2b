#!/usr/bin/env bash
# scripts/bench.sh compression: per-stream payload compression (none, lz4, zstd, auto) of the
# JPEG uint8 pipeline over a 1 Gbit/s link shaped by tc tbf between two network namespaces made
# for the run (bench/compression.py; the link of bench/e2e_two_host.py): delivered img/s, CPU ms
# per image on the workers and on the client, wire/raw bytes; alternating rounds, medians.
# Needs root (ip netns, tc). About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-gen-images stoker-pack
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
[ "$(id -u)" = 0 ] || { echo "bench/compression.sh: needs root for ip netns and tc" >&2; exit 1; }
make_jpeg_set shards
/usr/bin/python3 bench/compression.py "$BIN" --manifest "$CACHE/shards/manifest.json" "$@"
