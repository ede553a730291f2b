#!/usr/bin/env bash
# scripts/bench.sh augment-recipes [ROUNDS] [SECONDS]: the timm-style ImageNet train recipe and
# the DeiT-style one (+ MixUp/CutMix) on the same decoded 375x500 images, one thread each,
# Stoker (bench/augment_recipes_bench.cc) against torchvision (bench/augment_recipes_torchvision.py),
# both from decoded uint8 HWC to float32 normalized CHW in a batch of 32, in alternating rounds
# (Stoker, torchvision, per recipe, per round); the best round of each side counts
# (vs_torchvision), and beside it the median of the per-round ratios (the two sides of a round
# ran seconds apart, so a noisy machine moves them together). Each side also counts the CPU
# seconds its process used during the round: images per CPU second (`cpu_` keys) is the
# per-core figure, which a machine shared with other work changes far less than wall-clock
# rates (a process that waits for a core uses no CPU meanwhile). About 2 minutes with the
# defaults (6 rounds of 2 s; a shared machine needs many short rounds).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --bench
scripts/build.sh augment_recipes_bench
ROUNDS=${1:-6}
SECONDS_PER_ROUND=${2:-2}
IMAGES=48 HEIGHT=375 WIDTH=500 BATCH=32
BIN="${STOKER_BUILD_DIR:-build}/bench/augment_recipes_bench"
inputs=$(mktemp /tmp/stoker-recipes-XXXXXX)
trap 'rm -f "$inputs"' EXIT
"$BIN" --write_inputs="$inputs" --images=$IMAGES --height=$HEIGHT --width=$WIDTH

NORMALIZE="to_float, normalize(mean=[0.485,0.456,0.406], std=[0.229,0.224,0.225])"
TIMM="random_resized_crop(height=224, width=224, interpolation=2), horizontal_flip, \
rand_augment(num_ops=2, magnitude=9), color_jitter(brightness=0.4, contrast=0.4, saturation=0.4), \
$NORMALIZE, random_erasing(p=0.25)"
DEIT="$TIMM, mixup_cutmix(mixup_alpha=0.8, cutmix_alpha=1.0, switch_prob=0.5, num_classes=1000)"

declare -A best ratios cpu_ratios
field() { sed -n "s/.*\b$2=\([0-9.]*\).*/\1/p" <<<"$1"; }  # field LINE KEY
keep_best() {  # keep_best KEY VALUE
  local old=${best[$1]:-0}
  best[$1]=$(awk -v a="$old" -v b="$2" 'BEGIN { print (b > a) ? b : a }')
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
  printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for round in $(seq 1 "$ROUNDS"); do
  for recipe in timm deit; do
    pipeline=$TIMM
    [ "$recipe" = deit ] && pipeline=$DEIT
    stoker=$("$BIN" --inputs="$inputs" --images=$IMAGES --height=$HEIGHT --width=$WIDTH \
        --batch=$BATCH --seconds="$SECONDS_PER_ROUND" --pipeline="$pipeline" | tail -n1)
    torchvision=$(/usr/bin/python3 bench/augment_recipes_torchvision.py "$recipe" "$inputs" \
        $IMAGES $HEIGHT $WIDTH $BATCH "$SECONDS_PER_ROUND" | tail -n1)
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
echo "RESULT name=augment-recipes timm_stoker_ips=${best[timm_stoker]}" \
  "timm_torchvision_ips=${best[timm_torchvision]}" \
  "timm_vs_torchvision=$(ratio "${best[timm_stoker]}" "${best[timm_torchvision]}")" \
  "deit_stoker_ips=${best[deit_stoker]} deit_torchvision_ips=${best[deit_torchvision]}" \
  "deit_vs_torchvision=$(ratio "${best[deit_stoker]}" "${best[deit_torchvision]}")" \
  "timm_round_ratio_median=$(echo "${ratios[timm]}" | median)" \
  "deit_round_ratio_median=$(echo "${ratios[deit]}" | median)" \
  "timm_cpu_stoker_ips=${best[timm_cpu_stoker]} timm_cpu_torchvision_ips=${best[timm_cpu_torchvision]}" \
  "timm_cpu_vs_torchvision=$(ratio "${best[timm_cpu_stoker]}" "${best[timm_cpu_torchvision]}")" \
  "timm_cpu_round_ratio_median=$(echo "${cpu_ratios[timm]}" | median)" \
  "deit_cpu_stoker_ips=${best[deit_cpu_stoker]} deit_cpu_torchvision_ips=${best[deit_cpu_torchvision]}" \
  "deit_cpu_vs_torchvision=$(ratio "${best[deit_cpu_stoker]}" "${best[deit_cpu_torchvision]}")" \
  "deit_cpu_round_ratio_median=$(echo "${cpu_ratios[deit]}" | median)"
