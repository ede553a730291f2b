#!/usr/bin/env bash
# scripts/bench.sh control-plane: how much one coordinator can hand out. The coordinator runs
# pinned to one core (taskset -c 0) against separate driver processes
# (bench/control_plane_bench.cc, gRPC callback API, pinned to the other cores) that play 1,000
# simulated workers and the 256 trainer ranks of one job: LeaseTasks of up to 32 tasks, then the
# rank's ClientHeartbeat reporting them consumed (stored: group-committed), and every worker's
# heartbeat every 500 ms. Each series of rounds alternates the coordinator's stores in the same
# run: the file journal, etcd (--state=etcd://<3 loopback members>/bench/<round>, a fresh prefix
# a round; the members started once by tests/chaos/etcd_harness.py, data on the same disk as
# the journal, pinned with the drivers, CONTROL_PLANE_ETCD_CORES), and memory only. Reports the
# most tasks completed per second (drivers as fast as the coordinator answers: saturation), per
# coordinator CPU-second, the group commits (count, mean time, tasks per commit), the etcd
# members' CPU, and, in paced
# rounds at CONTROL_PLANE_TARGET tasks/s (default 20,000), the p99 LeaseTasks latency twice: as
# the drivers see it (client to client, gRPC and both processes' scheduling included) and as the
# coordinator sees it (handler entry to reply, from its stoker_coordinator_rpc_seconds
# histogram, interpolated within a bucket). At saturation the latency only measures the queue.
# Then one longer saturated etcd round (CONTROL_PLANE_ETCD_LONG_SECONDS, default 60) samples
# etcd's keyspace every 5 s (keys under the round's prefix, revision, db size and size in use,
# from etcdctl): bounded when the store's compaction works. The machine's load average is
# printed with the figures. About 5 minutes. Saturated, each driver runs CONTROL_PLANE_LANES
# (default 32) chains of lease + heartbeat back to back: 64 of the 256 ranks in flight, enough to
# cover etcd's 3-6 ms group commits (8 a driver were enough for the journal's ~1 ms).
# CONTROL_PLANE_SECONDS (per round, default 8), CONTROL_PLANE_DRIVERS (default 2) and
# CONTROL_PLANE_ROUNDS (default 3) change the run;
# CONTROL_PLANE_ETCD=0 skips etcd (skipped too, saying so, when /usr/bin/etcd is missing);
# CONTROL_PLANE_ETCD_FLAGS adds flags to every etcd member (a diagnostic such as
# --unsafe-no-fsync: never for the headline figures); CONTROL_PLANE_ETCD_CORES moves them;
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
LANES=${CONTROL_PLANE_LANES:-32}
LONG_SECS=${CONTROL_PLANE_ETCD_LONG_SECONDS:-60}
WORKERS=1000
RANKS=256
CORES=$(nproc)
DRIVER_CORES=$([ "$CORES" -gt 1 ] && echo "1-$((CORES - 1))" || echo 0)
ETCD_CORES=${CONTROL_PLANE_ETCD_CORES:-$DRIVER_CORES}
USE_ETCD=${CONTROL_PLANE_ETCD:-1}
ETCD_FLAGS=${CONTROL_PLANE_ETCD_FLAGS:-}
if [ "$USE_ETCD" = 1 ] && [ ! -x /usr/bin/etcd ]; then
  echo "SKIPPED etcd rounds: /usr/bin/etcd is missing (scripts/install-deps.sh --etcd)"
  USE_ETCD=0
