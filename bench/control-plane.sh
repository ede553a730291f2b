#!/usr/bin/env bash
# scripts/bench.sh control-plane: how much one coordinator can hand out. The coordinator runs
# pinned to one core (taskset -c 0), journal on, against separate driver processes
# (bench/control_plane_bench.cc, gRPC callback API, pinned to the other cores) that play 1,000
# simulated workers and the 256 trainer ranks of one job: LeaseTasks of up to 32 tasks, then the
# rank's ClientHeartbeat reporting them consumed (journaled), and every worker's heartbeat every
# 500 ms. Rounds alternate journal on / journal off (the comparison in the same run). Reports
# the most tasks completed per second (drivers as fast as the coordinator answers: saturation),
# per coordinator CPU-second, and, in paced rounds at CONTROL_PLANE_TARGET tasks/s (default
# 20,000), the p99 LeaseTasks latency twice: as the drivers see it (client to client, gRPC and
# both processes' scheduling included) and as the coordinator sees it (handler entry to reply,
# from its stoker_coordinator_rpc_seconds histogram, interpolated within a bucket). At
# saturation the latency only measures the queue. The machine's load average is printed with
# the figures. About 2 minutes. CONTROL_PLANE_SECONDS (per round, default 8),
# CONTROL_PLANE_DRIVERS (default 2) and CONTROL_PLANE_ROUNDS (default 3) change the run;
# CONTROL_PLANE_COORDINATOR and CONTROL_PLANE_DRIVER name other binaries (an older build, for a
# before/after comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh stoker-coordinator control_plane_bench
BIN=${STOKER_BUILD_DIR:-build}
COORDINATOR=${CONTROL_PLANE_COORDINATOR:-$BIN/coordinator/stoker-coordinator}
DRIVER=${CONTROL_PLANE_DRIVER:-$BIN/bench/control_plane_bench}
SECS=${CONTROL_PLANE_SECONDS:-8}
DRIVERS=${CONTROL_PLANE_DRIVERS:-2}
ROUNDS=${CONTROL_PLANE_ROUNDS:-3}
TARGET=${CONTROL_PLANE_TARGET:-20000}
WORKERS=1000
RANKS=256
CORES=$(nproc)
DRIVER_CORES=$([ "$CORES" -gt 1 ] && echo "1-$((CORES - 1))" || echo 0)
dir=$(mktemp -d)
coordinator_pid=""
cleanup() {
  [ -n "$coordinator_pid" ] && kill "$coordinator_pid" 2>/dev/null && wait "$coordinator_pid" || true
  rm -rf "$dir"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run_round LABEL JOURNAL_FLAG TASKS_PER_S: one coordinator, the drivers, then "ROUND label
# cpu_ticks ticks_per_s" and the drivers' DRIVER lines appended to $dir/rounds.txt.
run_round() {
  local label=$1 journal=$2 rate=$3
  rm -f "$dir/port" "$dir/journal"
  local metrics_port
  metrics_port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  taskset -c 0 "$COORDINATOR" --listen=127.0.0.1:0 --port-file="$dir/port" \
    --heartbeat-interval-ms=500 --worker-timeout-ms=30000 --lease-duration-ms=60000 \
    --max-tasks-per-lease=32 --insecure --metrics-port="$metrics_port" --data-root="$dir" $journal \
    >"$dir/coordinator.log" 2>&1 &
  coordinator_pid=$!
  for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
  [ -s "$dir/port" ] || { cat "$dir/coordinator.log" >&2; exit 1; }
  local address="127.0.0.1:$(cat "$dir/port")" pids=() before after
  before=$(cpu_ticks "$coordinator_pid")
  for d in $(seq 0 $((DRIVERS - 1))); do
    taskset -c "$DRIVER_CORES" "$DRIVER" --coordinator="$address" \
      --name="d$d" --world-size=$RANKS --first-rank=$((d * RANKS / DRIVERS)) \
      --ranks=$((RANKS / DRIVERS)) --workers=$((WORKERS / DRIVERS)) --seconds="$SECS" \
      --tasks-per-s=$((rate / DRIVERS)) \
      >"$dir/driver$d.txt" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  after=$(cpu_ticks "$coordinator_pid")
  # The coordinator's own LeaseTasks latency histogram, scraped after the drivers stopped.
  /usr/bin/python3 - "http://127.0.0.1:$metrics_port/metrics" >"$dir/server.txt" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=30).read().decode()
pattern = r'stoker_coordinator_rpc_seconds_bucket\{method="LeaseTasks",le="([^"]+)"\} (\S+)'
print("SERVER " + ",".join(f"{le}:{count}" for le, count in re.findall(pattern, text)))
PY
  kill "$coordinator_pid"; wait "$coordinator_pid" || true; coordinator_pid=""
  echo "ROUND $label $(( after - before )) $(getconf CLK_TCK) $(cut -d' ' -f1 /proc/loadavg)" \
    >>"$dir/rounds.txt"
  cat "$dir"/driver*.txt "$dir/server.txt" >>"$dir/rounds.txt"
}

