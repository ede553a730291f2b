#ifndef STOKER_WORKER_OP_TIME_HISTOGRAMS_H_
#define STOKER_WORKER_OP_TIME_HISTOGRAMS_H_

// Seconds each pipeline op takes per sample, as Prometheus histograms (one series per op
// position and name): where a worker's time goes. Producer threads fill their own instance and
// merge it into the worker's after each batch.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

// Thread-compatible.
class OpTimeHistograms {
 public:
  // Upper bounds of the buckets, seconds; a last bucket (+Inf) takes the rest.
  static constexpr std::array<double, 11> kBounds = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3,
                                                     1e-2, 3e-2, 1e-1, 3e-1, 1.0};

  struct Series {
    uint32_t position = 0;  // index in the pipeline
    std::string op;         // registry name
    std::array<uint64_t, kBounds.size() + 1> counts{};  // per bucket, not cumulative
    double sum = 0;
    uint64_t count = 0;
  };

  void Observe(uint32_t position, const std::string& op, double seconds);
  // Adds `other` into this and empties it.
  void MergeFrom(OpTimeHistograms& other);
  const std::vector<Series>& series() const { return series_; }

 private:
  Series& Find(uint32_t position, const std::string& op);
  std::vector<Series> series_;
};

}  // namespace stoker

#endif  // STOKER_WORKER_OP_TIME_HISTOGRAMS_H_
