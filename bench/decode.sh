#!/usr/bin/env bash
# scripts/bench.sh decode: Stoker's JPEG decode vs tjbench (libjpeg-turbo-progs) on the same
# 500x375 q90 file, one thread, RGB output, default (accurate) IDCT. About 30 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh decode_bench
bin="${STOKER_BUILD_DIR:-build}/bench/decode_bench"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" --write="$dir/bench.jpg"
# tjbench decompresses the file (to RGB, as Stoker does) for -benchtime seconds; it runs three
# times and its best "Frame rate" counts, as Stoker's best round does.
for run in 1 2 3; do
  (cd "$dir" && tjbench bench.jpg -rgb -benchtime 3 -warmup 1) >>"$dir/tjbench.log" 2>&1 || {
    cat "$dir/tjbench.log" >&2
    exit 1
  }
done
tj=$(grep -o 'Frame rate: *[0-9.]*' "$dir/tjbench.log" | awk '{print $3}' | sort -g | tail -n1)
echo "tjbench: $tj decodes/s"
exec "$bin" --jpeg="$dir/bench.jpg" --tjbench_ips="$tj" "$@"
