#!/usr/bin/env bash
# scripts/bench.sh augment-recipes [ROUNDS] [SECONDS] [RECIPES]: the timm-style ImageNet train
# recipe and the DeiT-style one (+ MixUp/CutMix) on the same decoded 375x500 images, and the
# detection and CLIP recipes on the same encoded 480x640 COCO-style scenes (JPEG bytes in,
# float32 CHW + boxes or caption out), one thread each,
# Stoker (bench/augment_recipes_bench.cc) against torchvision (bench/augment_recipes_torchvision.py),
# both from decoded uint8 HWC to float32 normalized CHW in a batch of 32, in alternating rounds
# (Stoker, torchvision, per recipe, per round); the best round of each side counts
# (vs_torchvision), and beside it the median of the per-round ratios (the two sides of a round
# ran seconds apart, so a noisy machine moves them together). Each side also counts the CPU
# seconds its process used during the round: images per CPU second (`cpu_` keys) is the
# per-core figure, which a machine shared with other work changes far less than wall-clock
# rates (a process that waits for a core uses no CPU meanwhile). About 2 minutes with the
# defaults (6 rounds of 2 s; a shared machine needs many short rounds). RECIPES (default
# "timm deit detection clip") picks some of them; "clip_bilinear" is CLIP without antialiasing
# on both sides, and a scene recipe with "_packed" appended ("clip_packed") reads JPEGs with
# restart markers, as stoker-pack --restart-markers writes them.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh augment_recipes_bench
ROUNDS=${1:-6}
SECONDS_PER_ROUND=${2:-2}
RECIPES=${3:-timm deit detection clip}
IMAGES=48 HEIGHT=375 WIDTH=500 BATCH=32
SCENES=32 SCENE_HEIGHT=480 SCENE_WIDTH=640 SCENE_BATCH=8
BIN="${STOKER_BUILD_DIR:-build}/bench/augment_recipes_bench"
inputs=$(mktemp /tmp/stoker-recipes-XXXXXX)
scenes=$(mktemp /tmp/stoker-scenes-XXXXXX)
packed_scenes=$(mktemp /tmp/stoker-scenes-packed-XXXXXX)
trap 'rm -f "$inputs" "$scenes" "$packed_scenes"' EXIT
"$BIN" --write_inputs="$inputs" --images=$IMAGES --height=$HEIGHT --width=$WIDTH
"$BIN" --write_scenes="$scenes" --images=$SCENES --height=$SCENE_HEIGHT --width=$SCENE_WIDTH
"$BIN" --write_scenes="$packed_scenes" --images=$SCENES --height=$SCENE_HEIGHT \
  --width=$SCENE_WIDTH --restart_markers

NORMALIZE="to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"
TIMM="random_resized_crop(height=224, width=224, interpolation=2), horizontal_flip, \
rand_augment(num_ops=2, magnitude=9), color_jitter(brightness=0.4, contrast=0.4, saturation=0.4), \
$NORMALIZE, random_erasing(p=0.25)"
DEIT="$TIMM, mixup_cutmix(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, num_classes=1000)"
source bench/detection_recipe.sh
DETECTION="$DETECTION_UINT8, to_float"
CLIP_TAIL="horizontal_flip, to_float, \
normalize(mean=[0.48145466,0.4578275,0.40821073], std=[0.26862954,0.26130258,0.27577711])"
CLIP="decode, random_resized_crop(height=224, width=224, interpolation=2), $CLIP_TAIL"
# CLIP with plain bilinear resampling on both sides (torchvision antialias=False), which lets
# Stoker decode a large window at 1/2 or 1/4 scale in the DCT domain (docs/augmentations.md).
CLIP_BILINEAR="decode, random_resized_crop(height=224, width=224), $CLIP_TAIL"

