#ifndef STOKER_AUGMENT_DECODED_CACHE_CHOICE_H_
#define STOKER_AUGMENT_DECODED_CACHE_CHOICE_H_

// Whether a job's samples should go through a worker's decoded cache (decode once; augment/
// pipeline.h, decoded prefix), decided from measured costs: the one rule both a worker deciding a
// DECODED_CACHE_AUTO job and `stoker-ctl pipeline explain` apply.
//
// Per image, over the passes a sample makes through one worker's cache:
//   with the cache:    miss + (passes - 1 - a) * (h * hit + (1 - h) * miss)
//                           + a * (h_a * hit + (1 - h_a) * miss)
//   without it:        passes * uncached
// where h, the share of later passes that hit, is the share of the dataset's entries the cache can
// hold (1 when it holds them all), and 0 when the cache would not admit the entries (prefix CPU per
// byte kept under kMinPrefixNanosPerByte). a of the passes are sweep-aligned jobs' (JobSpec.
// sweep_seed, decision 0087) following the job through the same block or window while it is
// cached: h_a = the share of two such windows the cache holds (the one read and the one before, as
// the jobs drift), whatever the dataset's size. Costs may include work both paths share (reading,
// the rest of the pipeline): it cancels out of the comparison.

#include <cstdint>
#include <string>

namespace stoker {

// Admission: prefix CPU per byte kept, in nanoseconds, below which the cache does not keep an
// entry. Measured (docs/benchmarks/decoded-cache.md): a 500x375 JPEG decoded at a DCT scale and
// resized to 256x256 takes 0.68 ms for 196,608 bytes kept (3.5 ns/B), larger photos more; a PNG
// inflates at 300-600 MB/s (2-3 ns/B of output) and a raw image is a copy (well under 1 ns/B). At
// 3 ns/B the JPEGs are kept and the cheap-but-large are not; a GiB of cache saves at least 3 s of
// CPU per pass over it.
inline constexpr double kMinPrefixNanosPerByte = 3;

// Seconds of CPU per image, measured.
struct DecodedCacheCosts {
  double uncached_seconds = 0;  // the job's pipeline as it runs without the cache (fused)
  double miss_seconds = 0;      // the cache path on a miss: the prefix, keeping it, the rest
  double hit_seconds = 0;       // the cache path on a hit: the copy out, the rest
  double prefix_seconds = 0;    // the prefix alone (part of miss_seconds)
  double entry_bytes = 0;       // what one entry keeps
};

struct DecodedCacheOutlook {
  uint64_t samples = 0;      // the dataset's
  uint64_t entries_fit = 0;  // entries of entry_bytes the cache holds
  uint32_t passes = 1;       // times each sample comes back (the job's epochs)
  bool admit_all = false;    // DECODED_CACHE_ALWAYS: no admission threshold
  // Of `passes`, the sweep-aligned jobs' (a above; at most passes - 1), and the samples of the
  // block or window they read in step.
  uint32_t aligned_passes = 0;
  uint64_t aligned_window_samples = 0;
};

struct DecodedCacheChoice {
  bool use = false;
  double hit_share = 0;           // h
  double aligned_hit_share = 0;   // h_a
  double with_cache_seconds = 0;  // per image over all passes
  double without_cache_seconds = 0;
  // "use the cache: 2.31 ms per image over 3 passes against 2.37 ms without (miss 1.10 ms, hit
  // 0.31 ms, fused 0.79 ms, 100% of later passes hit)".
  std::string why;
};

DecodedCacheChoice ChooseDecodedCache(const DecodedCacheCosts& costs,
                                      const DecodedCacheOutlook& outlook);

// The fewest passes after which the cache pays when every later pass hits; 0 when it never does
// (a hit costs no less than the uncached path).
uint32_t DecodedCacheBreakEvenPasses(const DecodedCacheCosts& costs);

}  // namespace stoker

#endif  // STOKER_AUGMENT_DECODED_CACHE_CHOICE_H_
