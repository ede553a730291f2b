#!/usr/bin/env bash
# The worker stream and trainer-client loader tests again, built with ThreadSanitizer in
# build-tsan/ (docs/fuzzing.md, "Sanitizers"). scripts/test.sh runs it after the
# ASan + UBSan run; any data race or lock-order report fails the test that triggered it.
#
# Only these test binaries are built (GCC, -fsanitize=thread -O1, ccache like build/): the
# session, reactor and worker logic (worker_test), the worker's gRPC stream end to end
# (worker_stream_test, grpc_worker_stream_test) and the client's threads and loader
# (client_threads_test, trainer_client_test). The set is kept small: TSan slows code 5-15x and
# CI has 2 cores. gRPC, protobuf and Abseil are Debian's, not instrumented: TSan cannot see their
# synchronization. Abseil's Mutex, CondVar and Notification are made visible by a preloaded shim
# (tests/tsan_absl_sync.cc); tests/tsan.supp drops reports with a frame inside gRPC, protobuf or
# absl::Status's reference counting (never a module or function of ours). `--build-only` builds
# the binaries and runs nothing (scripts/test.sh builds them while the normal suite runs).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${STOKER_TSAN_BUILD_DIR:-build-tsan}
tests=(worker_test worker_stream_test grpc_worker_stream_test client_threads_test
  trainer_client_test)
if [ ! -f "$build/build.ninja" ]; then
  mkdir -p "$build"
  # -Wno-tsan: GCC warns that TSan does not model atomic_thread_fence (used in Abseil's headers);
  # our -Werror would turn that into an error.
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-fsanitize=thread" -DCMAKE_CXX_FLAGS="-fsanitize=thread -Wno-tsan" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DSTOKER_BUILD_BENCH=OFF \
    -DSTOKER_BUILD_EXAMPLES=OFF -DSTOKER_BUILD_PYTHON=OFF -DSTOKER_CUDA=OFF \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
fi
STOKER_BUILD_DIR=$build scripts/build.sh "${tests[@]}"
[ "${1:-}" != --build-only ] || exit 0
# Debian's Abseil is not instrumented: tests/tsan_absl_sync.cc, preloaded into every test, tells
# TSan the ordering its Mutex, CondVar and Notification give.
sync_shim=$build/libtsan_absl_sync.so
if [ ! -f "$sync_shim" ] || [ tests/tsan_absl_sync.cc -nt "$sync_shim" ]; then
  g++ -std=c++17 -O1 -fPIC -shared -Wall -Wextra -Werror tests/tsan_absl_sync.cc -o "$sync_shim" \
    -ldl
fi
case $sync_shim in /*) ;; *) sync_shim=$PWD/$sync_shim ;; esac
export LD_PRELOAD=$sync_shim
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:suppressions=$PWD/tests/tsan.supp}
ctest --test-dir "$build" -R "^($(IFS='|'; echo "${tests[*]}"))\$" --output-on-failure \
  --parallel 2 --timeout 900
