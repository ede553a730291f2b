#!/usr/bin/env bash
# Runs one benchmark: scripts/bench.sh NAME [ARGS...]. Each benchmark is bench/NAME.sh, which
# installs what it needs, builds its targets, runs Stoker and its competitor in the same run and
# ends with `RESULT name=NAME key=value ...` (docs/architecture.md, Benchmarks). Adding a benchmark
# = adding bench/NAME.sh (and its target in bench/CMakeLists.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  echo "usage: scripts/bench.sh NAME [ARGS...]" >&2
  echo "benchmarks: $(cd bench && ls ./*.sh 2>/dev/null | sed 's|^\./||; s|\.sh$||' | tr '\n' ' ')" >&2
  exit 2
}
[ $# -ge 1 ] || usage
name=$1
shift
case "$name" in
  ''|*[!a-z0-9_-]*) usage ;;
esac
[ -f "bench/$name.sh" ] || { echo "scripts/bench.sh: unknown benchmark '$name'" >&2; usage; }
exec bash "bench/$name.sh" "$@"
