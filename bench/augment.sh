#!/usr/bin/env bash
# scripts/bench.sh augment: the blur reference workload, one thread: Stoker vs torchvision
# (bench/augment_torchvision.py) vs OpenCV (inside augment_bench). About 1 minute.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh augment_bench
# Both sides per second of CPU time, or both of wall time with --wall_clock.
clock=cpu
for arg in "$@"; do [ "$arg" = --wall_clock ] && clock=wall; done
tv=$(/usr/bin/python3 bench/augment_torchvision.py "${TORCHVISION_SECONDS:-8}" "$clock" | tail -n1)
echo "$tv"
exec "${STOKER_BUILD_DIR:-build}/bench/augment_bench" "--torchvision_ips=${tv#torchvision_ips=}" "$@"
