#include "trace/clock_offset.h"

#include <algorithm>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace stoker::trace {
namespace {

int64_t FloorHalf(int64_t x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

}  // namespace

absl::StatusOr<ClockOffset> OffsetOfSample(const ClockSample& sample) {
  if (sample.t3 < sample.t0) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample: local receive ", sample.t3, " is before local send ", sample.t0));
  }
  if (sample.t2 < sample.t1) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample: peer send ", sample.t2, " is before peer receive ", sample.t1));
  }
  const int64_t delay = (sample.t3 - sample.t0) - (sample.t2 - sample.t1);
  if (delay < 0) {
    return absl::InvalidArgumentError(absl::StrCat("sample: the peer held the request ",
                                                   sample.t2 - sample.t1, " ns, longer than the ",
                                                   sample.t3 - sample.t0, " ns round trip"));
  }
  ClockOffset offset;
  offset.offset_ns = FloorHalf((sample.t1 - sample.t0) + (sample.t2 - sample.t3));
  offset.error_bound_ns = (delay + 1) / 2;
  offset.delay_ns = delay;
  return offset;
}

ClockOffsetEstimator::ClockOffsetEstimator(int window) : window_(std::max(window, 1)) {}

absl::Status ClockOffsetEstimator::Add(const ClockSample& sample) {
  const absl::StatusOr<ClockOffset> offset = OffsetOfSample(sample);
  if (!offset.ok()) return offset.status();
  if (samples_.size() == window_) samples_.pop_front();
  samples_.push_back(*offset);
  return absl::OkStatus();
}

std::optional<ClockOffset> ClockOffsetEstimator::Estimate() const {
  if (samples_.empty()) return std::nullopt;
  // The first of equal delays: the oldest, so that a tie does not move the estimate.
  return *std::min_element(
      samples_.begin(), samples_.end(),
      [](const ClockOffset& a, const ClockOffset& b) { return a.delay_ns < b.delay_ns; });
}

}  // namespace stoker::trace