for _ in $(seq "$ROUNDS"); do
  run_round journal "--journal=$dir/journal" 0
  run_round memory "" 0
  run_round paced "--journal=$dir/journal" "$TARGET"
done

/usr/bin/python3 - "$dir/rounds.txt" "$WORKERS" "$RANKS" "$(nproc)" "$TARGET" <<'PY'
import math, statistics, sys
path, workers, ranks, cores, target = sys.argv[1:6]
rounds = []
for line in open(path):
    parts = line.split()
    if parts[0] == "ROUND":
        rounds.append({"label": parts[1], "cpu": int(parts[2]) / int(parts[3]),
                       "load": float(parts[4]), "drivers": [], "server": []})
    elif parts[0] == "DRIVER":
        kv = dict(p.split("=", 1) for p in parts[1:])
        rounds[-1]["drivers"].append(kv)
    elif parts[0] == "SERVER" and len(parts) > 1:
        rounds[-1]["server"] = [(float(le), float(n)) for le, n in
                                (b.split(":") for b in parts[1].split(","))]

def bucket_quantile(buckets, q):
    """The q-quantile of a cumulative Prometheus histogram, linear within its bucket (ms)."""
    if not buckets or buckets[-1][1] == 0:
        return float("nan")
    want, lower, below = q * buckets[-1][1], 0.0, 0.0
    for le, count in buckets:
        if count >= want:
            if math.isinf(le):
                return lower * 1000
            return (lower + (le - lower) * (want - below) / max(count - below, 1)) * 1000
        lower, below = le, count
    return float("nan")

def summary(r):
    tasks = sum(int(d["tasks"]) for d in r["drivers"])
    secs = max(float(d["seconds"]) for d in r["drivers"])
    lat = sorted(int(x) for d in r["drivers"] for x in d["lease_us"].split(",") if x)
    errors = sum(int(d["errors"]) for d in r["drivers"])
    # Paced leases not sent because every rank of the driver had one in flight (drivers older
    # than the callback-API one do not report it).
    skipped = sum(int(d.get("skipped", 0)) for d in r["drivers"])
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1000 if lat else float("nan")
    return {"tps": tasks / secs, "per_cpu": tasks / r["cpu"] if r["cpu"] else float("nan"),
            "busy": r["cpu"] / secs, "p99": p99, "server_p99": bucket_quantile(r["server"], 0.99),
            "errors": errors, "skipped": skipped, "load": r["load"]}
by = {"journal": [], "memory": [], "paced": []}
for r in rounds:
    s = summary(r)
    by[r["label"]].append(s)
    print(f"{r['label']:8s} {s['tps']:9.0f} tasks/s  {s['per_cpu']:9.0f} tasks/CPU-s  "
          f"coordinator busy {s['busy']:.2f} cores  LeaseTasks p99 {s['p99']:.2f} ms driver-side, "
          f"{s['server_p99']:.2f} ms coordinator-side  errors {s['errors']}  "
          f"skipped {s['skipped']}  load {s['load']:.1f}")
def med(label, key):
    return statistics.median(s[key] for s in by[label])
print(f"RESULT name=control-plane workers={workers} ranks={ranks} cores={cores} "
      f"tasks_per_s={med('journal', 'tps'):.0f} tasks_per_cpu_s={med('journal', 'per_cpu'):.0f} "
      f"saturated_lease_p99_ms={med('journal', 'p99'):.2f} "
      f"coordinator_busy={med('journal', 'busy'):.2f} paced_target={target} "
      f"paced_tasks_per_s={med('paced', 'tps'):.0f} lease_p99_ms={med('paced', 'p99'):.2f} "
      f"server_lease_p99_ms={med('paced', 'server_p99'):.2f} "
      f"paced_coordinator_busy={med('paced', 'busy'):.2f} "
      f"memory_tasks_per_s={med('memory', 'tps'):.0f} "
      f"journal_vs_memory={med('journal', 'tps') / med('memory', 'tps'):.2f} "
      f"load_average={statistics.median(r['load'] for r in rounds):.1f}")
PY
