#ifndef STOKER_WORKER_OP_TIME_HISTOGRAMS_H_
#define STOKER_WORKER_OP_TIME_HISTOGRAMS_H_

// Seconds each pipeline op takes per sample, as Prometheus histograms (one series per op
// position and name): where a worker's time goes. Producer threads fill their own instance and
// merge it into the worker's after each batch.

#include <cstdint>
#include <string>
#include <vector>

#include "common/histogram.h"

namespace stoker {

// Thread-compatible.
class OpTimeHistograms {
 public:
  // Upper bounds of the buckets, seconds.
  static const std::vector<double>& Bounds();

  struct Series {
    uint32_t position = 0;  // index in the pipeline
    std::string op;         // registry name
    Histogram seconds{Bounds()};
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
