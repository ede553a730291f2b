#!/usr/bin/env bash
# The one place that names the packages Stoker needs (Debian 12). Installs what is missing with
# apt-get (as root, or through sudo); otherwise prints the command to run. Quiet when nothing is
# missing.
#
#   scripts/install-deps.sh           what building and testing need
#   scripts/install-deps.sh --bench   also what the benchmarks' competitors need (scripts/bench.sh)
set -euo pipefail

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libopencv-dev libturbojpeg0-dev libgtest-dev libgmock-dev
  prometheus-cpp-dev prometheus
  libcurl4-openssl-dev nginx
  # The Python module (trainer_client/python) and its tests, run with /usr/bin/python3.
  pybind11-dev python3-dev python3-torch python3-numpy
  # Equivalence tests against PIL and torchvision (augment/, the Python module's from_torchvision)
  # and their real photographs (skimage's sample images); scipy for the distribution tests.
  python3-pil python3-torchvision python3-skimage python3-scipy
)
# Competitors in bench/: tjbench (decode), iperf3 (wire: single-stream loopback TCP);
# torchvision (augment; run with /usr/bin/python3) is in the test set above.
BENCH_PACKAGES=(libjpeg-turbo-progs iperf3)
if [ "${1:-}" = "--bench" ]; then
  PACKAGES+=("${BENCH_PACKAGES[@]}")
elif [ $# -gt 0 ]; then
  echo "usage: scripts/install-deps.sh [--bench]" >&2
  exit 2
fi

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

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
