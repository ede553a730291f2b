#!/usr/bin/env bash
# Installs what is missing, builds, runs the whole test suite (every label but gpu), then the
# parser, coordinator-state, stream and loader tests and the fuzz corpus replays again built with
# ASan + UBSan (scripts/test-sanitized.sh), then the worker stream and loader tests built with
# TSan (scripts/test-tsan.sh). Exits non-zero on any failure, and ends with how long each stage
# took. `.ci/run` calls exactly this.
#
# The benchmarks (target `benchmarks`, not in `all`) and the two sanitizer trees compile in the
# background, at the lowest priority, while the images are built and the normal suite runs: that
# suite spends much of its time waiting on processes and sockets, and on a 2-core machine the
# compiles fill those gaps instead of following them. The images build beside the suite too, and
# the deployment tests run last, once the images are there.
#
# The deployment tests (label containers) need podman, helm and the images: install-deps.sh
# --containers --deploy installs the tools, and where podman can run containers the images are
# built (scripts/images.sh; cached after the first time). Where podman cannot run, the container
# test shows as skipped, naming why.
set -euo pipefail
cd "$(dirname "$0")/.."
stages=()
stage_start=$SECONDS
stage_done() {  # Records how long the stage named $1 took.
  stages+=("$1 $(((SECONDS - stage_start) / 60))m$(((SECONDS - stage_start) % 60))s")
  stage_start=$SECONDS
}
scripts/install-deps.sh --containers --deploy --etcd
stage_done install
scripts/build.sh
stage_done build
mkdir -p .cache
background_log=.cache/background-builds.log
# In a session of its own, so that leaving early (set -e) stops the whole group, ninja included.
setsid -w nice -n 19 bash -c 'scripts/test-sanitized.sh --build-only &&
  scripts/test-tsan.sh --build-only && scripts/build.sh benchmarks' \
  >"$background_log" 2>&1 &
background_builds=$!
trap 'kill -- "-$background_builds" 2>/dev/null || true' EXIT
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/.cache/containers/containers.conf}
# The images build beside the suite (much of their time is apt and podman waiting on the disk and
# the network); the tests that need them (label containers) run once they are there, and so does
# the one that builds in build-python/ as the images' wheel does (label packaging).
images_log=.cache/images.log
if podman info >/dev/null 2>&1; then
  setsid -w scripts/images.sh coordinator worker trainer >"$images_log" 2>&1 &
  images=$!
  trap 'kill -- "-$background_builds" "-$images" 2>/dev/null || true' EXIT
else
  echo "test.sh: podman cannot run here; the container tests will be skipped"
  images=
fi
status=0
run_ctest() {  # ctest over build/ with the given label options.
  ctest --test-dir "${STOKER_BUILD_DIR:-build}" --output-on-failure --parallel 2 --timeout 600 "$@"
}
run_ctest --label-exclude 'gpu|containers|packaging' || status=$?
stage_done tests
if [ -n "$images" ] && ! wait "$images"; then
  cat "$images_log" >&2
  status=1
fi
stage_done images
run_ctest --label-regex 'containers|packaging' --label-exclude gpu || status=$?
stage_done container-and-packaging-tests
if ! wait "$background_builds"; then
  cat "$background_log" >&2
  status=1
fi
stage_done background-builds
# The label `sanitized` again under ASan + UBSan (build-asan/).
scripts/test-sanitized.sh || status=$?
stage_done asan
# The worker stream and trainer-client loader tests under ThreadSanitizer (build-tsan/).
scripts/test-tsan.sh || status=$?
stage_done tsan
echo "test.sh: $(IFS=,; echo "${stages[*]}" | sed 's/,/, /g') (total $((SECONDS / 60))m)"
exit "$status"
