#!/usr/bin/env bash
# scripts/bench.sh jpeg-floor: where a worker's CPU goes per image of the e2e JPEG workload
# (the generated 500x375 set of bench/jpeg-pipeline.sh), stage by stage (whole decode, 1/8-scale
# decode = the Huffman floor, fused window decode, resize, flip, float tail, payload copies,
# whole pipelines), and the best CPU per image reachable from them against torchvision's CPU per
# image, measured first with bench/e2e_torchvision.py (2 DataLoader workers, 10 batches) on the
# same files. One thread; about 2 minutes on 2 cores. Extra arguments go to jpeg_floor_bench.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-gen-images jpeg_floor_bench
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
make_jpeg_set
tv_ms() {
  /usr/bin/python3 bench/e2e_torchvision.py "$1" 2 10 "$CACHE/images" |
    /usr/bin/python3 -c 'import sys; f = dict(kv.split("=") for kv in sys.stdin.read().split()); print(1e3 * float(f["cpu_seconds"]) / int(f["images"]))'
}
tv_u8=$(tv_ms jpeg-uint8)
tv_f32=$(tv_ms jpeg-float32)
echo "torchvision (DataLoader, 2 workers): uint8 $tv_u8 ms, float32 $tv_f32 ms CPU per image"
exec "$BIN/bench/jpeg_floor_bench" --images="$CACHE/images" --torchvision_uint8_ms="$tv_u8" \
  --torchvision_float32_ms="$tv_f32" "$@"
