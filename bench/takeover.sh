#!/usr/bin/env bash
# scripts/bench.sh takeover [KILLS]: replicated coordinators on a real 3-member etcd; the leader
# SIGKILLed KILLS times (20); time to the new leader serving and to its first lease, and the
# trainer's longest wait for a batch around each kill (bench/takeover.py). About 20 s a kill.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --etcd
scripts/build.sh stoker-coordinator stoker-worker stoker-bench-client
BIN=${STOKER_BUILD_DIR:-build}
exec /usr/bin/python3 bench/takeover.py "$BIN" "$@"
