#ifndef STOKER_TRAINER_CLIENT_CREDIT_POLICY_H_
#define STOKER_TRAINER_CLIENT_CREDIT_POLICY_H_

// The client's one credit decision: how many batches each worker stream may send (a worker
// sends one batch per credit). EpochBuffer only buffers and the streams only carry; every
// number here is counted in batches of the job's batch_bytes. Pure logic: every method takes
// the current time; no threads, no clock of its own.
//
// Terms, each with one meaning in the client:
//   budget  prefetch_bytes / batch_bytes (kUnknownSizeBudgetBatches when the batch size is
//           unknown); effective_budget() = max(budget, open streams): every stream keeps one.
//   share   a stream's part of the budget, by delivery rate (Rebalance). A new stream starts
//           with an even share; the others are scaled down at once to make room.
//   level   for every open stream, outstanding credit + its batches still buffered is kept at
//           share + extra by TakeCreditGrants. Credit can't be revoked: a stream above its
//           level (its share shrank) gets nothing until it is back under. Handing out or
//           dropping a batch thus replenishes one credit on the stream it came from.
//   stall   a consumer is waiting and nothing of its epoch is ready (stalled_for()). The one
//           stall clock drives both remedies:
//             - extra credit, while batches are buffered (later epochs, or later positions in
//               ordered mode: they used up the shares, so a task still being produced, or lost
//               with a dead worker and re-leased, could never arrive): every stream's level
//               rises by extra = 1 at once, then 2 + floor(log2(stall seconds)) from 1 s on,
//               so progress is certain and the excess memory grows only logarithmically;
//             - hedging: once the stall is older than OverdueAfter(), the loader reports the
//               epoch's missing tasks overdue (coordinator/hedge_book.h).
//   silent  a stream that holds credit and sent nothing for its overdue limit (counting from
//           the later of its last batch and its oldest grant). It weighs 0 in the shares.
//   overdue limit  max(kOverdueFactor x p99 latency, kOverdueFloor), latency being the time
//           from a grant to the batch that consumed it (credits are consumed oldest first).
//   byte cap  with a known batch size, grants stop once committed() (outstanding credit of the
//           open streams + buffered batches) reaches effective_budget() + extra x streams, so
//           shares that sum above the budget (a shrunk share's credit still out) never commit
//           more memory than that.
//
// Shares (Rebalance, from the heartbeat loop): each stream gets 1 plus a part of the rest of
// effective_budget() proportional to its weight: its delivery rate over kRateWindow; a stream
// younger than the window weighs the mean of the others, a silent one 0. Shrinking shares close
// `decay` of the gap to their target per call; growing ones take only what the shrinking ones
// gave up, so the shares never sum above effective_budget().
//
// Thread-compatible: the Loader guards it with its mutex.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "absl/time/time.h"

namespace stoker {

// Identifies one opened worker stream (a reconnect to the same worker is a new id).
using StreamId = uint64_t;

// The credit constants (hedging's other one: kMaxOverdueTasks, coordinator_client.h).
inline constexpr uint64_t kUnknownSizeBudgetBatches = 8;
inline constexpr uint32_t kMaxShare = 1 << 16;
inline constexpr absl::Duration kRateWindow = absl::Seconds(2);
inline constexpr size_t kLatencySamples = 64;
inline constexpr double kOverdueFactor = 3;
inline constexpr absl::Duration kOverdueFloor = absl::Seconds(1);
inline constexpr double kShareDecay = 0.5;

struct CreditGrant {
  StreamId stream = 0;
  uint32_t credits = 0;
};

// What the policy needs to know of the consumers and the buffer at a decision.
struct ConsumerView {
  bool waiting = false;  // a consumer is blocked in Next
  bool ready = false;    // a batch of the current epoch can be handed out (or all is done)
  size_t buffered = 0;   // batches buffered, of every stream (open or ended)
};

class CreditPolicy {
 public:
  struct Config {
    uint64_t budget_batches = kUnknownSizeBudgetBatches;  // >= 1
    bool byte_cap = false;                                // see "byte cap"
    bool balance = true;  // false: even shares whatever the rates (a negative control)
    absl::Duration rate_window = kRateWindow;
    size_t latency_samples = kLatencySamples;
    double overdue_factor = kOverdueFactor;
    absl::Duration overdue_floor = kOverdueFloor;
    double decay = kShareDecay;  // in (0, 1]
  };

