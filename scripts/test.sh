#!/usr/bin/env bash
# Installs what is missing, builds, runs the whole test suite (every label but gpu), then the
# unit, integration and fuzz (corpus replay) labels again built with ASan + UBSan
# (scripts/test-sanitized.sh), then the worker stream and loader tests built with TSan
# (scripts/test-tsan.sh). Exits non-zero on any failure. `.ci/run` calls exactly this.
#
# The deployment tests (label containers) need podman, helm and the images: install-deps.sh
# --containers --deploy installs the tools, and where podman can run containers the images are
# built (scripts/images.sh; cached after the first time). Where podman cannot run, the container
# test shows as skipped, naming why.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --containers --deploy
scripts/build.sh
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/.cache/containers/containers.conf}
if podman info >/dev/null 2>&1; then
  scripts/images.sh coordinator worker trainer
else
  echo "test.sh: podman cannot run here; the container test will be skipped"
fi
status=0
ctest --test-dir "${STOKER_BUILD_DIR:-build}" --label-exclude gpu --output-on-failure \
  --parallel 2 --timeout 600 || status=$?
# The unit, integration and fuzz-replay labels again under ASan + UBSan (build-asan/).
scripts/test-sanitized.sh || status=$?
# The worker stream and trainer-client loader tests under ThreadSanitizer (build-tsan/).
scripts/test-tsan.sh || status=$?
exit "$status"
