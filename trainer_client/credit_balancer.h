#ifndef STOKER_TRAINER_CLIENT_CREDIT_BALANCER_H_
#define STOKER_TRAINER_CLIENT_CREDIT_BALANCER_H_

// Splits the client's prefetch budget (in batches) over its worker streams by how fast each
// delivers, so that a slow or stalled worker holds few of the rank's tasks and a fast one many.
// Pure logic: every method takes the current time; no threads, no clock of its own.
//
// Measurements, per stream:
//   - delivery rate: batches that arrived within the last `rate_window`, divided by the window
//     (or by the stream's age while it is younger than the window);
//   - latency: for each batch, the time since the credit it consumed was granted (credits are
//     consumed first-granted-first); the last `latency_samples` per stream are kept.
// Stall: a stream is stalled when it holds granted credit and nothing arrived for longer than
//   max(stall_factor × its p99 latency, stall_floor), counting from the later of its last batch
//   and its oldest outstanding grant.
// Shares (Rebalance, called from the loader's heartbeat loop):
//   budget' = max(budget_batches, streams) (every stream keeps at least one credit). Each stream
//   gets 1 plus a part of the rest proportional to its weight: its rate; a stream younger than
//   `rate_window` (no rate yet) weighs the mean rate of the others (an even share), a stalled
//   one weighs 0. Shrinking shares move toward their target by `decay` of the gap per call (a
//   stalled stream decays geometrically toward 1 credit); growing ones take only what the
//   shrinking ones gave up. So the sum of shares never exceeds budget' — the EpochBuffer's
//   byte cap covers the credit already granted above a shrunk share (credit can't be revoked).
// A new stream starts with an even share budget'/streams; the others are scaled down at once to
// make room.
//
// Thread-compatible: the Loader guards it with its mutex.

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "absl/time/time.h"

namespace stoker {

class CreditBalancer {
 public:
  using StreamId = uint64_t;  // == trainer_client/epoch_buffer.h's StreamId

  struct Config {
    // The budget in batches: prefetch_bytes / batch_bytes. >= 1.
    uint64_t budget_batches = 1;
    // Window over which delivery rates are measured.
    absl::Duration rate_window = absl::Seconds(2);
    // Latency samples kept per stream.
    size_t latency_samples = 64;
    // A stream is stalled after max(stall_factor × p99 latency, stall_floor) without a batch.
    double stall_factor = 3;
    absl::Duration stall_floor = absl::Seconds(1);
    // Fraction of the gap to its target that a shrinking share closes per Rebalance, in (0, 1].
    double decay = 0.5;
    // Largest share of one stream.
    uint32_t max_share = 1 << 16;
    // false: every stream's target is the even split whatever its rate or stall (the negative
    // control of benchmarks and tests; hedging is unaffected).
    bool balance = true;
  };

  explicit CreditBalancer(const Config& config);

  // A stream opened: it gets an even share (returned); the others shrink to make room.
  uint32_t AddStream(StreamId id, absl::Time now);
  void RemoveStream(StreamId id);
  // `n` credits were sent to the stream at `now`.
  void OnGrant(StreamId id, uint32_t n, absl::Time now);
  // A batch arrived on the stream (consuming its oldest outstanding credit).
  void OnBatch(StreamId id, absl::Time now);

  // Recomputes every stream's share (see above) and returns them, by stream id.
  const std::map<StreamId, uint32_t>& Rebalance(absl::Time now);

  // The current share of a stream (0 for unknown ids).
  uint32_t share(StreamId id) const;
  // Batches per second over the rate window (0 for unknown ids).
  double Rate(StreamId id, absl::Time now) const;
  bool Stalled(StreamId id, absl::Time now) const;
  // p99 of the latency samples of one stream / of all streams (zero without samples).
  absl::Duration P99Latency(StreamId id) const;
  absl::Duration P99Latency() const;
  // How long a batch the consumer needs may be missing before it counts as overdue (hedging):
  // max(stall_factor × P99Latency(), stall_floor).
  absl::Duration OverdueAfter() const;
  size_t streams() const { return streams_.size(); }
  // max(budget_batches, streams): what the shares sum to at most.
  uint64_t effective_budget() const;

 private:
  struct Grant {
    absl::Time at;
    uint32_t credits;
  };
  struct Stream {
    absl::Time opened;
    std::deque<Grant> grants;         // outstanding credit, oldest first
    std::deque<absl::Time> arrivals;  // within the rate window
    std::deque<absl::Duration> latencies;
    absl::Time last_arrival = absl::InfinitePast();
    uint32_t share = 0;
  };

  static absl::Duration P99(std::vector<absl::Duration> samples);
  void PruneArrivals(Stream& stream, absl::Time now) const;
  double RateOf(const Stream& stream, absl::Time now) const;
  bool StalledOf(const Stream& stream, absl::Time now) const;
  // Targets (1 + weighted part of the spare budget) for every stream.
  std::map<StreamId, uint32_t> Targets(absl::Time now);

  const Config config_;
  std::map<StreamId, Stream> streams_;
  std::map<StreamId, uint32_t> shares_;  // mirror of Stream::share, returned by Rebalance
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_CREDIT_BALANCER_H_
