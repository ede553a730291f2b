#!/usr/bin/env bash
# scripts/bench.sh e2e-detection: the detection recipe end to end between separate processes on
# loopback, against torchvision's DataLoader (bench/e2e.py's workload detection-uint8): a
# generated COCO-style set of 1,600 640x480 JPEG scenes of shapes (stoker-gen-images
# --coco-images --coco-jpeg, cached in .cache/coco-jpeg/), packed with its annotations
# (stoker-pack --coco); Stoker: a coordinator, 2 workers with 1 thread each and
# stoker-bench-client naming the fields image, boxes and box_labels; torchvision: a DataLoader
# with 2 worker processes over the same JPEGs and instances.json. Both run the detection
# references' train transforms (bench/detection_recipe.sh; the torchvision side is
# bench/augment_recipes_torchvision.py's), resized to 512x512, uint8 on the wire, boxes moved
# along. Mutual TLS, then plaintext; 3 alternating rounds, medians; CPU ms per image of workers +
# client against the DataLoader's processes. About 8 minutes (first run: +1 minute for the set).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-gen-images stoker-pack
BIN=${STOKER_BUILD_DIR:-build}
CACHE=${STOKER_CACHE_DIR:-.cache}/coco-jpeg
source bench/detection_recipe.sh
if [ ! -f "$CACHE/scenes/instances.json" ]; then
  "$BIN/tools/stoker-gen-images" --output="$CACHE/scenes" --coco-images=1600 --coco-jpeg \
    --width=640 --height=480
fi
mkdir -p "$CACHE/shards"  # a root must exist; the output one lets a rerun reuse shards
"$BIN/tools/stoker-pack" --coco="$CACHE/scenes/instances.json" --input="$CACHE/scenes" \
  --output="$CACHE/shards" --data-root="$(realpath "$CACHE/scenes")" \
  --data-root="$(realpath "$CACHE/shards")" >/dev/null
for security in tls plaintext; do
  /usr/bin/python3 bench/e2e.py "$BIN" --workload detection-uint8 --batches 20 \
    --torchvision-batches 8 --manifest "$CACHE/shards/manifest.json" \
    --images "$CACHE/scenes" --annotations "$CACHE/scenes/instances.json" \
    --pipeline "$DETECTION_UINT8" $([ "$security" = plaintext ] && echo --plaintext) "$@"
done
