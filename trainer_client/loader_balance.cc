// LoaderImpl: balancing credit over the worker streams (CreditBalancer), the byte-budget
// high-water mark, and reporting overdue tasks for hedging (see loader_impl.h for the threads
// and locking, credit_balancer.h and coordinator/hedge_book.h for the rules).

#include <algorithm>

#include "trainer_client/loader_impl.h"

namespace stoker {
namespace {

// Credit per stream when the coordinator did not say how big a batch is.
constexpr uint64_t kUnknownSizeBudgetBatches = 8;
// Overdue tasks reported per heartbeat (the coordinator looks at no more).
constexpr size_t kMaxOverdue = 64;

}  // namespace

CreditBalancer::Config LoaderImpl::BalancerConfig(const LoaderOptions& options,
                                                  const v1::OpenJobResponse& job) {
  CreditBalancer::Config config;
  config.budget_batches = job.batch_bytes() > 0
                              ? std::max<uint64_t>(1, options.prefetch_bytes / job.batch_bytes())
                              : kUnknownSizeBudgetBatches;
  config.balance = options.balance_credit;
  return config;
}

uint32_t LoaderImpl::AddBalancedStreamLocked(StreamId id) {
  const uint32_t share = balancer_.AddStream(id, env_.clock->Now());
  buffer_.AddStream(id, share);
  ApplySharesLocked();  // the others shrank to make room
  stats_.max_streams = std::max(stats_.max_streams, balancer_.streams());
  return share;
}

void LoaderImpl::ApplySharesLocked() {
  for (const auto& [id, state] : streams_) {
    if (!state.done) buffer_.SetShare(id, balancer_.share(id));
  }
}

void LoaderImpl::RebalanceLocked() {
  balancer_.Rebalance(env_.clock->Now());
  ApplySharesLocked();
}

void LoaderImpl::AddOverdueLocked(v1::ClientHeartbeatRequest* request) {
  if (!starved_since_.has_value() || buffer_.done()) return;
  if (env_.clock->Now() - *starved_since_ < balancer_.OverdueAfter()) return;
  for (uint64_t index : buffer_.MissingInCurrentEpoch(kMaxOverdue)) {
    v1::TaskId* task = request->add_overdue();
    task->set_job_id(job_.job_id());
    task->set_epoch(buffer_.current_epoch());
    task->set_batch_index(index);
  }
  stats_.overdue_reported += static_cast<uint64_t>(request->overdue_size());
}

void LoaderImpl::FillSharesLocked(LoaderStats* stats) const {
  for (WorkerReceiveStats& worker : stats->workers) {
    for (const auto& [id, state] : streams_) {
      if (!state.done && state.address == worker.address) worker.share = balancer_.share(id);
    }
  }
}

void LoaderImpl::NoteCommittedLocked() {
  const uint64_t batch_bytes = job_.batch_bytes();
  stats_.budget_bytes =
      std::max<uint64_t>(options_.prefetch_bytes, batch_bytes * balancer_.streams());
  stats_.max_committed_bytes =
      std::max(stats_.max_committed_bytes, buffer_.committed() * batch_bytes);
  stats_.max_stall_extra = std::max(stats_.max_stall_extra, buffer_.extra_credit());
}

}  // namespace stoker
