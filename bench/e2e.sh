#!/usr/bin/env bash
# scripts/bench.sh e2e: end to end between separate processes on loopback (coordinator, 2
# workers with 1 thread each, stoker-bench-client, no training step) against torchvision's
# DataLoader with 2 worker processes, same pipeline and resize filter; delivered img/s and CPU
# ms per image of the workers and the client after two warm-up batches on both sides (whole-run
# figures beside them, and minor page faults per image in the same window), and a plain-TCP receive floor (iperf3 taking the same bytes at the same
# rate); 3 alternating rounds, medians (bench/e2e.py). The workers' floor beside them: the
# 1/8-scale decode of the same JPEGs (jpeg_floor_bench's `eighth` stage, one thread, run once).
# Workloads: blur (float32), JPEG float32 CHW (tail forced on the workers, the tail on the
# client, the tail placed automatically), JPEG float16 CHW and JPEG uint8 (the generated
# Caltech-256-like set of bench/jpeg-pipeline.sh, cached in .cache/jpeg/). The JPEG workloads run
# under mutual TLS, as deployed, then plaintext (the second column): one RESULT line per workload
# and security (tls=on|off). Then JPEG uint8 and float32 auto-placed again, on the same files
# packed with --restart-markers (workers decode only the restart intervals a crop needs), with
# the 1/8-scale decode of those files as their floor; the last line is the plaintext uint8 one.
# About 16 minutes (first run: +1 minute to generate the images).
# The two-host variant (network namespaces, rate-limited veth): bench/e2e-two-host.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-gen-images stoker-pack \
  augment_bench jpeg_floor_bench
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
make_jpeg_set shards
make_jpeg_set shards-restart
# The 1/8-scale decode of the JPEGs as stored (extra flags: as stored with restart markers).
eighth_ms() {
  "$BIN/bench/jpeg_floor_bench" --images="$CACHE/images" --count=200 --rounds=3 "$@" |
    sed -n 's/^RESULT .* eighth_us=\([0-9.]*\).*/\1/p' | awk '{ print $1 / 1000 }'
}
decode_floor_ms=$(eighth_ms)
restart_floor_ms=$(eighth_ms --restart_markers)
echo "1/8-scale decode floor: $decode_floor_ms CPU ms per image (jpeg_floor_bench, one thread);" \
  "$restart_floor_ms with restart markers"
/usr/bin/python3 bench/e2e.py "$BIN" --workload blur "$@"
for security in tls plaintext; do
  for workload in jpeg-float32 jpeg-float16 jpeg-float32-tail jpeg-float32-auto jpeg-uint8; do
    /usr/bin/python3 bench/e2e.py "$BIN" --workload "$workload" --batches 40 \
      --torchvision-batches 20 --manifest "$CACHE/shards/manifest.json" --images "$CACHE/images" \
      --decode-floor-ms "$decode_floor_ms" \
      $([ "$security" = plaintext ] && echo --plaintext) "$@"
  done
done
for security in tls plaintext; do
  for workload in jpeg-float32-auto jpeg-uint8; do
    /usr/bin/python3 bench/e2e.py "$BIN" --workload "$workload" --batches 40 \
      --torchvision-batches 20 --manifest "$CACHE/shards-restart/manifest.json" \
      --images "$CACHE/images" --decode-floor-ms "$restart_floor_ms" \
      $([ "$security" = plaintext ] && echo --plaintext) "$@"
  done
done
