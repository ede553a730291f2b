#!/usr/bin/env bash
# scripts/bench.sh advisor: the coordinator's worker advice vs the ideal computed from rates this
# process measures (bench/advisor_bench.cc). Two scenarios of 3-30 s each.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh advisor_bench
BIN=${STOKER_BUILD_DIR:-build}
exec "$BIN/bench/advisor_bench" "$@"
