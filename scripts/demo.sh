#!/usr/bin/env bash
# The main job: a coordinator and two workers on loopback, a training-like consumer on the blur
# reference workload (224x224x3, ten 11x11 Gaussian blurs, batch 64), a short report, and
# everything it started stopped again (also on Ctrl-C). With --jpeg, the JPEG workload instead:
# 3,000 natural-looking 500x375 JPEGs in 10 classes (generated once into .cache/jpeg/), packed
# with stoker-pack, then decode, random_resized_crop(224), horizontal_flip, normalize.
#
#   scripts/demo.sh [--jpeg] [--batches N] [--workers N] [--step-ms MS]
set -euo pipefail
cd "$(dirname "$0")/.."

BATCHES=24
WORKERS=2
STEP_MS=50  # A training step of 50 ms: the GPU time the data must keep up with.
JPEG=0
DATA_ROOT=  # where the processes may read datasets (set below)
while [ $# -gt 0 ]; do
  case "$1" in
    --jpeg) JPEG=1; shift ;;
    --batches) BATCHES=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --step-ms) STEP_MS=$2; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "demo.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

scripts/install-deps.sh
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client stoker-ctl stoker-gen-images \
  stoker-pack
BIN=${STOKER_BUILD_DIR:-build}

if [ "$JPEG" = 1 ]; then
  CACHE=${STOKER_CACHE_DIR:-.cache}/jpeg
  [ -f "$CACHE/shards/manifest.json" ] || echo "Generating and packing 3,000 JPEGs into $CACHE (once)..."
  "$BIN/tools/stoker-gen-images" --output="$CACHE/images" --classes=10 --per-class=300
  mkdir -p "$CACHE/shards"  # a root must exist; the output one lets a rerun reuse shards
  "$BIN/tools/stoker-pack" --input="$CACHE/images" --output="$CACHE/shards" \
    --data-root="$(realpath "$CACHE/images")" --data-root="$(realpath "$CACHE/shards")" \
    >/dev/null
  DATA_ROOT=$(realpath "$CACHE/shards")  # the only place the processes may read
  WORKLOAD="JPEG workload (3,000 packed 500x375 JPEGs -> decode -> random_resized_crop(224)"
  WORKLOAD+=" -> horizontal_flip -> to_float -> normalize, batch 64)"
  DATASET_FLAGS=(--manifest="$CACHE/shards/manifest.json" --pipeline="decode, \
random_resized_crop(height=224, width=224), horizontal_flip, to_float, \
normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])" --layout=chw)
else
  WORKLOAD="blur workload (224x224x3 uint8 -> to_float -> 10x gaussian_blur(ksize=11), batch 64)"
  DATASET_FLAGS=(--num-samples=$((BATCHES * 64)) --pipeline="to_float, gaussian_blur(ksize=11)*10")
fi

RUN_DIR=$(mktemp -d)
# Synthetic data reads no file; the processes still need a root (docs/security.md, "Data roots").
DATA_ROOT=${DATA_ROOT:-$RUN_DIR}
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

# Mutual TLS with throwaway certificates (scripts/dev-certs.sh; docs/security.md).
scripts/dev-certs.sh "$RUN_DIR/certs"
tls() { echo "--tls-cert=$RUN_DIR/certs/$1.pem --tls-key=$RUN_DIR/certs/$1.key --tls-ca=$RUN_DIR/certs/ca.pem"; }

# shellcheck disable=SC2046  # tls prints flags without spaces inside them.
"$BIN/coordinator/stoker-coordinator" --listen=127.0.0.1:0 --port-file="$RUN_DIR/coordinator.port" \
  $(tls coordinator) --data-root="$DATA_ROOT" >"$RUN_DIR/coordinator.log" 2>&1 &
PIDS+=($!)
COORDINATOR=127.0.0.1:$(wait_for_port "$RUN_DIR/coordinator.port" "${PIDS[-1]}" \
  || { cat "$RUN_DIR/coordinator.log" >&2; exit 1; })

for i in $(seq "$WORKERS"); do
  # shellcheck disable=SC2046
  "$BIN/worker/stoker-worker" --coordinator="$COORDINATOR" --listen=127.0.0.1:0 --threads=1 \
    $(tls worker) --data-root="$DATA_ROOT" --port-file="$RUN_DIR/worker$i.port" \
    >"$RUN_DIR/worker$i.log" 2>&1 &
  PIDS+=($!)
  wait_for_port "$RUN_DIR/worker$i.port" "${PIDS[-1]}" >/dev/null \
    || { cat "$RUN_DIR/worker$i.log" >&2; exit 1; }
done

echo "Stoker demo: coordinator $COORDINATOR, $WORKERS workers (1 thread each),"
echo "  $WORKLOAD,"
echo "  $BATCHES batches, consumer with a simulated training step of $STEP_MS ms per batch"
# In the background with `wait`, so that Ctrl-C runs the cleanup at once.
# shellcheck disable=SC2046
"$BIN/tools/stoker-bench-client" --coordinator="$COORDINATOR" --job="demo-$$" $(tls trainer) \
  --batch-size=64 --epochs=1 --max-batches="$BATCHES" --step-ms="$STEP_MS" "${DATASET_FLAGS[@]}" &
PIDS+=($!)
wait "${PIDS[-1]}"

# The coordinator's view, ending with how many workers this workload needs.
echo
# shellcheck disable=SC2046
"$BIN/tools/stoker-ctl" status --coordinator="$COORDINATOR" $(tls operator)
