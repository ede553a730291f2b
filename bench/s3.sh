#!/usr/bin/env bash
# scripts/bench.sh s3: shard reads from the loopback S3 server (Stoker's SigV4 client vs curl on
# the same objects vs the same bytes in local files) and the shard cache's hit path vs local
# files (bench/s3_bench.cc). About a minute.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh s3_bench
exec "${STOKER_BUILD_DIR:-build}/bench/s3_bench" "$@"
