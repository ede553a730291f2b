#!/usr/bin/env bash
# Builds the Stoker container images with podman (docker/*.Containerfile):
#
#   localhost/stoker-coordinator   the coordinator (+ stoker-ctl for health checks)
#   localhost/stoker-worker        a CPU worker (+ stoker-ctl)
#   localhost/stoker-trainer       trainer base: python3-torch and the package stoker from its
#                                  wheel (scripts/wheel.sh), stoker-bench-client, stoker-ctl
#   localhost/stoker-etcd          only when named: Debian's etcd-server on stoker-base, for the
#                                  chart's bundled etcd (no binaries built for it alone)
#
# each tagged :latest and :VERSION, on localhost/stoker-runtime (the shared libraries, computed
# from the binaries with ldd + dpkg -S) on localhost/stoker-base (docker/base-image.sh:
# debootstrap + podman import, no registry). The binaries are built on the host (scripts/build.sh;
# host and images are both Debian 12) and installed with `cmake --install --strip` into the build
# context; the host's unit tests are what vets them (scripts/test.sh). Cached: the base and
# runtime images are rebuilt only when what they are made of changes, and podman's layer cache
# keeps the package layers of the others.
#
#   scripts/images.sh [IMAGE...]        IMAGE: coordinator worker trainer etcd (default: the
#                                       first three)
#   scripts/images.sh --save DIR ...    also `podman save` each to DIR/stoker-IMAGE.tar
#
# Needs scripts/install-deps.sh --containers (podman, buildah, runc, debootstrap, containers.conf).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=${STOKER_BUILD_DIR:-build}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$ROOT/.cache/containers/containers.conf}

save_dir=
images=()
while [ $# -gt 0 ]; do
  case "$1" in
    --save) save_dir=${2:?--save needs a directory}; shift 2 ;;
    coordinator|worker|trainer|etcd) images+=("$1"); shift ;;
    *) echo "usage: scripts/images.sh [--save DIR] [coordinator] [worker] [trainer] [etcd]" >&2
       exit 2 ;;
  esac
done
[ ${#images[@]} -gt 0 ] || images=(coordinator worker trainer)

for tool in podman debootstrap; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "images.sh: $tool not found; run scripts/install-deps.sh --containers" >&2; exit 1; }
done
[ -f "$CONTAINERS_CONF" ] ||
  { echo "images.sh: no $CONTAINERS_CONF; run scripts/install-deps.sh --containers" >&2; exit 1; }

version=$(sed -n 's/^project(stoker VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)

context=$ROOT/.cache/images/context
docker/base-image.sh
build() {  # build NAME CONTAINERFILE [podman build args...]
  local name=$1 file=$2
  shift 2
  local start=$SECONDS
  podman build --quiet --layers --format docker --file "$file" --build-arg "VERSION=$version" "$@" "$context" \
    >/dev/null
  echo "images.sh: built $name in $((SECONDS - start)) s"
}

# The etcd image is Debian's package on the base alone: asked for by itself, nothing is built.
if [ -n "$(printf '%s\n' "${images[@]}" | grep -vx etcd)" ]; then
# --- binaries, installed into the build context; the trainer's wheel ---
# Everything `cmake --install --component runtime` installs.
targets=(stoker-coordinator stoker-worker stoker-ctl stoker-bench-client stoker-pack
         stoker-gen-images)
scripts/build.sh "${targets[@]}"
rm -rf "$context" && mkdir -p "$context"
cmake --install "$BUILD_DIR" --component runtime --prefix "$context/stage" --strip >/dev/null
if [[ " ${images[*]} " == *" trainer "* ]]; then
  scripts/wheel.sh "$context/wheel" >/dev/null
fi

# --- the runtime packages: whoever ships each shared library the binaries load ---
runtime_packages() {
  local libs
  libs=$(for binary in "$@"; do ldd "$binary"; done | awk '$2 == "=>" && $3 ~ /^\// {print $3}' |
         sort -u)
  for lib in $libs; do
    dpkg-query -S "$lib" 2>/dev/null || dpkg-query -S "$(realpath "$lib")" 2>/dev/null ||
      dpkg-query -S "/usr$lib" 2>/dev/null ||
      { echo "images.sh: no Debian package ships $lib" >&2; return 1; }
  done | cut -d: -f1 | sort -u | tr '\n' ' '
}
# (The trainer's wheel carries its own libraries.)
packages=$(runtime_packages "$context"/stage/bin/stoker-{coordinator,worker,ctl,bench-client})

# --- the runtime (cached by content) ---
base_id=$(podman image inspect --format '{{.Id}}' localhost/stoker-base:bookworm)
runtime_tag=$(printf '%s\n' "$base_id" "$packages" | cat - docker/runtime.Containerfile |
              sha256sum | cut -c1-16)
if ! podman image exists "localhost/stoker-runtime:$runtime_tag"; then
  build stoker-runtime docker/runtime.Containerfile --build-arg "RUNTIME_PACKAGES=$packages" \
    --tag "localhost/stoker-runtime:$runtime_tag" --tag localhost/stoker-runtime:latest
fi
fi  # the binaries and the runtime

# --- the images ---
for image in "${images[@]}"; do
  args=(--tag "localhost/stoker-$image:latest" --tag "localhost/stoker-$image:$version")
  if [ "$image" != etcd ]; then
    args+=(--build-arg "RUNTIME_TAG=$runtime_tag" --build-arg "REVISION=$revision")
  fi
  if [ "$image" = trainer ]; then
    args+=(--build-arg "TRAINER_PACKAGES=$(scripts/install-deps.sh --print-trainer-image-packages)")
  fi
  if [ "$image" = etcd ]; then  # an empty context of its own: the binaries' may be in use
    (context=$ROOT/.cache/images/etcd-context && mkdir -p "$context" &&
     build "stoker-$image" "docker/$image.Containerfile" "${args[@]}")
  else
    build "stoker-$image" "docker/$image.Containerfile" "${args[@]}"
  fi
  if [ -n "$save_dir" ]; then
    mkdir -p "$save_dir"
    podman save --quiet --output "$save_dir/stoker-$image.tar" "localhost/stoker-$image:$version"
  fi
done
podman image prune --force >/dev/null  # Layers of earlier builds that no tag names any more.
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' --filter 'reference=localhost/stoker-*' |
  grep -v ':[0-9a-f]\{16\} ' | sort
