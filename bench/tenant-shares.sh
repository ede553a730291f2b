#!/usr/bin/env bash
# scripts/bench.sh tenant-shares [ROUNDS]: fair shares between tenants on the workers
# (docs/decisions/0071-tenant-fair-shares.md). Tenant x runs 8 jobs and tenant y 1 on 2 workers
# whose simulated batches burn CPU, all backlogged, as separate processes under mutual TLS
# (tests/chaos/tenant_shares_test.py); y's share of the workers' producer time over 15 s
# (stoker_worker_tenant_busy_seconds_total) against its configured share, for weights x:y of
# 1:1 and 3:1 in alternating rounds (ROUNDS, 2). A worker dividing its time by streams would
# give y 1/9. TENANT_SHARES_BASELINE_WORKER=PATH adds a 1:1 run of another worker binary (an
# older build) to every round, measured by y's share of the batches delivered (batches_y; it may
# lack the metric). About 30 s a run.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client
BIN=${STOKER_BUILD_DIR:-build}
rounds=${1:-2}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "tenant-shares: 8 jobs of x against 1 of y, 2 workers; $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
baseline_bin=
if [ -n "${TENANT_SHARES_BASELINE_WORKER:-}" ]; then
  # The baseline worker beside this build's coordinator and clients.
  baseline_bin=$(mktemp -d)
  trap 'rm -rf "$results" "$baseline_bin"' EXIT
  mkdir -p "$baseline_bin/coordinator" "$baseline_bin/tools" "$baseline_bin/worker"
  ln -s "$(realpath "$BIN/coordinator/stoker-coordinator")" "$baseline_bin/coordinator/"
  ln -s "$(realpath "$BIN/tools/stoker-bench-client")" "$baseline_bin/tools/"
  ln -s "$(realpath "$TENANT_SHARES_BASELINE_WORKER")" "$baseline_bin/worker/stoker-worker"
fi
for round in $(seq 1 "$rounds"); do
  for weights in 1:1 3:1; do
    line=$(/usr/bin/python3 tests/chaos/tenant_shares_test.py "$BIN" "$weights" --report | tail -1)
    echo "  round $round: $line"
    echo "$line" >>"$results"
  done
  if [ -n "$baseline_bin" ]; then
    line=$(/usr/bin/python3 tests/chaos/tenant_shares_test.py "$baseline_bin" 1:1 --report | tail -1)
    echo "  round $round, baseline worker: $line"
    echo "$line" | sed 's/"weights": "1:1"/"weights": "baseline"/' >>"$results"
  fi
done
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
out = ["RESULT name=tenant-shares"]
for weights in ("1:1", "3:1"):
    mine = [r for r in rows if r["weights"] == weights]
    key = weights.replace(":", "to")
    out.append(f"configured_y_{key}={mine[0]['configured_y']:.4f}")
    out.append(f"measured_y_{key}={statistics.median(r['measured_y'] for r in mine):.4f}")
    out.append(f"max_deviation_{key}={max(r['deviation'] for r in mine):.4f}")
baseline = [r["batches_y"] for r in rows if r["weights"] == "baseline"]
if baseline:
    out.append(f"baseline_batches_y_1to1={statistics.median(baseline):.4f}")
print(" ".join(out))
PY
