#!/usr/bin/env bash
# scripts/bench.sh decode-crop: fused decode-and-crop (augment/pipeline.h) vs decode-then-crop,
# the same pipeline and samples, one thread, on 2.1-2.9 MP photos made at start from skimage's
# photographs (python3-skimage). Alternating rounds, medians. About 1-2 minutes on 2 cores.
# Extra arguments go to decode_crop_bench (--rounds, --samples).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh decode_crop_bench
exec "${STOKER_BUILD_DIR:-build}/bench/decode_crop_bench" "$@"