fi
export ETCDCTL_API=3
dir=$(mktemp -d)
coordinator_pid=""
etcd_pid=""
etcd_endpoints=""
cleanup() {
  [ -n "$coordinator_pid" ] && kill "$coordinator_pid" 2>/dev/null && wait "$coordinator_pid" || true
  [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && wait "$etcd_pid" || true
  rm -rf "$dir"
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# The etcd members' CPU ticks together (0 without etcd).
etcd_ticks() {
  local total=0 pid
  if [ -n "$etcd_pid" ]; then
    for pid in $(pgrep -P "$etcd_pid"); do total=$((total + $(cpu_ticks "$pid"))); done
  fi
  echo "$total"
}

# A 3-member etcd on loopback for the whole run (tests/chaos/etcd_harness.py, which kills its
# members when this helper gets SIGTERM), pinned to $ETCD_CORES; sets etcd_endpoints.
start_etcd() {
  taskset -c "$ETCD_CORES" /usr/bin/python3 - "$dir/etcd-endpoints" "$ETCD_FLAGS" \
    >"$dir/etcd.log" 2>&1 <<'PY' &
import os, signal, sys
sys.path.insert(0, "tests/chaos")
from etcd_harness import EtcdCluster
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with EtcdCluster(members=3, extra_args=sys.argv[2].split()) as etcd:
    with open(sys.argv[1] + ".tmp", "w") as out:
        out.write(",".join(etcd.endpoints()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        signal.pause()
PY
  etcd_pid=$!
  for _ in $(seq 600); do
    [ -s "$dir/etcd-endpoints" ] && break
    kill -0 "$etcd_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -s "$dir/etcd-endpoints" ] || { cat "$dir/etcd.log" >&2; exit 1; }
  etcd_endpoints=$(cat "$dir/etcd-endpoints")
}

# "KEYSPACE seconds keys revision db_bytes db_in_use_bytes" for etcd prefix $1 at $2 seconds:
# keys under the prefix (a Range's count), the cluster's revision, the largest member's db.
keyspace_line() {
  local count status
  count=$(etcdctl --endpoints="$etcd_endpoints" get "$1" --prefix --keys-only --limit=1 -w json)
  status=$(etcdctl --endpoints="$etcd_endpoints" endpoint status -w json)
  /usr/bin/python3 -c '
import json, sys
count, status = json.loads(sys.argv[1]), [m["Status"] for m in json.loads(sys.argv[2])]
print("KEYSPACE", sys.argv[3], count.get("count", 0), count["header"]["revision"],
      max(m["dbSize"] for m in status), max(m.get("dbSizeInUse", 0) for m in status))
' "$count" "$status" "$2"
}

# run_round LABEL STORE TASKS_PER_S SECONDS: one coordinator (STORE journal, memory or etcd),
# the drivers, then "ROUND label cpu_ticks ticks_per_s load" and the drivers' DRIVER lines, the
# coordinator's SERVER and STORE lines (and KEYSPACE samples for etcd-long) appended to
# $dir/rounds.txt.
round_number=0
run_round() {
  local label=$1 store=$2 rate=$3 secs=$4 store_flags=() prefix=""
  round_number=$((round_number + 1))
  rm -f "$dir/port" "$dir/journal" "$dir/keyspace.txt"
  case $store in
    journal) store_flags=("--journal=$dir/journal") ;;
    etcd)
      prefix="/bench/$round_number-$label"
      store_flags=("--state=etcd://$etcd_endpoints$prefix")
      ;;
  esac
  local metrics_port
  metrics_port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  taskset -c 0 "$COORDINATOR" --listen=127.0.0.1:0 --port-file="$dir/port" \
    --heartbeat-interval-ms=500 --worker-timeout-ms=30000 --lease-duration-ms=60000 \
    --max-tasks-per-lease=32 --insecure --metrics-port="$metrics_port" --data-root="$dir" \
    "${store_flags[@]}" >"$dir/coordinator.log" 2>&1 &
  coordinator_pid=$!
  for _ in $(seq 200); do [ -s "$dir/port" ] && break; sleep 0.05; done
  [ -s "$dir/port" ] || { cat "$dir/coordinator.log" >&2; exit 1; }
  if [ -n "$prefix" ]; then  # a replica serves once it has won the election
    for _ in $(seq 200); do
      [ -n "$(etcdctl --endpoints="$etcd_endpoints" get "${prefix}/leader" --print-value-only)" ] &&
        break
      sleep 0.05
    done
  fi
  local address="127.0.0.1:$(cat "$dir/port")" pids=() before after etcd_before etcd_after
  local sampler=""
  before=$(cpu_ticks "$coordinator_pid")
  etcd_before=$(etcd_ticks)
  for d in $(seq 0 $((DRIVERS - 1))); do
    taskset -c "$DRIVER_CORES" "$DRIVER" --coordinator="$address" \
      --name="d$d" --world-size=$RANKS --first-rank=$((d * RANKS / DRIVERS)) \
      --ranks=$((RANKS / DRIVERS)) --workers=$((WORKERS / DRIVERS)) --seconds="$secs" \
      --tasks-per-s=$((rate / DRIVERS)) --lanes="$LANES" \
      >"$dir/driver$d.txt" &
    pids+=($!)
  done
  if [ "$label" = etcd-long ]; then
    (
      for t in $(seq 5 5 "$secs"); do
        sleep 5
        keyspace_line "$prefix/" "$t" >>"$dir/keyspace.txt"
      done
    ) &
    sampler=$!
  fi
  for pid in "${pids[@]}"; do wait "$pid"; done
  after=$(cpu_ticks "$coordinator_pid")
  etcd_after=$(etcd_ticks)
  if [ -n "$sampler" ]; then wait "$sampler"; fi
  # The coordinator's own LeaseTasks latency histogram and group commits, scraped after the
  # drivers stopped.
  /usr/bin/python3 - "http://127.0.0.1:$metrics_port/metrics" >"$dir/server.txt" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1], timeout=30).read().decode()
pattern = r'stoker_coordinator_rpc_seconds_bucket\{method="LeaseTasks",le="([^"]+)"\} (\S+)'
print("SERVER " + ",".join(f"{le}:{count}" for le, count in re.findall(pattern, text)))
store = {name: value for name, value in re.findall(
    r'^stoker_coordinator_journal_(sync_seconds_count|sync_seconds_sum|written_bytes_total) (\S+)',
    text, re.M)}
if store:
    print(f"STORE commits={store['sync_seconds_count']} seconds={store['sync_seconds_sum']} "
          f"written={store['written_bytes_total']}")
PY
  kill "$coordinator_pid"; wait "$coordinator_pid" || true; coordinator_pid=""
  echo "ROUND $label $((after - before)) $(getconf CLK_TCK) $(cut -d' ' -f1 /proc/loadavg)" \
    "$((etcd_after - etcd_before))" >>"$dir/rounds.txt"
  cat "$dir"/driver*.txt "$dir/server.txt" >>"$dir/rounds.txt"
  if [ -s "$dir/keyspace.txt" ]; then cat "$dir/keyspace.txt" >>"$dir/rounds.txt"; fi
}

