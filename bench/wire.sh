#!/usr/bin/env bash
# scripts/bench.sh wire: delivered GB/s of 9.6 MB uint8 batches (64 x 224x224x3) from one
# simulated worker to the trainer client over gRPC on loopback, vs iperf3's single TCP stream on
# 127.0.0.1 measured in the same run. About 25 s.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh cluster_bench
BIN=${STOKER_BUILD_DIR:-build}
SECONDS_EACH=${WIRE_BENCH_SECONDS:-8}

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
iperf3 --server --bind 127.0.0.1 --port "$port" --one-off >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
json=
for _ in $(seq 1 25); do  # the server needs a moment to listen
  if json=$(timeout 60 iperf3 --client 127.0.0.1 --port "$port" --time "$SECONDS_EACH" --json \
      2>/dev/null); then
    break
  fi
  json=
  sleep 0.2
done
[ -n "$json" ] || { echo "bench/wire.sh: iperf3 did not run" >&2; exit 1; }
gbps=$(/usr/bin/python3 -c \
  'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9)' \
  <<<"$json")
echo "iperf3: single TCP stream on 127.0.0.1 for ${SECONDS_EACH} s: ${gbps} Gbit/s"
exec "$BIN/bench/cluster_bench" --mode=wire --iperf-gbps="$gbps" --seconds="$SECONDS_EACH" "$@"
