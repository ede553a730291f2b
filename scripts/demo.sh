#!/usr/bin/env bash
# The main job: a coordinator and two workers on loopback, a training-like consumer on the blur
# reference workload (224x224x3, ten 11x11 Gaussian blurs, batch 64), a short report, and
# everything it started stopped again (also on Ctrl-C).
#
#   scripts/demo.sh [--batches N] [--workers N] [--step-ms MS]
set -euo pipefail
cd "$(dirname "$0")/.."

BATCHES=24
WORKERS=2
STEP_MS=50  # A training step of 50 ms: the GPU time the data must keep up with.
while [ $# -gt 0 ]; do
  case "$1" in
    --batches) BATCHES=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --step-ms) STEP_MS=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-ctl
BIN=${STOKER_BUILD_DIR:-build}

RUN_DIR=$(mktemp -d)
PIDS=()
cleanup() {
  trap - INT TERM
  # Newest first: the client, then the workers, then the coordinator they report to.
  local i
  for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    kill -TERM "${PIDS[i]}" 2>/dev/null || true
    wait "${PIDS[i]}" 2>/dev/null || true
  done
  rm -rf "$RUN_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits (at most 20 s) for a server's port file; prints the port.
wait_for_port() {
  local file=$1 pid=$2
  for _ in $(seq 200); do
    [ -s "$file" ] && { cat "$file"; return 0; }
    kill -0 "$pid" 2>/dev/null || { echo "demo.sh: server exited early; log:" >&2; return 1; }
    sleep 0.1
  done
  echo "demo.sh: timed out waiting for $file" >&2
  return 1
}

"$BIN/coordinator/stoker-coordinator" --listen=127.0.0.1:0 --port-file="$RUN_DIR/coordinator.port" \
  >"$RUN_DIR/coordinator.log" 2>&1 &
PIDS+=($!)
COORDINATOR=127.0.0.1:$(wait_for_port "$RUN_DIR/coordinator.port" "${PIDS[-1]}" \
  || { cat "$RUN_DIR/coordinator.log" >&2; exit 1; })

for i in $(seq "$WORKERS"); do
  "$BIN/worker/stoker-worker" --coordinator="$COORDINATOR" --listen=127.0.0.1:0 --threads=1 \
    --port-file="$RUN_DIR/worker$i.port" >"$RUN_DIR/worker$i.log" 2>&1 &
  PIDS+=($!)
  wait_for_port "$RUN_DIR/worker$i.port" "${PIDS[-1]}" >/dev/null \
    || { cat "$RUN_DIR/worker$i.log" >&2; exit 1; }
done

echo "Stoker demo: coordinator $COORDINATOR, $WORKERS workers (1 thread each), blur workload"
echo "  (224x224x3 uint8 -> to_float -> 10x gaussian_blur(ksize=11), batch 64), $BATCHES batches,"
echo "  consumer with a simulated training step of $STEP_MS ms per batch"
# In the background with `wait`, so that Ctrl-C runs the cleanup at once.
"$BIN/tools/stoker-bench-client" --coordinator="$COORDINATOR" --job="demo-blur-$$" \
  --num-samples=$((BATCHES * 64)) --batch-size=64 --epochs=1 --step-ms="$STEP_MS" \
  --pipeline="to_float, gaussian_blur(ksize=11)*10" &
PIDS+=($!)
wait "${PIDS[-1]}"

# The coordinator's view, ending with how many workers this workload needs.
echo
"$BIN/tools/stoker-ctl" status --coordinator="$COORDINATOR"
