#!/usr/bin/env bash
# scripts/bench.sh jpeg-pipeline: the JPEG reference workload (docs/architecture.md, Reference
# workloads) on a generated Caltech-256-like set (natural-looking 500x375 JPEGs, 10 classes x 300,
# generated once into .cache/jpeg/ and packed with stoker-pack): decode -> random_resized_crop(224)
# -> flip -> normalize. Stoker's worker production on all cores vs torchvision's ImageFolder +
# transforms in a DataLoader with num_workers = cores. About 2 minutes on 2 cores (first run: +1
# minute to generate the images).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-gen-images stoker-pack jpeg_pipeline_bench
BIN=${STOKER_BUILD_DIR:-build}
source bench/jpeg_set.sh
SECONDS_EACH=${JPEG_BENCH_SECONDS:-30}
CORES=$(nproc)

make_jpeg_set shards
tv=$(/usr/bin/python3 bench/jpeg_torchvision.py "$CACHE/images" "$SECONDS_EACH" "$CORES" |
  tail -n1)
echo "$tv"
exec "$BIN/bench/jpeg_pipeline_bench" --manifest="$CACHE/shards/manifest.json" \
  --seconds="$SECONDS_EACH" --torchvision-ips="${tv#torchvision_ips=}" "$@"
