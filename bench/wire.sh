#!/usr/bin/env bash
# scripts/bench.sh wire: delivered Gbit/s of 9.6 MB uint8 batches (64 x 224x224x3) from one
# worker process (one producer thread, simulated production: --simulate-batch-ms=0, so the
# batches are ready at once) to a separate stoker-bench-client process over gRPC on loopback,
# vs iperf3's single TCP stream on 127.0.0.1 with 1 MiB writes and zero-copy sends (-l 1M -Z).
# ROUNDS (default 5) alternating rounds of iperf3 then Stoker, WIRE_BENCH_SECONDS (default 5)
# each; medians. Stoker's figure is the client's images/s over its whole run (job open and first
# batch included); beside it the worker process's CPU ms per batch (/proc/PID/stat over the
# round). WIRE_BASELINE_WORKER=PATH adds a third contestant each round: another stoker-worker
# binary (e.g. a build of an older commit) on the same coordinator, the client pinned to it
# with --workers: an A/B of the worker's send path in the same run. About 1 minute (2 with a
# baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client
BIN=${STOKER_BUILD_DIR:-build}
SECONDS_EACH=${WIRE_BENCH_SECONDS:-5}
ROUNDS=${ROUNDS:-5}
BATCH_BYTES=$((64 * 224 * 224 * 3))
PY=/usr/bin/python3

dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
wait_file() {  # the port file a server writes once it listens
  for _ in $(seq 1 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  echo "bench/wire.sh: $1 was not written" >&2; exit 1
}
free_port() {
  $PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

"$BIN/coordinator/stoker-coordinator" --insecure --listen 127.0.0.1:0 --port-file "$dir/coordinator.port" \
  --data-root "$dir" >"$dir/coordinator.log" 2>&1 &
pids+=($!)
wait_file "$dir/coordinator.port"
coordinator=127.0.0.1:$(cat "$dir/coordinator.port")
start_worker() {  # binary name
  "$1" --insecure --coordinator "$coordinator" --listen 127.0.0.1:0 --threads 1 \
    --simulate-batch-ms 0 --port-file "$dir/$2.port" --data-root "$dir" >"$dir/$2.log" 2>&1 &
  pids+=($!)
  echo $! >"$dir/$2.pid"
  wait_file "$dir/$2.port"
}
start_worker "$BIN/worker/stoker-worker" worker
BASELINE=${WIRE_BASELINE_WORKER:-}
[ -z "$BASELINE" ] || start_worker "$BASELINE" baseline
cpu_ticks() {  # utime + stime of a process, clock ticks
  awk '{sub(/.*\) /, ""); print $12 + $13}' "/proc/$1/stat"
}

iperf_gbps() {
  local port json
  port=$(free_port)
  iperf3 --server --bind 127.0.0.1 --port "$port" --one-off >/dev/null 2>&1 &
  local server=$!
  json=
  for _ in $(seq 1 25); do  # the server needs a moment to listen
    # A loaded machine may answer before the server listens with an error report (no
    # sum_received): retry then too.
    if json=$(timeout 60 iperf3 --client 127.0.0.1 --port "$port" --time "$SECONDS_EACH" \
        --length 1M --zerocopy --json 2>/dev/null) && grep -q sum_received <<<"$json"; then
      break
    fi
    json=
    sleep 0.2
  done
  [ -n "$json" ] || kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  [ -n "$json" ] || { echo "bench/wire.sh: iperf3 did not run" >&2; exit 1; }
  $PY -c 'import json, sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9)' <<<"$json"
}

stoker_gbps() {  # round, worker name: prints Gbit/s and the worker's CPU ms per batch
  local round=$1 name=$2 batches pid before
  # About SECONDS_EACH at ~10 Gbit/s; the client's own wall time is what counts.
  batches=$((SECONDS_EACH * 130))
  pid=$(cat "$dir/$name.pid")
  before=$(cpu_ticks "$pid")
  "$BIN/tools/stoker-bench-client" --insecure --coordinator "$coordinator" --job "wire-$name-$round" \
    --pipeline "" --num-samples $((batches * 64 + 64)) --max-batches "$batches" \
    --workers "127.0.0.1:$(cat "$dir/$name.port")" \
    --prefetch-mb 80 --report-json "$dir/report-$name-$round.json" >"$dir/client-$round.log" 2>&1 \
    || { cat "$dir/client-$round.log" >&2; exit 1; }
  $PY -c "import json, os; r = json.load(open('$dir/report-$name-$round.json')); \
print(r['batches_per_second'] * $BATCH_BYTES * 8 / 1e9, \
      1e3 * ($(cpu_ticks "$pid") - $before) / os.sysconf('SC_CLK_TCK') / r['batches'])"
}

echo "wire: $ROUNDS alternating rounds of ${SECONDS_EACH} s; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
iperf=() stoker=() cpu=() base=() base_cpu=()
for round in $(seq 1 "$ROUNDS"); do
  i=$(iperf_gbps)
  read -r s c <<<"$(stoker_gbps "$round" worker)"
  iperf+=("$i") stoker+=("$s") cpu+=("$c")
  line=$(printf 'round %d: iperf3 -l 1M -Z %.2f Gbit/s, stoker worker -> client process %.2f Gbit/s (worker %.2f CPU ms/batch)' \
    "$round" "$i" "$s" "$c")
  if [ -n "$BASELINE" ]; then
    read -r s c <<<"$(stoker_gbps "$round" baseline)"
    base+=("$s") base_cpu+=("$c")
    line+=$(printf ', baseline worker %.2f Gbit/s (%.2f CPU ms/batch)' "$s" "$c")
  fi
  echo "$line"
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
$PY - "${iperf[*]}" "${stoker[*]}" "${cpu[*]}" "${base[*]}" "${base_cpu[*]}" "$BATCH_BYTES" <<'PYEOF'
import statistics, sys
iperf, stoker, cpu, base, base_cpu = ([float(x) for x in a.split()] for a in sys.argv[1:6])
i, s = statistics.median(iperf), statistics.median(stoker)
line = (f"RESULT name=wire batch_bytes={sys.argv[6]} rounds={len(iperf)} "
        f"stoker_gbit_per_s={s:.3f} iperf_gbit_per_s={i:.3f} "
        f"worker_cpu_ms_per_batch={statistics.median(cpu):.3f}")
if base:
    b = statistics.median(base)
    line += (f" baseline_gbit_per_s={b:.3f} baseline_vs_iperf={b / i:.4f} "
             f"baseline_worker_cpu_ms_per_batch={statistics.median(base_cpu):.3f}")
print(line + f" vs_iperf={s / i:.4f}")
PYEOF