  // The job's config: a byte cap when batch_bytes is known.
  static Config ForJob(uint64_t prefetch_bytes, uint64_t batch_bytes, bool balance);

  explicit CreditPolicy(const Config& config) : config_(config) {}

  // A stream opened: returns its (even) share; the others shrink to make room.
  uint32_t AddStream(StreamId id, absl::Time now);
  // The stream ended: no more credit. Its buffered batches still count in ConsumerView.
  void RemoveStream(StreamId id);
  // A batch arrived on `id` (consuming its oldest credit); unknown ids are ignored.
  void OnBatch(StreamId id, absl::Time now);
  // The batch that arrived on `id` was buffered / was handed out of the buffer.
  void OnBuffered(StreamId id);
  void OnHandedOut(StreamId id);

  // Recomputes every share from the rates and silences (see above).
  void Rebalance(absl::Time now);
  // Updates the stall, then returns the credit owed under the level rule and the byte cap,
  // counted as outstanding: the caller must send it.
  std::vector<CreditGrant> TakeCreditGrants(const ConsumerView& view, absl::Time now);

  // How long the current stall has lasted (nullopt: none).
  std::optional<absl::Duration> stalled_for(absl::Time now) const;
  // The overdue limit over every stream's latencies (hedging).
  absl::Duration OverdueAfter() const;

  // Per stream (0 / false / zero for unknown ids).
  uint32_t share(StreamId id) const { return Find(id) ? Find(id)->share : 0; }
  uint32_t outstanding(StreamId id) const { return Find(id) ? Find(id)->outstanding : 0; }
  uint32_t held(StreamId id) const { return Find(id) ? Find(id)->held : 0; }
  double Rate(StreamId id, absl::Time now) const { return Find(id) ? RateOf(*Find(id), now) : 0; }
  bool Silent(StreamId id, absl::Time now) const { return Find(id) && SilentOf(*Find(id), now); }
  absl::Duration P99Latency(StreamId id) const;
  uint32_t extra_credit() const { return extra_; }
  size_t streams() const { return streams_.size(); }
  // max(budget_batches, `streams`) (default: the open ones).
  uint64_t effective_budget(std::optional<size_t> streams = std::nullopt) const;
  uint64_t committed(size_t buffered) const;

 private:
  struct Grant {
    absl::Time at;
    uint32_t credits;
  };
  struct Stream {
    absl::Time opened;
    uint32_t share = 0;
    uint32_t outstanding = 0;         // credit granted, not yet used
    uint32_t held = 0;                // its batches in the buffer
    std::deque<Grant> grants;         // outstanding credit by grant time, oldest first
    std::deque<absl::Time> arrivals;  // within the rate window
    std::deque<absl::Duration> latencies;
    absl::Time last_arrival = absl::InfinitePast();
  };

  void UpdateStall(const ConsumerView& view, absl::Time now);
  void PruneArrivals(Stream& stream, absl::Time now) const;
  double RateOf(const Stream& stream, absl::Time now) const;
  absl::Duration OverdueLimit(std::vector<absl::Duration> latencies) const;
  bool SilentOf(const Stream& stream, absl::Time now) const;
  // 1 + a weighted part of the spare budget, for every stream.
  std::map<StreamId, uint32_t> Targets(absl::Time now);
  const Stream* Find(StreamId id) const;

  const Config config_;
  std::map<StreamId, Stream> streams_;  // the open streams
  std::optional<absl::Time> stall_start_;
  uint32_t extra_ = 0;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_CREDIT_POLICY_H_
