#!/usr/bin/env bash
# The tests of the label `sanitized` again, built with AddressSanitizer and
# UndefinedBehaviorSanitizer (STOKER_SANITIZE) in build-asan/: every fuzz corpus replay and the
# parser, coordinator-state, stream and loader tests that cmake/StokerSanitizers.cmake lists
# (STOKER_SANITIZED_TESTS, with why). scripts/test.sh runs it after the normal suite; any
# sanitizer report fails the test that triggered it.
#
# Only those test binaries are built (the target sanitized_tests), with ccache like build/;
# benchmarks, examples and the Python module are left out. `--build-only` builds them and runs
# nothing (scripts/test.sh builds them while the normal suite runs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${STOKER_ASAN_BUILD_DIR:-build-asan}
# The generated protobuf code comes compiled from build/ (proto/CMakeLists.txt, STOKER_PROTO_FROM).
release=$PWD/${STOKER_BUILD_DIR:-build}
scripts/build.sh stoker_proto etcd_proto
if [ ! -f "$build/build.ninja" ] ||
   ! grep -qx "STOKER_PROTO_FROM:PATH=$release" "$build/CMakeCache.txt"; then
  mkdir -p "$build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_SANITIZE=ON \
    -DSTOKER_BUILD_BENCH=OFF -DSTOKER_BUILD_EXAMPLES=OFF -DSTOKER_BUILD_PYTHON=OFF \
    -DSTOKER_CUDA=OFF -DSTOKER_PROTO_FROM="$release" >"$build/configure.log" 2>&1 \
    || { cat "$build/configure.log" >&2; exit 1; }
fi
STOKER_BUILD_DIR=$build scripts/build.sh sanitized_tests
[ "${1:-}" != --build-only ] || exit 0
# Leaks, UB and memory errors all fail the test; reports carry a stack trace.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" -L '^sanitized$' --output-on-failure --parallel 2 --timeout 900
