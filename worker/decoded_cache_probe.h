#ifndef STOKER_WORKER_DECODED_CACHE_PROBE_H_
#define STOKER_WORKER_DECODED_CACHE_PROBE_H_

// One worker's choice, for one DECODED_CACHE_AUTO job, between its pipeline as it runs without the
// decoded cache and the cache path (prefix from the cache or made and offered, then the suffix):
// the job's first samples on this worker alternate between the two routes, timed in thread CPU,
// until each has kSamplesPerRoute (a hit's miss cost is the hit plus the prefix time its entry
// recorded; misses that mapped new cache memory are left out). Then ChooseDecodedCache
// (augment/decoded_cache_choice.h) decides from those costs, how many of the job's entries the
// cache holds, the dataset's size and the passes each entry serves — the job's epochs times the
// jobs on this worker sharing its entries (DecodedCacheGroups), of which the sweep-aligned jobs'
// hit while the cache holds their block (decision 0087) — once, and again when those jobs change
// (Reconsider). A job is AUTO only where both routes give the same bytes (JobContext), so mixing
// them changes no batch.
//
// Thread-safe: producer threads take turns and record concurrently.

#include <atomic>
#include <cstdint>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "augment/decoded_cache_choice.h"

namespace stoker {

class DecodedCacheProbe {
 public:
  static constexpr uint32_t kSamplesPerRoute = 16;
  // After the choice, every this many turns the caller passes the jobs sharing the entries now
  // (Reconsider).
  static constexpr uint64_t kReconsiderEvery = 64;

  enum class Route { kUncached, kCached };
  struct Turn {
    Route route = Route::kUncached;
    bool timed = false;       // a probe: time it and record it
    bool reconsider = false;  // decided: call Reconsider with the sharing jobs now
  };
  // What one sample cost on the cache route.
  struct CachedSample {
    double seconds = 0;  // all of it
    bool hit = false;
    double prefix_seconds = 0;   // the prefix: a miss's, or the one recorded with a hit's entry
    double entry_bytes = 0;      // the entry's
    uint64_t entries_fit = 0;    // entries of that size the cache holds
    uint32_t group_members = 1;  // jobs on this worker sharing the job's entries, itself included
    // Of those, the jobs reading the same blocks in step with it (JobSpec.sweep_seed), itself
    // included (0 or 1: none), and the samples of such a block or window.
    uint32_t aligned_members = 0;
    uint64_t aligned_window_samples = 0;
  };

  // `samples`: the dataset's; `passes`: the job's epochs.
  DecodedCacheProbe(uint64_t samples, uint32_t passes) : samples_(samples), passes_(passes) {}

  // The route of the next sample: alternating (timed) until decided, then the choice's.
  Turn Next();
  // True (and counted) for the first kSamplesPerRoute timed samples that mapped new cache memory
  // (DecodedCache::Offer's mapped_memory): the caller leaves them out, as one-time costs. Past
  // that they count (entries so large that each maps memory).
  bool SkipColdSample() {
    return skipped_.fetch_add(1, std::memory_order_relaxed) < kSamplesPerRoute;
  }
  // Each returns the choice when this record made it (the caller logs it), nullopt otherwise.
  std::optional<DecodedCacheChoice> RecordUncached(double seconds);
  std::optional<DecodedCacheChoice> RecordCached(const CachedSample& sample);

  // After the choice: the jobs sharing the entries now (as CachedSample counts them). When they
  // differ from those the choice counted, the rule runs again on the same measured costs — a
  // sweep's jobs open a moment apart, and the first may have decided alone. Returns the new
  // choice when it changed the route (the caller logs it), nullopt otherwise. Either route gives
  // the same bytes, so a change changes no batch.
  std::optional<DecodedCacheChoice> Reconsider(uint32_t group_members, uint32_t aligned_members);

  // The choice, once made.
  std::optional<DecodedCacheChoice> choice() const;
  // The cache route is chosen (now: Reconsider may change it).
  bool chose_cache() const { return state_.load(std::memory_order_acquire) == kUse; }

 private:
  enum State : int { kProbing, kUse, kLeaveOff };

  // Decides when enough is recorded; the choice when it did.
  std::optional<DecodedCacheChoice> MaybeDecideLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The rule on costs_ and the members now; sets choice_ and state_.
  void ChooseLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const uint64_t samples_;
  const uint32_t passes_;
  std::atomic<int> state_{kProbing};
  std::atomic<uint64_t> turns_{0};
  std::atomic<uint64_t> decided_turns_{0};
  std::atomic<uint32_t> skipped_{0};

  mutable absl::Mutex mu_;
  uint32_t uncached_ ABSL_GUARDED_BY(mu_) = 0;
  double uncached_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t misses_ ABSL_GUARDED_BY(mu_) = 0;
  double miss_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  double miss_prefix_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  double prefix_seconds_ ABSL_GUARDED_BY(mu_) = 0;  // over misses and hits
  double entry_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t entries_fit_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t group_members_ ABSL_GUARDED_BY(mu_) = 1;
  uint32_t aligned_members_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t aligned_window_samples_ ABSL_GUARDED_BY(mu_) = 0;
  uint32_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  double hit_seconds_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<DecodedCacheCosts> costs_ ABSL_GUARDED_BY(mu_);  // measured, once decided
  std::optional<DecodedCacheChoice> choice_ ABSL_GUARDED_BY(mu_);
};

}  // namespace stoker

#endif  // STOKER_WORKER_DECODED_CACHE_PROBE_H_
