# Sourced by the JPEG benchmarks: the one definition of their data set. The generated
# Caltech-256-like set (3,000 natural-looking 500x375 JPEGs in 10 class folders) in $CACHE/images,
# and (with `shards`) the same files packed by stoker-pack, manifest $CACHE/shards/manifest.json;
# with `shards-restart`, packed with --restart-markers into $CACHE/shards-restart (its own folder:
# a rerun reuses complete shards whatever flags packed them).
# Needs BIN (the build dir) with stoker-gen-images (and stoker-pack) built.
# Usage: source bench/jpeg_set.sh; make_jpeg_set [shards|shards-restart]
CACHE=${STOKER_CACHE_DIR:-.cache}/jpeg
make_jpeg_set() {
  "$BIN/tools/stoker-gen-images" --output="$CACHE/images" --classes=10 --per-class=300
  local set=${1:-}
  if [ "$set" = shards ] || [ "$set" = shards-restart ]; then
    mkdir -p "$CACHE/$set"  # a root must exist; the output one lets a rerun reuse shards
    "$BIN/tools/stoker-pack" --input="$CACHE/images" --output="$CACHE/$set" \
      --data-root="$(realpath "$CACHE/images")" --data-root="$(realpath "$CACHE/$set")" \
      $([ "$set" = shards-restart ] && echo --restart-markers) >/dev/null
  fi
}
