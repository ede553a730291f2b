#!/usr/bin/env bash
# scripts/bench.sh e2e-two-host: the two-host variant of e2e. The workers (and the coordinator)
# and the trainer client run in two network namespaces made for the run and removed after it,
# joined by a veth pair shaped by tc tbf to 1 Gbit/s, then 10 Gbit/s; per rate, alternating
# rounds of iperf3 (-l 1M -Z) and Stoker with uint8 224x224x3 batches (simulated producers, so
# the link and the wire path are measured; plus the real JPEG uint8 pipeline of bench/e2e.sh),
# medians, delivered img/s and Gbit/s against the link (bench/e2e_two_host.py). Needs root (ip
# netns, tc). About 3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-gen-images stoker-pack
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
[ "$(id -u)" = 0 ] || { echo "bench/e2e-two-host.sh: needs root for ip netns and tc" >&2; exit 1; }
make_jpeg_set shards
/usr/bin/python3 bench/e2e_two_host.py "$BIN" --manifest "$CACHE/shards/manifest.json" "$@"
