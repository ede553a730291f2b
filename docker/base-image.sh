#!/usr/bin/env bash
# Builds the base image of every Stoker image, localhost/stoker-base:bookworm: a Debian 12 root
# file system made by `debootstrap --variant=minbase` and `podman import` (no registry images).
# Cached: nothing is done when the image exists with this script's hash in its label
# (--force rebuilds). The mirror is the one this machine's apt sources name, and the image gets
# the same apt sources (security updates included), so `apt-get install` in a Containerfile
# resolves the versions the host builds against.
#
#   docker/base-image.sh [--force]
set -euo pipefail
cd "$(dirname "$0")/.."
export CONTAINERS_CONF=${CONTAINERS_CONF:-$PWD/.cache/containers/containers.conf}
IMAGE=localhost/stoker-base:bookworm
script_hash=$(sha256sum docker/base-image.sh | cut -c1-16)

if [ "${1:-}" != --force ] &&
   [ "$(podman image inspect --format '{{index .Labels "org.stoker.base-script"}}' "$IMAGE" \
        2>/dev/null)" = "$script_hash" ]; then
  exit 0
fi

# The first Debian archive URI of the host's apt sources (deb822 or one-line format).
mirror=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)[[:space:]]*$/\1/p' \
           /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list \
             /etc/apt/sources.list.d/*.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || { echo "base-image.sh: no Debian mirror in /etc/apt/sources*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "base-image.sh: debootstrap --variant=minbase bookworm (a few minutes, once)"
debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
  || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# The host's Debian sources (bookworm, -updates, -security), not its third-party ones.
rm -f "$work/rootfs/etc/apt/sources.list"
for file in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list; do
  [ -f "$file" ] && grep -q '/debian' "$file" && cp "$file" "$work/rootfs/etc/apt/sources.list.d/"
done
[ -f /etc/apt/sources.list ] && [ -f "$work/rootfs/etc/apt/sources.list.d/sources.list" ] &&
  mv "$work/rootfs/etc/apt/sources.list.d/sources.list" "$work/rootfs/etc/apt/sources.list"
# Keep images small: no docs, man pages or locales from later apt-get installs; no caches.
cat >"$work/rootfs/etc/dpkg/dpkg.cfg.d/01-stoker-slim" <<'CONF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/info/*
CONF
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' \
  >"$work/rootfs/etc/apt/apt.conf.d/01-stoker-no-recommends"
rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
  "$work/rootfs/usr/share/doc/"*/[!c]* "$work/rootfs/usr/share/man/"* "$work/rootfs/usr/share/locale/"*
tar -C "$work/rootfs" -c . | podman import \
  --change "LABEL org.stoker.base-script=$script_hash" \
  --change 'CMD ["/bin/bash"]' - "$IMAGE" >/dev/null
echo "base-image.sh: built $IMAGE"