if [ "$USE_ETCD" = 1 ]; then start_etcd; fi
for _ in $(seq "$ROUNDS"); do
  run_round journal journal 0 "$SECS"
  if [ "$USE_ETCD" = 1 ]; then run_round etcd etcd 0 "$SECS"; fi
  run_round memory memory 0 "$SECS"
  run_round paced journal "$TARGET" "$SECS"
  if [ "$USE_ETCD" = 1 ]; then run_round etcd-paced etcd "$TARGET" "$SECS"; fi
done
if [ "$USE_ETCD" = 1 ]; then run_round etcd-long etcd 0 "$LONG_SECS"; fi

/usr/bin/python3 - "$dir/rounds.txt" "$WORKERS" "$RANKS" "$(nproc)" "$TARGET" "$ETCD_CORES" \
  "$ETCD_FLAGS" <<'PY'
import math, statistics, sys
path, workers, ranks, cores, target, etcd_cores, etcd_flags = sys.argv[1:8]
rounds = []
for line in open(path):
    parts = line.split()
    if parts[0] == "ROUND":
        rounds.append({"label": parts[1], "cpu": int(parts[2]) / int(parts[3]),
                       "load": float(parts[4]), "etcd_cpu": int(parts[5]) / int(parts[3]),
                       "drivers": [], "server": [], "store": None,
                       "keyspace": []})
    elif parts[0] == "DRIVER":
        kv = dict(p.split("=", 1) for p in parts[1:])
        rounds[-1]["drivers"].append(kv)
    elif parts[0] == "SERVER" and len(parts) > 1:
        rounds[-1]["server"] = [(float(le), float(n)) for le, n in
                                (b.split(":") for b in parts[1].split(","))]
    elif parts[0] == "STORE":
        rounds[-1]["store"] = {k: float(v) for k, v in (p.split("=", 1) for p in parts[1:])}
    elif parts[0] == "KEYSPACE":
        rounds[-1]["keyspace"].append([int(x) for x in parts[1:]])

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
    s = {"tps": tasks / secs, "per_cpu": tasks / r["cpu"] if r["cpu"] else float("nan"),
         "busy": r["cpu"] / secs, "p99": p99, "server_p99": bucket_quantile(r["server"], 0.99),
         "errors": errors, "skipped": skipped, "load": r["load"], "commits": "", "mb": 0.0}
    # Group commits over the coordinator's life (the drivers' setup included): their rate, mean
    # time and tasks each.
    store = r["store"]
    if store and store["commits"]:
        s["commits"] = (f"  commits {store['commits'] / secs:.0f}/s, "
                        f"{store['seconds'] / store['commits'] * 1000:.2f} ms, "
                        f"{tasks / store['commits']:.0f} tasks each")
        s["mb"] = store["written"] / 1e6
    if r["etcd_cpu"]:
        s["commits"] += f"  etcd members busy {r['etcd_cpu'] / secs:.2f} cores"
    return s

