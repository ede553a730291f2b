#!/usr/bin/env bash
# scripts/bench.sh control-plane: how much one coordinator can hand out. The coordinator runs
# pinned to one core (taskset -c 0), journal on, against separate driver processes
# (bench/control_plane_bench.cc, pinned to the other cores) that play 1,000 simulated workers
# and the 256 trainer ranks of one job: LeaseTasks of up to 32 tasks, then the rank's
# ClientHeartbeat reporting them consumed (journaled), and every worker's heartbeat every
# 500 ms. Rounds alternate journal on / journal off (the comparison in the same run). Reports
# the most tasks completed per second (drivers as fast as the coordinator answers: saturation),
# per coordinator CPU-second, and, in paced rounds at CONTROL_PLANE_TARGET tasks/s (default
# 20,000), the p99 LeaseTasks latency the drivers see (at saturation it only measures the
# queue). About 90 s. CONTROL_PLANE_SECONDS (per round, default 8), CONTROL_PLANE_DRIVERS
# (default 2) and CONTROL_PLANE_ROUNDS (default 2) change the run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh stoker-coordinator control_plane_bench
BIN=${STOKER_BUILD_DIR:-build}
SECS=${CONTROL_PLANE_SECONDS:-8}
DRIVERS=${CONTROL_PLANE_DRIVERS:-2}
ROUNDS=${CONTROL_PLANE_ROUNDS:-2}
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
  taskset -c 0 "$BIN/coordinator/stoker-coordinator" --listen=127.0.0.1:0 --port-file="$dir/port" \
    --heartbeat-interval-ms=500 --worker-timeout-ms=30000 --lease-duration-ms=60000 \
    --max-tasks-per-lease=32 --insecure $journal >"$dir/coordinator.log" 2>&1 &
  coordinator_pid=$!
  for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
  [ -s "$dir/port" ] || { cat "$dir/coordinator.log" >&2; exit 1; }
  local address="127.0.0.1:$(cat "$dir/port")" pids=() before after
  before=$(cpu_ticks "$coordinator_pid")
  for d in $(seq 0 $((DRIVERS - 1))); do
    taskset -c "$DRIVER_CORES" "$BIN/bench/control_plane_bench" --coordinator="$address" \
      --name="d$d" --world-size=$RANKS --first-rank=$((d * RANKS / DRIVERS)) \
      --ranks=$((RANKS / DRIVERS)) --workers=$((WORKERS / DRIVERS)) --seconds="$SECS" \
      --tasks-per-s=$((rate / DRIVERS)) \
      >"$dir/driver$d.txt" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  after=$(cpu_ticks "$coordinator_pid")
  kill "$coordinator_pid"; wait "$coordinator_pid" || true; coordinator_pid=""
  echo "ROUND $label $(( after - before )) $(getconf CLK_TCK)" >>"$dir/rounds.txt"
  cat "$dir"/driver*.txt >>"$dir/rounds.txt"
}

for _ in $(seq "$ROUNDS"); do
  run_round journal "--journal=$dir/journal" 0
  run_round memory "" 0
  run_round paced "--journal=$dir/journal" "$TARGET"
done

/usr/bin/python3 - "$dir/rounds.txt" "$WORKERS" "$RANKS" "$(nproc)" "$TARGET" <<'PY'
import statistics, sys
path, workers, ranks, cores, target = sys.argv[1:6]
rounds = []
for line in open(path):
    parts = line.split()
    if parts[0] == "ROUND":
        rounds.append({"label": parts[1], "cpu": int(parts[2]) / int(parts[3]), "drivers": []})
    elif parts[0] == "DRIVER":
        kv = dict(p.split("=", 1) for p in parts[1:])
        rounds[-1]["drivers"].append(kv)
def summary(r):
    tasks = sum(int(d["tasks"]) for d in r["drivers"])
    secs = max(float(d["seconds"]) for d in r["drivers"])
    lat = sorted(int(x) for d in r["drivers"] for x in d["lease_us"].split(",") if x)
    errors = sum(int(d["errors"]) for d in r["drivers"])
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] / 1000 if lat else float("nan")
    return {"tps": tasks / secs, "per_cpu": tasks / r["cpu"] if r["cpu"] else float("nan"),
            "busy": r["cpu"] / secs, "p99": p99, "errors": errors}
by = {"journal": [], "memory": [], "paced": []}
for r in rounds:
    s = summary(r)
    by[r["label"]].append(s)
    print(f"{r['label']:8s} {s['tps']:9.0f} tasks/s  {s['per_cpu']:9.0f} tasks/CPU-s  "
          f"coordinator busy {s['busy']:.2f} cores  LeaseTasks p99 {s['p99']:.2f} ms  "
          f"errors {s['errors']}")
def med(label, key):
    return statistics.median(s[key] for s in by[label])
print(f"RESULT name=control-plane workers={workers} ranks={ranks} cores={cores} "
      f"tasks_per_s={med('journal', 'tps'):.0f} tasks_per_cpu_s={med('journal', 'per_cpu'):.0f} "
      f"saturated_lease_p99_ms={med('journal', 'p99'):.2f} "
      f"coordinator_busy={med('journal', 'busy'):.2f} paced_target={target} "
      f"paced_tasks_per_s={med('paced', 'tps'):.0f} lease_p99_ms={med('paced', 'p99'):.2f} "
      f"paced_coordinator_busy={med('paced', 'busy'):.2f} "
      f"memory_tasks_per_s={med('memory', 'tps'):.0f} "
      f"journal_vs_memory={med('journal', 'tps') / med('memory', 'tps'):.2f}")
PY
