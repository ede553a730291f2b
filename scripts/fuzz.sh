#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS (docs/fuzzing.md).
#
#   scripts/fuzz.sh NAME SECONDS [libFuzzer flags...]    e.g. scripts/fuzz.sh tar_reader 600
#   scripts/fuzz.sh --list                               the targets (tests/fuzz/corpus/*)
#
# Installs clang (install-deps.sh --fuzz), configures build-fuzz/ once (clang-14, STOKER_FUZZ:
# libFuzzer + ASan + UBSan on our code) and builds fuzz_NAME there. The run starts from the
# checked-in seeds (tests/fuzz/corpus/NAME, only read) and keeps what it finds in
# build-fuzz/corpus/NAME; a crash, leak or sanitizer report stops it and leaves the input in
# build-fuzz/artifacts/NAME/ (minimize it with -minimize_crash=1, fix the bug, then add the
# minimized input to tests/fuzz/corpus/NAME so the replay test keeps it fixed). The last lines
# printed are libFuzzer's final stats (execs/s, coverage); the whole log is
# build-fuzz/logs/NAME.log. Exit status: libFuzzer's (0: no finding).
set -euo pipefail
cd "$(dirname "$0")/.."
corpus_root=tests/fuzz/corpus
if [ "${1:-}" = --list ]; then
  ls "$corpus_root"
  exit 0
fi
if [ $# -lt 2 ] || [ ! -d "$corpus_root/${1}" ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh NAME SECONDS [libFuzzer flags...]; NAME one of:" \
    $(ls "$corpus_root") >&2
  exit 2
fi
name=$1
seconds=$2
shift 2

scripts/install-deps.sh --fuzz
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
  mkdir -p "$build"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 -DSTOKER_FUZZ=ON \
    -DSTOKER_BUILD_TESTS=OFF -DSTOKER_BUILD_BENCH=OFF -DSTOKER_BUILD_EXAMPLES=OFF \
    -DSTOKER_BUILD_PYTHON=OFF -DSTOKER_CUDA=OFF >"$build/configure.log" 2>&1 \
    || { cat "$build/configure.log" >&2; exit 1; }
fi
output=$(ninja -C "$build" -j2 --quiet "fuzz_$name" 2>&1) || { echo "$output" >&2; exit 1; }
[ "$output" = "ninja: no work to do." ] || [ -z "$output" ] || echo "$output"

work="$build/corpus/$name"
artifacts="$build/artifacts/$name"
mkdir -p "$work" "$artifacts" "$build/logs"
log="$build/logs/$name.log"
status=0
"$build/tests/fuzz/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 \
  -timeout=30 -rss_limit_mb=2048 -artifact_prefix="$artifacts/" "$@" \
  "$work" "$corpus_root/$name" >"$log" 2>&1 || status=$?
grep -E '^(stat::|Done )|^==[0-9]+== ERROR|^SUMMARY|Test unit written|FUZZ_CHECK failed' "$log" || true
echo "fuzz.sh: $name ran ${seconds}s, exit $status, log $log"
exit "$status"
