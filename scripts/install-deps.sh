#!/usr/bin/env bash
# The one place that names the packages Stoker needs (Debian 12). Installs what is missing with
# apt-get (as root, or through sudo); otherwise prints the command to run. Quiet when nothing is
# missing.
#
#   scripts/install-deps.sh           what building and testing need
#   scripts/install-deps.sh --bench   also what the benchmarks' competitors need (scripts/bench.sh)
#
# The `s3` tests and `scripts/bench.sh s3` run a loopback S3 server (tests/s3/s3_test_server.js:
# npm s3rver behind a SigV4-verifying proxy on @smithy/signature-v4); its npm packages, pinned in
# tests/s3/package-lock.json, are installed into the git-ignored tests/s3/node_modules.
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libopencv-dev libturbojpeg0-dev libgtest-dev libgmock-dev
  prometheus-cpp-dev prometheus
  libcurl4-openssl-dev libssl-dev nginx
  # The Python module (trainer_client/python) and its tests, run with /usr/bin/python3.
  pybind11-dev python3-dev python3-torch python3-numpy
)
# Competitors in bench/: tjbench (decode), torchvision (augment; run with /usr/bin/python3),
# iperf3 (wire: single-stream loopback TCP).
BENCH_PACKAGES=(libjpeg-turbo-progs python3-torchvision iperf3)
if [ "${1:-}" = "--bench" ]; then
  PACKAGES+=("${BENCH_PACKAGES[@]}")
elif [ $# -gt 0 ]; then
  echo "usage: scripts/install-deps.sh [--bench]" >&2
  exit 2
fi

# Node.js for the loopback S3 server; npm only where the installed nodejs does not bring it.
PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

install_npm_packages() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/s3"
  if [ ! -f "$dir/node_modules/.package-lock.json" ] ||
     [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    echo "Installing the S3 test server's npm packages into tests/s3/node_modules"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  install_npm_packages
  exit 0
fi

echo "Installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "Run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_npm_packages