declare -A best ratios cpu_ratios
field() { sed -n "s/.*\b$2=\([0-9.]*\).*/\1/p" <<<"$1"; }  # field LINE KEY
keep_best() {  # keep_best KEY VALUE
  local old=${best[$1]:-0}
  best[$1]=$(awk -v a="$old" -v b="$2" 'BEGIN { print (b > a) ? b : a }')
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
  printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# A scene recipe's name ending in _packed reads the scenes as `stoker-pack --restart-markers`
# writes them (the same pixels; Stoker's fused decode skips the intervals outside its window).
scenes_of() { if [[ $1 == *_packed ]]; then echo "$packed_scenes"; else echo "$scenes"; fi; }
stoker_round() {  # stoker_round RECIPE: one round of Stoker's side
  local file
  file=$(scenes_of "$1")
  case ${1%_packed} in
    timm|deit)
      local pipeline=$TIMM
      [ "$1" = deit ] && pipeline=$DEIT
      "$BIN" --inputs="$inputs" --images=$IMAGES --height=$HEIGHT --width=$WIDTH \
        --batch=$BATCH --seconds="$SECONDS_PER_ROUND" --pipeline="$pipeline" ;;
    detection)
      "$BIN" --scenes="$file" --height=$SCENE_HEIGHT --width=$SCENE_WIDTH --targets \
        --batch=$SCENE_BATCH --seconds="$SECONDS_PER_ROUND" --pipeline="$DETECTION" ;;
    clip|clip_bilinear)
      local pipeline=$CLIP
      [ "${1%_packed}" = clip_bilinear ] && pipeline=$CLIP_BILINEAR
      "$BIN" --scenes="$file" --height=$SCENE_HEIGHT --width=$SCENE_WIDTH \
        --batch=$SCENE_BATCH --seconds="$SECONDS_PER_ROUND" --pipeline="$pipeline" ;;
  esac
}
torchvision_round() {  # torchvision_round RECIPE: one round of torchvision's side
  case $1 in
    timm|deit) /usr/bin/python3 bench/augment_recipes_torchvision.py "$1" "$inputs" \
      $IMAGES $HEIGHT $WIDTH $BATCH "$SECONDS_PER_ROUND" ;;
    *) /usr/bin/python3 bench/augment_recipes_torchvision.py "${1%_packed}" "$(scenes_of "$1")" \
      $SCENES $SCENE_HEIGHT $SCENE_WIDTH $SCENE_BATCH "$SECONDS_PER_ROUND" ;;
  esac
}
for round in $(seq 1 "$ROUNDS"); do
  for recipe in $RECIPES; do
    stoker=$(stoker_round "$recipe" | tail -n1)
    torchvision=$(torchvision_round "$recipe" | tail -n1)
    s=$(field "$stoker" stoker_ips) s_cpu=$(field "$stoker" stoker_cpu_ips)
    t=$(field "$torchvision" torchvision_ips) t_cpu=$(field "$torchvision" torchvision_cpu_ips)
    echo "round $round $recipe: stoker $s img/s ($s_cpu per CPU second)," \
      "torchvision $t img/s ($t_cpu per CPU second) (one thread each)"
    ratios[$recipe]="${ratios[$recipe]:-} $(awk -v a="$s" -v b="$t" 'BEGIN { print a / b }')"
    cpu_ratios[$recipe]="${cpu_ratios[$recipe]:-} $(awk -v a="$s_cpu" -v b="$t_cpu" \
      'BEGIN { print a / b }')"
    keep_best "${recipe}_stoker" "$s"
    keep_best "${recipe}_torchvision" "$t"
    keep_best "${recipe}_cpu_stoker" "$s_cpu"
    keep_best "${recipe}_cpu_torchvision" "$t_cpu"
  done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
result="RESULT name=augment-recipes"
for recipe in $RECIPES; do
  result+=" ${recipe}_stoker_ips=${best[${recipe}_stoker]}"
  result+=" ${recipe}_torchvision_ips=${best[${recipe}_torchvision]}"
  result+=" ${recipe}_vs_torchvision=$(ratio "${best[${recipe}_stoker]}" "${best[${recipe}_torchvision]}")"
  result+=" ${recipe}_round_ratio_median=$(echo "${ratios[$recipe]}" | median)"
  result+=" ${recipe}_cpu_stoker_ips=${best[${recipe}_cpu_stoker]}"
  result+=" ${recipe}_cpu_torchvision_ips=${best[${recipe}_cpu_torchvision]}"
  result+=" ${recipe}_cpu_vs_torchvision=$(ratio "${best[${recipe}_cpu_stoker]}" "${best[${recipe}_cpu_torchvision]}")"
  result+=" ${recipe}_cpu_round_ratio_median=$(echo "${cpu_ratios[$recipe]}" | median)"
done
echo "$result"