by = {}
for r in rounds:
    s = summary(r)
    by.setdefault(r["label"], []).append(s)
    print(f"{r['label']:10s} {s['tps']:9.0f} tasks/s  {s['per_cpu']:9.0f} tasks/CPU-s  "
          f"coordinator busy {s['busy']:.2f} cores  LeaseTasks p99 {s['p99']:.2f} ms driver-side, "
          f"{s['server_p99']:.2f} ms coordinator-side  errors {s['errors']}  "
          f"skipped {s['skipped']}  load {s['load']:.1f}{s['commits']}")
def med(label, key):
    return statistics.median(s[key] for s in by[label]) if label in by else float("nan")
etcd = ""
if "etcd" in by:
    long_round = next(r for r in rounds if r["label"] == "etcd-long")
    print(f"etcd members on cores {etcd_cores}; keyspace of the etcd-long round "
          f"({med('etcd-long', 'tps'):.0f} tasks/s, {med('etcd-long', 'mb'):.1f} MB of log "
          "written):")
    for t, keys, revision, db, in_use in long_round["keyspace"]:
        print(f"  {t:4d} s  {keys:4d} keys under the prefix  revision {revision:9d}  "
              f"db {db / 1e6:6.1f} MB ({in_use / 1e6:.1f} MB in use)")
    last = long_round["keyspace"][-1] if long_round["keyspace"] else [0] * 5
    # A diagnostic's flags (--unsafe-no-fsync) stay beside its figures.
    etcd = "".join(f"etcd_flag={flag} " for flag in etcd_flags.split())
    etcd += (f"etcd_tasks_per_s={med('etcd', 'tps'):.0f} "
            f"etcd_tasks_per_cpu_s={med('etcd', 'per_cpu'):.0f} "
            f"etcd_coordinator_busy={med('etcd', 'busy'):.2f} "
            f"etcd_paced_tasks_per_s={med('etcd-paced', 'tps'):.0f} "
            f"etcd_paced_lease_p99_ms={med('etcd-paced', 'p99'):.2f} "
            f"etcd_paced_server_lease_p99_ms={med('etcd-paced', 'server_p99'):.2f} "
            f"etcd_vs_journal={med('etcd', 'tps') / med('journal', 'tps'):.2f} "
            f"etcd_long_tasks_per_s={med('etcd-long', 'tps'):.0f} "
            f"etcd_long_written_mb={med('etcd-long', 'mb'):.1f} etcd_keys={last[1]} "
            f"etcd_revision={last[2]} etcd_db_bytes={last[3]} etcd_db_in_use_bytes={last[4]} ")
print(f"RESULT name=control-plane workers={workers} ranks={ranks} cores={cores} "
      f"journal_tasks_per_s={med('journal', 'tps'):.0f} "
      f"journal_tasks_per_cpu_s={med('journal', 'per_cpu'):.0f} "
      f"saturated_lease_p99_ms={med('journal', 'p99'):.2f} "
      f"coordinator_busy={med('journal', 'busy'):.2f} paced_target={target} "
      f"paced_tasks_per_s={med('paced', 'tps'):.0f} lease_p99_ms={med('paced', 'p99'):.2f} "
      f"server_lease_p99_ms={med('paced', 'server_p99'):.2f} "
      f"paced_coordinator_busy={med('paced', 'busy'):.2f} {etcd}"
      f"memory_tasks_per_s={med('memory', 'tps'):.0f} "
      f"journal_vs_memory={med('journal', 'tps') / med('memory', 'tps'):.2f} "
      f"load_average={statistics.median(r['load'] for r in rounds):.1f}")
PY
