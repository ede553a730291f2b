#include "augment/decoded_cache_choice.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace stoker {

DecodedCacheChoice ChooseDecodedCache(const DecodedCacheCosts& costs,
                                      const DecodedCacheOutlook& outlook) {
  DecodedCacheChoice choice;
  const bool admitted = outlook.admit_all ||
                        (costs.entry_bytes > 0 &&
                         costs.prefix_seconds * 1e9 >= kMinPrefixNanosPerByte * costs.entry_bytes);
  if (admitted && outlook.samples > 0) {
    choice.hit_share = std::min(
        1.0, static_cast<double>(outlook.entries_fit) / static_cast<double>(outlook.samples));
  }
  const uint32_t passes = std::max<uint32_t>(outlook.passes, 1);
  const uint32_t aligned = std::min(outlook.aligned_passes, passes - 1);
  if (admitted && aligned > 0 && outlook.aligned_window_samples > 0) {
    choice.aligned_hit_share =
        std::min(1.0, static_cast<double>(outlook.entries_fit) /
                          (2.0 * static_cast<double>(outlook.aligned_window_samples)));
  }
  auto expected = [&costs](double share) {
    return share * costs.hit_seconds + (1 - share) * costs.miss_seconds;
  };
  choice.with_cache_seconds =
      (costs.miss_seconds + (passes - 1 - aligned) * expected(choice.hit_share) +
       aligned * expected(choice.aligned_hit_share)) /
      passes;
  choice.without_cache_seconds = costs.uncached_seconds;
  choice.use = choice.with_cache_seconds < choice.without_cache_seconds;
  choice.why = absl::StrFormat(
      "%s: %.3f ms per image over %u passes against %.3f ms without (miss %.3f ms, hit %.3f ms, "
      "uncached %.3f ms, %.0f%% of later passes hit%s%s)",
      choice.use ? "use the cache" : "leave it off", choice.with_cache_seconds * 1e3, passes,
      choice.without_cache_seconds * 1e3, costs.miss_seconds * 1e3, costs.hit_seconds * 1e3,
      costs.uncached_seconds * 1e3, choice.hit_share * 100,
      aligned > 0 ? absl::StrFormat(", %u sweep-aligned passes %.0f%%", aligned,
                                    choice.aligned_hit_share * 100)
                  : "",
      admitted ? ""
               : absl::StrFormat(
                     "; entries not admitted: %.2f ns of prefix CPU per byte "
                     "kept, under %.0f",
                     costs.entry_bytes > 0 ? costs.prefix_seconds * 1e9 / costs.entry_bytes : 0.0,
                     kMinPrefixNanosPerByte));
  return choice;
}

uint32_t DecodedCacheBreakEvenPasses(const DecodedCacheCosts& costs) {
  const double saved_per_hit = costs.uncached_seconds - costs.hit_seconds;
  if (!(saved_per_hit > 0)) return 0;
  // miss + (p - 1) * hit < p * uncached  <=>  p > (miss - hit) / (uncached - hit).
  const double bound = (costs.miss_seconds - costs.hit_seconds) / saved_per_hit;
  if (bound < 1) return 1;
  if (bound > 1e6) return 0;
  return static_cast<uint32_t>(std::floor(bound)) + 1;
}

}  // namespace stoker
