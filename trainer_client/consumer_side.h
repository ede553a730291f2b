#ifndef STOKER_TRAINER_CLIENT_CONSUMER_SIDE_H_
#define STOKER_TRAINER_CLIENT_CONSUMER_SIDE_H_

// The Loader's consumer side: what the streams delivered and what the training loop takes. It
// owns the EpochBuffer (dedup, epoch order, reorder), the bad-sample budget, the received report
// for the next heartbeat (the report completes those tasks on the coordinator), the loop's
// rhythm (ConsumptionWindow, the wait and step totals) and the counts of batches received and
// delivered. It never waits and never talks to a stream: the Loader waits on its own mutex,
// and tells the stream side (stream_side.h) what to acknowledge and which stream's batch left.
//
// Thread-compatible: the Loader calls it under its mutex.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "stoker/v1/coordinator.pb.h"
#include "trainer_client/bad_sample_budget.h"
#include "trainer_client/batch.h"
#include "trainer_client/consumption_window.h"
#include "trainer_client/credit_policy.h"
#include "trainer_client/epoch_buffer.h"
#include "trainer_client/loader.h"
#include "trainer_client/loader_options.h"

namespace stoker {

class ConsumerSide {
 public:
  // `start`: when the loop's rhythm starts to count.
  ConsumerSide(const LoaderOptions& options, const v1::OpenJobResponse& job, absl::Time start);

  struct Added {
    EpochBuffer::AddResult result;
    // Once an epoch's unreadable samples pass JobSpec.max_bad_sample_fraction: DATA_LOSS
    // (bad_sample_budget.h), for this and every later accepted batch.
    absl::Status bad_samples;
  };
  // `batch` arrived on stream `source` (`wire_bytes` as received; its receive path ran from
  // `received_at` to `now`). Accepted: buffered and queued for the received report; a
  // duplicate or a batch that is not a task of this rank is dropped (counted; the latter logged).
  Added Add(StreamId source, const Batch& batch, uint64_t wire_bytes, absl::Time received_at,
            absl::Time now);

  // Next's steps: the loop called it at `entered` (its step since the last return ends); takes
  // the next ready batch of the current epoch (counted as delivered; its stream in `source`);
  // waits (the loop is stalled meanwhile, which the credit policy sees in view()); returns at
  // `now`, with a batch or not.
  void OnNextEntered(absl::Time entered);
  std::optional<Batch> Pop(StreamId* source);
  void BeginWait() { ++waiters_; }
  void EndWait() { --waiters_; }
  void OnNextReturned(absl::Time entered, absl::Time now, bool returned_batch);
  // Whether a consumer of `epoch` (nullopt: of any) must return: `epoch` is over; or it can
  // (a batch is ready, or everything was delivered).
  bool EpochOver(std::optional<uint32_t> epoch) const;
  bool CanReturn(std::optional<uint32_t> epoch) const;

  // What the credit policy needs to know of the consumer.
  ConsumerView view() const;

  // The tasks received since the last report, for a heartbeat; a failed heartbeat puts them
  // back, before what arrived meanwhile.
  std::vector<v1::TaskId> TakeReceivedReport();
  void RestoreReceivedReport(std::vector<v1::TaskId> reported);
  bool has_received_report() const { return !received_report_.empty(); }
  // Hedging: up to `max` tasks of the current epoch not received yet, while the loop waits for
  // one (none otherwise); counted in LoaderStats::overdue_reported.
  std::vector<v1::TaskId> ReportOverdue(size_t max);
  // The loop's recent rhythm for a heartbeat (ClientStats), with the fed GPU's utilization when
  // sampled.
  v1::ClientStats Snapshot(absl::Time now, std::optional<double> gpu_utilization);

  // Every batch of the rank's remaining epochs was received (accepted), if not all delivered.
  bool all_received() const { return buffer_.accepted_total() >= buffer_.expected_total(); }
  const EpochBuffer& buffer() const { return buffer_; }
  // Received, delivered and dropped batches, wait and step seconds, overdue reports.
  const LoaderStats& stats() const { return stats_; }

 private:
  const uint64_t job_id_;
  const uint32_t rank_;
  EpochBuffer buffer_;
  BadSampleBudget bad_samples_;
  ConsumptionWindow consumption_;
  std::vector<v1::TaskId> received_report_;
  int waiters_ = 0;
  std::optional<absl::Time> last_return_;
  LoaderStats stats_;
};

}  // namespace stoker

#endif  // STOKER_TRAINER_CLIENT_CONSUMER_SIDE_H_
