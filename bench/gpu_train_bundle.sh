#!/usr/bin/env bash
# Packs what bench/gpu_train.py needs on a lent GPU machine whose Python differs from Debian's:
# the coordinator, worker and stoker-ctl binaries, the stoker package with its module compiled
# for that Python, and the Debian libraries they load (the run script links only those the
# machine lacks).
#
#   bench/gpu_train_bundle.sh PY_INCLUDE PYBIND11_INCLUDE EXT_SUFFIX OUT_DIR
#
# PY_INCLUDE: that Python's include folder (Python.h; a pyconfig.h for x86_64 beside it or under
# PY_INCLUDE/../multiarch), PYBIND11_INCLUDE: a pybind11 that supports it, EXT_SUFFIX: its
# extension suffix (.cpython-312-x86_64-linux-gnu.so). Then, on the GPU machine, from the
# repository root: bash OUT_DIR/run.sh (CORES, STEPS, ROUNDS in the environment).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 4 ] || { sed -n 2,12p "$0" >&2; exit 2; }
py_include=$1 pybind11_include=$2 suffix=$3 out=$4
BUILD=${STOKER_BUILD_DIR:-build}
scripts/build.sh stoker-coordinator stoker-worker stoker-ctl stoker_python
rm -rf "$out" && mkdir -p "$out/bin" "$out/pkg/stoker" "$out/obj" "$out/libs"
cp "$BUILD/worker/stoker-worker" "$BUILD/coordinator/stoker-coordinator" \
  "$BUILD/tools/stoker-ctl" "$out/bin/"
cp trainer_client/python/stoker/*.py "$out/pkg/stoker/"
# The module's own objects again (its sources, or the unity file holding them), against the
# other Python's headers; the libraries as built.
link=$(ninja -C "$BUILD" -t commands stoker_python | tail -1 | sed 's/^: && //; s/ && :$//')
module_dir=trainer_client/python/CMakeFiles/stoker_python.dir
for object in $(tr ' ' '\n' <<<"$link" | grep "^$module_dir/.*\.o\$"); do
  source=$(ninja -C "$BUILD" -t commands "$object" | tail -1 | sed -n 's/.* -c \([^ ]*\).*/\1/p')
  [ -n "$source" ] || { echo "no compile command for $object" >&2; exit 1; }
  name=$(basename "$object")
  c++ -DSTOKER_HAVE_CUDA=1 -I"$pybind11_include" -I. -I"$BUILD/proto" -isystem "$py_include" \
    -isystem "$py_include/../multiarch" -isystem /usr/local/cuda/include -O3 -DNDEBUG -fPIC \
    -fvisibility=hidden -pthread -std=c++17 -c "$source" -o "$out/obj/$name"
  link=${link//$object/$PWD/$out/obj/$name}
done
link=$(sed -E "s#-o [^ ]*_stoker[^ ]*\\.so#-o $PWD/$out/pkg/stoker/_stoker$suffix#" <<<"$link")
(cd "$BUILD" && eval "$link")
for binary in "$out"/bin/* "$out"/pkg/stoker/*.so; do ldd "$binary" | awk '{print $3}'; done |
  grep '^/' | sort -u | grep -Ev '/(libc|libm|libgcc_s|ld-linux|libpthread|libdl|librt|libstdc\+\+)[.-]' |
  xargs -I{} cp -L {} "$out/libs/"
tar cJf "$out/libs.tar.xz" -C "$out" libs && rm -rf "$out/libs" "$out/obj"
cat >"$out/run.sh" <<'RUN'
#!/bin/bash
# On the GPU machine, from the repository root: bash BUNDLE/run.sh
G=$(cd "$(dirname "$0")" && pwd)
tar xJf "$G/libs.tar.xz" -C "$G" && mkdir -p "$G/missing"
for lib in "$G"/libs/*; do
  ldconfig -p | grep -q "^\s*$(basename "$lib") " || ln -sf "$lib" "$G/missing/"
done
export LD_LIBRARY_PATH=$G/missing PYTHONPATH=$G/pkg PYTHONUNBUFFERED=1
python3 -c "import stoker" || exit 1
bash scripts/dev-certs.sh "$G/certs" >/dev/null
for cores in ${CORES:-8}; do
  python3 bench/gpu_train.py --build "$G/bin" --device cuda --model resnet50 --batch 256 \
    --steps "${STEPS:-80}" --warmup 10 --cores "$cores" --stoker-workers 2 --images 2000 \
    --rounds "${ROUNDS:-2}" --tls-dir "$G/certs" ${TRACE_OUT:+--trace-out "$TRACE_OUT"}
done
RUN
echo "bundle in $out ($(du -sh "$out" | cut -f1)); carry it and run: bash $out/run.sh"
