#!/usr/bin/env bash
# scripts/bench.sh trace-recorder: nanoseconds one span costs its thread with tracing off, on,
# and on for 1 in 64 tasks, against a control loop (bench/trace_recorder_bench.cc). About 10 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh trace_recorder_bench
exec "${STOKER_BUILD_DIR:-build}/bench/trace_recorder_bench" "$@"
