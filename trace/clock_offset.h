#ifndef STOKER_TRACE_CLOCK_OFFSET_H_
#define STOKER_TRACE_CLOCK_OFFSET_H_

// The offset between two processes' monotonic clocks, estimated NTP-style from request/response
// round trips (docs/decisions/0046-batch-timeline.md, "Clocks").
//
// A sample is four instants: t0 the local send, t1 the peer's receive, t2 the peer's send (peer
// clock), t3 the local receive (local clock). With offset = peer - local,
//
//   offset = ((t1 - t0) + (t2 - t3)) / 2        delay = (t3 - t0) - (t2 - t1)
//
// and, whatever the split of `delay` between the two directions, the true offset lies within
// delay / 2 of the estimate: the error bound. Equal directions make the estimate exact. Integer
// nanoseconds: the offset's halving rounds toward negative infinity and the bound's up; the two
// sums have the same parity, so [offset - bound, offset + bound] still holds every offset the
// sample allows.
//
// The estimator keeps the last `window` samples and uses the one with the smallest delay (the
// tightest bound; the window lets a drifting clock's old lucky sample age out).
//
// Thread-compatible.

#include <cstdint>
#include <deque>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace stoker::trace {

struct ClockSample {
  int64_t t0 = 0;  // local send
  int64_t t1 = 0;  // peer receive
  int64_t t2 = 0;  // peer send
  int64_t t3 = 0;  // local receive
};

struct ClockOffset {
  // Peer clock minus local clock: local = peer - offset_ns.
  int64_t offset_ns = 0;
  // The true offset is within this many nanoseconds of offset_ns.
  int64_t error_bound_ns = 0;
  // The sample's round trip less the peer's hold time.
  int64_t delay_ns = 0;
};

// The estimate of one sample. INVALID_ARGUMENT "sample: ..." when t3 < t0, t2 < t1, or the
// peer held the request longer than the round trip took (delay < 0: one clock is broken).
absl::StatusOr<ClockOffset> OffsetOfSample(const ClockSample& sample);

class ClockOffsetEstimator {
 public:
  // REQUIRES: window > 0.
  explicit ClockOffsetEstimator(int window = 8);

  // Adds a sample; a bad one (OffsetOfSample's errors) is refused and the window kept.
  absl::Status Add(const ClockSample& sample);
  // The smallest-delay sample of the window; nullopt before the first good sample.
  std::optional<ClockOffset> Estimate() const;

 private:
  const size_t window_;
  std::deque<ClockOffset> samples_;
};

// `peer_ns` (a peer instant) in the local clock.
inline int64_t PeerToLocal(int64_t peer_ns, const ClockOffset& offset) {
  return peer_ns - offset.offset_ns;
}

// `local_ns` (a local instant) in the peer's clock. A client moves a worker's span into the
// coordinator's clock with PeerToLocal (the stream's offset) then LocalToPeer (its heartbeat's
// offset, the coordinator as peer); the two hops' error bounds add.
inline int64_t LocalToPeer(int64_t local_ns, const ClockOffset& offset) {
  return local_ns + offset.offset_ns;
}

}  // namespace stoker::trace

#endif  // STOKER_TRACE_CLOCK_OFFSET_H_
