#!/usr/bin/env bash
# Installs what is missing, builds, runs the whole test suite (every label but gpu). Exits
# non-zero on any failure. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
ctest --test-dir "${STOKER_BUILD_DIR:-build}" --label-exclude gpu --output-on-failure \
  --parallel 2 --timeout 600
