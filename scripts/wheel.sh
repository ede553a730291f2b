#!/usr/bin/env bash
# Builds the wheel of the Python package `stoker` (pyproject.toml, setup.py: the CMake target
# stoker_python in build-python/) for Debian's /usr/bin/python3 (or $PYTHON), and makes it
# self-contained (scripts/repair_wheel.py: the shared libraries it needs beyond glibc/libstdc++
# copied into stoker.libs/, RUNPATH $ORIGIN, with patchelf), like auditwheel's `repair`. The
# result installs where those libraries are absent: `pip install dist/stoker-*.whl` in any
# Linux x86-64 Python of the same minor version with glibc >= the build machine's.
# Offline: pip uses the installed setuptools and wheel (--no-build-isolation, --no-index).
#
#   scripts/wheel.sh [OUT_DIR]        default dist/; prints the wheel's path last
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist}")
python=${PYTHON:-/usr/bin/python3}
for tool in patchelf ldd; do
  command -v "$tool" >/dev/null 2>&1 ||
    { echo "wheel.sh: $tool not found; run scripts/install-deps.sh" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip wheel --no-build-isolation --no-index --no-deps --wheel-dir "$work/raw" . \
  >"$work/pip.log" 2>&1 || { tail -40 "$work/pip.log" >&2; exit 1; }
wheels=("$work"/raw/stoker-*.whl)
"$python" scripts/repair_wheel.py "${wheels[0]}" "$out" >&2
echo "$out/$(basename "${wheels[0]}")"
