#!/usr/bin/env bash
# scripts/bench.sh e2e: the blur workload end to end between separate processes on loopback
# (coordinator, 2 workers with 1 thread each, stoker-bench-client, no training step) against
# torchvision's DataLoader with 2 worker processes; delivered img/s and CPU ms per image of the
# workers and the client; alternating rounds, medians (bench/e2e.py). About 2 minutes.
# Not yet: the JPEG workload, float16/uint8 outputs, the two-host variant.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client
exec /usr/bin/python3 bench/e2e.py "${STOKER_BUILD_DIR:-build}" "$@"
