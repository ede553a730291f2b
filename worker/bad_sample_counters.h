#ifndef STOKER_WORKER_BAD_SAMPLE_COUNTERS_H_
#define STOKER_WORKER_BAD_SAMPLE_COUNTERS_H_

// Per-worker counts of samples that could not be read or decoded, by reason: the values of
// stoker_samples_skipped_total{reason} (docs/architecture.md, Bad input).
// Thread-safe (relaxed atomics).

#include <array>
#include <atomic>
#include <cstdint>

#include "common/bad_sample.h"

namespace stoker {

class BadSampleCounters {
 public:
  static constexpr size_t kReasons = static_cast<size_t>(BadSampleReason::kBadAnnotation) + 1;

  void Add(BadSampleReason reason) {
    counts_[static_cast<size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t count(BadSampleReason reason) const {
    return counts_[static_cast<size_t>(reason)].load(std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<uint64_t>, kReasons> counts_{};
};

}  // namespace stoker

#endif  // STOKER_WORKER_BAD_SAMPLE_COUNTERS_H_
